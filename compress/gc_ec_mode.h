/*  gc_ec_mode — one error-compensation mode as gc_ec sees it: its keyword,
    parameter, and whether (and when) it keeps a residual or sends an exact
    synchronisation. Each mode defines one const gc_ec_mode_t; gc_ec_modes.c
    lists them (the only place that does) and gc_ec.c runs whichever was
    named. docs/ARCHITECTURE.md says how to add one. */
#ifndef GC_EC_MODE_H
#define GC_EC_MODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"
#include "gc_parse.h"

typedef struct {
    const char *name;           /* keyword, sp->tok [0] */
    const char *usage;          /* "liec[:H=8]", for help texts and errors */
    const char *help;           /* one line */
    const char *example;        /* a spec it accepts (the registry test parses it) */
    const char *malformed;      /* one it rejects */
    bool        residual;       /* keeps e = what the neighbours have not received */
    /*  The tokens after the keyword into *param (preset to 0); the caller
        prefixes the message with the spec. */
    int   (*parse) (const gc_spec_t *sp, uint64_t *param, gc_err_t *err);
    /*  Canonical name ("liec:8"; NULL: the keyword). */
    void  (*describe) (uint64_t param, char *buf, size_t size);
    /*  Whether this round's payload is an exact synchronisation (NULL: never). */
    bool  (*exact_round) (uint64_t param, uint64_t round);
} gc_ec_mode_t;

/*  The registry, NULL-terminated. */
extern const gc_ec_mode_t *const gc_ec_modes [];
extern const gc_ec_mode_t gc_ec_mode_none, gc_ec_mode_ef, gc_ec_mode_liec;

/*  By keyword, or NULL. */
const gc_ec_mode_t *gc_ec_mode_find (const char *keyword);

/*  For modes without parameters: any token after the keyword is an error. */
int  gc_ec_mode_parse_none (const gc_spec_t *sp, uint64_t *param, gc_err_t *err);

#endif
