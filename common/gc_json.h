/*  gc_json — a small JSON reader for what gcnet reads from its peers
    (metrics lines, control replies, status files), and the writer every
    JSON producer uses (node's status and metrics, gcnet's reports), so
    strings are escaped by one rule everywhere.

    Input is hostile (a file any peer writes): the parser checks every byte,
    bounds the nesting depth and the text length, and never reads past len.
    The tree owns its strings; numbers are doubles. */
#ifndef GC_JSON_H
#define GC_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "gc_buf.h"
#include "gc_err.h"

#define GC_JSON_MAX_DEPTH 32
#define GC_JSON_MAX_TEXT  (16u << 20)

typedef enum {
    GC_JSON_NULL, GC_JSON_BOOL, GC_JSON_NUMBER, GC_JSON_STRING, GC_JSON_ARRAY, GC_JSON_OBJECT
} gc_json_type_t;

typedef struct gc_json_t gc_json_t;
struct gc_json_t {
    gc_json_type_t type;
    double         number;      /* NUMBER; BOOL as 0/1 */
    char          *string;      /* STRING */
    char          *key;         /* member name when the parent is an OBJECT */
    gc_json_t     *child;       /* first element / member */
    gc_json_t     *next;        /* next sibling */
};

/*  Parse exactly one JSON value (surrounding white space allowed). */
gc_json_t  *gc_json_parse (const char *text, size_t len, gc_err_t *err);
void        gc_json_destroy (gc_json_t **self_p);

/*  Member of an object by name (NULL if absent or self is not an object). */
const gc_json_t *gc_json_get (const gc_json_t *self, const char *key);
/*  Member as a number / string, or def when absent or of another type. */
double      gc_json_num (const gc_json_t *self, const char *key, double def);
const char *gc_json_str (const gc_json_t *self, const char *key, const char *def);

/*  Write s (NULL: "") as a JSON string literal: '"' and '\\' get a
    backslash, newline and tab are \n and \t, other bytes < 0x20 \u00XX,
    the rest (UTF-8 included) is copied. */
void        gc_json_write_string (FILE *out, const char *s);
/*  A finite number as %.10g, or null (JSON has no NaN/Inf). */
void        gc_json_write_number (FILE *out, double v);
/*  A finite number with fmt (one double conversion, e.g. "%.3f"), or null. */
void        gc_json_write_double (FILE *out, const char *fmt, double v);
/*  gc_json_write_string appending to a buffer; -1 when it cannot grow. */
int         gc_json_buf_string (gc_buf_t *out, const char *s, gc_err_t *err);

#endif
