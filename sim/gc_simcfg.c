#include "gc_simcfg.h"

#include <czmq.h>
#include <math.h>
#include <string.h>

#include "gc_parse.h"

static const char *s_keys [] = {
    "latency_ms", "jitter_ms", "bandwidth", "slow", "compute_jitter", "start_ms", "round_ms", "step_ms", "gflops", "omniscient",
    "skip_crypto", "threads", "cores"
};

static int
s_bool (const char *text, bool *out, const char *what, gc_err_t *err)
{
    if (!strcmp (text, "1") || !strcmp (text, "true") || !strcmp (text, "yes"))
        *out = true;
    else
    if (!strcmp (text, "0") || !strcmp (text, "false") || !strcmp (text, "no"))
        *out = false;
    else
        return gc_err_set (err, GC_E_CONFIG, "%s: '%s' is not a boolean (1, 0, true, false)", what, text);
    return 0;
}

//  One key of a sim section onto a peer's values (and the run's, for the
//  keys only the top-level section may set).
static int
s_apply (gc_simcfg_t *self, gc_simpeer_t *p, const char *name, const char *value, bool top,
         const char *key, gc_err_t *err)
{
    if (!strcmp (name, "latency_ms"))
        return gc_parse_double (value, 0, 600000, &p->latency_ms, key, err);
    if (!strcmp (name, "jitter_ms"))
        return gc_parse_double (value, 0, 600000, &p->jitter_ms, key, err);
    if (!strcmp (name, "bandwidth"))
        return gc_parse_rate (value, &p->bandwidth, key, err);
    if (!strcmp (name, "slow"))
        return gc_parse_double (value, 0.001, 1e4, &p->slow, key, err);
    if (!strcmp (name, "compute_jitter"))
        return gc_parse_double (value, 0, 100, &p->compute_jitter, key, err);
    if (!strcmp (name, "start_ms"))
        return gc_parse_double (value, 0, 3600e3, &p->start_ms, key, err);
    if (!strcmp (name, "round_ms"))
        return gc_parse_double (value, 0, 1e6, &p->round_ms, key, err);
    if (!strcmp (name, "step_ms"))
        return gc_parse_double (value, 0, 1e6, &p->step_ms, key, err);
    if (!strcmp (name, "gflops"))
        return gc_parse_double (value, 0.001, 1e6, &p->gflops, key, err);
    if (!strcmp (name, "omniscient"))
        return s_bool (value, &p->omniscient, key, err);
    if (!top)
        return gc_err_set (err, GC_E_CONFIG, "%s: only the top-level sim section may set it", key);
    if (!strcmp (name, "skip_crypto"))
        return s_bool (value, &self->skip_crypto, key, err);
    if (!strcmp (name, "cores"))
        return gc_parse_long (value, 0, 1 << 20, &self->cores, key, err);
    long threads;
    if (gc_parse_long (value, 1, 2, &threads, key, err))
        return -1;
    self->threads = (int) threads;
    return 0;
}

static int
s_section (gc_simcfg_t *self, zconfig_t *section, const char *file, const char *where,
           const gc_peerset_t *peers, gc_err_t *err)
{
    for (zconfig_t *c = zconfig_child (section); c; c = zconfig_next (c)) {
        const char *name = zconfig_name (c);
        const char *value = zconfig_value (c) ? zconfig_value (c) : "";
        char key [512];
        snprintf (key, sizeof key, "%s: %s/%s", file, where, name);
        bool known = false;
        for (size_t k = 0; k < sizeof s_keys / sizeof s_keys [0]; k++)
            known |= !strcmp (name, s_keys [k]);
        if (!known || zconfig_child (c))
            return gc_err_set (err, GC_E_CONFIG, "%s: unknown simulator key (latency_ms, jitter_ms, bandwidth, "
                               "slow, compute_jitter, start_ms, round_ms, step_ms, gflops, omniscient, skip_crypto, threads, cores)", key);
        for (uint32_t i = 0; i < self->n_peers; i++) {
            if (peers && !gc_peerset_has (peers, i))
                continue;
            if (s_apply (self, &self->peers [i], name, value, peers == NULL, key, err))
                return -1;
        }
    }
    return 0;
}

gc_simcfg_t *
gc_simcfg_load (const char *path, const gc_scenario_t *sc, gc_err_t *err)
{
    gc_simcfg_t *self = calloc (1, sizeof *self);
    if (self)
        self->peers = calloc (sc->n_peers, sizeof *self->peers);
    if (!self || !self->peers) {
        gc_simcfg_destroy (&self);
        gc_err_set (err, GC_E_NOMEM, "out of memory");
        return NULL;
    }
    self->n_peers = sc->n_peers;
    self->threads = 1;
    for (uint32_t i = 0; i < sc->n_peers; i++)
        self->peers [i] = (gc_simpeer_t) { .latency_ms = 0.1, .slow = 1, .gflops = 100 };
    zconfig_t *root = zconfig_load (path);
    if (!root) {
        gc_err_set (err, GC_E_IO, "%s: cannot read", path);
        gc_simcfg_destroy (&self);
        return NULL;
    }
    int rc = 0;
    zconfig_t *top = zconfig_locate (root, "sim");
    if (top)
        rc = s_section (self, top, path, "sim", NULL, err);
    //  groups in the parser's (file) order, so later groups override
    for (size_t g = 0; rc == 0 && g < sc->n_groups; g++) {
        char where [300];
        snprintf (where, sizeof where, "group/%s/sim", sc->groups [g].name);
        zconfig_t *section = zconfig_locate (root, where);
        if (section)
            rc = s_section (self, section, path, where, &sc->groups [g].peers, err);
    }
    zconfig_destroy (&root);
    if (rc)
        gc_simcfg_destroy (&self);
    return self;
}

void
gc_simcfg_destroy (gc_simcfg_t **self_p)
{
    gc_simcfg_t *self = *self_p;
    if (!self)
        return;
    free (self->peers);
    free (self);
    *self_p = NULL;
}
