/*  gc_cnn: every layer's gradient against finite differences (strides,
    padding, pooling, GroupNorm, the residual join with and without a
    projection, Winograd's convolutions), Winograd against the lowering,
    chunked lowering against one sample at a time, determinism,
    the same bytes at every kernel level, the spec grammar and its errors. */
#include "gc_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gc_cnn.h"
#include "gc_conv.h"
#include "gc_cpu.h"
#include "gc_mem.h"
#include "gc_model.h"
#include "gc_rng.h"

//  Random parameters (GroupNorm scales around 1) and inputs, from seed.
static void
s_fill (gc_rng_t *rng, float *a, size_t n, float scale)
{
    for (size_t i = 0; i < n; i++)
        a [i] = scale * (2.0f * gc_rng_float (rng) - 1.0f);
}

static size_t
s_input_dim (const gc_cnn_t *cnn)
{
    gc_shape_t s = gc_cnn_net (cnn)->input;
    return s.channels * s.height * s.width;
}

//  Central differences of the loss at coordinates of every layer against
//  the gradient. A ReLU or max-pool kink inside the step spoils a
//  difference (GroupNorm over few values makes kinks frequent), so each
//  coordinate is tried with three steps and passes when one agrees.
static void
s_check_gradient (const char *spec, float eps)
{
    gc_err_t err = { 0 };
    gc_cnn_t *cnn = gc_cnn_new (spec, &err);
    if (!cnn)
        fail_msg ("%s: %s", spec, err.msg);
    gc_cnn_dropout_fix (cnn, true);     /* the same masks in every call */
    const gc_layout_t *layout = gc_cnn_layout (cnn);
    size_t n = layout->n_params, dim = s_input_dim (cnn);
    enum { B = 3, PER_LAYER = 6 };
    gc_rng_t rng;
    gc_rng_init (&rng, 7, 1);
    float *p = gc_falloc (n), *g = gc_falloc (n), *x = gc_falloc (B * dim);
    gc_cnn_init_params (cnn, p, 5);
    //  perturb the initial values so that biases and shifts are not zero
    for (size_t i = 0; i < n; i++)
        p [i] += 0.1f * (2.0f * gc_rng_float (&rng) - 1.0f);
    s_fill (&rng, x, B * dim, 1.0f);
    uint8_t y [B];
    for (int i = 0; i < B; i++)
        y [i] = (uint8_t) gc_rng_below (&rng, (uint64_t) gc_cnn_net (cnn)->classes);
    gc_cnn_loss_grad_smoothed (cnn, p, x, y, B, eps, g, 1.0f, 0.0f, NULL);
    static const float steps [3] = { 1e-3f, 3e-4f, 1e-4f };
    for (size_t l = 0; l < layout->n_layers; l++) {
        const gc_layer_t *layer = &layout->layers [l];
        for (int t = 0; t < PER_LAYER; t++) {
            size_t i = layer->offset + (size_t) gc_rng_below (&rng, layer->count);
            float keep = p [i];
            double worst = INFINITY, fd = 0;
            for (int s = 0; s < 3; s++) {
                p [i] = keep + steps [s];
                double lp = gc_cnn_loss_grad_smoothed (cnn, p, x, y, B, eps, NULL, 1.0f, 0.0f, NULL);
                p [i] = keep - steps [s];
                double lm = gc_cnn_loss_grad_smoothed (cnn, p, x, y, B, eps, NULL, 1.0f, 0.0f, NULL);
                p [i] = keep;
                double d = (lp - lm) / (2.0 * steps [s]);
                if (fabs (d - g [i]) < worst) {
                    worst = fabs (d - g [i]);
                    fd = d;
                }
            }
            if (worst > 1.5e-3 + 3e-2 * fabs (g [i]))
                fail_msg ("%s (label smoothing %g), %s [%zu]: finite difference %.6g, "
                          "gradient %.6g", spec, eps, layer->name, i - layer->offset, fd, g [i]);
        }
    }
    gc_mem_free (p);
    gc_mem_free (g);
    gc_mem_free (x);
    gc_cnn_destroy (&cnn);
}

static void
test_gradients (void **state)
{
    static const char *specs [] = {
        "2x7x7/c3k3s1p1,relu,f3",               /* padding */
        "2x8x8/c3k3s2p1,f3",                    /* stride 2 with padding */
        "1x9x9/c2k4s3p0,f3",                    /* stride 3, no padding, even kernel */
        "2x5x6/c3k5s1p2,f3",                    /* wide padding, not square */
        "2x6x6/c4k1,gn2,relu,f3",               /* GroupNorm, 1x1 convolution */
        "2x6x6/c4,gn1,f3",                      /* GroupNorm, one group */
        "2x6x6/c4,gn4,f3",                      /* GroupNorm, one channel a group */
        "2x8x8/c3,mp2,f3",                      /* max pooling */
        "2x7x7/c3,mp3s2,f3",                    /* overlapping max pooling */
        "2x8x8/c3,ap2,f3",                      /* average pooling */
        "2x7x7/c3,ap3s2,f3",                    /* overlapping average pooling */
        "2x6x6/c4,gap,f3",                      /* global average pooling */
        "2x8x8/c4,gn2,relu,r4g2,f3",            /* residual join, identity shortcut */
        "2x8x8/c4,gn2,relu,r6s2g2,gap,f3",      /* projection shortcut, stride 2 */
        "2x6x6/r4g2,f3",                        /* a block straight on the input */
        "1x8x8/r4s2x2g2,gap,f2",                /* two blocks: projection then identity */
        "1x5x5/f6,relu,f3",                     /* linear layers only */
        "3x4x4/f6,relu,f3",                     /* linear on an input of 3 channels */
        "2x6x6/c4,c3k1,relu,f3",                /* 1x1 stride 1 inside: no lowering */
        "2x6x6/c4,relu,c3k1s2,f3",              /* 1x1 stride 2: lowered */
        "3x6x5/c4,gn2,relu,mp2,f3",             /* GroupNorm + ReLU in one pass, 3 channels */
        "2x6x6/c4,drop30,relu,f3",              /* dropout of a channel-major tensor */
        "1x5x5/f6,relu,drop50,f3",              /* dropout after a linear layer */
        "2x5x5/drop20,c3,f3",                   /* dropout of the input */
        "2x8x8/c4,gn2,relu,drop10,r4g2,f3",     /* dropout into a block (read twice) */
        "2x7x7/c4,gn2,relu,mp2,f3",             /* pooled ReLU after GroupNorm, odd side */
        "2x9x9/c3k5s1p2,relu,mp2s3,f3",         /* pooled ReLU, windows with gaps */
        "2x8x8/c3,relu,mp3s2,f3",               /* overlapping pooling: the ReLU's own pass */
        "2x8x8/c3,relu,mp2,relu,f3",            /* a ReLU on the pooled output as well */
        "3x4x4/c4,gn2,relu,c4,f3",              /* 4x4 planes: the masked lowering */
        "2x6x5/c6,c4k5s1p2,relu,f3",            /* dX as the flipped kernel's convolution, k 5 */
        "2x5x5/c4,relu,c6,f3",                  /* more out than in channels: gathered */
        //  Winograd (8 channels or more each way): odd sides, one column,
        //  more out than in, GroupNorm per chunk, a block's input read twice
        "2x7x7/c8,relu,c8,relu,f3",
        "2x5x1/c8,c8,f3",
        "1x3x4/c8,gn2,relu,c12,gn3,f3",
        "1x6x6/c8,gn4,relu,r8g4x2,gap,f3",
        //  Winograd F(2x2, 5x5): odd sides, a side under the tile's, more
        //  out than in and fewer
        "2x7x5/c8,relu,c8k5,relu,f3",
        //  Winograd with its ReLU and 2x2 pooling in the output transform
        //  (even sides), and without (odd)
        "2x6x6/c8,relu,c8,relu,mp2,f3", "2x6x4/c8,relu,c8k5,relu,mp2,f3",
        "2x7x7/c8,relu,c8,relu,mp2,f3",
        //  the pooling after a chunked GroupNorm, per chunk: lowered, Winograd
        "2x8x8/c4,gn2,relu,mp2,f3", "8x6x6/c8,gn4,relu,mp2,f3",
        "1x3x9/c8,c12k5,gn3,relu,c8k5,f3",
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs [0]; i++)
        s_check_gradient (specs [i], 0.0f);
    //  the smoothed loss back through every kind of layer (the logits'
    //  gradient itself: tests/train/test_xent.c)
    static const struct { const char *spec; float eps; } smoothed [] = {
        { "2x7x7/c3k3s1p1,relu,mp2,f3", 0.1f },
        { "2x8x8/c4,gn2,relu,r6s2g2,gap,f3", 0.1f },
        { "1x5x5/f6,relu,f4", 0.5f },
        { "2x6x6/c4,ap2,f3", 0.9f },
    };
    for (size_t i = 0; i < sizeof smoothed / sizeof smoothed [0]; i++)
        s_check_gradient (smoothed [i].spec, smoothed [i].eps);
}

//  Winograd's convolutions against the im2col lowering: the same loss and
//  gradient but for rounding, on nets of every path that runs them (chunks
//  of many samples, the presets' shapes).
static void
test_winograd (void **state)
{
    (void) state;
    static const char *specs [] = {
        "lenet-w", "resnet8-gn", "1x9x7/c8,relu,c16,gn4,relu,r16x2,f4", "3x16x16/c8,c8,c8,f3",
        //  F(2x2, 5x5): lenet's 16 -> 32 at 14x14, odd sides, fewer out than in
        "lenet", "2x13x11/c8k5,relu,c16k5,gn4,relu,c9k5,f3",
        //  kernel counts (out x in) that are no multiple of the vector width: 90, 110
        "9x8x8/c10,relu,c11,f3",
    };
    enum { B = 20 };
    for (size_t t = 0; t < sizeof specs / sizeof specs [0]; t++) {
        gc_cnn_t *cnn = gc_cnn_new (specs [t], NULL);
        assert_non_null (cnn);
        size_t n = gc_cnn_layout (cnn)->n_params, dim = s_input_dim (cnn);
        float *p = gc_falloc (n), *x = gc_falloc (B * dim), *g = gc_falloc (n), *ref = gc_falloc (n);
        uint8_t y [B];
        gc_rng_t rng;
        gc_rng_init (&rng, 13, t);
        gc_cnn_init_params (cnn, p, 3);
        for (size_t i = 0; i < n; i++)
            p [i] += 0.05f * (2.0f * gc_rng_float (&rng) - 1.0f);
        s_fill (&rng, x, B * dim, 1.0f);
        for (int i = 0; i < B; i++)
            y [i] = (uint8_t) gc_rng_below (&rng, (uint64_t) gc_cnn_net (cnn)->classes);
        gc_cnn_set_winograd (cnn, false);
        double want = gc_cnn_loss_grad (cnn, p, x, y, B, ref, 1.0f, 0.0f, NULL);
        gc_cnn_set_winograd (cnn, true);
        double loss = gc_cnn_loss_grad (cnn, p, x, y, B, g, 1.0f, 0.0f, NULL);
        double worst = 0, scale = 0;
        bool same = true;
        for (size_t j = 0; j < n; j++) {
            worst = fmax (worst, fabs (g [j] - ref [j]));
            scale = fmax (scale, fabs (ref [j]));
            same = same && g [j] == ref [j];
        }
        if (fabs (loss - want) > 1e-5 * fabs (want) || worst > 1e-4 * scale)
            fail_msg ("%s: loss %.9g against %.9g, gradient off by %g of %g", specs [t], loss,
                      want, worst, scale);
        //  and it did take the other path: some float differs in rounding
        if (same)
            fail_msg ("%s: Winograd gave the lowering's bits to the last float", specs [t]);
        gc_mem_free (p);
        gc_mem_free (x);
        gc_mem_free (g);
        gc_mem_free (ref);
        gc_cnn_destroy (&cnn);
    }
}

//  GC_CONV's values: the two lowerings by name, the default when unset,
//  anything else refused by name (and Winograd kept).
static void
test_lowering_names (void **state)
{
    (void) state;
    static const struct { const char *value; int rc; bool winograd; } cases [] = {
        { NULL, 0, true }, { "winograd", 0, true }, { "im2col", 0, false },
        { "", -1, true }, { "IM2COL", -1, true }, { "im2col ", -1, true },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        gc_err_t err = { 0 };
        bool winograd = !cases [i].winograd;
        int rc = gc_cnn_lowering_parse (cases [i].value, &winograd, &err);
        if (rc != cases [i].rc || winograd != cases [i].winograd)
            fail_msg ("GC_CONV=%s: rc %d, winograd %d", cases [i].value ? cases [i].value : "(unset)",
                      rc, (int) winograd);
        if (rc && !strstr (err.msg, cases [i].value))
            fail_msg ("GC_CONV=%s: error '%s' does not name it", cases [i].value, err.msg);
    }
}

//  A batch spanning several lowered chunks gives the mean of its samples'
//  gradients; the same seed gives the same bytes; the workspace grown by a
//  larger batch gives the same answer for a smaller one.
static void
test_chunks_and_determinism (void **state)
{
    const char *spec = "1x28x28/c16k5,relu,mp2,c8,gn2,f10";
    gc_cnn_t *a = gc_cnn_new (spec, NULL), *b = gc_cnn_new (spec, NULL);
    assert_non_null (a);
    assert_non_null (b);
    size_t n = gc_cnn_layout (a)->n_params, dim = s_input_dim (a);
    enum { B = 64 };
    float *p = gc_falloc (n), *g = gc_falloc (n), *g1 = gc_falloc (n), *sum = gc_falloc (n);
    float *x = gc_falloc (B * dim);
    uint8_t y [B];
    gc_rng_t rng;
    gc_rng_init (&rng, 11, 2);
    s_fill (&rng, x, B * dim, 1.0f);
    for (int i = 0; i < B; i++)
        y [i] = (uint8_t) (i % 10);
    gc_cnn_init_params (a, p, 9);
    double loss = gc_cnn_loss_grad (a, p, x, y, B, g, 1.0f, 0.0f, NULL);
    memset (sum, 0, n * sizeof (float));
    double lsum = 0;
    for (int i = 0; i < B; i++) {
        lsum += gc_cnn_loss_grad (b, p, x + (size_t) i * dim, y + i, 1, g1, 1.0f, 0.0f, NULL);
        for (size_t j = 0; j < n; j++)
            sum [j] += g1 [j] / B;
    }
    assert_true (fabs (lsum / B - loss) < 1e-5);
    double worst = 0, scale = 0;
    for (size_t j = 0; j < n; j++) {
        worst = fmax (worst, fabs (sum [j] - g [j]));
        scale = fmax (scale, fabs (g [j]));
    }
    assert_true (worst <= 1e-4 * scale);
    //  b has grown to 64 samples, a repeats: both give a's bytes
    memcpy (g1, g, n * sizeof (float));
    gc_cnn_loss_grad (b, p, x, y, B, g, 1.0f, 0.0f, NULL);
    assert_memory_equal (g, g1, n * sizeof (float));
    gc_cnn_loss_grad (a, p, x, y, B, g, 1.0f, 0.0f, NULL);
    assert_memory_equal (g, g1, n * sizeof (float));
    gc_mem_free (p);
    gc_mem_free (g);
    gc_mem_free (g1);
    gc_mem_free (sum);
    gc_mem_free (x);
    gc_cnn_destroy (&a);
    gc_cnn_destroy (&b);
}

//  The lowerings of small planes that read the taps' masks and tables (the
//  masked one of "same" stride-1 planes, the phases of stride 2, the table
//  of the others) give the bytes of the row-by-row one (keep NULL) and of
//  the definition, for every chunk of a batch (the planes at the tensor's
//  ends take the other path); so do their gathers (col2im), written and added to.
static void
test_lowering (void **state)
{
    (void) state;
    static const struct { size_t c, h, w, k, s, pad; } shapes [] = {
        { 3, 4, 4, 3, 1, 1 }, { 2, 7, 7, 3, 1, 1 }, { 2, 5, 6, 5, 1, 2 }, { 1, 8, 8, 3, 1, 1 },
        { 2, 14, 14, 5, 1, 2 },
        { 2, 14, 14, 3, 2, 1 }, { 3, 7, 7, 3, 2, 1 }, { 2, 4, 4, 1, 2, 0 }, { 2, 7, 7, 1, 2, 0 },
        { 2, 6, 5, 3, 2, 1 }, { 1, 8, 8, 5, 2, 2 }, { 2, 8, 8, 4, 2, 1 }, { 2, 3, 33, 3, 2, 1 },
        { 1, 2, 32, 3, 2, 1 },                                                   /* phases */
        { 2, 9, 9, 3, 3, 1 }, { 2, 6, 6, 3, 1, 0 }, { 1, 8, 8, 3, 2, 0 },      /* tables */
    };
    enum { B = 5 };
    for (size_t t = 0; t < sizeof shapes / sizeof shapes [0]; t++) {
        size_t k = shapes [t].k, s = shapes [t].s, pad = shapes [t].pad;
        gc_cnn_op_t op = { .kind = GC_CNN_CONV, .c = shapes [t].c, .h = shapes [t].h,
                           .w = shapes [t].w, .oc = 1, .k = k, .stride = s, .pad = pad,
                           .oh = (shapes [t].h + 2 * pad - k) / s + 1,
                           .ow = (shapes [t].w + 2 * pad - k) / s + 1 };
        size_t hw = op.h * op.w, P = op.oh * op.ow, rows = op.c * k * k;
        float *x = gc_falloc (op.c * B * hw), *a = gc_falloc (rows * B * P);
        float *b = gc_falloc (rows * B * P), *keep = gc_falloc (k * k * P);
        int32_t *at = gc_aligned_alloc (k * k * P * sizeof (int32_t));
        gc_conv_taps (&op, keep, at);
        float *dx = gc_falloc (op.c * B * hw), *dx2 = gc_falloc (op.c * B * hw);
        gc_rng_t rng;
        gc_rng_init (&rng, 3, t);
        s_fill (&rng, x, op.c * B * hw, 1.0f);
        for (size_t n0 = 0; n0 < B; n0++)
            for (size_t m = 1; n0 + m <= B; m++) {
                gc_conv_im2col (&op, x, B, n0, m, a, keep, at);
                gc_conv_im2col (&op, x, B, n0, m, b, NULL, NULL);
                assert_memory_equal (a, b, rows * m * P * sizeof (float));
                for (size_t r = 0; r < rows; r++)
                    for (size_t n = 0; n < m; n++)
                        for (size_t p = 0; p < P; p++) {
                            long ci = (long) (r / (k * k)), ki = (long) (r / k % k);
                            long kj = (long) (r % k);
                            long iy = (long) (p / op.ow * s) + ki - (long) pad;
                            long ix = (long) (p % op.ow * s) + kj - (long) pad;
                            bool in = iy >= 0 && iy < (long) op.h && ix >= 0 && ix < (long) op.w;
                            float want = in ? x [((size_t) ci * B + n0 + n) * hw
                                                 + (size_t) (iy * (long) op.w + ix)] : 0.0f;
                            assert_true (a [(r * m + n) * P + p] == want);
                        }
                for (int add = 0; add < 2; add++) {
                    s_fill (&rng, a, rows * m * P, 1.0f);
                    memcpy (b, a, rows * m * P * sizeof (float));
                    s_fill (&rng, dx, op.c * B * hw, 1.0f);
                    memcpy (dx2, dx, op.c * B * hw * sizeof (float));
                    gc_conv_col2im (&op, a, B, n0, m, dx, add, keep, at);
                    gc_conv_col2im (&op, b, B, n0, m, dx2, add, NULL, NULL);
                    assert_memory_equal (dx, dx2, op.c * B * hw * sizeof (float));
                }
            }
        gc_mem_free (x);
        gc_mem_free (a);
        gc_mem_free (b);
        gc_mem_free (keep);
        gc_mem_free (at);
        gc_mem_free (dx);
        gc_mem_free (dx2);
    }
}

//  GroupNorm over ranges of samples taken in order (how a convolution's
//  chunks run it) gives the bytes of one pass over the batch: outputs,
//  statistics, parameter gradients (added to) and input gradients (written
//  and added to), for chunkings with one sample, uneven ranges and the whole.
static void
test_gn_ranges (void **state)
{
    (void) state;
    enum { B = 7, C = 8, G = 2, H = 5, W = 5 };     /* 25-float planes: a lane tail */
    gc_cnn_op_t op = { .kind = GC_CNN_GN, .c = C, .h = H, .w = W, .oc = C, .oh = H, .ow = W,
                       .groups = G };
    static const size_t cuts [][B + 1] = {
        { 0, 7 }, { 0, 1, 2, 3, 4, 5, 6, 7 }, { 0, 3, 4, 7 }, { 0, 6, 7 },
    };
    size_t n = B * C * H * W;
    float *x = gc_falloc (n), *dy = gc_falloc (n), *gamma = gc_falloc (C), *beta = gc_falloc (C);
    float *scratch = gc_falloc (gc_conv_gn_scratch (&op));
    gc_rng_t rng;
    gc_rng_init (&rng, 5, 18);
    s_fill (&rng, x, n, 2.0f);
    s_fill (&rng, dy, n, 1.0f);
    s_fill (&rng, gamma, C, 1.0f);
    s_fill (&rng, beta, C, 1.0f);
    float *y [2], *stats [2], *dx [2], *dg [2], *db [2];
    for (int v = 0; v < 2; v++) {
        y [v] = gc_falloc (n);
        dx [v] = gc_falloc (n);
        stats [v] = gc_falloc (2 * B * G);
        dg [v] = gc_falloc (C);
        db [v] = gc_falloc (C);
    }
    for (int relu = 0; relu < 2; relu++)
        for (int add = 0; add < 2; add++)
            for (size_t c = 0; c < sizeof cuts / sizeof cuts [0]; c++)
                for (int v = 0; v < 2; v++) {
                    //  v 0: the whole batch at once; v 1: the ranges of cuts [c]
                    for (size_t j = 0; j < n; j++)
                        dx [v] [j] = 0.25f * (float) (j % 7);
                    for (size_t j = 0; j < C; j++) {
                        dg [v] [j] = 0.5f;
                        db [v] [j] = -0.5f;
                    }
                    for (size_t r = 0; r == 0 || cuts [c] [r] != B; r++) {
                        size_t n0 = v ? cuts [c] [r] : 0, m = v ? cuts [c] [r + 1] - n0 : B;
                        gc_conv_gn_forward (&op, x, B, n0, m, gamma, beta, relu, y [v], stats [v]);
                        if (!v)
                            break;
                    }
                    for (size_t r = 0; r == 0 || cuts [c] [r] != B; r++) {
                        size_t n0 = v ? cuts [c] [r] : 0, m = v ? cuts [c] [r + 1] - n0 : B;
                        gc_conv_gn_backward (&op, x, dy, stats [v], B, n0, m, gamma, dg [v], db [v],
                                             dx [v], add, scratch);
                        if (!v)
                            break;
                    }
                    if (v) {
                        assert_memory_equal (y [0], y [1], n * sizeof (float));
                        assert_memory_equal (stats [0], stats [1], 2 * B * G * sizeof (float));
                        assert_memory_equal (dx [0], dx [1], n * sizeof (float));
                        assert_memory_equal (dg [0], dg [1], C * sizeof (float));
                        assert_memory_equal (db [0], db [1], C * sizeof (float));
                        assert_true (dg [1] [0] != 0.5f && db [1] [C - 1] != -0.5f);
                    }
                }
    for (int v = 0; v < 2; v++) {
        gc_mem_free (y [v]);
        gc_mem_free (dx [v]);
        gc_mem_free (stats [v]);
        gc_mem_free (dg [v]);
        gc_mem_free (db [v]);
    }
    gc_mem_free (x);
    gc_mem_free (dy);
    gc_mem_free (gamma);
    gc_mem_free (beta);
    gc_mem_free (scratch);
}

//  Dropout: the identity when evaluating (the network without it, same
//  parameters), p of the values dropped and the rest scaled by 1 / (1 - p)
//  when training, masks that change from step to step, and the same masks
//  in a run that repeats (same bytes).
static void
test_dropout (void **state)
{
    gc_cnn_t *with = gc_cnn_new ("2x6x6/c4,relu,drop50,f3", NULL);
    gc_cnn_t *without = gc_cnn_new ("2x6x6/c4,relu,f3", NULL);
    assert_non_null (with);
    assert_non_null (without);
    assert_true (gc_layout_equal (gc_cnn_layout (with), gc_cnn_layout (without)));
    size_t n = gc_cnn_layout (with)->n_params, dim = s_input_dim (with);
    enum { B = 5 };
    float *p = gc_falloc (n), *g = gc_falloc (n), *g2 = gc_falloc (n), *x = gc_falloc (B * dim);
    uint8_t y [B] = { 0, 1, 2, 0, 1 };
    gc_rng_t rng;
    gc_rng_init (&rng, 3, 3);
    s_fill (&rng, x, B * dim, 1.0f);
    gc_cnn_init_params (with, p, 4);
    const float *a = gc_cnn_forward (with, p, x, B);
    float za [B * 3];
    memcpy (za, a, sizeof za);
    assert_memory_equal (za, gc_cnn_forward (without, p, x, B), sizeof za);
    double eval = gc_cnn_loss_grad (with, p, x, y, B, NULL, 1.0f, 0.0f, NULL);
    assert_true (eval == gc_cnn_loss_grad (without, p, x, y, B, NULL, 1.0f, 0.0f, NULL));
    //  training steps drop (another loss), each step with other masks
    double t1 = gc_cnn_loss_grad (with, p, x, y, B, g, 1.0f, 0.0f, NULL);
    double t2 = gc_cnn_loss_grad (with, p, x, y, B, g2, 1.0f, 0.0f, NULL);
    assert_true (t1 != eval && t2 != eval && t1 != t2);
    //  a fresh model repeats the first step's masks
    gc_cnn_t *again = gc_cnn_new ("2x6x6/c4,relu,drop50,f3", NULL);
    assert_true (gc_cnn_loss_grad (again, p, x, y, B, g2, 1.0f, 0.0f, NULL) == t1);
    assert_memory_equal (g, g2, n * sizeof (float));
    gc_cnn_destroy (&again);
    //  fraction and scale: 3000 ones through drop30 summed by a linear layer
    //  of ones give kept / 0.7, kept ~ Binomial(3000, 0.7): 2100 +- 25
    gc_cnn_t *sum = gc_cnn_new ("1x50x60/drop30,f2", NULL);
    assert_non_null (sum);
    gc_cnn_dropout_fix (sum, true);
    size_t m = gc_cnn_layout (sum)->n_params;
    float *q = gc_falloc (m), *ones = gc_falloc (3000);
    memset (q, 0, m * sizeof (float));
    for (size_t j = 0; j < 3000; j++) {
        q [j] = 1.0f;           /* fc1.weight row 0 */
        ones [j] = 1.0f;
    }
    double kept = gc_cnn_forward (sum, q, ones, 1) [0] * 0.7;
    if (fabs (kept - 2100) > 125 || fabs (kept - round (kept)) > 0.05)
        fail_msg ("drop30 kept %.3f of 3000 values (want about 2100, a whole number)", kept);
    gc_cnn_destroy (&sum);
    gc_mem_free (q);
    gc_mem_free (ones);
    gc_mem_free (p);
    gc_mem_free (g);
    gc_mem_free (g2);
    gc_mem_free (x);
    gc_cnn_destroy (&with);
    gc_cnn_destroy (&without);
}

static void
test_specs (void **state)
{
    static const struct {
        const char *spec;
        const char *expect;     /* canonical, or the words the error holds */
        bool ok;
        size_t params;          /* 0: not checked */
    } cases [] = {
        { "cnn:lenet", "cnn:1x28x28/c16k5s1p2,relu,mp2s2,c32k5s1p2,relu,mp2s2,f128,relu,f10", true,
          16 * 25 + 16 + 32 * 400 + 32 + 128 * 1568 + 128 + 10 * 128 + 10 },
        { "lenet", "cnn:1x28x28/c16k5s1p2", true, 0 },
        { "resnet8-gn", "r16s1x1g4,r32s2x1g4,r64s2x1g4,gap,f10", true, 0 },
        { "cnn:lenet-w", "cnn:1x28x28/c16k3s1p1,relu,c32k3s1p1,relu,mp2s2,c64k3s1p1,relu,c64k3s1p1,relu,"
          "mp2s2,f128,relu,f10", true,
          16 * 9 + 16 + 32 * 144 + 32 + 64 * 288 + 64 + 64 * 576 + 64 + 128 * 3136 + 128 + 10 * 128 + 10 },
        //  the residual net of docs/RESULTS.md as a spec, not a preset: stem, then per
        //  block conv1 + gn + conv2 + gn (+ a 1x1 shortcut + gn)
        { "cnn:c32,gn4,relu,mp2,r32,r64s2,r128s2,gap,f10",
          "cnn:1x28x28/c32k3s1p1,gn4,relu,mp2s2,r32s1x1g4,r64s2x1g4,r128s2x1g4,gap,f10", true,
          (32 * 9 + 32 + 64)
          + (2 * (32 * 288 + 32 + 64))
          + (64 * 288 + 64 + 128 + 64 * 576 + 64 + 128 + 64 * 32 + 64 + 128)
          + (128 * 576 + 128 + 256 + 128 * 1152 + 128 + 256 + 128 * 64 + 128 + 256)
          + 10 * 128 + 10 },
        { "lenet-w", "cnn:1x28x28/c16k3s1p1,relu,c32k3s1p1", true, 0 },
        //  the 32 -> 64 block: conv1 + gn + conv2 + gn, a 1x1 shortcut + gn
        { "cnn:lenet-w-res", "cnn:1x28x28/c16k3s1p1,relu,c32k3s1p1,relu,mp2s2,r64s1x1g4z,mp2s2,f128,"
          "relu,f10", true,
          16 * 9 + 16 + 32 * 144 + 32
          + (64 * 288 + 64 + 128 + 64 * 576 + 64 + 128 + 64 * 32 + 64 + 128)
          + 128 * 3136 + 128 + 10 * 128 + 10 },
        { "cnn:3x32x32/resnet20-gn", "cnn:3x32x32/c16k3s1p1,gn4,relu,r16s1x3g4,r32s2x3g4,r64s2x3g4,gap,f10", true, 0 },
        { "cnn:2x4x4/c3k3s2p0,ap1,f2", "cnn:2x4x4/c3k3s2p0,ap1s1,f2", true, 3 * 18 + 3 + 2 * 3 + 2 },
        { "cnn:1x4x4/f2", "cnn:1x4x4/f2", true, 2 * 16 + 2 },
        { "cnn:", "no layers", false, 0 },
        { "cnn:lenett", "layer 'lenett'", false, 0 },
        { "cnn:c16,relu", "the last layer must be linear", false, 0 },
        { "cnn:c16,f1", "gives the classes", false, 0 },
        { "cnn:c16,,f10", "empty layer", false, 0 },
        { "cnn:c16k3k3,f10", "layer 'c16k3k3'", false, 0 },
        { "cnn:c16q3,f10", "layer 'c16q3'", false, 0 },
        { "cnn:c0,f10", "layer 'c0'", false, 0 },
        { "cnn:c16k16,f10", "layer 'c16k16'", false, 0 },
        { "cnn:c16s9,f10", "layer 'c16s9'", false, 0 },
        { "cnn:1x4x4/c2k9p0,f10", "larger than its padded input", false, 0 },
        { "cnn:1x4x4/mp5,f10", "larger than its input", false, 0 },
        { "cnn:c6,gn4,f10", "groups must divide", false, 0 },
        { "cnn:c6,r6g4,f10", "groups must divide", false, 0 },
        { "cnn:f32,c8,f10", "follows a linear layer", false, 0 },
        { "cnn:f32,relu,f10", "cnn:1x28x28/f32,relu,f10", true, 0 },
        { "cnn:c8,drop25,f32,relu,drop50,f10", "cnn:1x28x28/c8k3s1p1,drop25,f32,relu,drop50,f10", true, 0 },
        { "cnn:f32,drop0,f10", "dropP with P the percent dropped, 1 to 90", false, 0 },
        { "cnn:f32,drop91,f10", "layer 'drop91'", false, 0 },
        { "cnn:f32,drop,f10", "layer 'drop'", false, 0 },
        { "cnn:f32,drop5x,f10", "layer 'drop5x'", false, 0 },
        { "cnn:0x28x28/f10", "input shape", false, 0 },
        { "cnn:1x28/f10", "input shape", false, 0 },
        { "cnn:1x28x28x3/f10", "input shape", false, 0 },
        { "cnn:1x1025x1/f10", "input shape", false, 0 },
        { "cnn:4096x1024x1024/c4096,f10", "too many", false, 0 },
        { "cnn:99999999999999999999x1x1/f10", "input shape", false, 0 },
        { "cnn:c16,relu,c16,relu,c16,relu,c16,relu,c16,relu,c16,relu,c16,relu,c16,relu,c16,relu,"
          "c16,relu,c16,relu,c16,relu,c16,relu,c16,relu,c16,relu,c16,relu,f10", "longer than", false, 0 },
        { "cnn:r8x64,r8x64,r8x64,f10", "operations", false, 0 },
        //  z: the flag without a number, last
        { "cnn:c8,r16s2x2z,gap,f10", "cnn:1x28x28/c8k3s1p1,r16s2x2g4z,gap,f10", true, 0 },
        { "cnn:c8,r16z,gap,f10", "r16s1x1g4z,gap", true, 0 },
        { "cnn:c8,r16zz,gap,f10", "layer 'r16zz'", false, 0 },
        { "cnn:c8,r16zs2,gap,f10", "layer 'r16zs2'", false, 0 },
        { "cnn:c8,rz,gap,f10", "layer 'rz'", false, 0 },
        { "cnn:c8,c16z,gap,f10", "layer 'c16z'", false, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        gc_err_t err = { 0 };
        gc_model_t *model = gc_model_new (cases [i].spec, &err);
        if (cases [i].ok) {
            if (!model)
                fail_msg ("%s: %s", cases [i].spec, err.msg);
            if (!strstr (gc_model_spec (model), cases [i].expect))
                fail_msg ("%s: canonical %s", cases [i].spec, gc_model_spec (model));
            if (cases [i].params)
                assert_int_equal (gc_model_n_params (model), cases [i].params);
            gc_model_t *again = gc_model_new (gc_model_spec (model), &err);
            assert_non_null (again);
            assert_string_equal (gc_model_spec (again), gc_model_spec (model));
            gc_model_destroy (&again);
        }
        else {
            if (model)
                fail_msg ("%s: accepted as %s", cases [i].spec, gc_model_spec (model));
            if (!strstr (err.msg, cases [i].expect))
                fail_msg ("%s: error '%s' lacks '%s'", cases [i].spec, err.msg, cases [i].expect);
            //  the error names the spec it refuses
            if (strncmp (cases [i].spec, "cnn:c16,relu,c16", 16) && !strstr (err.msg, cases [i].spec))
                fail_msg ("%s: error '%s' does not name the spec", cases [i].spec, err.msg);
        }
        gc_model_destroy (&model);
    }
}

//  gc_conv.c and gc_wino.c run at every kernel level the CPU has: the loss
//  and the gradient must be the same bytes at each (docs/ALGORITHMS.md), on
//  the presets and on nets with the paths the presets do not take; and the
//  same with the loops' prefetch turned off (gc_conv_set_prefetch).
static void
test_levels (void **state)
{
    (void) state;
    static const char *specs [] = {
        "lenet", "resnet8-gn", "lenet-w", "1x9x7/c8,relu,c16,gn4,relu,r16x2,f4", "2x5x1/c8,c8,f3",
        "2x13x11/c8k5,relu,c16k5,gn4,relu,c9k5,f3",
        "2x9x9/c3k5s1p2,relu,mp2s3,f3", "2x7x7/c3,mp3s2,ap3s2,f3",
        "1x9x9/c2k4s3p0,gn2,relu,f3", "2x7x7/c4,gn2,relu,mp2,r6s2g2,gap,f3",
    };
    enum { B = 6 };
    gc_cpu_level_t top = gc_cpu_detected (), start = gc_cpu_level ();
    for (size_t t = 0; t < sizeof specs / sizeof specs [0]; t++) {
        gc_cnn_t *cnn = gc_cnn_new (specs [t], NULL);
        assert_non_null (cnn);
        size_t n = gc_cnn_layout (cnn)->n_params, dim = s_input_dim (cnn);
        float *params = gc_falloc (n), *x = gc_falloc (B * dim);
        float *ref = gc_falloc (n), *grad = gc_falloc (n);
        uint8_t y [B];
        gc_rng_t rng;
        gc_rng_init (&rng, 11, t);
        gc_cnn_init_params (cnn, params, 5);
        s_fill (&rng, x, B * dim, 1.0f);
        for (size_t i = 0; i < B; i++)
            y [i] = (uint8_t) gc_rng_below (&rng, (uint64_t) gc_cnn_net (cnn)->classes);
        double want = 0;
        for (int run = 0; run <= 2 * (int) top + 1; run++) {
            int level = run / 2;
            gc_conv_set_prefetch (run % 2 == 0);
            assert_int_equal (gc_cpu_set_level ((gc_cpu_level_t) level), 0);
            double loss = gc_cnn_loss_grad (cnn, params, x, y, B, run ? grad : ref, 1.0f,
                                            0.0f, NULL);
            if (run == 0)
                want = loss;
            else {
                assert_memory_equal (&loss, &want, sizeof loss);
                assert_memory_equal (grad, ref, n * sizeof (float));
            }
        }
        gc_conv_set_prefetch (true);
        gc_mem_free (params);
        gc_mem_free (x);
        gc_mem_free (ref);
        gc_mem_free (grad);
        gc_cnn_destroy (&cnn);
    }
    assert_int_equal (gc_cpu_set_level (start), 0);
}

//  The layer table: kernels are out x (in k k) matrices, GroupNorm and
//  biases are vectors, names say which layer.
static void
test_layout (void **state)
{
    gc_cnn_t *cnn = gc_cnn_new ("1x28x28/c8,gn2,relu,r16s2g4,gap,f10", NULL);
    assert_non_null (cnn);
    const gc_layout_t *l = gc_cnn_layout (cnn);
    static const struct { const char *name; uint32_t rows, cols; gc_layer_kind_t kind; } want [] = {
        { "conv1.weight", 8, 9, GC_LAYER_MATRIX }, { "conv1.bias", 8, 1, GC_LAYER_VECTOR },
        { "gn1.weight", 8, 1, GC_LAYER_VECTOR },   { "gn1.bias", 8, 1, GC_LAYER_VECTOR },
        { "conv2.weight", 16, 72, GC_LAYER_MATRIX }, { "conv2.bias", 16, 1, GC_LAYER_VECTOR },
        { "gn2.weight", 16, 1, GC_LAYER_VECTOR },  { "gn2.bias", 16, 1, GC_LAYER_VECTOR },
        { "conv3.weight", 16, 144, GC_LAYER_MATRIX }, { "conv3.bias", 16, 1, GC_LAYER_VECTOR },
        { "gn3.weight", 16, 1, GC_LAYER_VECTOR },  { "gn3.bias", 16, 1, GC_LAYER_VECTOR },
        { "conv4.weight", 16, 8, GC_LAYER_MATRIX }, { "conv4.bias", 16, 1, GC_LAYER_VECTOR },
        { "gn4.weight", 16, 1, GC_LAYER_VECTOR },  { "gn4.bias", 16, 1, GC_LAYER_VECTOR },
        { "fc1.weight", 10, 16, GC_LAYER_MATRIX }, { "fc1.bias", 10, 1, GC_LAYER_VECTOR },
    };
    assert_int_equal (l->n_layers, sizeof want / sizeof want [0]);
    for (size_t i = 0; i < l->n_layers; i++) {
        assert_string_equal (l->layers [i].name, want [i].name);
        assert_int_equal (l->layers [i].rows, want [i].rows);
        assert_int_equal (l->layers [i].cols, want [i].cols);
        assert_int_equal (l->layers [i].kind, want [i].kind);
    }
    gc_cnn_destroy (&cnn);
}

//  The z flag starts each block's branch-closing GroupNorm scale at 0 and
//  nothing else: the same parameters as without it, but those scales.
static void
test_zero_scale (void **state)
{
    (void) state;
    gc_cnn_t *plain = gc_cnn_new ("1x28x28/c8,gn2,relu,r16s2g4x2,gap,f10", NULL);
    gc_cnn_t *zero = gc_cnn_new ("1x28x28/c8,gn2,relu,r16s2g4x2z,gap,f10", NULL);
    assert_non_null (plain);
    assert_non_null (zero);
    const gc_layout_t *l = gc_cnn_layout (zero);
    assert_int_equal (l->n_params, gc_cnn_layout (plain)->n_params);
    float *a = gc_falloc (l->n_params), *b = gc_falloc (l->n_params);
    gc_cnn_init_params (plain, a, 3);
    gc_cnn_init_params (zero, b, 3);
    //  gn3 closes block 1's branch (gn4 is its shortcut's), gn6 block 2's
    static const char *zeroed [] = { "gn3.weight", "gn6.weight" };
    int seen = 0;
    for (size_t i = 0; i < l->n_layers; i++) {
        const gc_layer_t *layer = &l->layers [i];
        bool z = !strcmp (layer->name, zeroed [0]) || !strcmp (layer->name, zeroed [1]);
        seen += z;
        for (size_t j = 0; j < layer->count; j++) {
            float want = z ? 0.0f : a [layer->offset + j];
            if (memcmp (&b [layer->offset + j], &want, sizeof want))
                fail_msg ("%s [%zu]: %g, want %g", layer->name, j, b [layer->offset + j], want);
        }
    }
    assert_int_equal (seen, 2);
    gc_mem_free (a);
    gc_mem_free (b);
    gc_cnn_destroy (&plain);
    gc_cnn_destroy (&zero);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_gradients),
        cmocka_unit_test (test_winograd),
        cmocka_unit_test (test_lowering_names),
        cmocka_unit_test (test_chunks_and_determinism),
        cmocka_unit_test (test_lowering),
        cmocka_unit_test (test_gn_ranges),
        cmocka_unit_test (test_levels),
        cmocka_unit_test (test_dropout),
        cmocka_unit_test (test_specs),
        cmocka_unit_test (test_layout),
        cmocka_unit_test (test_zero_scale),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
