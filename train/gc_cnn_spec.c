/*  The CNN spec grammar (docs/CONFIG.md, "Model specs"):

        [CxHxW/] LAYER ( , LAYER )*      or a preset name, [CxHxW/] PRESET

        cO[kK][sS][pP]   convolution to O channels, K x K (3), stride S (1),
                         zero padding P (K/2)
        gnG              group normalisation in G groups
        relu
        mpK[sS] apK[sS]  max / average pooling, stride S (K)
        gap              global average pooling
        dropP            dropout of P percent (1..90) of the values while
                         training (inverted: the kept ones scaled by
                         100 / (100 - P)); the identity when evaluating
        fO               linear layer to O outputs (flattens its input)
        rO[sS][xN][gG][z]  N (1) residual basic blocks of O channels, the first
                         with stride S (1): c3-gn-relu-c3-gn plus a shortcut
                         (identity, or a 1x1 convolution with stride S and gn
                         when the shape changes), then relu; G groups (4);
                         z: the branch's last gn scale starts at 0, so that
                         each block starts as its shortcut

    The input is 1x28x28 unless given; the last layer must be linear (its
    outputs are the classes). The canonical spec spells every default out,
    so two peers compare networks, not spellings. */
#include "gc_cnn_net.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    const char *body;
    const char *about;
} s_preset_t;

static const s_preset_t s_presets [] = {
    { "lenet",       "c16k5,relu,mp2,c32k5,relu,mp2,f128,relu,f10",
      "LeNet-style: two 5x5 convolutions (16, 32) with max pooling, 128 hidden" },
    { "resnet8-gn",  "c16,gn4,relu,mp2,r16,r32s2,r64s2,gap,f10",
      "a stem, 3 residual blocks (16, 32, 64 channels) with GroupNorm" },
    { "resnet20-gn", "c16,gn4,relu,r16x3,r32s2x3,r64s2x3,gap,f10",
      "ResNet-20 with GroupNorm (as ClippedGossip trains on CIFAR-10: 3x32x32/resnet20-gn)" },
    //  lenet with 3x3 convolutions in pairs (VGG-like), for issue 18's
    //  Fashion-MNIST bar (docs/RESULTS.md), which lenet does not reach.
    { "lenet-w",     "c16,relu,c32,relu,mp2,c64,relu,c64,relu,mp2,f128,relu,f10",
      "LeNet-style, VGG-like: two 3x3 convolutions per stage (16, 32; 64, 64), 128 hidden" },
    //  lenet-w with its 14x14 pair a GroupNorm residual block whose branch
    //  starts as nothing (zero gamma): issue 18's residual bar, with label
    //  smoothing 0.1 and lr 0.05 (docs/RESULTS.md)
    { "lenet-w-res", "c16,relu,c32,relu,mp2,r64z,mp2,f128,relu,f10",
      "lenet-w with its 64-channel pair a GroupNorm residual block (zero-gamma start)" },
};
#define S_NPRESETS (sizeof s_presets / sizeof s_presets [0])

#define S_MAX_CHANNELS 4096
#define S_MAX_SIDE     1024
#define S_MAX_KERNEL   15
#define S_MAX_STRIDE   8
#define S_MAX_FEATURES (1u << 24)   /* floats per sample of any tensor */

typedef struct {
    gc_cnn_net_t *net;
    const char   *spec;         /* as given, for messages */
    gc_err_t     *err;
    int           cur;          /* tensor the next operation reads */
    size_t        c, h, w;      /* its shape */
    int           n_conv, n_gn, n_fc;
    bool          flat;         /* after a linear layer */
    size_t        used;         /* canonical characters so far */
} s_build_t;

static const char *
s_preset_body (const char *name)
{
    for (size_t i = 0; i < S_NPRESETS; i++)
        if (!strcmp (s_presets [i].name, name))
            return s_presets [i].body;
    return NULL;
}

bool
gc_cnn_net_is_preset (const char *spec)
{
    return s_preset_body (spec) != NULL;
}

static int
s_fail (s_build_t *b, const char *fmt, const char *tok)
{
    char what [128];
    snprintf (what, sizeof what, fmt, tok);
    return gc_err_set (b->err, GC_E_SPEC, "model spec 'cnn:%s': %s", b->spec, what);
}

static int
s_canon (s_build_t *b, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static int
s_canon (s_build_t *b, const char *fmt, ...)
{
    size_t room = sizeof b->net->spec - b->used;
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (b->net->spec + b->used, room, fmt, ap);
    va_end (ap);
    if (n < 0 || (size_t) n >= room)
        return gc_err_set (b->err, GC_E_SPEC, "model spec 'cnn:%s': its expansion is longer than %d characters",
                           b->spec, GC_MODEL_SPEC_MAX - 1);
    b->used += (size_t) n;
    return 0;
}

//  Append an operation reading the current tensor; it becomes current.
static gc_cnn_op_t *
s_push (s_build_t *b, gc_cnn_kind_t kind, size_t oc, size_t oh, size_t ow)
{
    gc_cnn_net_t *net = b->net;
    if (net->n_ops >= GC_CNN_MAX_OPS) {
        s_fail (b, "more than %s operations", "160");
        return NULL;
    }
    if (oc == 0 || oh == 0 || ow == 0 || oc * oh * ow > S_MAX_FEATURES) {
        s_fail (b, "a layer's output would have no values or too many (%s)", "shape");
        return NULL;
    }
    gc_cnn_op_t *op = &net->ops [net->n_ops];
    *op = (gc_cnn_op_t) { .kind = kind, .in = b->cur, .in2 = -1, .c = b->c, .h = b->h, .w = b->w,
                          .oc = oc, .oh = oh, .ow = ow, .k = 1, .stride = 1, .weight = -1, .bias = -1 };
    b->cur = net->n_ops++;
    b->c = oc;
    b->h = oh;
    b->w = ow;
    return op;
}

static int
s_add_params (s_build_t *b, gc_cnn_op_t *op, const char *prefix, int number,
              uint32_t rows, uint32_t cols, bool vector_weight)
{
    gc_layout_t *layout = &b->net->layout;
    if (layout->n_layers + 2 > GC_LAYOUT_MAX_LAYERS)
        return s_fail (b, "more than %s parameter layers", "256");
    if ((uint64_t) rows * cols > (1u << 28) || layout->n_params > (1u << 30))
        return s_fail (b, "too many parameters (%s)", "more than 2^30");
    char name [GC_LAYER_NAME_MAX];
    snprintf (name, sizeof name, "%s%d.weight", prefix, number);
    op->weight = (int) layout->n_layers;
    int rc = vector_weight ? gc_layout_add_vector (layout, name, rows, b->err)
                           : gc_layout_add_matrix (layout, name, rows, cols, b->err);
    snprintf (name, sizeof name, "%s%d.bias", prefix, number);
    op->bias = (int) layout->n_layers;
    return rc ? rc : gc_layout_add_vector (layout, name, rows, b->err);
}

static int
s_conv (s_build_t *b, size_t out, size_t k, size_t stride, size_t pad)
{
    if (b->h + 2 * pad < k || b->w + 2 * pad < k)
        return s_fail (b, "convolution %s is larger than its padded input", "kernel");
    size_t oh = (b->h + 2 * pad - k) / stride + 1, ow = (b->w + 2 * pad - k) / stride + 1;
    size_t in = b->c;
    gc_cnn_op_t *op = s_push (b, GC_CNN_CONV, out, oh, ow);
    if (!op)
        return -1;
    op->k = k;
    op->stride = stride;
    op->pad = pad;
    return s_add_params (b, op, "conv", ++b->n_conv, (uint32_t) out, (uint32_t) (in * k * k), false);
}

static int
s_gn (s_build_t *b, size_t groups)
{
    if (groups == 0 || b->c % groups)
        return s_fail (b, "GroupNorm groups must divide the channels (%s)", "gn");
    gc_cnn_op_t *op = s_push (b, GC_CNN_GN, b->c, b->h, b->w);
    if (!op)
        return -1;
    op->groups = groups;
    return s_add_params (b, op, "gn", ++b->n_gn, (uint32_t) b->c, 1, true);
}

static int
s_simple (s_build_t *b, gc_cnn_kind_t kind)
{
    return s_push (b, kind, b->c, b->h, b->w) ? 0 : -1;
}

static int
s_pool (s_build_t *b, gc_cnn_kind_t kind, size_t k, size_t stride)
{
    if (kind != GC_CNN_GAP && (k > b->h || k > b->w))
        return s_fail (b, "pooling window %s is larger than its input", "k");
    size_t oh = kind == GC_CNN_GAP ? 1 : (b->h - k) / stride + 1;
    size_t ow = kind == GC_CNN_GAP ? 1 : (b->w - k) / stride + 1;
    gc_cnn_op_t *op = s_push (b, kind, b->c, oh, ow);
    if (!op)
        return -1;
    op->k = k;
    op->stride = stride;
    return 0;
}

static int
s_fc (s_build_t *b, size_t out)
{
    size_t in = b->c * b->h * b->w;
    gc_cnn_op_t *op = s_push (b, GC_CNN_FC, out, 1, 1);
    if (!op)
        return -1;
    b->flat = true;
    return s_add_params (b, op, "fc", ++b->n_fc, (uint32_t) out, (uint32_t) in, false);
}

//  One basic block: the shortcut reads the block input, the join adds it.
//  zero: the branch's last scale starts at 0 (Goyal et al. 2017, "zero
//  gamma"): the block starts as its shortcut, so a deep stack or a wide
//  linear head after it does not see the variance of every branch summed.
static int
s_block (s_build_t *b, size_t out, size_t stride, size_t groups, bool zero)
{
    int start = b->cur;
    size_t c = b->c, h = b->h, w = b->w;
    if (s_conv (b, out, 3, stride, 1) || s_gn (b, groups) || s_simple (b, GC_CNN_RELU)
    ||  s_conv (b, out, 3, 1, 1) || s_gn (b, groups))
        return -1;
    int branch = b->cur;
    b->net->ops [branch].zero_scale = zero;
    int shortcut = start;
    if (stride != 1 || c != out) {
        size_t sc = b->c, sh = b->h, sw = b->w;
        b->cur = start;
        b->c = c;
        b->h = h;
        b->w = w;
        if (s_conv (b, out, 1, stride, 0) || s_gn (b, groups))
            return -1;
        shortcut = b->cur;
        if (b->h != sh || b->w != sw || b->c != sc)
            return s_fail (b, "residual %s: the shortcut and the branch differ in shape", "block");
    }
    gc_cnn_op_t *join = s_push (b, GC_CNN_ADD, out, b->h, b->w);
    if (!join)
        return -1;
    join->in = branch;
    join->in2 = shortcut;
    return s_simple (b, GC_CNN_RELU);
}

//  A number of at least lo and at most hi at *p, advancing *p.
static int
s_number (const char **p, size_t lo, size_t hi, size_t *out)
{
    if (!isdigit ((unsigned char) **p))
        return -1;
    size_t v = 0;
    while (isdigit ((unsigned char) **p)) {
        v = v * 10 + (size_t) (**p - '0');
        if (v > hi)
            return -1;
        (*p)++;
    }
    if (v < lo)
        return -1;
    *out = v;
    return 0;
}

//  Options after the head number: letters from `allowed`, each at most once,
//  each followed by a number within its limits.
static int
s_options (const char *p, const char *allowed, const size_t *lo, const size_t *hi,
           size_t *values, bool *given)
{
    while (*p) {
        const char *slot = strchr (allowed, *p);
        if (!slot)
            return -1;
        size_t i = (size_t) (slot - allowed);
        if (given [i])
            return -1;
        p++;
        if (s_number (&p, lo [i], hi [i], &values [i]))
            return -1;
        given [i] = true;
    }
    return 0;
}

static int
s_layer (s_build_t *b, const char *tok, bool last)
{
    const char *bad = "layer '%s' is not one of cO[kK][sS][pP], gnG, relu, mpK[sS], apK[sS], gap, dropP, fO, rO[sS][xN][gG][z]";
    const char *p;
    size_t head;
    if (b->flat && strcmp (tok, "relu")
    &&  (tok [0] == 'c' || tok [0] == 'r' || !strncmp (tok, "mp", 2) || !strncmp (tok, "ap", 2)
         || !strncmp (tok, "gn", 2)))
        return s_fail (b, "layer '%s' follows a linear layer (only relu, dropout and linear layers can)", tok);
    if (!strcmp (tok, "relu"))
        return s_simple (b, GC_CNN_RELU) || s_canon (b, "relu,");
    if (!strcmp (tok, "gap"))
        return s_pool (b, GC_CNN_GAP, 1, 1) || s_canon (b, "gap,");
    if (!strncmp (tok, "drop", 4)) {
        //  a percentage, so that the canonical spec is exact; above 90 the
        //  kept values would be scaled by more than 10
        p = tok + 4;
        if (s_number (&p, 1, 90, &head) || *p)
            return s_fail (b, "layer '%s': dropout is dropP with P the percent dropped, 1 to 90", tok);
        gc_cnn_op_t *op = s_push (b, GC_CNN_DROPOUT, b->c, b->h, b->w);
        if (!op)
            return -1;
        op->k = head;
        return s_canon (b, "drop%zu,", head);
    }
    if (!strncmp (tok, "gn", 2)) {
        p = tok + 2;
        if (s_number (&p, 1, S_MAX_CHANNELS, &head) || *p)
            return s_fail (b, bad, tok);
        return s_gn (b, head) || s_canon (b, "gn%zu,", head);
    }
    bool pool = !strncmp (tok, "mp", 2) || !strncmp (tok, "ap", 2);
    p = tok + (pool ? 2 : 1);
    if (!strchr ("cfr", tok [0]) && !pool)
        return s_fail (b, bad, tok);
    if (s_number (&p, 1, pool ? S_MAX_KERNEL : S_MAX_CHANNELS, &head))
        return s_fail (b, bad, tok);
    size_t v [4] = { 0 };
    bool given [4] = { false };
    if (pool) {
        static const size_t lo [1] = { 1 }, hi [1] = { S_MAX_STRIDE };
        if (s_options (p, "s", lo, hi, v, given))
            return s_fail (b, bad, tok);
        size_t stride = given [0] ? v [0] : head;
        if (tok [0] == 'm')
            return s_pool (b, GC_CNN_MAXPOOL, head, stride) || s_canon (b, "mp%zus%zu,", head, stride);
        return s_pool (b, GC_CNN_AVGPOOL, head, stride) || s_canon (b, "ap%zus%zu,", head, stride);
    }
    if (tok [0] == 'c') {
        static const size_t lo [3] = { 1, 1, 0 }, hi [3] = { S_MAX_KERNEL, S_MAX_STRIDE, S_MAX_KERNEL };
        if (s_options (p, "ksp", lo, hi, v, given))
            return s_fail (b, bad, tok);
        size_t k = given [0] ? v [0] : 3, s = given [1] ? v [1] : 1, pad = given [2] ? v [2] : k / 2;
        return s_conv (b, head, k, s, pad) || s_canon (b, "c%zuk%zus%zup%zu,", head, k, s, pad);
    }
    if (tok [0] == 'r') {
        static const size_t lo [3] = { 1, 1, 1 }, hi [3] = { S_MAX_STRIDE, 64, S_MAX_CHANNELS };
        //  the flag z has no number, so it is the token's last letter
        char opts [32];
        size_t len = strlen (p);
        bool zero = len > 0 && p [len - 1] == 'z';
        if (len - zero >= sizeof opts)
            return s_fail (b, bad, tok);
        memcpy (opts, p, len - zero);
        opts [len - zero] = 0;
        if (s_options (opts, "sxg", lo, hi, v, given))
            return s_fail (b, bad, tok);
        size_t s = given [0] ? v [0] : 1, n = given [1] ? v [1] : 1, g = given [2] ? v [2] : 4;
        for (size_t i = 0; i < n; i++)
            if (s_block (b, head, i ? 1 : s, g, zero))
                return -1;
        return s_canon (b, "r%zus%zux%zug%zu%s,", head, s, n, g, zero ? "z" : "");
    }
    if (*p)
        return s_fail (b, bad, tok);
    if (last && (head < 2 || head > 256))
        return s_fail (b, "the last layer '%s' gives the classes: 2 to 256", tok);
    return s_fc (b, head) || s_canon (b, "f%zu,", head);
}

//  "CxHxW/" at the start of text, or the default 1x28x28; *rest gets the remainder.
static int
s_input (s_build_t *b, const char *text, const char **rest)
{
    const char *slash = strchr (text, '/');
    b->c = 1;
    b->h = 28;
    b->w = 28;
    *rest = text;
    if (!slash)
        return 0;
    const char *p = text;
    size_t dims [3];
    for (int i = 0; i < 3; i++) {
        if (s_number (&p, 1, i ? S_MAX_SIDE : S_MAX_CHANNELS, &dims [i])
        ||  *p != (i < 2 ? 'x' : '/'))
            return s_fail (b, "the input shape must be CxHxW/ (like 1x28x28/), %s", "C <= 4096, H, W <= 1024");
        p++;
    }
    b->c = dims [0];
    b->h = dims [1];
    b->w = dims [2];
    *rest = p;
    return 0;
}

int
gc_cnn_net_parse (gc_cnn_net_t *net, const char *spec, gc_err_t *err)
{
    memset (net, 0, sizeof *net);
    gc_layout_init (&net->layout);
    s_build_t b = { .net = net, .spec = spec, .err = err, .cur = -1 };
    const char *body;
    if (s_input (&b, spec, &body))
        return -1;
    net->input = (gc_shape_t) { b.c, b.h, b.w };
    const char *preset = s_preset_body (body);
    if (preset)
        body = preset;
    if (!*body)
        return s_fail (&b, "no layers (a preset: lenet, lenet-w, lenet-w-res, resnet8-gn, resnet20-gn; %s)", "or layers like c16k5,relu,mp2,f10");
    if (s_canon (&b, "cnn:%zux%zux%zu/", b.c, b.h, b.w))
        return -1;
    char buf [GC_MODEL_SPEC_MAX];
    if (strlen (body) >= sizeof buf)
        return s_fail (&b, "longer than %s characters", "255");
    strcpy (buf, body);
    char *save = NULL;
    int n_tok = 0;
    for (const char *q = buf; *q; q++)
        n_tok += *q == ',';
    if (buf [0] == ',' || buf [strlen (buf) - 1] == ',' || strstr (buf, ",,"))
        return s_fail (&b, "an empty layer (%s)", "two commas, or one at an end");
    int i = 0;
    for (char *tok = strtok_r (buf, ",", &save); tok; tok = strtok_r (NULL, ",", &save), i++)
        if (s_layer (&b, tok, i == n_tok))
            return -1;
    if (net->n_ops == 0 || net->ops [net->n_ops - 1].kind != GC_CNN_FC)
        return s_fail (&b, "the last layer must be linear (fO, %s)", "O the classes");
    net->classes = (int) net->ops [net->n_ops - 1].oc;
    net->spec [--b.used] = '\0';    /* the trailing comma */
    return 0;
}

/*  For help texts: "lenet (LeNet-style ...), ...". */
void
gc_cnn_net_presets (char *out, size_t size)
{
    size_t used = 0;
    out [0] = '\0';
    for (size_t i = 0; i < S_NPRESETS && used < size; i++)
        used += (size_t) snprintf (out + used, size - used, "%s%s", i ? ", " : "", s_presets [i].name);
}
