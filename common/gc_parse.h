/*  gc_parse — checked parsing of numbers and spec strings.

    Spec strings ("topk:0.01", "cwtm:1", "quorum:3", "784-256-128-10") and
    command-line values are hostile input: every parse checks the whole token,
    its range, and names what it was parsing in the error. */
#ifndef GC_PARSE_H
#define GC_PARSE_H

#include <stddef.h>

#include "gc_err.h"

#define GC_SPEC_MAX_TOKENS 16
#define GC_SPEC_MAX_LEN    256

typedef struct {
    char   buf [GC_SPEC_MAX_LEN];
    char  *tok [GC_SPEC_MAX_TOKENS];
    int    n;
} gc_spec_t;

/*  Split text on sep into tokens (empty tokens allowed). -1 when text is too
    long or has too many tokens; `what` names the spec in the message. */
int gc_spec_split (gc_spec_t *self, const char *text, char sep,
                   const char *what, gc_err_t *err);

/*  Whole-token numbers within [lo, hi]; `what` names the value in messages. */
int gc_parse_double (const char *s, double lo, double hi, double *out,
                     const char *what, gc_err_t *err);
int gc_parse_long (const char *s, long lo, long hi, long *out,
                   const char *what, gc_err_t *err);
/*  Unsigned 64-bit, decimal or 0x-hex. */
int gc_parse_u64 (const char *s, unsigned long long *out,
                  const char *what, gc_err_t *err);
/*  A rate in bytes/s: "100mbit", "12.5MB", "250000", "off" / "0" (unlimited);
    units B kB MB GB and bit kbit mbit gbit (decimal); 1000 B/s to 10 TB/s. */
int gc_parse_rate (const char *text, double *out, const char *what, gc_err_t *err);

/*  Append printf-formatted text at buf + *used (buf holds size bytes), never
    past its end, and advance *used: the lists of known names the method
    registries build for help texts and error messages. */
void gc_text_add (char *buf, size_t size, size_t *used, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
/*  buf = item (0) sep item (1) sep ... up to the first NULL item, truncated
    to size bytes; returns buf. */
const char *gc_text_join (char *buf, size_t size, const char *sep, const char *(*item) (size_t i));

#endif
