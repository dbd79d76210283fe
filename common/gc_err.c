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
        err->code = GC_E_OK;
        err->msg [0] = '\0';
    }
}

typedef struct {
    int         code;
    const char *name;
    const char *what;
} s_code_t;

#define S_ROW(id, n, name, what) { n, name, what },
static const s_code_t s_codes [] = { { 0, "ok", "no error" }, GC_ERR_CODES (S_ROW) };
#undef S_ROW

static const s_code_t *
s_lookup (int code)
{
    for (size_t i = 0; i < sizeof s_codes / sizeof s_codes [0]; i++)
        if (s_codes [i].code == code)
            return &s_codes [i];
    return NULL;
}

const char *
gc_err_name (int code)
{
    const s_code_t *c = s_lookup (code);
    return c ? c->name : "unknown";
}

const char *
gc_strerror (int code)
{
    const s_code_t *c = s_lookup (code);
    return c ? c->what : "unknown error code";
}
