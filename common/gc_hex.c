#include "gc_hex.h"

#include <string.h>

void
gc_hex_encode (const uint8_t *data, size_t len, char *out)
{
    static const char digits [] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        out [2 * i] = digits [data [i] >> 4];
        out [2 * i + 1] = digits [data [i] & 15];
    }
    out [2 * len] = '\0';
}

static int
s_nibble (char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int
gc_hex_decode (const char *hex, uint8_t *out, size_t out_max, size_t *out_len,
               const char *what, gc_err_t *err)
{
    size_t n = strlen (hex);
    if (n % 2)
        return gc_err_set (err, GC_E_PARSE, "%s: odd number of hex digits (%zu)", what, n);
    if (n / 2 > out_max)
        return gc_err_set (err, GC_E_RANGE, "%s: %zu bytes of hex, at most %zu allowed", what, n / 2, out_max);
    for (size_t i = 0; i < n / 2; i++) {
        int hi = s_nibble (hex [2 * i]), lo = s_nibble (hex [2 * i + 1]);
        if (hi < 0 || lo < 0)
            return gc_err_set (err, GC_E_PARSE, "%s: '%c' at position %zu is not a hex digit", what,
                               hi < 0 ? hex [2 * i] : hex [2 * i + 1], hi < 0 ? 2 * i : 2 * i + 1);
        out [i] = (uint8_t) (hi << 4 | lo);
    }
    if (out_len)
        *out_len = n / 2;
    return 0;
}
