#include "prom_check.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_MAX_FAMILIES 512
#define S_MAX_SERIES   8192

typedef struct {
    char name [128];
    char type [16];
    bool help, done;
} s_family_t;

typedef struct {
    s_family_t families [S_MAX_FAMILIES];
    size_t     n_families;
    char     **series;
    size_t     n_series;
    long       line;
    char      *msg;
    size_t     size;
    const char *current;            /* family of the samples being read */
} s_state_t;

static int
s_fail (s_state_t *s, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    int n = snprintf (s->msg, s->size, "line %ld: ", s->line);
    vsnprintf (s->msg + n, s->size - (size_t) n, fmt, ap);
    va_end (ap);
    return -1;
}

static bool
s_name_ok (const char *p, size_t len, bool metric)
{
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = p [i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'
               || (metric && c == ':') || (i > 0 && c >= '0' && c <= '9');
        if (!ok)
            return false;
    }
    return true;
}

static s_family_t *
s_family (s_state_t *s, const char *name, size_t len, bool create)
{
    for (size_t i = 0; i < s->n_families; i++)
        if (strlen (s->families [i].name) == len && !strncmp (s->families [i].name, name, len))
            return &s->families [i];
    if (!create || s->n_families == S_MAX_FAMILIES || len >= sizeof s->families [0].name)
        return NULL;
    s_family_t *f = &s->families [s->n_families++];
    memset (f, 0, sizeof *f);
    memcpy (f->name, name, len);
    return f;
}

static int
s_comment (s_state_t *s, const char *line, size_t len)
{
    bool help = len > 7 && !strncmp (line, "# HELP ", 7);
    bool type = len > 7 && !strncmp (line, "# TYPE ", 7);
    if (!help && !type)
        return 0;                       /* other comments are allowed */
    const char *name = line + 7, *sp = memchr (name, ' ', len - 7);
    if (!sp || !s_name_ok (name, (size_t) (sp - name), true))
        return s_fail (s, "bad metric name in %s", help ? "HELP" : "TYPE");
    s_family_t *f = s_family (s, name, (size_t) (sp - name), true);
    if (!f)
        return s_fail (s, "too many families");
    if (f->done || (s->current && !strcmp (s->current, f->name)))
        return s_fail (s, "%s for %s after its samples", help ? "HELP" : "TYPE", f->name);
    if (help) {
        if (f->help)
            return s_fail (s, "second HELP for %s", f->name);
        f->help = true;
        return 0;
    }
    if (*f->type)
        return s_fail (s, "second TYPE for %s", f->name);
    size_t tlen = len - (size_t) (sp + 1 - line);
    static const char *types [] = { "counter", "gauge", "histogram", "summary", "untyped" };
    for (size_t i = 0; i < 5; i++)
        if (tlen == strlen (types [i]) && !strncmp (sp + 1, types [i], tlen))
            snprintf (f->type, sizeof f->type, "%s", types [i]);
    return *f->type ? 0 : s_fail (s, "unknown type for %s", f->name);
}

//  {a="x",b="y"}: names, quotes and escapes; no label twice.
static int
s_labels (s_state_t *s, const char **pp, const char *end)
{
    const char *p = *pp + 1;
    char seen [32][64];
    size_t n = 0;
    while (p < end && *p != '}') {
        const char *eq = p;
        while (eq < end && *eq != '=')
            eq++;
        if (eq >= end || !s_name_ok (p, (size_t) (eq - p), false) || eq - p >= 64)
            return s_fail (s, "bad label name");
        for (size_t i = 0; i < n; i++)
            if (strlen (seen [i]) == (size_t) (eq - p) && !strncmp (seen [i], p, (size_t) (eq - p)))
                return s_fail (s, "label %.*s twice", (int) (eq - p), p);
        if (n < 32) {
            memcpy (seen [n], p, (size_t) (eq - p));
            seen [n++][eq - p] = 0;
        }
        p = eq + 1;
        if (p >= end || *p != '"')
            return s_fail (s, "label value not quoted");
        for (p++; p < end && *p != '"'; p++)
            if (*p == '\\') {
                p++;
                if (p >= end || !strchr ("\\\"n", *p))
                    return s_fail (s, "bad escape in a label value");
            }
            else
            if (*p == '\n')
                return s_fail (s, "newline in a label value");
        if (p >= end)
            return s_fail (s, "unterminated label value");
        p++;
        if (p < end && *p == ',')
            p++;
        else
        if (p < end && *p != '}')
            return s_fail (s, "expected , or } after a label");
    }
    if (p >= end)
        return s_fail (s, "unterminated label set");
    *pp = p + 1;
    return 0;
}

static int
s_value (const char *p, size_t len, double *v)
{
    char token [64];
    if (len == 0 || len >= sizeof token)
        return -1;
    memcpy (token, p, len);
    token [len] = 0;
    if (!strcmp (token, "NaN")) {
        *v = NAN;
        return 0;
    }
    if (!strcmp (token, "+Inf") || !strcmp (token, "-Inf")) {
        *v = token [0] == '+' ? INFINITY : -INFINITY;
        return 0;
    }
    char *end;
    *v = strtod (token, &end);
    //  strtod also takes "inf" and "nan" spelled otherwise: not in this format
    return *end || strpbrk (token, "iInN") ? -1 : 0;
}

static int
s_sample (s_state_t *s, const char *line, size_t len)
{
    const char *end = line + len, *p = line;
    while (p < end && *p != '{' && *p != ' ')
        p++;
    if (!s_name_ok (line, (size_t) (p - line), true))
        return s_fail (s, "bad metric name");
    s_family_t *f = s_family (s, line, (size_t) (p - line), false);
    if (!f || !*f->type || !f->help)
        return s_fail (s, "sample of %.*s without HELP and TYPE before it", (int) (p - line), line);
    if (f->done)
        return s_fail (s, "samples of %s are not contiguous", f->name);
    if (s->current && strcmp (s->current, f->name))
        s_family (s, s->current, strlen (s->current), false)->done = true;
    s->current = f->name;
    if (p < end && *p == '{' && s_labels (s, &p, end))
        return -1;
    if (p >= end || *p != ' ')
        return s_fail (s, "expected a space before the value");
    size_t key_len = (size_t) (p - line);
    const char *vstart = ++p;
    while (p < end && *p != ' ')
        p++;
    double v;
    if (s_value (vstart, (size_t) (p - vstart), &v))
        return s_fail (s, "bad value '%.*s'", (int) (p - vstart), vstart);
    if (p < end) {
        //  optional timestamp: an integer (milliseconds)
        const char *ts = ++p;
        while (p < end && ((*p >= '0' && *p <= '9') || (p == ts && *p == '-')))
            p++;
        if (p != end || p == ts)
            return s_fail (s, "bad timestamp");
    }
    if (!strcmp (f->type, "counter")) {
        size_t nlen = strlen (f->name);
        if (nlen < 6 || strcmp (f->name + nlen - 6, "_total"))
            return s_fail (s, "counter %s does not end in _total", f->name);
        if (!(v >= 0))
            return s_fail (s, "counter %s is negative or NaN", f->name);
    }
    for (size_t i = 0; i < s->n_series; i++)
        if (strlen (s->series [i]) == key_len && !strncmp (s->series [i], line, key_len))
            return s_fail (s, "series %.*s twice", (int) key_len, line);
    if (s->n_series == S_MAX_SERIES)
        return s_fail (s, "too many series");
    s->series [s->n_series] = strndup (line, key_len);
    s->n_series++;
    return 0;
}

int
prom_check (const char *text, char *msg, size_t size)
{
    s_state_t *s = calloc (1, sizeof *s);
    s->series = calloc (S_MAX_SERIES, sizeof *s->series);
    s->msg = msg;
    s->size = size;
    int rc = 0;
    size_t total = strlen (text);
    if (total == 0 || text [total - 1] != '\n')
        rc = s_fail (s, "empty or no final newline");
    for (const char *p = text; rc == 0 && *p; ) {
        const char *nl = strchr (p, '\n');
        size_t len = (size_t) (nl - p);
        s->line++;
        if (len == 0)
            rc = s_fail (s, "empty line");
        else
        if (*p == '#')
            rc = s_comment (s, p, len);
        else
            rc = s_sample (s, p, len);
        p = nl + 1;
    }
    if (rc == 0 && s->n_series == 0)
        rc = s_fail (s, "no samples");
    for (size_t i = 0; i < s->n_series; i++)
        free (s->series [i]);
    free (s->series);
    free (s);
    return rc;
}

double
prom_value (const char *text, const char *series)
{
    size_t len = strlen (series);
    for (const char *p = text; p && *p; ) {
        if (!strncmp (p, series, len) && p [len] == ' ') {
            double v;
            const char *vs = p + len + 1, *ve = vs + strcspn (vs, " \n");
            return s_value (vs, (size_t) (ve - vs), &v) == 0 ? v : NAN;
        }
        p = strchr (p, '\n');
        if (p)
            p++;
    }
    return NAN;
}
