/*  The fuzzer's seed corpus: one valid payload per method and layout.
    As a test, checks that every committed seed still decodes (so the
    corpus follows format changes); with --write DIR, writes the seeds. */
#include "gc_test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_layouts.h"
#include "gc_compressor.h"
#include "gc_ec.h"
#include "gc_lgc_codec.h"
#include "gc_rng.h"

static const char *s_specs [] = {
    "none", "fp16", "topk:0.05", "topk:0.5:fp16", "topk:0.02:layer", "randk:0.1", "threshold:1.5",
    "qsgd:4:bucket=16", "sign:bucket=8", "powersgd:2", "powersgd:1:fp16", "lbs:topk:0.1",
    //  Every entry selected: dense sections in a top-k payload.
    "topk:1",
    //  Its first payload carries the decoder its lgc sections name.
    "lgc:0.1:4:warmup=0",
};
#define S_NSPECS (sizeof s_specs / sizeof s_specs [0])

static int
s_write (const char *dir)
{
    gc_buf_t out;
    gc_buf_init (&out);
    for (int l = 0; l < FUZZ_N_LAYOUTS; l++) {
        gc_layout_t layout;
        fuzz_layout (l, &layout);
        float *x = malloc (layout.n_params * sizeof *x);
        gc_rng_t rng;
        gc_rng_init (&rng, 1, (uint64_t) l);
        gc_rng_fill_normal (&rng, x, layout.n_params, 0.0f, 1.0f);
        for (size_t s = 0; s <= S_NSPECS; s++) {
            gc_compressor_t *comp = gc_compressor_new (s < S_NSPECS ? s_specs [s] : "topk", &layout, 5, NULL);
            int rc;
            if (s < S_NSPECS)
                rc = gc_compressor_compress (comp, x, 1, &out, NULL);
            else {
                //  An exact LIEC payload (round H - 1).
                gc_ec_t *ec = gc_ec_new ("liec:2", comp, NULL);
                rc = gc_ec_step (ec, x, 1, &out, NULL, NULL, NULL);
                gc_ec_destroy (&ec);
            }
            gc_compressor_destroy (&comp);
            if (rc)
                return 1;
            char path [512];
            snprintf (path, sizeof path, "%s/seed-l%d-%02zu", dir, l, s);
            FILE *f = fopen (path, "wb");
            if (!f)
                return 1;
            uint8_t which = (uint8_t) l;
            fwrite (&which, 1, 1, f);
            fwrite (out.data, 1, out.len, f);
            fclose (f);
        }
        free (x);
    }
    gc_buf_free (&out);
    return 0;
}

static void
test_corpus_seeds_decode (void **state)
{
    char *dir = gc_test_source_path ("tests/compress/corpus/fuzz_payload");
    DIR *d = opendir (dir);
    assert_non_null (d);
    struct dirent *e;
    int seeds = 0;
    static float into [FUZZ_MAX_PARAMS];
    while ((e = readdir (d))) {
        if (e->d_name [0] == '.')
            continue;
        char path [1024];
        snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen (path, "rb");
        assert_non_null (f);
        static uint8_t data [1 << 20];
        size_t size = fread (data, 1, sizeof data, f);
        fclose (f);
        assert_true (size > 1);
        gc_layout_t layout;
        fuzz_layout (data [0], &layout);
        gc_err_t err;
        gc_lgc_codec_t *codec = gc_payload_codec (data + 1, size - 1, &layout, &err);
        if (!codec && err.code)
            fail_msg ("%s: %s", e->d_name, err.msg);
        if (gc_payload_decompress_add_with (data + 1, size - 1, &layout, codec, into, &err))
            fail_msg ("%s: %s", e->d_name, err.msg);
        gc_lgc_codec_destroy (&codec);
        seeds++;
    }
    closedir (d);
    free (dir);
    assert_int_equal (seeds, FUZZ_N_LAYOUTS * (S_NSPECS + 1));
}

int
main (int argc, char **argv)
{
    if (argc == 3 && !strcmp (argv [1], "--write"))
        return s_write (argv [2]);
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_corpus_seeds_decode),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
