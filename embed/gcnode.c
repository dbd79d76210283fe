//  libgcnode (include/gcnode.h): an embedder's peer is a node/gc_peer with a
//  model of kind external bound to the embedder's buffer. This file only
//  translates: handles, the configuration replayed per peer, the layer
//  table into a registered spec, errors into the calling thread's last error.
#include "gcnode.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_config.h"
#include "gc_engine.h"
#include "gc_err.h"
#include "gc_layout.h"
#include "gc_metrics.h"
#include "gc_model.h"
#include "gc_peer.h"

#ifndef GC_VERSION
#   define GC_VERSION "unknown"
#endif

static _Thread_local gc_err_t s_last;

static int
s_fail (const gc_err_t *err)
{
    s_last = *err;
    if (!s_last.code)
        s_last.code = GC_E_FAIL;
    return -1;
}

static int
s_failf (int code, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    s_last.code = code;
    vsnprintf (s_last.msg, sizeof s_last.msg, fmt, ap);
    va_end (ap);
    return -1;
}

const char *gcnode_version (void) { return GC_VERSION; }
int         gcnode_version_number (void) { return GCNODE_VERSION; }
const char *gcnode_last_error (void) { return s_last.msg; }
int         gcnode_last_error_code (void) { return s_last.code; }
const char *gcnode_error_name (int code) { return gc_err_name (code); }

//  ---------------------------------------------------------------------------
//  configuration: a file and assignments, replayed into a fresh gc_config_t
//  for every peer (a running peer changes its own: discovery fills in
//  endpoints); `check` holds the same, so a bad key fails where it is set.

typedef struct {
    char *key, *value;
} s_assign_t;

struct gcnode_config_t {
    char       *file;
    s_assign_t *set;
    size_t      n_set;
    gc_config_t *check;
};

gcnode_config_t *
gcnode_config_new (void)
{
    gcnode_config_t *self = calloc (1, sizeof *self);
    if (self && !(self->check = gc_config_new ())) {
        free (self);
        self = NULL;
    }
    if (!self)
        s_failf (GC_E_NOMEM, "out of memory");
    return self;
}

void
gcnode_config_destroy (gcnode_config_t **self_p)
{
    gcnode_config_t *self = self_p ? *self_p : NULL;
    if (!self)
        return;
    for (size_t i = 0; i < self->n_set; i++) {
        free (self->set [i].key);
        free (self->set [i].value);
    }
    free (self->set);
    free (self->file);
    gc_config_destroy (&self->check);
    free (self);
    *self_p = NULL;
}

//  cfg = the file, then every assignment in order.
static int
s_replay (const gcnode_config_t *self, gc_config_t *cfg, gc_err_t *err)
{
    if (self->file && gc_config_load (cfg, self->file, err))
        return -1;
    for (size_t i = 0; i < self->n_set; i++)
        if (gc_config_set (cfg, self->set [i].key, self->set [i].value, err))
            return -1;
    return 0;
}

int
gcnode_config_load (gcnode_config_t *self, const char *path)
{
    if (!self || !path)
        return s_failf (GC_E_ARG, "gcnode_config_load: NULL argument");
    gc_err_t err = { 0 };
    gc_config_t *fresh = gc_config_new ();
    char *file = strdup (path);
    if (!fresh || !file) {
        gc_config_destroy (&fresh);
        free (file);
        return s_failf (GC_E_NOMEM, "out of memory");
    }
    char *old = self->file;
    self->file = file;
    if (s_replay (self, fresh, &err)) {
        self->file = old;
        free (file);
        gc_config_destroy (&fresh);
        return s_fail (&err);
    }
    free (old);
    gc_config_destroy (&self->check);
    self->check = fresh;
    return 0;
}

int
gcnode_config_set (gcnode_config_t *self, const char *key, const char *value)
{
    if (!self || !key || !value)
        return s_failf (GC_E_ARG, "gcnode_config_set: NULL argument");
    gc_err_t err = { 0 };
    if (gc_config_set (self->check, key, value, &err))
        return s_fail (&err);
    s_assign_t *grown = realloc (self->set, (self->n_set + 1) * sizeof *grown);
    if (!grown)
        return s_failf (GC_E_NOMEM, "out of memory");
    self->set = grown;
    s_assign_t *a = &self->set [self->n_set];
    a->key = strdup (key);
    a->value = strdup (value);
    if (!a->key || !a->value) {
        free (a->key);
        free (a->value);
        return s_failf (GC_E_NOMEM, "out of memory");
    }
    self->n_set++;
    return 0;
}

//  ---------------------------------------------------------------------------
//  peers

struct gcnode_peer_t {
    gc_config_t *cfg;
    gc_peer_t   *peer;
    gc_engine_t *engine;
    volatile int stop;          /* the waits watch it; gcnode_peer_stop sets it */
};

//  The spec of the embedder's model: its registered table, or the layout
//  of train/model borrowed (external:SPEC).
static int
s_model_spec (gc_config_t *cfg, const gcnode_layer_t *layers, size_t n_layers, size_t n_params,
              gc_err_t *err)
{
    char spec [GC_MODEL_SPEC_MAX];
    if (layers) {
        gc_layout_t *t = malloc (sizeof *t);
        if (!t)
            return gc_err_set (err, GC_E_NOMEM, "out of memory");
        gc_layout_init (t);
        int rc = 0;
        for (size_t i = 0; i < n_layers && rc == 0; i++) {
            const gcnode_layer_t *l = &layers [i];
            const char *name = l->name ? l->name : "";
            if (l->offset != t->n_params)
                rc = gc_err_set (err, GC_E_CONFIG, "layer %zu ('%s'): offset %zu, but the layers "
                                 "before it end at %zu (layers are packed in order)", i, name,
                                 l->offset, t->n_params);
            else
            if (l->matrix)
                rc = gc_layout_add_matrix (t, name, l->rows, l->cols, err);
            else
            if (l->cols != 1)
                rc = gc_err_set (err, GC_E_CONFIG, "layer %zu ('%s'): a vector has cols = 1, not %u",
                                 i, name, l->cols);
            else
                rc = gc_layout_add_vector (t, name, l->rows, err);
        }
        if (rc == 0 && t->n_params != n_params)
            rc = gc_err_set (err, GC_E_CONFIG, "the layer table covers %zu floats, the buffer has %zu",
                             t->n_params, n_params);
        if (rc == 0)
            rc = gc_model_external_register (t, spec, sizeof spec, err);
        free (t);
        if (rc)
            return gc_err_prefix (err, "layer table: ");
    }
    else
    if (!strncmp (cfg->model, "external:", 9))
        snprintf (spec, sizeof spec, "%s", cfg->model);
    else
        snprintf (spec, sizeof spec, "external:%s", cfg->model);
    gc_model_t *model = gc_model_new (spec, err);
    if (!model)
        return gc_err_prefix (err, "train/model: ");
    size_t n = gc_model_n_params (model);
    gc_model_destroy (&model);
    if (n != n_params)
        return gc_err_set (err, GC_E_CONFIG, "train/model %s has %zu parameters, the buffer %zu",
                           spec, n, n_params);
    return gc_config_set (cfg, "train/model", spec, err);
}

//  CZMQ installs SIGINT / SIGTERM handlers when it starts unless told not to:
//  the embedder's (Python's KeyboardInterrupt) must stay. Before the first
//  socket; a value the embedder set wins.
static pthread_once_t s_signals_once = PTHREAD_ONCE_INIT;

static void
s_keep_signals (void)
{
    setenv ("ZSYS_SIGHANDLER", "false", 0);
}

gcnode_peer_t *
gcnode_peer_open (const gcnode_config_t *config, float *params, size_t n_params,
                  const gcnode_layer_t *layers, size_t n_layers, unsigned flags)
{
    pthread_once (&s_signals_once, s_keep_signals);
    if (!config || !params || !n_params || (layers && !n_layers)) {
        s_failf (GC_E_ARG, "gcnode_peer_open: NULL or empty argument");
        return NULL;
    }
    if (flags & ~(GCNODE_RESUME | GCNODE_ADOPT)) {
        s_failf (GC_E_ARG, "gcnode_peer_open: unknown flags 0x%x", flags);
        return NULL;
    }
    gc_err_t err = { 0 };
    gcnode_peer_t *self = calloc (1, sizeof *self);
    if (!self || !(self->cfg = gc_config_new ())) {
        free (self);
        s_failf (GC_E_NOMEM, "out of memory");
        return NULL;
    }
    gc_peer_options_t opt = { .resume = flags & GCNODE_RESUME, .external = true,
                              .params = params, .adopt = layers || (flags & GCNODE_ADOPT) };
    if (s_replay (config, self->cfg, &err)
    ||  s_model_spec (self->cfg, layers, n_layers, n_params, &err)
    ||  gc_config_check (self->cfg, &err)
    ||  (opt.resume && !*self->cfg->checkpoint_dir
         && gc_err_set (&err, GC_E_CONFIG, "GCNODE_RESUME needs node/checkpoint_dir"))
    ||  gc_peer_check_control (self->cfg->control, &err)
    ||  !(self->peer = gc_peer_new (self->cfg, &opt, NULL, &err))) {
        gc_config_destroy (&self->cfg);
        free (self);
        s_fail (&err);
        return NULL;
    }
    self->engine = gc_peer_engine (self->peer);
    gc_peer_connect (self->peer, &self->stop);
    return self;
}

int
gcnode_peer_close (gcnode_peer_t **self_p)
{
    gcnode_peer_t *self = self_p ? *self_p : NULL;
    if (!self)
        return 0;
    gc_peer_finish (self->peer, self->stop, NULL);
    gc_peer_destroy (&self->peer);
    gc_config_destroy (&self->cfg);
    free (self);
    *self_p = NULL;
    return 0;
}

int
gcnode_peer_step (gcnode_peer_t *self)
{
    if (!self)
        return s_failf (GC_E_ARG, "gcnode_peer_step: NULL peer");
    if (gcnode_peer_done (self))
        return s_failf (GC_E_STOPPED, "peer %ld: %s", self->cfg->index,
                        self->stop || gc_peer_stopped (self->peer) ? "stopped"
                                                                   : "all train/rounds are done");
    gc_err_t err = { 0 };
    if (gc_peer_round (self->peer, &self->stop, &err))
        return s_fail (&err);
    return 0;
}

int
gcnode_peer_done (const gcnode_peer_t *self)
{
    return !self || self->stop || gc_peer_stopped (self->peer) || gc_engine_done (self->engine);
}

void
gcnode_peer_stop (gcnode_peer_t *self)
{
    if (self)
        self->stop = 1;
}

uint64_t    gcnode_peer_round (const gcnode_peer_t *self) { return self ? gc_engine_round (self->engine) : 0; }
size_t      gcnode_peer_n_params (const gcnode_peer_t *self) { return self ? gc_engine_n_params (self->engine) : 0; }
int         gcnode_peer_index (const gcnode_peer_t *self) { return self ? (int) self->cfg->index : -1; }
const char *gcnode_peer_model (const gcnode_peer_t *self) { return self ? gc_engine_model_spec (self->engine) : ""; }

int
gcnode_peer_report_accuracy (gcnode_peer_t *self, double accuracy)
{
    if (!self)
        return s_failf (GC_E_ARG, "gcnode_peer_report_accuracy: NULL peer");
    if (!(accuracy >= 0 && accuracy <= 1))
        return s_failf (GC_E_RANGE, "accuracy %g outside [0, 1]", accuracy);
    gc_peer_set_accuracy (self->peer, accuracy);
    return 0;
}

int
gcnode_peer_stats (gcnode_peer_t *self, gcnode_stats_t *out, size_t size)
{
    if (!self || !out)
        return s_failf (GC_E_ARG, "gcnode_peer_stats: NULL argument");
    gc_engine_stats_t s;
    gc_engine_stats (self->engine, &s);
    gcnode_stats_t g = {
        .round = s.round, .msgs_sent = s.msgs_sent, .bytes_sent = s.bytes_sent,
        .msgs_recv = s.msgs_recv, .bytes_recv = s.bytes_recv, .deltas_applied = s.deltas_applied,
        .keyframes_sent = s.keyframes_sent, .keyframes_recv = s.keyframes_recv,
        .rejected = s.rejected, .dense_equiv_bytes = s.dense_equiv_bytes,
        .mix_skipped = s.mix_skipped, .mixed_inputs = s.mixed_inputs,
        .last_wait_s = s.last_wait_s, .total_wait_s = s.total_wait_s,
        .time_compress_s = s.time_compress_s, .time_sign_s = s.time_sign_s,
        .time_aggregate_s = s.time_aggregate_s, .time_verify_s = s.time_verify_s,
        .time_decode_s = s.time_decode_s,
        .equivocators = s.equivocators, .evidence_found = s.evidence_found,
        .evidence_recv = s.evidence_recv, .evidence_sent = s.evidence_sent,
    };
    memcpy (out, &g, size < sizeof g ? size : sizeof g);
    return 0;
}

#define S_MAX_REASONS 128

const char *
gcnode_reason_name (size_t i)
{
    int reasons [S_MAX_REASONS];
    size_t n = gc_metrics_reasons (reasons, S_MAX_REASONS);
    return i < n ? gc_engine_reason_name (reasons [i]) : NULL;
}

int
gcnode_peer_rejections (gcnode_peer_t *self, int peer, const char *reason, uint64_t *count)
{
    if (!self || !count)
        return s_failf (GC_E_ARG, "gcnode_peer_rejections: NULL argument");
    if (peer < -1 || peer >= (int) self->cfg->n_peers)
        return s_failf (GC_E_RANGE, "peer %d: not one of the %ld peers (-1: unattributed)", peer,
                        self->cfg->n_peers);
    int reasons [S_MAX_REASONS];
    size_t n = gc_metrics_reasons (reasons, S_MAX_REASONS);
    uint64_t total = 0;
    bool found = !reason;
    for (size_t i = 0; i < n; i++)
        if (!reason || !strcmp (reason, gc_engine_reason_name (reasons [i]))) {
            total += gc_engine_rejections (self->engine, peer < 0 ? UINT32_MAX : (uint32_t) peer,
                                           reasons [i]);
            found = true;
        }
    if (!found)
        return s_failf (GC_E_ARG, "unknown rejection reason '%s' (gcnode_reason_name lists them)", reason);
    *count = total;
    return 0;
}
