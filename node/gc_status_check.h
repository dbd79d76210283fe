/*  gc_status_check — the verdict of `gcnode status` on a peer's status
    object, with the levels of a monitoring plugin (Nagios, Icinga, Sensu):
    OK 0, WARNING 1, CRITICAL 2, UNKNOWN 3 (docs/OPERATIONS.md lists every
    finding). Pure apart from the process probe, so a table of crafted
    status objects tests every rule. */
#ifndef GC_STATUS_CHECK_H
#define GC_STATUS_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "gc_status.h"

typedef enum {
    GC_CHECK_OK = 0, GC_CHECK_WARNING = 1, GC_CHECK_CRITICAL = 2, GC_CHECK_UNKNOWN = 3
} gc_check_level_t;

/*  The state letter of process pid as /proc/PID/stat gives it ('R', 'S',
    'T' stopped, 'Z' zombie, ...), or 0 when there is no such process. */
typedef char (*gc_check_probe_fn) (long pid);

typedef struct {
    double   max_age;               /* s without an update: CRITICAL */
    uint64_t warn_rejections;       /* more in the window: WARNING */
    gc_check_probe_fn probe;        /* NULL: the process is not checked (remote) */
} gc_check_limits_t;

/*  Judge st at time now; the findings, worst first, go to reason ("" when
    OK). */
gc_check_level_t gc_status_check (const gc_status_t *st, double now, const gc_check_limits_t *limits,
                                  char *reason, size_t size);
/*  The probe of this machine: kill (pid, 0), then /proc/PID/stat. */
char             gc_status_check_probe (long pid);
const char      *gc_status_check_name (gc_check_level_t level);

#endif
