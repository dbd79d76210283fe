/*  gc_json — a small JSON reader (and a string writer) for what gcnet reads
    from its peers: metrics lines (node/gc_metrics.c) and control replies.

    Input is hostile (a file any peer writes): the parser checks every byte,
    bounds the nesting depth and the text length, and never reads past len.
    The tree owns its strings; numbers are doubles. */
#ifndef GC_JSON_H
#define GC_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

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

/*  Write s as a JSON string literal (quotes, escapes; bytes < 0x20 as \u00XX). */
void        gc_json_write_string (FILE *out, const char *s);
/*  A finite number, or null (JSON has no NaN/Inf). */
void        gc_json_write_number (FILE *out, double v);

#endif
