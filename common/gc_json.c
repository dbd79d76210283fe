#include "gc_json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *p, *end;
    gc_err_t   *err;
    const char *start;
} s_in_t;

static int
s_fail (s_in_t *in, const char *what)
{
    return gc_err_set (in->err, GC_E_PARSE, "json: %s at offset %zu", what, (size_t) (in->p - in->start));
}

static void
s_skip_ws (s_in_t *in)
{
    while (in->p < in->end && (*in->p == ' ' || *in->p == '\t' || *in->p == '\n' || *in->p == '\r'))
        in->p++;
}

static gc_json_t *s_value (s_in_t *in, int depth);

static int
s_hex4 (s_in_t *in, unsigned *out)
{
    if (in->end - in->p < 4)
        return s_fail (in, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = in->p [i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned) (c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned) (c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned) (c - 'A' + 10);
        else return s_fail (in, "bad \\u escape");
    }
    in->p += 4;
    *out = v;
    return 0;
}

static size_t
s_utf8 (unsigned cp, char *out)
{
    if (cp < 0x80) { out [0] = (char) cp; return 1; }
    if (cp < 0x800) {
        out [0] = (char) (0xC0 | (cp >> 6));
        out [1] = (char) (0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out [0] = (char) (0xE0 | (cp >> 12));
        out [1] = (char) (0x80 | ((cp >> 6) & 0x3F));
        out [2] = (char) (0x80 | (cp & 0x3F));
        return 3;
    }
    out [0] = (char) (0xF0 | (cp >> 18));
    out [1] = (char) (0x80 | ((cp >> 12) & 0x3F));
    out [2] = (char) (0x80 | ((cp >> 6) & 0x3F));
    out [3] = (char) (0x80 | (cp & 0x3F));
    return 4;
}

//  The decoded string is never longer than its escaped form, so one
//  allocation of the raw span suffices.
static char *
s_string (s_in_t *in)
{
    in->p++;                                    /* opening quote */
    const char *q = in->p;
    while (q < in->end && *q != '"')
        q += (*q == '\\' && q + 1 < in->end) ? 2 : 1;
    if (q >= in->end) {
        s_fail (in, "unterminated string");
        return NULL;
    }
    char *out = malloc ((size_t) (q - in->p) + 1);
    if (!out) {
        s_fail (in, "out of memory");
        return NULL;
    }
    size_t n = 0;
    while (in->p < q) {
        unsigned char c = (unsigned char) *in->p;
        if (c < 0x20) {
            free (out);
            s_fail (in, "control character in string");
            return NULL;
        }
        if (c != '\\') {
            out [n++] = (char) c;
            in->p++;
            continue;
        }
        char e = in->p [1];
        in->p += 2;
        switch (e) {
            case '"': out [n++] = '"'; break;
            case '\\': out [n++] = '\\'; break;
            case '/': out [n++] = '/'; break;
            case 'b': out [n++] = '\b'; break;
            case 'f': out [n++] = '\f'; break;
            case 'n': out [n++] = '\n'; break;
            case 'r': out [n++] = '\r'; break;
            case 't': out [n++] = '\t'; break;
            case 'u': {
                unsigned cp;
                if (in->p > q || s_hex4 (in, &cp)) {
                    free (out);
                    if (in->p > q)
                        s_fail (in, "truncated \\u escape");
                    return NULL;
                }
                //  A \uXXXX escape is 6 input bytes and at most 3 output
                //  bytes; a surrogate pair 12 bytes for 4, so n stays in bounds.
                if (cp >= 0xD800 && cp < 0xDC00 && q - in->p >= 6 && in->p [0] == '\\' && in->p [1] == 'u') {
                    in->p += 2;
                    unsigned lo;
                    if (s_hex4 (in, &lo)) {
                        free (out);
                        return NULL;
                    }
                    if (lo >= 0xDC00 && lo < 0xE000)
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    else
                        cp = 0xFFFD;
                }
                else
                if (cp >= 0xD800 && cp < 0xE000)
                    cp = 0xFFFD;
                n += s_utf8 (cp, out + n);
                break;
            }
            default:
                free (out);
                s_fail (in, "bad escape");
                return NULL;
        }
    }
    out [n] = '\0';
    in->p = q + 1;
    return out;
}

static gc_json_t *
s_node (s_in_t *in, gc_json_type_t type)
{
    gc_json_t *node = calloc (1, sizeof *node);
    if (!node)
        s_fail (in, "out of memory");
    else
        node->type = type;
    return node;
}

static gc_json_t *
s_number (s_in_t *in)
{
    //  strtod would accept hex, inf and nan: check the JSON grammar first.
    const char *q = in->p;
    if (q < in->end && *q == '-')
        q++;
    const char *digits = q;
    while (q < in->end && *q >= '0' && *q <= '9')
        q++;
    if (q == digits) {
        s_fail (in, "unexpected character");
        return NULL;
    }
    if (*digits == '0' && q - digits > 1) {
        s_fail (in, "bad number (leading zero)");
        return NULL;
    }
    if (q < in->end && *q == '.') {
        const char *frac = ++q;
        while (q < in->end && *q >= '0' && *q <= '9')
            q++;
        if (q == frac) {
            s_fail (in, "bad number");
            return NULL;
        }
    }
    if (q < in->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < in->end && (*q == '+' || *q == '-'))
            q++;
        const char *exp = q;
        while (q < in->end && *q >= '0' && *q <= '9')
            q++;
        if (q == exp) {
            s_fail (in, "bad number");
            return NULL;
        }
    }
    char buf [64];
    if (q - in->p >= (long) sizeof buf) {
        s_fail (in, "number too long");
        return NULL;
    }
    memcpy (buf, in->p, (size_t) (q - in->p));
    buf [q - in->p] = '\0';
    gc_json_t *node = s_node (in, GC_JSON_NUMBER);
    if (node)
        node->number = strtod (buf, NULL);
    in->p = q;
    return node;
}

static gc_json_t *
s_literal (s_in_t *in, const char *word, gc_json_type_t type, double value)
{
    size_t len = strlen (word);
    if ((size_t) (in->end - in->p) < len || memcmp (in->p, word, len)) {
        s_fail (in, "unexpected character");
        return NULL;
    }
    in->p += len;
    gc_json_t *node = s_node (in, type);
    if (node)
        node->number = value;
    return node;
}

static gc_json_t *
s_container (s_in_t *in, int depth, bool object)
{
    gc_json_t *node = s_node (in, object ? GC_JSON_OBJECT : GC_JSON_ARRAY);
    if (!node)
        return NULL;
    char close = object ? '}' : ']';
    in->p++;
    s_skip_ws (in);
    if (in->p < in->end && *in->p == close) {
        in->p++;
        return node;
    }
    gc_json_t **tail = &node->child;
    while (true) {
        char *key = NULL;
        if (object) {
            s_skip_ws (in);
            if (in->p >= in->end || *in->p != '"') {
                s_fail (in, "expected a member name");
                break;
            }
            if (!(key = s_string (in)))
                break;
            s_skip_ws (in);
            if (in->p >= in->end || *in->p != ':') {
                free (key);
                s_fail (in, "expected ':'");
                break;
            }
            in->p++;
        }
        gc_json_t *value = s_value (in, depth + 1);
        if (!value) {
            free (key);
            break;
        }
        value->key = key;
        *tail = value;
        tail = &value->next;
        s_skip_ws (in);
        if (in->p < in->end && *in->p == ',') {
            in->p++;
            continue;
        }
        if (in->p < in->end && *in->p == close) {
            in->p++;
            return node;
        }
        s_fail (in, object ? "expected ',' or '}'" : "expected ',' or ']'");
        break;
    }
    gc_json_destroy (&node);
    return NULL;
}

static gc_json_t *
s_value (s_in_t *in, int depth)
{
    if (depth > GC_JSON_MAX_DEPTH) {
        s_fail (in, "nested too deep");
        return NULL;
    }
    s_skip_ws (in);
    if (in->p >= in->end) {
        s_fail (in, "unexpected end");
        return NULL;
    }
    switch (*in->p) {
        case '{': return s_container (in, depth, true);
        case '[': return s_container (in, depth, false);
        case '"': {
            char *s = s_string (in);
            if (!s)
                return NULL;
            gc_json_t *node = s_node (in, GC_JSON_STRING);
            if (node)
                node->string = s;
            else
                free (s);
            return node;
        }
        case 't': return s_literal (in, "true", GC_JSON_BOOL, 1);
        case 'f': return s_literal (in, "false", GC_JSON_BOOL, 0);
        case 'n': return s_literal (in, "null", GC_JSON_NULL, 0);
        default: return s_number (in);
    }
}

gc_json_t *
gc_json_parse (const char *text, size_t len, gc_err_t *err)
{
    if (!text)
        return gc_err_set (err, GC_E_PARSE, "json: no text"), NULL;
    if (len > GC_JSON_MAX_TEXT)
        return gc_err_set (err, GC_E_RANGE, "json: %zu bytes is more than %u", len, GC_JSON_MAX_TEXT), NULL;
    s_in_t in = { .p = text, .end = text + len, .err = err, .start = text };
    gc_json_t *root = s_value (&in, 0);
    if (!root)
        return NULL;
    s_skip_ws (&in);
    if (in.p != in.end) {
        s_fail (&in, "trailing characters");
        gc_json_destroy (&root);
    }
    return root;
}

void
gc_json_destroy (gc_json_t **self_p)
{
    gc_json_t *self = *self_p;
    //  Siblings iteratively, children recursively (depth is bounded).
    while (self) {
        gc_json_t *next = self->next;
        gc_json_destroy (&self->child);
        free (self->string);
        free (self->key);
        free (self);
        self = next;
    }
    *self_p = NULL;
}

const gc_json_t *
gc_json_get (const gc_json_t *self, const char *key)
{
    if (!self || self->type != GC_JSON_OBJECT)
        return NULL;
    for (const gc_json_t *c = self->child; c; c = c->next)
        if (c->key && !strcmp (c->key, key))
            return c;
    return NULL;
}

double
gc_json_num (const gc_json_t *self, const char *key, double def)
{
    const gc_json_t *v = gc_json_get (self, key);
    return v && v->type == GC_JSON_NUMBER ? v->number : def;
}

const char *
gc_json_str (const gc_json_t *self, const char *key, const char *def)
{
    const gc_json_t *v = gc_json_get (self, key);
    return v && v->type == GC_JSON_STRING ? v->string : def;
}

//  The escaped form of one byte of a string into e; its length.
static size_t
s_escape (unsigned char c, char e [8])
{
    if (c == '"' || c == '\\') {
        e [0] = '\\';
        e [1] = (char) c;
        return 2;
    }
    if (c == '\n' || c == '\t') {
        e [0] = '\\';
        e [1] = c == '\n' ? 'n' : 't';
        return 2;
    }
    if (c < 0x20)
        return (size_t) snprintf (e, 8, "\\u%04x", c);
    e [0] = (char) c;
    return 1;
}

void
gc_json_write_string (FILE *out, const char *s)
{
    fputc ('"', out);
    char e [8];
    for (const unsigned char *p = (const unsigned char *) (s ? s : ""); *p; p++)
        fwrite (e, 1, s_escape (*p, e), out);
    fputc ('"', out);
}

int
gc_json_buf_string (gc_buf_t *out, const char *s, gc_err_t *err)
{
    char e [8];
    if (gc_buf_append (out, "\"", 1, err))
        return -1;
    for (const unsigned char *p = (const unsigned char *) (s ? s : ""); *p; p++)
        if (gc_buf_append (out, e, s_escape (*p, e), err))
            return -1;
    return gc_buf_append (out, "\"", 1, err);
}

void
gc_json_write_number (FILE *out, double v)
{
    gc_json_write_double (out, "%.10g", v);
}

void
gc_json_write_double (FILE *out, const char *fmt, double v)
{
    if (isfinite (v))
        fprintf (out, fmt, v);
    else
        fputs ("null", out);
}
