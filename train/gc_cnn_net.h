/*  gc_cnn_net — a convolutional network as a list of operations, built from a
    spec (gc_cnn_spec.c) and run by gc_cnn.c.

    Every operation reads one tensor (two for the residual join) and writes
    its own; tensor -1 is the model input, tensor i the output of operation i.
    Tensors are NCHW. Parameters are the layers of `layout`: a convolution's
    kernel is the matrix out x (in * k * k), so PowerSGD, LBS and per-layer
    compression see it as a matrix like any linear layer's. */
#ifndef GC_CNN_NET_H
#define GC_CNN_NET_H

#include <stdbool.h>
#include <stddef.h>

#include "gc_err.h"
#include "gc_layout.h"
#include "gc_model.h"

#define GC_CNN_MAX_OPS 160

typedef enum {
    GC_CNN_CONV,        /* k x k, stride, zero padding, with bias */
    GC_CNN_GN,          /* group normalisation with per-channel scale and shift */
    GC_CNN_RELU,
    GC_CNN_MAXPOOL,     /* k x k windows, stride, no padding */
    GC_CNN_AVGPOOL,
    GC_CNN_GAP,         /* global average pool: C x H x W -> C x 1 x 1 */
    GC_CNN_FC,          /* flattens its input */
    GC_CNN_ADD,         /* the residual join: in + in2 */
    GC_CNN_DROPOUT      /* k percent of the values zeroed while training */
} gc_cnn_kind_t;

typedef struct {
    gc_cnn_kind_t kind;
    int     in, in2;            /* input tensors (-1: the model input) */
    size_t  c, h, w;            /* input shape */
    size_t  oc, oh, ow;         /* output shape */
    size_t  k, stride, pad, groups;     /* dropout: k is the percent dropped */
    int     weight, bias;       /* layer indices in the layout, -1: none */
    bool    zero_scale;         /* GroupNorm: its scale starts at 0, not 1 */
} gc_cnn_op_t;

typedef struct {
    gc_shape_t   input;
    int          n_ops;
    int          classes;
    gc_cnn_op_t  ops [GC_CNN_MAX_OPS];
    gc_layout_t  layout;
    char         spec [GC_MODEL_SPEC_MAX];  /* canonical: "cnn:" + the expansion */
} gc_cnn_net_t;

/*  Build net from a spec (the part after "cnn:"); -1 with err naming the spec
    and what is wrong with it. */
int  gc_cnn_net_parse (gc_cnn_net_t *net, const char *spec, gc_err_t *err);
/*  Whether spec is a preset name (with or without an input shape). */
bool gc_cnn_net_is_preset (const char *spec);

/*  The preset names, comma-separated, for help texts. */
void gc_cnn_net_presets (char *out, size_t size);

/*  Floats per sample of an operation's output. */
static inline size_t
gc_cnn_op_out_size (const gc_cnn_op_t *op)
{
    return op->oc * op->oh * op->ow;
}

#endif
