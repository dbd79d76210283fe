//  Kind external: a model the embedder trains (libgcnode, docs/EMBEDDING.md).
//  The engine gossips and mixes its parameters but never computes a gradient,
//  so loss_grad is NULL. Its layer table comes from one of two places:
//    external:SPEC           the layout of another kind's model (what an
//                            embedder uses to join native peers of that model:
//                            the same table, the same wire); init, forward and
//                            the shape are that model's, so evaluation works;
//    external:table:N:HASH   a table the embedder registered in this process
//                            (gc_model_external_register), N floats, HASH its
//                            digest; init writes zeros (the embedder's buffer
//                            is adopted as the initial model).
//  The canonical spec names the table exactly, so peers and checkpoints that
//  compare specs compare tables.
#include "gc_model.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_PREFIX "table:"

typedef struct {
    gc_model_t  *inner;         /* external:SPEC; NULL for a registered table */
    gc_layout_t *table;         /* the registered table (a copy) */
    char         spec [GC_MODEL_SPEC_MAX];
} s_external_t;

//  Registered tables: few (one per embedded peer), never removed, so a
//  pointer handed out stays valid for the process.
typedef struct s_entry_t {
    struct s_entry_t *next;
    char              spec [GC_MODEL_SPEC_MAX];
    gc_layout_t       layout;
} s_entry_t;

static s_entry_t      *s_tables;
static pthread_mutex_t s_tables_lock = PTHREAD_MUTEX_INITIALIZER;

//  FNV-1a over everything that makes two tables the same: names, shapes, kinds.
static uint64_t
s_digest (const gc_layout_t *layout)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t l = 0; l < layout->n_layers; l++) {
        const gc_layer_t *y = &layout->layers [l];
        char row [GC_LAYER_NAME_MAX + 48];
        int len = snprintf (row, sizeof row, "%s/%u/%u/%d;", y->name, y->rows, y->cols, (int) y->kind);
        for (int i = 0; i < len; i++) {
            h ^= (uint8_t) row [i];
            h *= 0x100000001b3ULL;
        }
    }
    return h;
}

int
gc_model_external_register (const gc_layout_t *layout, char *spec, size_t size, gc_err_t *err)
{
    if (!layout->n_layers || !layout->n_params)
        return gc_err_set (err, GC_E_CONFIG, "external model: the layer table is empty");
    size_t at = 0;
    for (size_t l = 0; l < layout->n_layers; l++) {
        const gc_layer_t *y = &layout->layers [l];
        if (y->offset != at || y->count != (size_t) y->rows * y->cols || !y->count)
            return gc_err_set (err, GC_E_CONFIG, "external model: layer %zu ('%s') is not packed "
                               "after the one before it (offset %zu, expected %zu)", l, y->name,
                               y->offset, at);
        at += y->count;
    }
    if (at != layout->n_params)
        return gc_err_set (err, GC_E_CONFIG, "external model: layers hold %zu floats, the table says %zu",
                           at, layout->n_params);
    char name [GC_MODEL_SPEC_MAX];
    snprintf (name, sizeof name, "external:" S_PREFIX "%zu:%016" PRIx64, layout->n_params, s_digest (layout));
    if (strlen (name) >= size)
        return gc_err_set (err, GC_E_RANGE, "external model: spec buffer too small");
    pthread_mutex_lock (&s_tables_lock);
    s_entry_t *e = s_tables;
    while (e && strcmp (e->spec, name))
        e = e->next;
    int rc = 0;
    if (e && !gc_layout_equal (&e->layout, layout))
        rc = gc_err_set (err, GC_E_CONFIG, "external model: two different layer tables share digest %s", name);
    else
    if (!e) {
        e = calloc (1, sizeof *e);
        if (!e)
            rc = gc_err_set (err, GC_E_NOMEM, "external model: out of memory");
        else {
            snprintf (e->spec, sizeof e->spec, "%s", name);
            e->layout = *layout;
            e->next = s_tables;
            s_tables = e;
        }
    }
    pthread_mutex_unlock (&s_tables_lock);
    if (rc == 0)
        snprintf (spec, size, "%s", name);
    return rc;
}

static const gc_layout_t *
s_find_table (const char *name)
{
    pthread_mutex_lock (&s_tables_lock);
    s_entry_t *e = s_tables;
    while (e && strcmp (e->spec, name))
        e = e->next;
    pthread_mutex_unlock (&s_tables_lock);
    return e ? &e->layout : NULL;
}

static void *
s_create (const char *args, gc_err_t *err)
{
    s_external_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_E_NOMEM, "external model: out of memory");
        return NULL;
    }
    if (!strncmp (args, S_PREFIX, strlen (S_PREFIX))) {
        snprintf (self->spec, sizeof self->spec, "external:%s", args);
        const gc_layout_t *t = s_find_table (self->spec);
        if (!t) {
            gc_err_set (err, GC_E_SPEC, "model spec '%s': no such layer table in this process "
                        "(an embedder registers it: gcnode_peer_new with a layer table)", self->spec);
            free (self);
            return NULL;
        }
        self->table = (gc_layout_t *) t;
        return self;
    }
    if (!strncmp (args, "external:", 9)) {
        gc_err_set (err, GC_E_SPEC, "model spec 'external:%s': an external model cannot wrap another", args);
        free (self);
        return NULL;
    }
    self->inner = gc_model_new (args, err);
    if (!self->inner) {
        free (self);
        return NULL;
    }
    snprintf (self->spec, sizeof self->spec, "external:%s", gc_model_spec (self->inner));
    return self;
}

static void
s_destroy (void *impl)
{
    s_external_t *self = impl;
    gc_model_destroy (&self->inner);
    free (self);
}

static const gc_layout_t *
s_layout (const void *impl)
{
    const s_external_t *self = impl;
    return self->inner ? gc_model_layout (self->inner) : self->table;
}

static const char *s_spec (const void *impl) { return ((const s_external_t *) impl)->spec; }

static gc_shape_t
s_input (const void *impl)
{
    const s_external_t *self = impl;
    return self->inner ? gc_model_input (self->inner) : (gc_shape_t) { 0, 0, 0 };
}

static int
s_n_classes (const void *impl)
{
    const s_external_t *self = impl;
    return self->inner ? gc_model_n_classes (self->inner) : 0;
}

static double
s_forward_flops (const void *impl)
{
    const s_external_t *self = impl;
    return self->inner ? gc_model_forward_flops (self->inner) : 0;
}

static double
s_train_flops (const void *impl)
{
    const s_external_t *self = impl;
    return self->inner ? gc_model_train_flops (self->inner) : 0;
}

static void
s_init (const void *impl, float *params, uint64_t seed)
{
    const s_external_t *self = impl;
    if (self->inner)
        gc_model_init_params (self->inner, params, seed);
    else
        memset (params, 0, self->table->n_params * sizeof *params);
}

//  Evaluation of a borrowed model; a table has no function to evaluate
//  (gc_model_evaluate refuses it: no classes).
static const float *
s_forward (void *impl, const float *params, const float *x, size_t batch)
{
    s_external_t *self = impl;
    return self->inner ? gc_model_forward (self->inner, params, x, batch) : NULL;
}

const gc_model_ops_t gc_external_model = {
    .kind = "external",
    .help = "external:SPEC (the layout of model SPEC) or external:table:N:HASH (a table an "
            "embedder registered); trained by the embedder, never by the engine",
    .example = "external:8-3",
    .claims = NULL,
    .create = s_create, .destroy = s_destroy, .layout = s_layout, .spec = s_spec,
    .input = s_input, .n_classes = s_n_classes, .forward_flops = s_forward_flops,
    .train_flops = s_train_flops, .init = s_init,
    .loss_grad = NULL,
    .forward = s_forward,
};
