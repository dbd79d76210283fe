/*  gc_compress_method — what one compression method is to the rest of
    compress/: its spec keyword, wire id, option parser, canonical name,
    encoder and the section encodings a receiver accepts from it.

    Each method defines one const gc_compress_method_t in its own file
    (gc_dense.c, gc_topk.c, ...); gc_compress_methods.c lists them, and is
    the only place that does: the spec parser, the payload writer and reader,
    the "known methods" list of error messages and the registry test all walk
    that list. docs/ARCHITECTURE.md says how to add one. */
#ifndef GC_COMPRESS_METHOD_H
#define GC_COMPRESS_METHOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_buf.h"
#include "gc_compress_internal.h"
#include "gc_compressor.h"
#include "gc_err.h"
#include "gc_parse.h"

/*  One (section encoding, value format) pair a method may send, as a bit of
    gc_compress_method_t.sections (encoding gc_encoding_t, format gc_valfmt_t). */
#define GC_SECTION_BIT(enc, fmt)    (1u << ((enc) * 2 + (fmt)))
/*  An encoding in either value format. */
#define GC_SECTION_BITS(enc)        (GC_SECTION_BIT (enc, 0) | GC_SECTION_BIT (enc, 1))

struct gc_compress_method_t {
    const char *name;           /* spec keyword */
    const char *alias;          /* another keyword for the same method, or NULL */
    int         wire_id;        /* gc_method_t, header byte 4; -1 for a wrapper (lbs) */
    const char *usage;          /* grammar with defaults, for help and docs */
    const char *help;           /* what it does, one line */
    const char *example;        /* a spec it accepts (the registry test parses it) */
    const char *malformed;      /* a spec it rejects, with an error naming the spec */
    uint32_t    sections;       /* GC_SECTION_BIT of everything it may send */
    bool        checks_finite;  /* encode finds non-finite input itself (one pass fewer) */
    bool        wrapper;        /* takes another method's spec after its options */

    /*  Parse the tokens after the keyword from sp->tok [*at] on, advancing
        *at, into self (valfmt is preset to fp32). Plain methods must take
        every token; a wrapper also builds its inner compressor. The message
        need not name the spec: gc_compressor_new prefixes it. */
    int  (*parse) (gc_compressor_t *self, const gc_spec_t *sp, int *at, gc_err_t *err);
    /*  The canonical spec, every default spelled out (gc_compressor_name). */
    void (*describe) (const gc_compressor_t *self, char *buf, size_t size);
    /*  State after parsing, and its release (NULL: none). */
    int  (*init) (gc_compressor_t *self, gc_err_t *err);
    void (*fini) (gc_compressor_t *self);
    /*  The payload header's seed for a round (NULL: 0); it is passed to encode. */
    uint64_t (*header_seed) (const gc_compressor_t *self, uint64_t round);
    /*  Append the sections of layers [lo, hi) of x (the header is written). */
    int  (*encode) (gc_compressor_t *self, const float *x, uint64_t round, uint64_t seed,
                    size_t lo, size_t hi, gc_buf_t *out, gc_err_t *err);
    /*  The whole round instead of one encode over every layer (NULL: that). */
    int  (*compress) (gc_compressor_t *self, const float *x, uint64_t round,
                      gc_buf_t *out, gc_err_t *err);
};

/*  The registry, NULL-terminated, in wire-id order (wrappers last). */
extern const gc_compress_method_t *const gc_compress_methods [];

/*  By spec keyword or alias, or NULL. */
const gc_compress_method_t *gc_compress_method_find (const char *keyword);
/*  By wire id, or NULL for an id no method sends. */
const gc_compress_method_t *gc_compress_method_by_id (int wire_id);

/*  The methods' definitions (one file each). */
extern const gc_compress_method_t gc_method_none, gc_method_fp16, gc_method_topk,
       gc_method_randk, gc_method_threshold, gc_method_qsgd, gc_method_sign,
       gc_method_powersgd, gc_method_lgc, gc_method_lbs;

/*  ---- helpers the methods' parsers share (gc_compressor.c) ---- */

/*  An optional leading number in [lo, hi] at sp->tok [*at]: 1 and *at
    advanced when there is one, 0 when the token is no number, -1 on a
    bad one. integer: reject fractions ("what: 2.5 is not an integer"). */
int  gc_compress_opt_number (const gc_spec_t *sp, int *at, double lo, double hi, bool integer,
                             const char *what, double *out, gc_err_t *err);
/*  "key=value" with value in [lo, hi]: *matched tells whether tok has the key. */
int  gc_compress_opt_keyval (const char *tok, const char *key, double lo, double hi,
                             double *out, bool *matched, gc_err_t *err);
/*  "fp16" / "fp32": sets self->valfmt and returns true, else false. */
bool gc_compress_opt_valfmt (gc_compressor_t *self, const char *tok);
/*  tok is `yes` or `no`: *out = (tok is yes), true; else false. */
bool gc_compress_opt_choice (const char *tok, const char *yes, const char *no, bool *out);
/*  Every token from *at on is "fp16" / "fp32" (the last wins), or an error. */
int  gc_compress_opt_valfmts (gc_compressor_t *self, const gc_spec_t *sp, int *at, gc_err_t *err);
/*  Every token from *at on is "bucket=N", N an integer >= lo, into self->bucket. */
int  gc_compress_opt_buckets (gc_compressor_t *self, const gc_spec_t *sp, int *at, double lo,
                              gc_err_t *err);
/*  The error for an option the method does not know. */
int  gc_compress_opt_unknown (const gc_compressor_t *self, const char *tok, gc_err_t *err);
/*  "fp16" or "fp32" for self->valfmt, for canonical names. */
const char *gc_compress_valfmt_name (const gc_compressor_t *self);

/*  Build a compressor from the spec tokens starting at sp->tok [first]
    (a wrapper builds its inner one so). */
gc_compressor_t *gc_compressor_new_at (const gc_spec_t *sp, int first, const gc_layout_t *layout,
                                       uint64_t seed, gc_err_t *err);

#endif
