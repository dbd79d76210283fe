#include "gc_parse.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
gc_spec_split (gc_spec_t *self, const char *text, char sep,
               const char *what, gc_err_t *err)
{
    self->n = 0;
    if (!text)
        return gc_err_set (err, 1, "%s: missing", what);
    size_t len = strlen (text);
    if (len >= sizeof self->buf)
        return gc_err_set (err, 1, "%s: longer than %d characters", what, GC_SPEC_MAX_LEN - 1);
    memcpy (self->buf, text, len + 1);
    char *p = self->buf;
    for (;;) {
        if (self->n == GC_SPEC_MAX_TOKENS)
            return gc_err_set (err, 1, "%s '%s': more than %d parts", what, text, GC_SPEC_MAX_TOKENS);
        self->tok [self->n++] = p;
        char *next = strchr (p, sep);
        if (!next)
            break;
        *next = '\0';
        p = next + 1;
    }
    return 0;
}

int
gc_parse_double (const char *s, double lo, double hi, double *out,
                 const char *what, gc_err_t *err)
{
    if (!s || !*s)
        return gc_err_set (err, 1, "%s: missing value", what);
    char *end;
    errno = 0;
    double v = strtod (s, &end);
    if (*end || errno || !isfinite (v))
        return gc_err_set (err, 1, "%s: '%s' is not a number", what, s);
    if (v < lo || v > hi)
        return gc_err_set (err, 1, "%s: %s is outside [%g, %g]", what, s, lo, hi);
    *out = v;
    return 0;
}

int
gc_parse_long (const char *s, long lo, long hi, long *out,
               const char *what, gc_err_t *err)
{
    if (!s || !*s)
        return gc_err_set (err, 1, "%s: missing value", what);
    char *end;
    errno = 0;
    long v = strtol (s, &end, 10);
    if (*end || errno)
        return gc_err_set (err, 1, "%s: '%s' is not an integer", what, s);
    if (v < lo || v > hi)
        return gc_err_set (err, 1, "%s: %s is outside [%ld, %ld]", what, s, lo, hi);
    *out = v;
    return 0;
}

int
gc_parse_u64 (const char *s, unsigned long long *out, const char *what, gc_err_t *err)
{
    if (!s || !*s || *s == '-')
        return gc_err_set (err, 1, "%s: '%s' is not an unsigned integer", what, s ? s : "");
    char *end;
    errno = 0;
    unsigned long long v = strtoull (s, &end, 0);
    if (*end || errno)
        return gc_err_set (err, 1, "%s: '%s' is not an unsigned integer", what, s);
    *out = v;
    return 0;
}

int
gc_parse_rate (const char *text, double *out, const char *what, gc_err_t *err)
{
    static const struct { const char *unit; double bytes; } units [] = {
        { "", 1 }, { "B", 1 }, { "kB", 1e3 }, { "MB", 1e6 }, { "GB", 1e9 },
        { "bit", 0.125 }, { "kbit", 125 }, { "mbit", 125e3 }, { "gbit", 125e6 }
    };
    if (!strcmp (text, "off")) {
        *out = 0;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod (text, &end);
    if (end == text || errno || !isfinite (v) || v < 0)
        return gc_err_set (err, 1, "%s: '%s' is not a rate (e.g. 100mbit, 500kB, 250000, off)", what, text);
    for (size_t i = 0; i < sizeof units / sizeof units [0]; i++)
        if (!strcmp (end, units [i].unit)) {
            *out = v * units [i].bytes;
            if (*out > 0 && *out < 1000)
                return gc_err_set (err, 1, "%s: '%s' is below 1000 bytes/s", what, text);
            if (*out > 1e13)
                return gc_err_set (err, 1, "%s: '%s' is above 10 TB/s", what, text);
            return 0;
        }
    return gc_err_set (err, 1, "%s: unknown unit in '%s' (B, kB, MB, GB, bit, kbit, mbit, gbit)", what, text);
}

void
gc_text_add (char *buf, size_t size, size_t *used, const char *fmt, ...)
{
    if (*used >= size)
        return;
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (buf + *used, size - *used, fmt, ap);
    va_end (ap);
    *used += n > 0 ? (size_t) n : 0;
}

const char *
gc_text_join (char *buf, size_t size, const char *sep, const char *(*item) (size_t i))
{
    size_t used = 0;
    if (size)
        buf [0] = 0;
    for (size_t i = 0; item (i); i++)
        gc_text_add (buf, size, &used, "%s%s", i ? sep : "", item (i));
    return buf;
}
