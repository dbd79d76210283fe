/*  The scenario parser on arbitrary text: errors or a scenario, never a
    crash or a leak; a scenario that parses can be linted and written out. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_scenario.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (size > 16384)
        return 0;
    char *text = malloc (size + 1);
    if (!text)
        return 0;
    memcpy (text, data, size);
    text [size] = '\0';
    gc_err_t err = { 0 };
    gc_scenario_t *sc = gc_scenario_load_str (text, "fuzz.zpl", &err);
    if (sc) {
        gc_scenario_lint (sc, NULL, &err);
        static const char *eps [GC_SCENARIO_MAX_PEERS], *keys [GC_SCENARIO_MAX_PEERS];
        for (size_t i = 0; i < GC_SCENARIO_MAX_PEERS; i++) {
            eps [i] = "tcp://127.0.0.1:1";
            keys [i] = "k.pub";
        }
        gc_peer_env_t env = { .endpoints = eps, .public_keys = keys, .private_key = "k.key" };
        FILE *out = fopen ("/dev/null", "w");
        if (out) {
            gc_scenario_write_config (sc, 0, &env, out, &err);
            fclose (out);
        }
        gc_scenario_destroy (&sc);
    }
    free (text);
    return 0;
}
