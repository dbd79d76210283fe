#include "gc_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int
gc_err_set (gc_err_t *err, int code, const char *fmt, ...)
{
    if (!err)
        return -1;
    err->code = code;
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (err->msg, sizeof err->msg, fmt, ap);
    va_end (ap);
    return -1;
}

int
gc_err_prefix (gc_err_t *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char prefix [GC_ERR_MSG_MAX];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (prefix, sizeof prefix, fmt, ap);
    va_end (ap);
    //  Twice the size, so the compiler can see nothing is cut mid-format;
    //  the copy back truncates to the message size.
    char joined [2 * GC_ERR_MSG_MAX];
    snprintf (joined, sizeof joined, "%s%s", prefix, err->msg);
    size_t len = strnlen (joined, sizeof err->msg - 1);
    memcpy (err->msg, joined, len);
    err->msg [len] = '\0';
    return -1;
}

void
gc_err_clear (gc_err_t *err)
{
    if (err) {
        err->code = 0;
        err->msg [0] = '\0';
    }
}
