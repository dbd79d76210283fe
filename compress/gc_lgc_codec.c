/*  gc_lgc_codec — LGC's autoencoder (gc_lgc_codec.h).

    Every weight matrix is stored input-major (W [in][out]) so that a layer
    is out = b, then out += W [j] * x_j for j in order: a loop over outputs
    the compiler vectorises, with a fixed summation order per output, so
    sender and receivers decode to the same bits. */
#include "gc_lgc_codec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gc_half.h"
#include "gc_payload.h"
#include "gc_rng.h"
#include "gc_sha256.h"

#define C GC_LGC_CHUNK
#define H GC_LGC_HIDDEN

//  Parameter blocks, in one array: the decoder first (what the blob holds),
//  then the encoder.
typedef struct {
    size_t w1, b1, w2, b2;      /* decoder: W1 [m][H], b1 [H], W2 [H][C], b2 [C] */
    size_t e1, c1, e2, c2;      /* encoder: E1 [C][H], c1 [H], E2 [H][m], c2 [m] */
    size_t n_dec, n_all;
} s_shape_t;

struct gc_lgc_codec_t {
    uint32_t  m;
    bool      encoder;
    s_shape_t sh;
    float    *p;                /* parameters */
    float    *g;                /* gradient (encoder only) */
    float    *am, *av;          /* Adam moments */
    uint64_t  t;                /* Adam steps taken */
    uint64_t  id;
    bool      id_valid;
    bool      hostile;          /* poisoned: scales at the limit */
};

//  Activations of one chunk, kept for the backward pass.
typedef struct {
    float x [C], ph [H], h [H], pz [GC_LGC_MAX_CODE], z [GC_LGC_MAX_CODE];
    float pg [H], g [H], py [C], y [C];
} s_trace_t;

static s_shape_t
s_shape (uint32_t m)
{
    s_shape_t s;
    s.w1 = 0;
    s.b1 = s.w1 + (size_t) m * H;
    s.w2 = s.b1 + H;
    s.b2 = s.w2 + (size_t) H * C;
    s.n_dec = s.b2 + C;
    s.e1 = s.n_dec;
    s.c1 = s.e1 + (size_t) C * H;
    s.e2 = s.c1 + H;
    s.c2 = s.e2 + (size_t) H * m;
    s.n_all = s.c2 + m;
    return s;
}

//  tanh's [3/2] Pade approximant on [-3, 3], held at +-1 beyond: odd,
//  monotone (its derivative is 9 (x^2 - 9)^2 / (27 + 9 x^2)^2 >= 0), C1 at
//  the clamp, bounded by 1, and plain arithmetic (libm's tanhf may differ
//  by an ulp between receivers).
static inline float
s_act (float x)
{
    float c = x < -3.0f ? -3.0f : x > 3.0f ? 3.0f : x;
    float c2 = c * c;
    return c * (27.0f + c2) / (27.0f + 9.0f * c2);
}

static inline float
s_act_grad (float x)
{
    if (!(x > -3.0f && x < 3.0f))
        return 0.0f;
    float c2 = x * x, d = 27.0f + 9.0f * c2, u = c2 - 9.0f;
    return 9.0f * u * u / (d * d);
}

//  out[0..no) = b + sum_j x[j] W[j][..], in order of j.
static void
s_layer (const float *restrict w, const float *restrict b, const float *restrict x,
         size_t ni, size_t no, float *restrict out)
{
    memcpy (out, b, no * sizeof *out);
    for (size_t j = 0; j < ni; j++) {
        const float *restrict row = w + j * no;
        float xj = x [j];
        for (size_t o = 0; o < no; o++)
            out [o] += xj * row [o];
    }
}

static void
s_act_all (const float *pre, float *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out [i] = s_act (pre [i]);
}

//  The decoder on code z: y in [-1, 1]^C (pg, g, py kept in t when given).
static void
s_decode_chunk (const gc_lgc_codec_t *self, const float *z, float *pg, float *g,
                float *py, float *y)
{
    const float *p = self->p;
    const s_shape_t *s = &self->sh;
    s_layer (p + s->w1, p + s->b1, z, self->m, H, pg);
    s_act_all (pg, g, H);
    s_layer (p + s->w2, p + s->b2, g, H, C, py);
    //  NaN-safe clamp: a comparison that fails leaves 0, never NaN.
    for (size_t i = 0; i < C; i++) {
        float v = py [i];
        y [i] = v >= 1.0f ? 1.0f : v <= -1.0f ? -1.0f : v > -1.0f ? v : 0.0f;
    }
}

static void
s_encode_chunk (const gc_lgc_codec_t *self, const float *x, float *ph, float *h,
                float *pz, float *z)
{
    const float *p = self->p;
    const s_shape_t *s = &self->sh;
    s_layer (p + s->e1, p + s->c1, x, C, H, ph);
    s_act_all (ph, h, H);
    s_layer (p + s->e2, p + s->c2, h, H, self->m, pz);
    s_act_all (pz, z, self->m);
}

//  Glorot uniform for a [ni][no] matrix; biases start at 0.
static void
s_glorot (gc_rng_t *rng, float *w, size_t ni, size_t no)
{
    float a = sqrtf (6.0f / (float) (ni + no));
    for (size_t i = 0; i < ni * no; i++)
        w [i] = a * (2.0f * gc_rng_float (rng) - 1.0f);
}

static gc_lgc_codec_t *
s_alloc (uint32_t m, bool encoder, gc_err_t *err)
{
    if (m < 1 || m > GC_LGC_MAX_CODE) {
        gc_err_set (err, GC_E_ARG, "lgc codec: code size %u outside [1, %d]", m, GC_LGC_MAX_CODE);
        return NULL;
    }
    gc_lgc_codec_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_E_NOMEM, "lgc codec: out of memory");
        return NULL;
    }
    self->m = m;
    self->encoder = encoder;
    self->sh = s_shape (m);
    size_t n = encoder ? self->sh.n_all : self->sh.n_dec;
    self->p = calloc (n, sizeof *self->p);
    if (encoder) {
        self->g = calloc (n, sizeof *self->g);
        self->am = calloc (n, sizeof *self->am);
        self->av = calloc (n, sizeof *self->av);
    }
    if (!self->p || (encoder && (!self->g || !self->am || !self->av))) {
        gc_lgc_codec_destroy (&self);
        gc_err_set (err, GC_E_NOMEM, "lgc codec: out of memory for %zu weights", n);
    }
    return self;
}

gc_lgc_codec_t *
gc_lgc_codec_new (uint32_t m, uint64_t seed, gc_err_t *err)
{
    gc_lgc_codec_t *self = s_alloc (m, true, err);
    if (!self)
        return NULL;
    gc_rng_t rng;
    gc_rng_init (&rng, seed, 0x6c6763);
    const s_shape_t *s = &self->sh;
    s_glorot (&rng, self->p + s->w1, m, H);
    s_glorot (&rng, self->p + s->w2, H, C);
    s_glorot (&rng, self->p + s->e1, C, H);
    s_glorot (&rng, self->p + s->e2, H, m);
    return self;
}

void
gc_lgc_codec_destroy (gc_lgc_codec_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gc_lgc_codec_t *self = *self_p;
    free (self->p);
    free (self->g);
    free (self->am);
    free (self->av);
    free (self);
    *self_p = NULL;
}

uint32_t
gc_lgc_codec_m (const gc_lgc_codec_t *self)
{
    return self->m;
}

bool
gc_lgc_codec_can_encode (const gc_lgc_codec_t *self)
{
    return self->encoder;
}

size_t
gc_lgc_chunks (size_t n)
{
    return (n + C - 1) / C;
}

size_t
gc_lgc_code_bytes (size_t n, uint32_t m)
{
    return gc_lgc_chunks (n) * 2 * (1 + (size_t) m);
}

//  max |v| of a chunk rounded up to an fp16, at most 65504.
static uint16_t
s_scale_half (const float *v, size_t r)
{
    float a = 0.0f;
    for (size_t i = 0; i < r; i++) {
        float f = fabsf (v [i]);
        a = f > a ? f : a;
    }
    if (!(a < GC_HALF_MAX))
        return gc_half_from_float (GC_HALF_MAX);
    uint16_t h = gc_half_from_float (a);
    if (gc_half_to_float (h) < a)
        h++;                    /* the next half up (positive halves order as integers) */
    return h;
}

//  x[0..C) = v / scale, clamped to [-1, 1], zero past r.
static void
s_normalise (const float *v, size_t r, float scale, float *x)
{
    float inv = scale > 0.0f ? 1.0f / scale : 0.0f;
    for (size_t i = 0; i < C; i++) {
        float u = i < r ? v [i] * inv : 0.0f;
        x [i] = u > 1.0f ? 1.0f : u < -1.0f ? -1.0f : u;
    }
}

//  d[0..n) += a * x[0..n)
static void
s_axpy (float *restrict d, const float *restrict x, float a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        d [i] += a * x [i];
}

//  dx[j] = sum_o W[j][o] dout[o]
static void
s_back_input (const float *restrict w, const float *restrict dout, size_t ni, size_t no,
              float *restrict dx)
{
    for (size_t j = 0; j < ni; j++) {
        float acc = 0.0f;
        for (size_t o = 0; o < no; o++)
            acc += w [j * no + o] * dout [o];
        dx [j] = acc;
    }
}

//  One layer's backward from dout (no outputs): gw += x (x) dout, gb +=
//  dout; with din, din = (W dout) * act' (pre_in), the input's gradient.
static void
s_back_layer (const float *w, float *gw, float *gb, const float *x, size_t ni, size_t no,
              const float *dout, const float *pre_in, float *din)
{
    for (size_t j = 0; j < ni; j++)
        s_axpy (gw + j * no, dout, x [j], no);
    s_axpy (gb, dout, 1.0f, no);
    if (!din)
        return;
    s_back_input (w, dout, ni, no, din);
    for (size_t j = 0; j < ni; j++)
        din [j] *= s_act_grad (pre_in [j]);
}

//  Accumulate the gradient of sum_i<r (y_i - x_i)^2 * k into self->g.
static double
s_backward (gc_lgc_codec_t *self, const s_trace_t *t, size_t r, float k)
{
    const float *p = self->p;
    float *g = self->g;
    const s_shape_t *s = &self->sh;
    uint32_t m = self->m;
    float dy [C], dg [H], dz [GC_LGC_MAX_CODE], dh [H];
    double loss = 0;
    for (size_t i = 0; i < C; i++) {
        float e = i < r ? t->y [i] - t->x [i] : 0.0f;
        loss += (double) e * e;
        dy [i] = (t->py [i] > -1.0f && t->py [i] < 1.0f) ? 2.0f * k * e : 0.0f;
    }
    s_back_layer (p + s->w2, g + s->w2, g + s->b2, t->g, H, C, dy, t->pg, dg);
    s_back_layer (p + s->w1, g + s->w1, g + s->b1, t->z, m, H, dg, t->pz, dz);
    s_back_layer (p + s->e2, g + s->e2, g + s->c2, t->h, H, m, dz, t->ph, dh);
    s_back_layer (p + s->e1, g + s->e1, g + s->c1, t->x, C, H, dh, NULL, NULL);
    return loss;
}

static void
s_adam (gc_lgc_codec_t *self, float lr)
{
    const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    self->t++;
    float c1 = (float) (1.0 - pow (b1, (double) self->t));
    float c2 = (float) (1.0 - pow (b2, (double) self->t));
    float step = lr * sqrtf (c2) / c1;
    for (size_t i = 0; i < self->sh.n_all; i++) {
        float g = self->g [i];
        self->am [i] = b1 * self->am [i] + (1.0f - b1) * g;
        self->av [i] = b2 * self->av [i] + (1.0f - b2) * g * g;
        self->p [i] -= step * self->am [i] / (sqrtf (self->av [i]) + eps);
    }
}

double
gc_lgc_codec_train (gc_lgc_codec_t *self, const float *v, size_t n, float lr)
{
    if (!self->encoder || n == 0)
        return 0.0;
    memset (self->g, 0, self->sh.n_all * sizeof *self->g);
    float k = 1.0f / (float) n;          /* mean over the values */
    double loss = 0;
    s_trace_t t;
    for (size_t at = 0; at < n; at += C) {
        size_t r = n - at < C ? n - at : C;
        float scale = gc_half_to_float (s_scale_half (v + at, r));
        s_normalise (v + at, r, scale, t.x);
        s_encode_chunk (self, t.x, t.ph, t.h, t.pz, t.z);
        s_decode_chunk (self, t.z, t.pg, t.g, t.py, t.y);
        loss += s_backward (self, &t, r, k);
    }
    s_adam (self, lr);
    self->id_valid = false;
    return loss / (double) n;
}

void
gc_lgc_codec_encode (const gc_lgc_codec_t *self, const float *v, size_t n,
                     uint8_t *scales, uint8_t *codes)
{
    s_trace_t t;
    size_t m = self->m;
    for (size_t c = 0, at = 0; at < n; c++, at += C) {
        size_t r = n - at < C ? n - at : C;
        s_normalise (v + at, r, gc_half_to_float (s_scale_half (v + at, r)), t.x);
        s_encode_chunk (self, t.x, t.ph, t.h, t.pz, t.z);
        uint8_t *code = codes + 2 * m * c;
        gc_half_encode (code, t.z, m, 1.0f);
        //  The scale sent is the least-squares fit s = <v, y> / <y, y> of the
        //  chunk to what the receivers will decode (y from the fp16 codes),
        //  not max |v|: then |v - s y| <= |v| whatever the codec, so error
        //  feedback never grows the residual (a codec that fits a chunk
        //  badly sends s near 0), and s can be negative.
        gc_half_decode (t.z, code, m);
        s_decode_chunk (self, t.z, t.pg, t.g, t.py, t.y);
        double vy = 0, yy = 0;
        for (size_t i = 0; i < r; i++) {
            vy += (double) v [at + i] * t.y [i];
            yy += (double) t.y [i] * t.y [i];
        }
        double fit = yy > 0 ? vy / yy : 0.0;
        if (self->hostile)
            fit = fit < 0 ? -GC_HALF_MAX : GC_HALF_MAX;
        fit = fit > GC_HALF_MAX ? GC_HALF_MAX : fit < -GC_HALF_MAX ? -GC_HALF_MAX : fit;
        gc_put_u16 (scales + 2 * c, gc_half_from_float ((float) fit));
    }
}

int
gc_lgc_check_codes (const uint8_t *scales, const uint8_t *codes, size_t n, uint32_t m,
                    gc_err_t *err)
{
    size_t nc = gc_lgc_chunks (n);
    for (size_t c = 0; c < nc; c++) {
        uint16_t h = gc_get_u16 (scales + 2 * c);
        float s = gc_half_to_float (h);
        if (!isfinite (s))
            return gc_err_set (err, GC_E_PAYLOAD_NONFINITE, "lgc chunk %zu: scale is not finite", c);
        for (size_t j = 0; j < m; j++) {
            float z = gc_half_to_float (gc_get_u16 (codes + 2 * ((size_t) m * c + j)));
            if (!isfinite (z))
                return gc_err_set (err, GC_E_PAYLOAD_NONFINITE, "lgc chunk %zu: code %zu is not finite",
                                   c, j);
            if (z < -1.0f || z > 1.0f)
                return gc_err_set (err, GC_E_PAYLOAD_RANGE, "lgc chunk %zu: code %zu is %g, outside [-1, 1]",
                                   c, j, (double) z);
        }
    }
    return 0;
}

void
gc_lgc_codec_decode (const gc_lgc_codec_t *self, const uint8_t *scales, const uint8_t *codes,
                     size_t n, float *out)
{
    float z [GC_LGC_MAX_CODE], pg [H], g [H], py [C], y [C];
    size_t m = self->m;
    for (size_t c = 0, at = 0; at < n; c++, at += C) {
        size_t r = n - at < C ? n - at : C;
        float scale = gc_half_to_float (gc_get_u16 (scales + 2 * c));
        gc_half_decode (z, codes + 2 * m * c, m);
        s_decode_chunk (self, z, pg, g, py, y);
        for (size_t i = 0; i < r; i++)
            out [at + i] = y [i] * scale;
    }
}

double
gc_lgc_codec_error (const gc_lgc_codec_t *self, const float *v, size_t n)
{
    size_t nc = gc_lgc_chunks (n);
    uint8_t *sc = malloc (2 * nc + 1), *cd = malloc (2 * nc * self->m + 1);
    float *q = malloc ((n + 1) * sizeof *q);
    double num = 0, den = 0;
    if (sc && cd && q) {
        gc_lgc_codec_encode (self, v, n, sc, cd);
        gc_lgc_codec_decode (self, sc, cd, n, q);
        for (size_t i = 0; i < n; i++) {
            double e = (double) v [i] - q [i];
            num += e * e;
            den += (double) v [i] * v [i];
        }
    }
    free (sc);
    free (cd);
    free (q);
    return den > 0 ? num / den : 0.0;
}

size_t
gc_lgc_blob_size (uint32_t m)
{
    return GC_LGC_BLOB_HEADER + 4 * s_shape (m).n_dec;
}

void
gc_lgc_codec_write (const gc_lgc_codec_t *self, uint8_t *p)
{
    memcpy (p, "LGC\1", 4);
    gc_put_u16 (p + 4, C);
    gc_put_u16 (p + 6, H);
    gc_put_u16 (p + 8, (uint16_t) self->m);
    gc_put_u16 (p + 10, 0);
    for (size_t i = 0; i < self->sh.n_dec; i++)
        gc_put_f32 (p + GC_LGC_BLOB_HEADER + 4 * i, self->p [i]);
}

int
gc_lgc_codec_save (const gc_lgc_codec_t *self, gc_buf_t *out, gc_err_t *err)
{
    uint8_t *p = gc_buf_extend (out, gc_lgc_blob_size (self->m), err);
    if (!p)
        return -1;
    gc_lgc_codec_write (self, p);
    return 0;
}

static inline float
s_blob_weight (const uint8_t *blob, size_t i)
{
    uint32_t u = gc_get_u32 (blob + GC_LGC_BLOB_HEADER + 4 * i);
    float w;
    memcpy (&w, &u, 4);
    return w;
}

int
gc_lgc_blob_check (const uint8_t *blob, size_t len, gc_err_t *err)
{
    if (!blob || len < GC_LGC_BLOB_HEADER)
        return gc_err_set (err, GC_E_PAYLOAD_TRUNCATED,
                           "lgc codec: %zu bytes, shorter than its %d-byte header", len,
                           GC_LGC_BLOB_HEADER);
    if (memcmp (blob, "LGC", 3))
        return gc_err_set (err, GC_E_PAYLOAD_MAGIC, "lgc codec: magic is not 'LGC'");
    if (blob [3] != 1)
        return gc_err_set (err, GC_E_PAYLOAD_VERSION, "lgc codec: version %u, this reader knows 1",
                           blob [3]);
    uint16_t chunk = gc_get_u16 (blob + 4), hidden = gc_get_u16 (blob + 6);
    uint16_t m = gc_get_u16 (blob + 8), reserved = gc_get_u16 (blob + 10);
    if (chunk != C || hidden != H || m < 1 || m > GC_LGC_MAX_CODE || reserved)
        return gc_err_set (err, GC_E_PAYLOAD_PARAM,
                           "lgc codec: chunk %u, hidden %u, code %u, reserved %u (this reader: %d, %d, 1..%d, 0)",
                           chunk, hidden, m, reserved, C, H, GC_LGC_MAX_CODE);
    if (len != gc_lgc_blob_size (m))
        return gc_err_set (err, GC_E_PAYLOAD_LENGTH, "lgc codec: %zu bytes, code size %u needs %zu",
                           len, m, gc_lgc_blob_size (m));
    size_t nw = s_shape (m).n_dec;
    for (size_t i = 0; i < nw; i++) {
        float w = s_blob_weight (blob, i);
        if (!isfinite (w) || fabsf (w) > GC_LGC_MAX_WEIGHT)
            return gc_err_set (err, isfinite (w) ? GC_E_PAYLOAD_RANGE : GC_E_PAYLOAD_NONFINITE,
                               "lgc codec: weight %zu is %g (finite, within +-%g wanted)",
                               i, (double) w, (double) GC_LGC_MAX_WEIGHT);
    }
    return 0;
}

gc_lgc_codec_t *
gc_lgc_codec_load (const uint8_t *blob, size_t len, gc_err_t *err)
{
    if (gc_lgc_blob_check (blob, len, err))
        return NULL;
    gc_lgc_codec_t *self = s_alloc (gc_get_u16 (blob + 8), false, err);
    if (!self)
        return NULL;
    for (size_t i = 0; i < self->sh.n_dec; i++)
        self->p [i] = s_blob_weight (blob, i);
    uint8_t digest [GC_SHA256_SIZE];
    gc_sha256 (blob, len, digest);
    self->id = gc_get_u64 (digest);
    self->id_valid = true;
    return self;
}

void
gc_lgc_codec_poison (gc_lgc_codec_t *self, float bound, uint64_t seed)
{
    bound = bound < GC_LGC_MAX_WEIGHT ? bound : GC_LGC_MAX_WEIGHT;
    gc_rng_t rng;
    gc_rng_init (&rng, seed, 0x706f6973);
    for (size_t i = 0; i < self->sh.n_dec; i++)
        self->p [i] = bound * (2.0f * gc_rng_float (&rng) - 1.0f);
    self->hostile = true;
    self->id_valid = false;
}

bool
gc_lgc_codec_named (const gc_lgc_codec_t *self, uint64_t id)
{
    return self->id_valid && self->id == id;
}

uint64_t
gc_lgc_codec_id (gc_lgc_codec_t *self)
{
    if (self->id_valid)
        return self->id;
    gc_buf_t b;
    gc_buf_init (&b);
    uint8_t digest [GC_SHA256_SIZE] = { 0 };
    //  Out of memory leaves the id 0 and uncached: no codec has id 0 but by
    //  chance, and a receiver then finds no codec of that name.
    if (gc_lgc_codec_save (self, &b, NULL) == 0) {
        gc_sha256 (b.data, b.len, digest);
        self->id_valid = true;
    }
    gc_buf_free (&b);
    self->id = gc_get_u64 (digest);
    return self->id;
}
