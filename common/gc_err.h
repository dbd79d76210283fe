/*  gc_err — the one way errors travel in gcnode.

    Functions that can fail on hostile input return 0 on success and -1 on
    failure, and write the reason into a caller-provided gc_err_t (which may be
    NULL when the caller does not care). The message names the file, field or
    peer and says what was wrong, so the top level can print it as one line. */
#ifndef GC_ERR_H
#define GC_ERR_H

#include <stddef.h>

#define GC_ERR_MSG_MAX 256

typedef struct {
    int  code;                   /* module-specific reason code, 0 = none */
    char msg[GC_ERR_MSG_MAX];    /* human-readable, one line */
} gc_err_t;

/*  Record an error and return -1, so callers can write
    `return gc_err_set (err, CODE, "...", ...);`. err may be NULL. */
int  gc_err_set (gc_err_t *err, int code, const char *fmt, ...)
        __attribute__ ((format (printf, 3, 4)));

/*  Prepend context ("train-images-idx3-ubyte.gz: ") to an existing message.
    Returns -1 like gc_err_set. */
int  gc_err_prefix (gc_err_t *err, const char *fmt, ...)
        __attribute__ ((format (printf, 2, 3)));

void gc_err_clear (gc_err_t *err);

#endif
