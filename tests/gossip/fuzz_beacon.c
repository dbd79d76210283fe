/*  Beacons come from anyone on the LAN: the parser must refuse or read any
    bytes without reading past them, and what it accepts is a checked
    endpoint. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gc_discovery.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    //  The first bytes up to a NUL (at most 46) play the source address.
    size_t split = 0;
    while (split < size && split < 46 && data [split])
        split++;
    char source [47];
    memcpy (source, data, split);
    source [split] = 0;
    const uint8_t *beacon = split < size ? data + split + 1 : data + size;
    size_t len = split < size ? size - split - 1 : 0;
    //  An exact-size copy, so that a read past the end is caught.
    uint8_t *copy = malloc (len ? len : 1);
    if (!copy)
        return 0;
    memcpy (copy, beacon, len);
    uint8_t id [8];
    char endpoint [GC_DISCOVERY_ENDPOINT_MAX + 1];
    if (gc_discovery_parse (copy, len, source, id, endpoint) == 0) {
        size_t n = strlen (endpoint);
        if (n > GC_DISCOVERY_ENDPOINT_MAX || strncmp (endpoint, "tcp://", 6) || strchr (endpoint, ' '))
            abort ();
    }
    free (copy);
    return 0;
}
