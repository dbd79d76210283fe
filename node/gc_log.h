/*  gc_log — leveled logging through CZMQ's zsys (stderr or syslog), with the
    peer's index and id in every line. */
#ifndef GC_LOG_H
#define GC_LOG_H

#include "gc_err.h"

typedef enum { GC_LOG_ERROR = 0, GC_LOG_WARNING, GC_LOG_INFO, GC_LOG_DEBUG } gc_log_level_t;

/*  level: "error" | "warning" | "info" | "debug"; to: "stderr" | "syslog". */
int  gc_log_setup (const char *level, const char *to, gc_err_t *err);
/*  The tag printed in front of every line, e.g. "peer 3 a1b2c3d4e5f6a7b8". */
void gc_log_set_tag (const char *tag);
void gc_log (gc_log_level_t level, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

#define gc_log_error(...)   gc_log (GC_LOG_ERROR, __VA_ARGS__)
#define gc_log_warning(...) gc_log (GC_LOG_WARNING, __VA_ARGS__)
#define gc_log_info(...)    gc_log (GC_LOG_INFO, __VA_ARGS__)
#define gc_log_debug(...)   gc_log (GC_LOG_DEBUG, __VA_ARGS__)

#endif
