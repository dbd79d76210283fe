/*  gc_hex — lowercase hexadecimal for keys, peer ids, digests and test
    vectors. Decoding is strict: an even number of hex digits, nothing else. */
#ifndef GC_HEX_H
#define GC_HEX_H

#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"

/*  Write 2*len lowercase hex digits and a NUL to out (2*len+1 bytes). */
void gc_hex_encode (const uint8_t *data, size_t len, char *out);

/*  Decode hex text into out (at most out_max bytes); *out_len gets the byte
    count. -1 on an odd length, a non-hex character or too much data; `what`
    names the value in the message. */
int  gc_hex_decode (const char *hex, uint8_t *out, size_t out_max, size_t *out_len,
                    const char *what, gc_err_t *err);

#endif
