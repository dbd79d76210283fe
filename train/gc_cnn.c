#include "gc_cnn.h"

#include <assert.h>
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_conv.h"
#include "gc_wino.h"
#include "gc_mem.h"
#include "gc_model.h"
#include "gc_rng.h"
#include "gc_time.h"
#include "gc_xent.h"

/*  Activations are channel-major, CNHW: channel c of the whole batch is one
    run of batch h w floats. Then the product of a convolution's sgemm,
    W (out x c k k) * col (c k k x samples P), is its output as it stands
    (written in place through ldc, no move from a chunk-major product to
    NCHW), its backward reads the output gradient in place too, and a 1x1
    stride-1 convolution needs no lowering at all: its input is the matrix.
    The model's input arrives NCHW (the same as CNHW for one channel) and is
    turned once; a linear layer wants batch-major rows, so its input is
    turned into them (and its input gradient back), which is cheap at the
    end of a network. Tensors from a linear layer on are batch-major (`flat`).

    Floats of one lowered chunk: small enough that col stays in L2 beside
    sgemm's packed panels (2^15 and 2^16 ran alike here, faster than 2^14 and 2^19),
    though a layer with many rows per sample then lowers one sample at a time. */
#define S_CHUNK_FLOATS (1u << 16)

/*  Floats of one chunk's transformed tiles in a Winograd convolution (V, and
    the product M beside it): small enough to stay in L2 between the
    transform and the 16 sgemms (2^16 to 2^18 ran alike in gcbench train on
    lenet-w and resnet8-gn; in a throwaway driver, the sgemms alone of
    lenet-w's 64 -> 64 convolution at 14x14 ran 1.3 times as fast on chunks
    of 4 samples as of 16 or 64). The 5x5 form (6x6 tiles) takes twice
    that: lenet ran 7 % faster with 2^18 floats than with 2^17 (4 samples
    a chunk against 2; 5 ran slower than 4), lenet-w and resnet8-gn 3-5 %
    slower with 2^18 of their 4x4 tiles. */
#define S_WINO_FLOATS (1u << 17)

/*  The scratch memory of a forward and backward pass (activations, their
    gradients, pooling indices, GroupNorm statistics, the lowered chunk) is
    needed only during one call, so it belongs to the thread, not to the
    model: gcsim steps hundreds of peers' models on one or two threads, and
    a workspace per model made the scratch most of a peer's memory. Each
    slot grows to the largest request any model on the thread has made. */
typedef struct {
    void  *p;
    size_t bytes;
} s_slot_t;

typedef struct {
    s_slot_t act [GC_CNN_MAX_OPS], dact [GC_CNN_MAX_OPS], arg [GC_CNN_MAX_OPS],
             stats [GC_CNN_MAX_OPS], rows [GC_CNN_MAX_OPS], mask [GC_CNN_MAX_OPS], col, xin,
             drows, keep, tap, wflip, wv, wm, wu, wut, wdu, wscr;
} s_workspace_t;

struct gc_cnn_t {
    gc_cnn_net_t net;
    //  borrowed from the thread's workspace for the length of one call
    float   *act [GC_CNN_MAX_OPS];      /* output of each operation */
    float   *dact [GC_CNN_MAX_OPS];     /* its gradient (not the last one's) */
    int32_t *arg [GC_CNN_MAX_OPS];      /* max pooling: where each maximum was */
    float   *stats [GC_CNN_MAX_OPS];    /* GroupNorm: mean, 1/std per sample, group */
    float   *rows [GC_CNN_MAX_OPS];     /* linear layer: its channel-major input as rows */
    float   *mask [GC_CNN_MAX_OPS];     /* dropout: 0 or the kept values' scale, per value */
    float   *col;                       /* one lowered chunk */
    float   *keep;                      /* the lowering's masks of the taps (gc_conv_taps) */
    int32_t *tap;                       /* and its read tables */
    float   *wflip;                     /* a kernel transposed and flipped (s_conv_dx) */
    float   *xin;                       /* the input, channel-major (more than one channel) */
    float   *drows;                     /* a linear layer's input gradient as rows */
    //  Winograd convolutions (gc_wino.h): a chunk's transformed input tiles
    //  and their product (or the output gradient's tiles), the transformed
    //  kernels, those of the transposed convolution, the kernels' gradient
    float   *wv, *wm, *wu, *wut, *wdu, *wscr;
    const float *x;                     /* the input as the operations read it */
    const float *xrows;                 /* the input as given: batch-major rows */
    bool     dset [GC_CNN_MAX_OPS];     /* gradient written this step */
    bool     flat [GC_CNN_MAX_OPS];     /* tensor is batch-major (from a linear layer) */
    //  op i also does the ReLU op i + 1 (which reads only its output) and
    //  writes that op's tensor; its own is never made
    bool     fused [GC_CNN_MAX_OPS];
    //  ReLU i is read only by a max pooling with windows that do not
    //  overlap, whose backward then writes the ReLU's input gradient itself
    //  (gc_conv_maxpool_backward): ReLU i has no backward pass and no gradient
    bool     pooled [GC_CNN_MAX_OPS];
    //  GroupNorm i + 1 reads only convolution i's output: it runs per chunk
    //  of the convolution, right after the chunk's sgemm, while the chunk is
    //  in L2 (its three passes read the stem's 3.2 MB output from memory)
    bool     gn_chunked [GC_CNN_MAX_OPS];
    //  and its ReLU feeds a max pooling alone (pooled): the pooling runs per
    //  chunk too, forward after the GroupNorm and backward before it, while
    //  the chunk is in L2 (a stem's output is 3.2 MB at batch 64); the
    //  pooling op itself (i + 3) is then skipped
    bool     gn_pool [GC_CNN_MAX_OPS];
    //  convolution i runs as Winograd's F(2x2, 3x3) or F(2x2, 5x5) (gc_wino_fits, and not
    //  turned off: GC_CONV=im2col in the environment, gc_cnn_set_winograd)
    bool     wino [GC_CNN_MAX_OPS];
    //  Winograd convolution i, its ReLU i + 1 and a 2x2 max pooling i + 2
    //  that alone reads the ReLU (pooled [i + 1]) run as one: the output
    //  transform writes the pooled tensor and its indices
    //  (gc_wino_output_pool), never the convolution's output (perf: the
    //  pooling's own pass was 3 % of a lenet-w step)
    bool     wino_pool [GC_CNN_MAX_OPS];
    //  ReLU i is read only by Winograd convolution sole [i], whose input
    //  gradient pass masks by the ReLU's output and writes the ReLU's input
    //  gradient itself (gc_wino_output's mask): ReLU i has no backward pass
    //  (perf: that pass was 2.7 % of a lenet-w step)
    bool     relu_dx [GC_CNN_MAX_OPS];
    int      sole [GC_CNN_MAX_OPS];     /* the one operation reading tensor i, or -1 */
    //  tensor i is read only by a residual join (ADD), whose input gradient
    //  is its output gradient: dact [i] is that buffer, not a copy of it
    //  (perf: the copies were 2.4 % of a lenet-w-res step)
    bool     alias [GC_CNN_MAX_OPS];
    float   *vgrad;                     /* gradients of two vector layers */
    float   *gnbuf;                     /* GroupNorm backward's lanes */
    //  dropout: on in a call that computes a gradient (training), off in a
    //  forward or loss-only call (evaluation, validation); drop_fixed keeps
    //  it on with the same masks in every call (gc_cnn_dropout_fix)
    bool     training, drop_fixed;
    uint64_t drop_calls;                /* training calls so far: the masks' stream */
    size_t   max_vector;
    bool     profile;
    double   sgemm_s;
};

static bool s_pointwise (const gc_cnn_op_t *op);

int
gc_cnn_lowering_parse (const char *value, bool *winograd, gc_err_t *err)
{
    *winograd = true;
    if (!value || !strcmp (value, "winograd"))
        return 0;
    if (!strcmp (value, "im2col")) {
        *winograd = false;
        return 0;
    }
    return gc_err_set (err, GC_E_SPEC, "GC_CONV=%s is not im2col or winograd", value);
}

//  GC_CONV, read once per process (every model new reads the result): a
//  value that is not a lowering is said once on stderr and Winograd runs.
static pthread_once_t s_lowering_once = PTHREAD_ONCE_INIT;
static bool s_winograd = true;

static void
s_lowering_from_env (void)
{
    gc_err_t err = { 0 };
    if (gc_cnn_lowering_parse (getenv ("GC_CONV"), &s_winograd, &err))
        fprintf (stderr, "gc_cnn: %s: using winograd\n", err.msg);
}

gc_cnn_t *
gc_cnn_new (const char *spec, gc_err_t *err)
{
    gc_cnn_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_E_NOMEM, "model cnn:%s: out of memory", spec);
        return NULL;
    }
    if (gc_cnn_net_parse (&self->net, spec, err)) {
        free (self);
        return NULL;
    }
    const gc_cnn_net_t *net = &self->net;
    int readers [GC_CNN_MAX_OPS] = { 0 };
    for (int i = 0; i < net->n_ops; i++) {
        const gc_cnn_op_t *op = &net->ops [i];
        if (op->in >= 0)
            readers [op->in]++;
        if (op->kind == GC_CNN_ADD && op->in2 >= 0)
            readers [op->in2]++;
        self->flat [i] = op->kind == GC_CNN_FC
                      || ((op->kind == GC_CNN_RELU || op->kind == GC_CNN_ADD
                           || op->kind == GC_CNN_DROPOUT)
                          && op->in >= 0 && self->flat [op->in]);
    }
    for (int i = 0; i < net->n_ops; i++)
        self->sole [i] = -1;
    for (int i = 0; i < net->n_ops; i++) {
        const gc_cnn_op_t *op = &net->ops [i];
        if (op->in >= 0 && readers [op->in] == 1)
            self->sole [op->in] = i;
        if (op->kind == GC_CNN_ADD && op->in2 >= 0 && readers [op->in2] == 1)
            self->sole [op->in2] = i;
    }
    for (int i = 0; i < net->n_ops; i++)
        self->alias [i] = self->sole [i] >= 0 && net->ops [self->sole [i]].kind == GC_CNN_ADD;
    for (int i = 0; i + 1 < net->n_ops; i++) {
        gc_cnn_kind_t kind = net->ops [i].kind;
        self->fused [i] = (kind == GC_CNN_CONV || kind == GC_CNN_GN || kind == GC_CNN_ADD)
                       && net->ops [i + 1].kind == GC_CNN_RELU && net->ops [i + 1].in == i
                       && readers [i] == 1;
    }
    for (int i = 0; i < net->n_ops; i++) {
        const gc_cnn_op_t *op = &net->ops [i], *relu = op->in >= 0 ? &net->ops [op->in] : NULL;
        if (op->kind == GC_CNN_MAXPOOL && op->k <= op->stride && relu
        &&  relu->kind == GC_CNN_RELU && relu->in >= 0 && readers [op->in] == 1)
            self->pooled [op->in] = true;
    }
    for (int i = 0; i + 1 < net->n_ops; i++)
        self->gn_chunked [i] = net->ops [i].kind == GC_CNN_CONV && !s_pointwise (&net->ops [i])
                            && net->ops [i + 1].kind == GC_CNN_GN && net->ops [i + 1].in == i
                            && readers [i] == 1;
    for (int i = 0; i + 3 < net->n_ops; i++)
        self->gn_pool [i] = self->gn_chunked [i] && self->fused [i + 1] && self->pooled [i + 2]
                         && net->ops [i + 3].kind == GC_CNN_MAXPOOL && net->ops [i + 3].in == i + 2;
    pthread_once (&s_lowering_once, s_lowering_from_env);
    gc_cnn_set_winograd (self, s_winograd);
    for (size_t l = 0; l < self->net.layout.n_layers; l++)
        if (self->net.layout.layers [l].kind == GC_LAYER_VECTOR
        &&  self->net.layout.layers [l].count > self->max_vector)
            self->max_vector = self->net.layout.layers [l].count;
    size_t gn = 1;
    for (int i = 0; i < net->n_ops; i++)
        if (net->ops [i].kind == GC_CNN_GN && gc_conv_gn_scratch (&net->ops [i]) > gn)
            gn = gc_conv_gn_scratch (&net->ops [i]);
    self->vgrad = gc_falloc (2 * self->max_vector + 1);
    self->gnbuf = gc_falloc (gn);
    if (!self->vgrad || !self->gnbuf) {
        gc_err_set (err, GC_E_NOMEM, "model cnn:%s: out of memory", spec);
        gc_cnn_destroy (&self);
    }
    return self;
}

void
gc_cnn_destroy (gc_cnn_t **self_p)
{
    gc_cnn_t *self = *self_p;
    if (!self)
        return;
    gc_mem_free (self->vgrad);
    gc_mem_free (self->gnbuf);
    free (self);
    *self_p = NULL;
}

const gc_cnn_net_t *gc_cnn_net (const gc_cnn_t *self) { return &self->net; }
const gc_layout_t *gc_cnn_layout (const gc_cnn_t *self) { return &self->net.layout; }
const char *gc_cnn_spec (const gc_cnn_t *self) { return self->net.spec; }
void   gc_cnn_profile (gc_cnn_t *self, bool on) { self->profile = on; self->sgemm_s = 0; }

void
gc_cnn_set_winograd (gc_cnn_t *self, bool on)
{
    const gc_cnn_op_t *ops = self->net.ops;
    for (int i = 0; i < self->net.n_ops; i++) {
        self->wino [i] = on && gc_wino_fits (&ops [i]);
        self->wino_pool [i] = self->wino [i] && self->fused [i] && i + 2 < self->net.n_ops
                           && self->pooled [i + 1] && ops [i + 2].in == i + 1
                           && gc_wino_pools (&ops [i], &ops [i + 2]);
    }
    for (int i = 0; i < self->net.n_ops; i++) {
        int j = self->sole [i];
        self->relu_dx [i] = ops [i].kind == GC_CNN_RELU && ops [i].in >= 0 && !self->pooled [i]
                         && j > i && ops [j].kind == GC_CNN_CONV && self->wino [j]
                         && ops [j].in == i;
    }
}
void   gc_cnn_dropout_fix (gc_cnn_t *self, bool on) { self->drop_fixed = on; }
double gc_cnn_sgemm_seconds (const gc_cnn_t *self) { return self->sgemm_s; }

//  Multiply-adds x 2 per sample of an operation with weights.
static double
s_op_flops (const gc_cnn_op_t *op)
{
    if (op->kind == GC_CNN_CONV)
        return 2.0 * (double) op->oc * (double) (op->c * op->k * op->k) * (double) (op->oh * op->ow);
    if (op->kind == GC_CNN_FC)
        return 2.0 * (double) op->oc * (double) (op->c * op->h * op->w);
    return 0;
}

double
gc_cnn_forward_flops (const gc_cnn_t *self)
{
    double f = 0;
    for (int i = 0; i < self->net.n_ops; i++)
        f += s_op_flops (&self->net.ops [i]);
    return f;
}

//  forward, weight gradients, input gradients except where the input is the data
double
gc_cnn_train_flops (const gc_cnn_t *self)
{
    double f = 0;
    for (int i = 0; i < self->net.n_ops; i++) {
        const gc_cnn_op_t *op = &self->net.ops [i];
        f += (op->in < 0 ? 2.0 : 3.0) * s_op_flops (op);
    }
    return f;
}

void
gc_cnn_init_params (const gc_cnn_t *self, float *params, uint64_t seed)
{
    gc_rng_t rng;
    gc_rng_init (&rng, seed, 0xC44);
    for (int i = 0; i < self->net.n_ops; i++) {
        const gc_cnn_op_t *op = &self->net.ops [i];
        if (op->weight < 0)
            continue;
        const gc_layer_t *w = &self->net.layout.layers [op->weight];
        const gc_layer_t *b = &self->net.layout.layers [op->bias];
        if (op->kind == GC_CNN_GN) {
            for (size_t j = 0; j < w->count; j++)
                params [w->offset + j] = op->zero_scale ? 0.0f : 1.0f;
        }
        else {
            float bound = sqrtf (6.0f / (float) w->cols);
            for (size_t j = 0; j < w->count; j++)
                params [w->offset + j] = bound * (2.0f * gc_rng_float (&rng) - 1.0f);
        }
        memset (params + b->offset, 0, b->count * sizeof (float));
    }
}

static pthread_key_t  s_workspace_key;
static pthread_once_t s_workspace_once = PTHREAD_ONCE_INIT;

static void
s_workspace_free (void *arg)
{
    s_workspace_t *ws = arg;
    for (int i = 0; i < GC_CNN_MAX_OPS; i++) {
        gc_mem_free (ws->act [i].p);
        gc_mem_free (ws->dact [i].p);
        gc_mem_free (ws->arg [i].p);
        gc_mem_free (ws->stats [i].p);
        gc_mem_free (ws->rows [i].p);
        gc_mem_free (ws->mask [i].p);
    }
    s_slot_t *single [] = { &ws->col, &ws->xin, &ws->drows, &ws->keep, &ws->tap, &ws->wflip,
                            &ws->wv, &ws->wm, &ws->wu, &ws->wut, &ws->wdu, &ws->wscr };
    for (size_t i = 0; i < sizeof single / sizeof single [0]; i++)
        gc_mem_free (single [i]->p);
    free (ws);
}

static void
s_workspace_key_make (void)
{
    if (pthread_key_create (&s_workspace_key, s_workspace_free)) {
        fprintf (stderr, "gc_cnn: no thread-specific key for the workspace\n");
        abort ();
    }
}

//  The calling thread's workspace, made on its first call; freed when the
//  thread exits (the main thread's stays reachable until the process ends).
static s_workspace_t *
s_workspace (void)
{
    pthread_once (&s_workspace_once, s_workspace_key_make);
    s_workspace_t *ws = pthread_getspecific (s_workspace_key);
    if (!ws) {
        ws = calloc (1, sizeof *ws);
        if (!ws || pthread_setspecific (s_workspace_key, ws)) {
            fprintf (stderr, "gc_cnn: out of memory for the workspace\n");
            abort ();
        }
    }
    return ws;
}

//  The slot, at least `bytes` long. Like the model's other scratch, a
//  failure here is fatal: the model API has no error path inside a step.
static void *
s_grow (s_slot_t *slot, size_t bytes)
{
    if (slot->bytes < bytes || !slot->p) {
        gc_mem_free (slot->p);
        slot->p = gc_aligned_alloc (bytes ? bytes : 1);
        if (!slot->p) {
            fprintf (stderr, "gc_cnn: out of memory for %zu bytes of workspace\n", bytes);
            abort ();
        }
        slot->bytes = bytes;
    }
    return slot->p;
}

//  A 1x1 stride-1 convolution multiplies its input as it stands.
static bool
s_pointwise (const gc_cnn_op_t *op)
{
    return op->k == 1 && op->stride == 1 && op->pad == 0;
}

//  Samples per lowered chunk of a convolution.
static size_t
s_chunk (const gc_cnn_op_t *op, size_t batch)
{
    size_t per = op->c * op->k * op->k * op->oh * op->ow;
    size_t m = S_CHUNK_FLOATS / per;
    m = m ? m : 1;
    return m < batch ? m : batch;
}

//  Samples per chunk of a Winograd convolution, forward and backward (the
//  transposed convolution's tiles have the other channel count).
static size_t
s_wino_chunk (const gc_cnn_op_t *op, size_t batch)
{
    size_t rows = op->c > op->oc ? op->c : op->oc;
    size_t floats = op->k == 5 ? 2 * S_WINO_FLOATS : S_WINO_FLOATS;
    size_t m = floats / (gc_wino_planes (op->k) * rows * gc_wino_tiles (op));
    m = m ? m : 1;
    return m < batch ? m : batch;
}

/*  A "same" stride-1 convolution (odd k, pad (k - 1) / 2, not 1x1): its
    input gradient is itself such a convolution, of dY with the kernel
    transposed (in and out channels swapped) and flipped, so the backward
    lowers dY and multiplies into dX (s_conv_dx) instead of multiplying
    into a lowered gradient k k times dX's size and gathering it (col2im):
    no zeroing of that product by sgemm (perf: sgemm_beta 7 % of a step)
    and a lowering instead of a gather. Only when out channels <= in
    channels, as dY's lowering is oc / c times dX's (lenet's 16 -> 32
    convolution ran no faster that way). The transposed convolution's
    operation: in and out channels swapped, the rest the same. */
static bool
s_same (const gc_cnn_op_t *op)
{
    return op->stride == 1 && op->k > 1 && 2 * op->pad + 1 == op->k
        && op->oh == op->h && op->ow == op->w && op->oc <= op->c;
}

static gc_cnn_op_t
s_transposed (const gc_cnn_op_t *op)
{
    gc_cnn_op_t t = *op;
    t.c = op->oc;
    t.oc = op->c;
    return t;
}

//  Point the model's scratch at the thread's workspace, grown for `batch`
//  samples (gradients too when `train`): a loop over the operations per
//  call; an allocation only when a larger request than ever arrives.
static void
s_reserve (gc_cnn_t *self, size_t batch, bool train)
{
    const gc_cnn_net_t *net = &self->net;
    s_workspace_t *ws = s_workspace ();
    size_t col = 1, drows = 1, keep = 1, wflip = 1, wtiles = 1, wkern = 1, wscr = 1;
    for (int i = 0; i < net->n_ops; i++) {
        const gc_cnn_op_t *op = &net->ops [i];
        size_t out = batch * gc_cnn_op_out_size (op);
        self->act [i] = self->fused [i] ? NULL : s_grow (&ws->act [i], out * sizeof (float));
        if (op->kind == GC_CNN_MAXPOOL)
            self->arg [i] = s_grow (&ws->arg [i], out * sizeof (int32_t));
        if (op->kind == GC_CNN_GN)
            self->stats [i] = s_grow (&ws->stats [i], 2 * batch * op->groups * sizeof (float));
        if (op->kind == GC_CNN_DROPOUT)
            self->mask [i] = s_grow (&ws->mask [i], out * sizeof (float));
        if (train && i + 1 < net->n_ops)
            self->dact [i] = self->pooled [i] ? NULL
                           : s_grow (&ws->dact [i], out * sizeof (float));
        if (self->wino [i]) {
            size_t rows = op->c > op->oc ? op->c : op->oc;
            size_t planes = gc_wino_planes (op->k), kk = op->k * op->k;
            size_t tiles = planes * gc_wino_plane (rows, s_wino_chunk (op, batch) * gc_wino_tiles (op));
            wtiles = tiles > wtiles ? tiles : wtiles;
            wscr = gc_wino_scratch (op) > wscr ? gc_wino_scratch (op) : wscr;
            wkern = planes * op->c * op->oc > wkern ? planes * op->c * op->oc : wkern;
            if (train && op->c * op->oc * kk > wflip)
                wflip = op->c * op->oc * kk;
        }
        else
        if (op->kind == GC_CNN_CONV && !s_pointwise (op)) {
            size_t m = s_chunk (op, batch), P = op->oh * op->ow;
            if (op->c * op->k * op->k * m * P > col)
                col = op->c * op->k * op->k * m * P;
            keep = op->k * op->k * P > keep ? op->k * op->k * P : keep;
            if (train && s_same (op)) {
                gc_cnn_op_t t = s_transposed (op);
                size_t mt = s_chunk (&t, batch);
                if (t.c * t.k * t.k * mt * P > col)
                    col = t.c * t.k * t.k * mt * P;
                if (op->c * op->oc * op->k * op->k > wflip)
                    wflip = op->c * op->oc * op->k * op->k;
            }
        }
        if (op->kind == GC_CNN_FC && op->in >= 0 && !self->flat [op->in]) {
            size_t in = batch * op->c * op->h * op->w;
            self->rows [i] = s_grow (&ws->rows [i], in * sizeof (float));
            if (train && in > drows)
                drows = in;
        }
    }
    self->col = s_grow (&ws->col, col * sizeof (float));
    self->keep = s_grow (&ws->keep, keep * sizeof (float));
    self->tap = s_grow (&ws->tap, keep * sizeof (int32_t));
    for (int i = 0; train && i < net->n_ops; i++)
        if (self->alias [i])
            self->dact [i] = self->dact [self->sole [i]];
    self->wflip = train ? s_grow (&ws->wflip, wflip * sizeof (float)) : NULL;
    self->wv = s_grow (&ws->wv, wtiles * sizeof (float));
    self->wm = s_grow (&ws->wm, wtiles * sizeof (float));
    self->wu = s_grow (&ws->wu, wkern * sizeof (float));
    self->wscr = s_grow (&ws->wscr, wscr * sizeof (float));
    self->wut = train ? s_grow (&ws->wut, wkern * sizeof (float)) : NULL;
    self->wdu = train ? s_grow (&ws->wdu, wkern * sizeof (float)) : NULL;
    self->drows = train ? s_grow (&ws->drows, drows * sizeof (float)) : NULL;
    self->xin = net->input.channels > 1
              ? s_grow (&ws->xin, batch * net->input.channels * net->input.height
                                  * net->input.width * sizeof (float))
              : NULL;
}

//  The input, channel-major, as the operations read it.
static void
s_bind_input (gc_cnn_t *self, const float *x, size_t batch)
{
    const gc_shape_t *in = &self->net.input;
    self->xrows = x;
    if (!self->xin) {
        self->x = x;
        return;
    }
    size_t C = in->channels, hw = in->height * in->width;
    for (size_t n = 0; n < batch; n++)
        for (size_t c = 0; c < C; c++)
            memcpy (self->xin + (c * batch + n) * hw, x + (n * C + c) * hw, hw * sizeof (float));
    self->x = self->xin;
}

static void
s_gemm (gc_cnn_t *self, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, size_t m, size_t n, size_t k,
        const float *a, size_t lda, const float *b, size_t ldb, float beta, float *c, size_t ldc)
{
    //  the thread's CPU clock, like gcbench's step time it is a fraction of
    double t0 = self->profile ? gc_thread_cpu_s () : 0;
    cblas_sgemm (CblasRowMajor, ta, tb, (int) m, (int) n, (int) k, 1.0f, a, (int) lda,
                 b, (int) ldb, beta, c, (int) ldc);
    if (self->profile)
        self->sgemm_s += gc_thread_cpu_s () - t0;
}

static const float *
s_tensor (const gc_cnn_t *self, int i)
{
    return i < 0 ? self->x : self->act [i];
}

//  A channel-major tensor (c planes of hw per sample) as batch rows of c hw.
static void
s_rows (const float *cnhw, float *rows, size_t batch, size_t c, size_t hw)
{
    for (size_t n = 0; n < batch; n++)
        for (size_t ci = 0; ci < c; ci++)
            memcpy (rows + (n * c + ci) * hw, cnhw + (ci * batch + n) * hw, hw * sizeof (float));
}

//  The reverse of s_rows, written or added (`add`) into the channel-major tensor.
static void
s_rows_back (const float *rows, float *cnhw, size_t batch, size_t c, size_t hw, bool add)
{
    for (size_t n = 0; n < batch; n++)
        for (size_t ci = 0; ci < c; ci++) {
            const float *src = rows + (n * c + ci) * hw;
            float *dst = cnhw + (ci * batch + n) * hw;
            if (add)
                for (size_t j = 0; j < hw; j++)
                    dst [j] += src [j];
            else
                memcpy (dst, src, hw * sizeof (float));
        }
}

//  The input of linear layer i as batch rows; `make`: turn a channel-major
//  input into them (forward), else they are there from the forward pass.
static const float *
s_fc_rows (gc_cnn_t *self, int i, size_t batch, bool make)
{
    const gc_cnn_op_t *op = &self->net.ops [i];
    if (op->in < 0)
        return self->xrows;
    if (self->flat [op->in])
        return self->act [op->in];
    if (make)
        s_rows (self->act [op->in], self->rows [i], batch, op->c, op->h * op->w);
    return self->rows [i];
}

//  GroupNorm i of samples [n0, n0 + m).
static void
s_gn_forward (gc_cnn_t *self, int i, const float *params, size_t batch, size_t n0, size_t m)
{
    const gc_cnn_op_t *op = &self->net.ops [i];
    const gc_layout_t *layout = &self->net.layout;
    bool relu = self->fused [i];
    gc_conv_gn_forward (op, s_tensor (self, op->in), batch, n0, m,
                        params + layout->layers [op->weight].offset,
                        params + layout->layers [op->bias].offset, relu,
                        relu ? self->act [i + 1] : self->act [i], self->stats [i]);
}

/*  Convolution i's GroupNorm (gn_chunked) on the chunk [n0, n0 + m) just
    computed, and the max pooling after its ReLU when that runs per chunk
    too (gn_pool). */
static void
s_gn_chunk_forward (gc_cnn_t *self, int i, const float *params, size_t batch, size_t n0,
                    size_t m)
{
    s_gn_forward (self, i + 1, params, batch, n0, m);
    if (self->gn_pool [i])
        gc_conv_maxpool_forward (&self->net.ops [i + 3], self->act [i + 2], batch, n0, m,
                                 self->act [i + 3], self->arg [i + 3]);
}

/*  Where a Winograd convolution's product goes: out = (or += when add) the
    product (masked by a ReLU's output: mask), plus bias, then the ReLU;
    gn >= 0: the GroupNorm that runs on each chunk right after it
    (gn_chunked, with params); arg not NULL: out is instead the 2x2 max
    pooling of that (with the ReLU), arg its indices (wino_pool). */
typedef struct {
    float       *out;
    const float *bias, *mask, *params;
    bool         relu, add;
    int          gn;
    int32_t     *arg;
} s_wino_out_t;

//  A Winograd convolution (gc_wino.h) of in with the transformed kernels U into o.
static void
s_wino_conv (gc_cnn_t *self, const gc_cnn_op_t *op, const float *U, const float *in,
             size_t batch, const s_wino_out_t *o)
{
    size_t C = op->c, K = op->oc, step = s_wino_chunk (op, batch), tiles = gc_wino_tiles (op);
    for (size_t n0 = 0; n0 < batch; n0 += step) {
        size_t m = batch - n0 < step ? batch - n0 : step, T = m * tiles, ld = gc_wino_ld (T);
        size_t pv = gc_wino_plane (C, T), pm = gc_wino_plane (K, T);
        gc_wino_input (op, in, batch, n0, m, self->wv, self->wscr);
        for (size_t xi = 0; xi < gc_wino_planes (op->k); xi++)
            s_gemm (self, CblasNoTrans, CblasNoTrans, K, T, C, U + xi * K * C, C,
                    self->wv + xi * pv, ld, 0.0f, self->wm + xi * pm, ld);
        if (o->arg)
            gc_wino_output_pool (op, self->wm, batch, n0, m, o->bias, o->out, o->arg);
        else
            gc_wino_output (op, self->wm, batch, n0, m, o->bias, o->relu, o->add, o->mask, o->out);
        if (o->gn >= 0)
            s_gn_chunk_forward (self, o->gn - 1, o->params, batch, n0, m);
    }
}

static void
s_conv_forward (gc_cnn_t *self, const gc_cnn_op_t *op, const float *params, const float *in,
                size_t batch, bool relu, float *out)
{
    int i = (int) (op - self->net.ops);
    const float *w = params + self->net.layout.layers [op->weight].offset;
    const float *b = params + self->net.layout.layers [op->bias].offset;
    size_t P = op->oh * op->ow, ckk = op->c * op->k * op->k, N = batch * P;
    if (self->wino [i]) {
        gc_wino_kernels (w, op->oc, op->c, op->k, self->wu);
        bool pool = self->wino_pool [i];
        s_wino_out_t o = {
            .out = pool ? self->act [i + 2] : out, .bias = b, .params = params, .relu = relu,
            .gn = self->gn_chunked [i] ? i + 1 : -1, .arg = pool ? self->arg [i + 2] : NULL,
        };
        s_wino_conv (self, op, self->wu, in, batch, &o);
        return;
    }
    if (s_pointwise (op))
        s_gemm (self, CblasNoTrans, CblasNoTrans, op->oc, N, ckk, w, ckk, in, N, 0.0f, out, N);
    else {
        size_t step = s_chunk (op, batch);
        gc_conv_taps (op, self->keep, self->tap);
        for (size_t n0 = 0; n0 < batch; n0 += step) {
            size_t m = batch - n0 < step ? batch - n0 : step;
            gc_conv_im2col (op, in, batch, n0, m, self->col, self->keep, self->tap);
            //  without a ReLU the product is added to the bias written
            //  first, where sgemm would have written zeros (its beta pass),
            //  and the bias costs no pass of its own; with one, a pass is
            //  needed anyway, and it adds the bias (the bytes as before)
            if (!relu)
                for (size_t c = 0; c < op->oc; c++)
                    gc_conv_bias (out + c * N + n0 * P, m * P, b [c], GC_CONV_BIAS_FILL);
            s_gemm (self, CblasNoTrans, CblasNoTrans, op->oc, m * P, ckk, w, ckk, self->col,
                    m * P, relu ? 0.0f : 1.0f, out + n0 * P, N);
            //  the chunk's bias and ReLU while its product is still in L2
            //  (a pass over the whole output afterwards read it back from
            //  memory: lenet's first output is 3.2 MB at batch 64)
            if (relu)
                for (size_t c = 0; c < op->oc; c++)
                    gc_conv_bias (out + c * N + n0 * P, m * P, b [c], GC_CONV_BIAS_RELU);
            if (self->gn_chunked [i])
                s_gn_chunk_forward (self, i, params, batch, n0, m);
        }
        return;
    }
    for (size_t c = 0; c < op->oc; c++)
        gc_conv_bias (out + c * N, N, b [c], relu ? GC_CONV_BIAS_RELU : GC_CONV_BIAS_ADD);
}

static void
s_fc_forward (gc_cnn_t *self, const gc_cnn_op_t *op, const float *params, const float *in,
              size_t batch, float *out)
{
    const float *w = params + self->net.layout.layers [op->weight].offset;
    const float *b = params + self->net.layout.layers [op->bias].offset;
    size_t din = op->c * op->h * op->w, dout = op->oc;
    for (size_t r = 0; r < batch; r++)
        memcpy (out + r * dout, b, dout * sizeof (float));
    s_gemm (self, CblasNoTrans, CblasTrans, batch, dout, din, in, din, w, din, 1.0f, out, dout);
}

//  The seed of this call's dropout masks: the training calls so far and the
//  bits of the batch's first values, so that a run repeats its masks (same
//  seed, same bytes) while peers and runs that see other data draw others.
static uint64_t
s_drop_seed (gc_cnn_t *self, const float *x, size_t batch)
{
    if (self->drop_fixed)
        return 0xD50F;
    const gc_shape_t *in = &self->net.input;
    size_t n = batch * in->channels * in->height * in->width;
    n = n < 64 ? n : 64;
    uint64_t h = 0xcbf29ce484222325ull;     /* FNV-1a */
    const unsigned char *bytes = (const unsigned char *) x;
    for (size_t j = 0; j < n * sizeof (float); j++)
        h = (h ^ bytes [j]) * 0x100000001b3ull;
    return gc_seed_derive (h, self->drop_calls++);
}

//  Dropout of op->k percent while training (inverted: the kept values are
//  scaled by 1 / (1 - p), so evaluation is the identity), the mask kept for
//  the backward pass; a copy when evaluating.
static void
s_dropout_forward (gc_cnn_t *self, int i, const float *in, size_t n, uint64_t seed, float *out)
{
    const gc_cnn_op_t *op = &self->net.ops [i];
    if (!self->training) {
        memcpy (out, in, n * sizeof (float));
        return;
    }
    float p = (float) op->k / 100.0f, keep = 1.0f / (1.0f - p);
    float *mask = self->mask [i];
    gc_rng_t rng;
    gc_rng_init (&rng, seed, (uint64_t) i);
    for (size_t j = 0; j < n; j++)
        mask [j] = gc_rng_float (&rng) < p ? 0.0f : keep;
    for (size_t j = 0; j < n; j++)
        out [j] = in [j] * mask [j];
}

//  The forward pass over scratch already bound by s_reserve.
static const float *
s_forward_pass (gc_cnn_t *self, const float *params, const float *x, size_t batch)
{
    const gc_cnn_net_t *net = &self->net;
    s_bind_input (self, x, batch);
    uint64_t seed = 0;
    if (self->training)
        for (int i = 0; i < net->n_ops; i++)
            if (net->ops [i].kind == GC_CNN_DROPOUT) {
                seed = s_drop_seed (self, x, batch);
                break;
            }
    for (int i = 0; i < net->n_ops; i++) {
        const gc_cnn_op_t *op = &net->ops [i];
        const float *in = s_tensor (self, op->in);
        bool relu = self->fused [i];
        float *out = relu ? self->act [i + 1] : self->act [i];
        size_t n = batch * gc_cnn_op_out_size (op);
        switch (op->kind) {
            case GC_CNN_CONV: {
                int conv = i;
                s_conv_forward (self, op, params, in, batch, relu, out);
                if (self->wino_pool [i])
                    i++;                        /* the pooling is done, and below its ReLU */
                if (self->gn_chunked [i]) {
                    i++;                        /* the GroupNorm is done */
                    relu = self->fused [i];     /* and its ReLU */
                }
                if (self->gn_pool [conv])
                    i++;                        /* and the pooling after it */
                break;
            }
            case GC_CNN_FC:
                s_fc_forward (self, op, params, s_fc_rows (self, i, batch, true), batch, out);
                break;
            case GC_CNN_GN: s_gn_forward (self, i, params, batch, 0, batch); break;
            case GC_CNN_RELU:
                for (size_t j = 0; j < n; j++)
                    out [j] = in [j] > 0.0f ? in [j] : 0.0f;
                break;
            case GC_CNN_MAXPOOL: gc_conv_maxpool_forward (op, in, batch, 0, batch, out, self->arg [i]); break;
            case GC_CNN_DROPOUT: s_dropout_forward (self, i, in, n, seed, out); break;
            case GC_CNN_AVGPOOL:
            case GC_CNN_GAP:     gc_conv_avgpool_forward (op, in, batch, out); break;
            case GC_CNN_ADD: {
                const float *in2 = s_tensor (self, op->in2);
                if (relu)
                    for (size_t j = 0; j < n; j++) {
                        float v = in [j] + in2 [j];
                        out [j] = v > 0.0f ? v : 0.0f;
                    }
                else
                    for (size_t j = 0; j < n; j++)
                        out [j] = in [j] + in2 [j];
                break;
            }
        }
        i += relu;      /* the ReLU is done */
    }
    return self->act [net->n_ops - 1];
}

const float *
gc_cnn_forward (gc_cnn_t *self, const float *params, const float *x, size_t batch)
{
    s_reserve (self, batch, false);
    self->training = self->drop_fixed;
    return s_forward_pass (self, params, x, batch);
}

//  grad = beta grad + v for a vector layer (v already carries alpha).
static void
s_vector_grad (float *grad, const float *v, size_t n, float beta)
{
    for (size_t j = 0; j < n; j++)
        grad [j] = (beta == 0.0f ? 0.0f : beta * grad [j]) + v [j];
}

//  Write or add src into the gradient of tensor t, which then counts as set.
static void
s_give (gc_cnn_t *self, int t, const float *src, size_t n)
{
    if (t < 0)
        return;
    float *d = self->dact [t];
    if (self->dset [t])
        for (size_t j = 0; j < n; j++)
            d [j] += src [j];
    else
        memcpy (d, src, n * sizeof (float));
    self->dset [t] = true;
}

//  wflip: the kernels of op's transposed convolution, in and out channels
//  swapped and each kernel flipped, wflip [ci] [co] [k-1-ki] [k-1-kj] =
//  w [co] [ci] [ki] [kj].
static void
s_flip_kernels (gc_cnn_t *self, const gc_cnn_op_t *op, const float *w)
{
    size_t kk = op->k * op->k, tkk = op->oc * kk;
    for (size_t co = 0; co < op->oc; co++)
        for (size_t ci = 0; ci < op->c; ci++) {
            const float *src = w + (co * op->c + ci) * kk;
            float *dst = self->wflip + ci * tkk + co * kk;
            for (size_t i = 0; i < kk; i++)
                dst [kk - 1 - i] = src [i];
        }
}

//  dx (= or += when add) the input gradient of a "same" stride-1
//  convolution with kernel w (oc x c k k), as the convolution of dy with
//  the kernels flipped and transposed (s_same; a Winograd convolution's
//  transposed convolution is one too).
static void
s_conv_dx (gc_cnn_t *self, const gc_cnn_op_t *op, const float *w, const float *dy,
           size_t batch, float *dx, bool add, const float *mask)
{
    gc_cnn_op_t t = s_transposed (op);
    s_flip_kernels (self, op, w);
    if (self->wino [op - self->net.ops]) {
        gc_wino_kernels (self->wflip, t.oc, t.c, t.k, self->wut);
        s_wino_out_t o = { .out = dx, .mask = mask, .add = add, .gn = -1 };
        s_wino_conv (self, &t, self->wut, dy, batch, &o);
        return;
    }
    assert (!mask);
    size_t P = op->oh * op->ow, N = batch * P, tkk = t.c * op->k * op->k;
    size_t step = s_chunk (&t, batch);
    gc_conv_taps (&t, self->keep, self->tap);
    for (size_t n0 = 0; n0 < batch; n0 += step) {
        size_t m = batch - n0 < step ? batch - n0 : step;
        gc_conv_im2col (&t, dy, batch, n0, m, self->col, self->keep, self->tap);
        s_gemm (self, CblasNoTrans, CblasNoTrans, t.oc, m * P, tkk, self->wflip, tkk,
                self->col, m * P, add ? 1.0f : 0.0f, dx + n0 * P, N);
    }
}

//  GroupNorm i's backward pass over samples [n0, n0 + m) (ranges in order
//  from 0, as gc_conv_gn_backward), its input gradient written or added
//  to (`add`); the parameter gradients with the last range.
static void
s_gn_backward (gc_cnn_t *self, int i, const float *params, size_t batch, size_t n0, size_t m,
               bool add, float *grad, float beta)
{
    const gc_cnn_op_t *op = &self->net.ops [i];
    const gc_layer_t *wl = &self->net.layout.layers [op->weight];
    const gc_layer_t *bl = &self->net.layout.layers [op->bias];
    float *dgamma = self->vgrad, *dbeta = self->vgrad + op->c;
    if (n0 == 0) {
        memset (dgamma, 0, op->c * sizeof (float));
        memset (dbeta, 0, op->c * sizeof (float));
    }
    bool need_dx = op->in >= 0;
    gc_conv_gn_backward (op, s_tensor (self, op->in), self->dact [i], self->stats [i], batch,
                         n0, m, params + wl->offset, dgamma, dbeta,
                         need_dx ? self->dact [op->in] : NULL, add, self->gnbuf);
    if (n0 + m < batch)
        return;
    s_vector_grad (grad + wl->offset, dgamma, op->c, beta);
    s_vector_grad (grad + bl->offset, dbeta, op->c, beta);
}

//  A convolution's bias gradient: its output gradient summed per channel.
static void
s_conv_bias_grad (gc_cnn_t *self, const gc_cnn_op_t *op, const float *dy, size_t batch,
                  float *grad, float beta)
{
    const gc_layer_t *bl = &self->net.layout.layers [op->bias];
    size_t N = batch * op->oh * op->ow;
    float *db = self->vgrad;
    for (size_t c = 0; c < op->oc; c++)
        db [c] = (float) gc_conv_sum (dy + c * N, N);
    s_vector_grad (grad + bl->offset, db, op->oc, beta);
}

/*  The backward pass of the pooling after convolution i's GroupNorm and
    ReLU on the chunk [n0, n0 + m), when it runs per chunk (gn_pool): the
    GroupNorm's output gradient, right before its backward reads it. Only
    that pooling writes it (the GroupNorm and its ReLU have one reader
    each), so it is written, not added to. */
static void
s_pool_chunk_backward (gc_cnn_t *self, int i, size_t batch, size_t n0, size_t m)
{
    if (!self->gn_pool [i])
        return;
    int p = i + 3;
    gc_conv_maxpool_backward (&self->net.ops [p], self->dact [p], self->arg [p], self->act [p],
                              batch, n0, m, self->dact [i + 1], false);
}

/*  A Winograd convolution's kernel gradient, chunk by chunk: dU += Z V^T
    (the output gradient's tiles by the input's), then G^T dU G into the
    gradient; the chunked GroupNorm's backward and the bias gradient as in
    s_conv_backward. */
static void
s_wino_backward (gc_cnn_t *self, const gc_cnn_op_t *op, const float *params, const float *in,
                 const float *dy, size_t batch, float *grad, float beta)
{
    int i = (int) (op - self->net.ops);
    size_t C = op->c, K = op->oc, step = s_wino_chunk (op, batch), tiles = gc_wino_tiles (op);
    for (size_t n0 = 0; n0 < batch; n0 += step) {
        size_t m = batch - n0 < step ? batch - n0 : step, T = m * tiles, ld = gc_wino_ld (T);
        size_t pv = gc_wino_plane (C, T), pm = gc_wino_plane (K, T);
        if (self->gn_chunked [i]) {
            s_pool_chunk_backward (self, i, batch, n0, m);
            s_gn_backward (self, i + 1, params, batch, n0, m, false, grad, beta);
        }
        gc_wino_input (op, in, batch, n0, m, self->wv, self->wscr);
        gc_wino_grad_tiles (op, dy, batch, n0, m, self->wm, self->wscr);
        for (size_t xi = 0; xi < gc_wino_planes (op->k); xi++)
            s_gemm (self, CblasNoTrans, CblasTrans, K, C, T, self->wm + xi * pm, ld,
                    self->wv + xi * pv, ld, n0 ? 1.0f : 0.0f, self->wdu + xi * K * C, C);
    }
    gc_wino_kernel_grad (self->wdu, K, C, op->k, beta, grad + self->net.layout.layers [op->weight].offset);
    if (self->gn_chunked [i])
        s_conv_bias_grad (self, op, dy, batch, grad, beta);
}

/*  gn_chunked [i]: the GroupNorm after it writes dy chunk by chunk, each
    chunk right before the chunk's sgemm for dW reads it from L2 (the
    stem's 3.2 MB gradient came from memory), and the bias gradient sums dy
    once it is all written (the same floats). */
static void
s_conv_backward (gc_cnn_t *self, const gc_cnn_op_t *op, const float *params, const float *in,
                 const float *dy, size_t batch, float *grad, float beta)
{
    int i = (int) (op - self->net.ops);
    const gc_layer_t *wl = &self->net.layout.layers [op->weight];
    const float *w = params + wl->offset;
    size_t P = op->oh * op->ow, ckk = op->c * op->k * op->k, N = batch * P;
    if (!self->gn_chunked [i])
        s_conv_bias_grad (self, op, dy, batch, grad, beta);
    bool need_dx = op->in >= 0;
    //  the tensor whose gradient dX is: the input's, or past a ReLU (relu_dx)
    int to = op->in;
    const float *mask = NULL;
    if (need_dx && self->relu_dx [op->in]) {
        mask = self->act [op->in];
        to = self->net.ops [op->in].in;
    }
    float *dx = need_dx ? self->dact [to] : NULL;
    bool add = need_dx && self->dset [to];
    if (need_dx)
        self->dset [to] = true;
    if (s_pointwise (op)) {
        s_gemm (self, CblasNoTrans, CblasTrans, op->oc, ckk, N, dy, N, in, N, beta,
                grad + wl->offset, ckk);
        if (need_dx)
            s_gemm (self, CblasTrans, CblasNoTrans, ckk, N, op->oc, w, ckk, dy, N,
                    add ? 1.0f : 0.0f, dx, N);
        return;
    }
    if (self->wino [i]) {
        s_wino_backward (self, op, params, in, dy, batch, grad, beta);
        if (need_dx)
            s_conv_dx (self, op, w, dy, batch, dx, add, mask);
        return;
    }
    size_t step = s_chunk (op, batch);
    bool same = s_same (op);
    gc_conv_taps (op, self->keep, self->tap);
    for (size_t n0 = 0; n0 < batch; n0 += step) {
        size_t m = batch - n0 < step ? batch - n0 : step;
        if (self->gn_chunked [i]) {
            s_pool_chunk_backward (self, i, batch, n0, m);
            s_gn_backward (self, i + 1, params, batch, n0, m, false, grad, beta);
        }
        gc_conv_im2col (op, in, batch, n0, m, self->col, self->keep, self->tap);
        s_gemm (self, CblasNoTrans, CblasTrans, op->oc, ckk, m * P, dy + n0 * P, N,
                self->col, m * P, n0 ? 1.0f : beta, grad + wl->offset, ckk);
        if (!need_dx || same)
            continue;
        s_gemm (self, CblasTrans, CblasNoTrans, ckk, m * P, op->oc, w, ckk, dy + n0 * P, N,
                0.0f, self->col, m * P);
        gc_conv_col2im (op, self->col, batch, n0, m, dx, add, self->keep, self->tap);
    }
    if (self->gn_chunked [i])
        s_conv_bias_grad (self, op, dy, batch, grad, beta);
    if (need_dx && same)
        s_conv_dx (self, op, w, dy, batch, dx, add, NULL);
}

static void
s_fc_backward (gc_cnn_t *self, int i, const float *params, const float *dy, size_t batch,
               float *grad, float beta)
{
    const gc_cnn_op_t *op = &self->net.ops [i];
    const gc_layer_t *wl = &self->net.layout.layers [op->weight];
    const gc_layer_t *bl = &self->net.layout.layers [op->bias];
    size_t din = op->c * op->h * op->w, dout = op->oc;
    const float *in = s_fc_rows (self, i, batch, false);
    s_gemm (self, CblasTrans, CblasNoTrans, dout, din, batch, dy, dout, in, din, beta,
            grad + wl->offset, din);
    float *db = self->vgrad;
    memset (db, 0, dout * sizeof (float));
    for (size_t r = 0; r < batch; r++)
        for (size_t j = 0; j < dout; j++)
            db [j] += dy [r * dout + j];
    s_vector_grad (grad + bl->offset, db, dout, beta);
    if (op->in < 0)
        return;
    bool add = self->dset [op->in], flat = self->flat [op->in];
    s_gemm (self, CblasNoTrans, CblasNoTrans, batch, din, dout, dy, dout, params + wl->offset,
            din, add && flat ? 1.0f : 0.0f, flat ? self->dact [op->in] : self->drows, din);
    if (!flat)
        s_rows_back (self->drows, self->dact [op->in], batch, op->c, op->h * op->w, add);
    self->dset [op->in] = true;
}


double
gc_cnn_loss_grad (gc_cnn_t *self, const float *params, const float *x, const uint8_t *y,
                  size_t batch, float *grad, float alpha, float beta, size_t *correct)
{
    return gc_cnn_loss_grad_smoothed (self, params, x, y, batch, 0.0f, grad, alpha, beta, correct);
}

double
gc_cnn_loss_grad_smoothed (gc_cnn_t *self, const float *params, const float *x, const uint8_t *y,
                           size_t batch, float eps, float *grad, float alpha, float beta,
                           size_t *correct)
{
    const gc_cnn_net_t *net = &self->net;
    s_reserve (self, batch, grad != NULL);
    self->training = grad != NULL || self->drop_fixed;
    s_forward_pass (self, params, x, batch);
    int last = net->n_ops - 1;
    //  the logits become their own gradient
    double loss = gc_softmax_xent (self->act [last], y, batch, (size_t) net->classes, eps, alpha,
                                   correct);
    if (!grad)
        return loss / (double) batch;
    memset (self->dset, 0, sizeof self->dset);
    for (int i = last; i >= 0; i--) {
        const gc_cnn_op_t *op = &net->ops [i];
        const float *in = s_tensor (self, op->in);
        const float *dy = i == last ? self->act [last] : self->dact [i];
        size_t n = batch * gc_cnn_op_out_size (op);
        if (self->pooled [i] || self->relu_dx [i])
            continue;       /* done by the pooling or the convolution that reads it */
        assert (i == last || self->dset [i]);
        switch (op->kind) {
            case GC_CNN_CONV: s_conv_backward (self, op, params, in, dy, batch, grad, beta); break;
            case GC_CNN_FC:   s_fc_backward (self, i, params, dy, batch, grad, beta); break;
            case GC_CNN_GN:
                //  after a convolution whose chunks run it (gn_chunked), its
                //  input gradient is that convolution's, set by nothing else
                if (op->in < 0 || !self->gn_chunked [op->in])
                    s_gn_backward (self, i, params, batch, 0, batch,
                                   op->in >= 0 && self->dset [op->in], grad, beta);
                if (op->in >= 0)
                    self->dset [op->in] = true;
                break;
            case GC_CNN_RELU: {
                if (op->in < 0)
                    break;
                //  mask by the output: the same as the input's sign, and it
                //  lets the gradient overwrite or add in one pass; dy is read
                //  whatever the mask, so that the select needs no branch and
                //  the loop vectorises
                const float *out = self->act [i];
                float *dx = self->dact [op->in];
                if (self->dset [op->in])
                    for (size_t j = 0; j < n; j++) {
                        float g = dy [j];
                        dx [j] += out [j] > 0.0f ? g : 0.0f;
                    }
                else
                    for (size_t j = 0; j < n; j++) {
                        float g = dy [j];
                        dx [j] = out [j] > 0.0f ? g : 0.0f;
                    }
                self->dset [op->in] = true;
                break;
            }
            case GC_CNN_MAXPOOL: {
                if (op->in < 0)
                    break;
                int t = self->pooled [op->in] ? net->ops [op->in].in : op->in;
                if (i >= 3 && self->gn_pool [i - 3]) {
                    self->dset [t] = true;      /* by the convolution's chunks (gn_pool) */
                    break;
                }
                gc_conv_maxpool_backward (op, dy, self->arg [i],
                                          self->pooled [op->in] ? self->act [i] : NULL, batch, 0,
                                          batch, self->dact [t], self->dset [t]);
                self->dset [t] = true;
                break;
            }
            case GC_CNN_AVGPOOL:
            case GC_CNN_GAP:
                if (op->in >= 0) {
                    gc_conv_avgpool_backward (op, dy, batch, self->dact [op->in], self->dset [op->in]);
                    self->dset [op->in] = true;
                }
                break;
            case GC_CNN_ADD:
                for (int k = 0; k < 2; k++) {
                    int t = k ? op->in2 : op->in;
                    if (t >= 0 && self->alias [t])
                        self->dset [t] = true;      /* dact [t] is dy itself */
                    else
                        s_give (self, t, dy, n);
                }
                break;
            case GC_CNN_DROPOUT:
                if (op->in >= 0) {
                    const float *mask = self->mask [i];
                    float *dx = self->dact [op->in];
                    if (self->dset [op->in])
                        for (size_t j = 0; j < n; j++)
                            dx [j] += dy [j] * mask [j];
                    else
                        for (size_t j = 0; j < n; j++)
                            dx [j] = dy [j] * mask [j];
                    self->dset [op->in] = true;
                }
                break;
        }
    }
    return loss / (double) batch;
}

/*  The CNN as a model kind (gc_model.h): "cnn:lenet", "cnn:1x28x28/c16,relu,gap,f10",
    or a preset name alone. */

static bool
s_claims (const char *spec)
{
    return gc_cnn_net_is_preset (spec);
}

static void *s_create (const char *args, gc_err_t *err) { return gc_cnn_new (args, err); }
static void  s_destroy (void *impl) { gc_cnn_t *self = impl; gc_cnn_destroy (&self); }
static const gc_layout_t *s_layout (const void *impl) { return gc_cnn_layout (impl); }
static const char *s_spec (const void *impl) { return gc_cnn_spec (impl); }
static int   s_n_classes (const void *impl) { return gc_cnn_net (impl)->classes; }
static gc_shape_t s_input (const void *impl) { return gc_cnn_net (impl)->input; }
static double s_forward_flops (const void *impl) { return gc_cnn_forward_flops (impl); }
static double s_train_flops (const void *impl) { return gc_cnn_train_flops (impl); }

static void
s_init (const void *impl, float *params, uint64_t seed)
{
    gc_cnn_init_params (impl, params, seed);
}

static double
s_loss_grad (void *impl, const float *params, const float *x, const uint8_t *y, size_t batch,
             float eps, float *grad, float alpha, float beta, size_t *correct)
{
    return gc_cnn_loss_grad_smoothed (impl, params, x, y, batch, eps, grad, alpha, beta, correct);
}

static const float *
s_forward (void *impl, const float *params, const float *x, size_t batch)
{
    return gc_cnn_forward (impl, params, x, batch);
}

const gc_model_ops_t gc_cnn_model = {
    .kind = "cnn",
    .help = "cnn:PRESET or cnn:[CxHxW/]LAYER,...: convolutional networks; presets lenet, "
            "lenet-w, lenet-w-res, resnet8-gn, resnet20-gn (also as bare names); layers cO[kK][sS][pP] gnG relu "
            "mpK[sS] apK[sS] gap dropP fO rO[sS][xN][gG][z] (docs/CONFIG.md)",
    .example = "cnn:lenet",
    .claims = s_claims, .create = s_create, .destroy = s_destroy, .layout = s_layout,
    .spec = s_spec, .input = s_input, .n_classes = s_n_classes,
    .forward_flops = s_forward_flops, .train_flops = s_train_flops, .init = s_init,
    .loss_grad = s_loss_grad, .forward = s_forward,
};
