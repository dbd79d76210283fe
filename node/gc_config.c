#include "gc_config.h"

#include <czmq.h>
#include <stddef.h>
#include <string.h>

#include "gc_compressor.h"
#include "gc_ec.h"
#include "gc_parse.h"
#include "gc_policy.h"
#include "gc_robust.h"
#include "gc_wait.h"

typedef enum { S_STR, S_LONG, S_DOUBLE, S_BOOL, S_U64 } s_type_t;

typedef struct {
    const char *path;
    s_type_t    type;
    size_t      offset;
    const char *def;
    double      lo, hi;
    const char *help;
} s_key_t;

#define S_K(path, type, field, def, lo, hi, help) \
    { path, type, offsetof (gc_config_t, field), def, lo, hi, help }

static const s_key_t s_keys [] = {
    S_K ("node/index", S_LONG, index, "-1", 0, GC_CONFIG_MAX_PEERS - 1,
         "this peer's index in the peers list (required)"),
    S_K ("node/network", S_STR, network, "gcnode", 0, 0,
         "network name; signed into every message, peers of other networks are refused"),
    S_K ("node/bind", S_STR, bind, "", 0, 0,
         "endpoint to bind (empty: this peer's endpoint, its host name resolved to an address; "
         "tcp://*:PORT listens on every interface)"),
    S_K ("node/key", S_STR, key, "", 0, 0, "own Ed25519 private key file (PEM, mode 0600; required)"),
    S_K ("node/trust", S_STR, trust, "", 0, 0,
         "directory of further trusted *.pub keys (the peers' keys are always trusted)"),
    S_K ("node/seed", S_U64, seed, "1", 0, 0,
         "seed shared by all peers: initial model, data split, topology"),
    S_K ("node/threads", S_LONG, threads, "1", 1, 256, "OpenBLAS threads"),
    S_K ("node/log_level", S_STR, log_level, "info", 0, 0, "error, warning, info or debug"),
    S_K ("node/log_to", S_STR, log_to, "stderr", 0, 0, "stderr or syslog"),
    S_K ("node/metrics", S_STR, metrics, "", 0, 0, "JSON-lines metrics file (empty: none)"),
    S_K ("node/progress", S_STR, progress, "auto", 0, 0,
         "live progress line: auto (when stderr is a terminal), on, off"),
    S_K ("node/eval_every", S_LONG, eval_every, "10", 0, 1000000,
         "rounds between test-set evaluations (0: only at the end)"),
    S_K ("node/metrics_http", S_STR, metrics_http, "", 0, 0,
         "HOST:PORT of the Prometheus /metrics and /status endpoint, e.g. 127.0.0.1:9100 (empty: off)"),
    S_K ("node/curve", S_BOOL, curve, "1", 0, 0,
         "encrypt and allowlist links with ZeroMQ CURVE (in addition to signatures); 0 only on loopback "
         "or with a warning naming the exposed endpoints"),
    S_K ("node/curve_key", S_STR, curve_key, "", 0, 0,
         "own CURVE secret certificate (empty: node/key with .key replaced by .curve)"),
    S_K ("node/status_file", S_STR, status_file, "", 0, 0,
         "file rewritten each round with the peer's state (for gcnode status)"),
    S_K ("node/control", S_STR, control, "", 0, 0,
         "ZeroMQ endpoint of the control channel (fault injection, status; empty: off)"),
    S_K ("node/final_model", S_STR, final_model, "", 0, 0,
         "file the final model is written to (GCMODEL1 format; empty: none)"),
    S_K ("node/checkpoint_dir", S_STR, checkpoint_dir, "", 0, 0,
         "directory of crash-safe checkpoints (empty: none); --resume continues from the newest"),
    S_K ("node/checkpoint_every", S_LONG, checkpoint_every, "50", 1, 100000000,
         "rounds between checkpoints (also written when the peer stops)"),
    S_K ("discovery/enabled", S_BOOL, discovery, "0", 0, 0,
         "announce this peer and find peers whose endpoint is 'discover' by UDP beacons"),
    S_K ("discovery/port", S_LONG, discovery_port, "7099", 1, 65535, "UDP port of the beacons"),
    S_K ("discovery/interval_ms", S_LONG, discovery_interval_ms, "1000", 100, 60000,
         "time between own beacons"),
    S_K ("discovery/interface", S_STR, discovery_interface, "", 0, 0,
         "network interface for beacons, e.g. eth0 (empty: the first broadcast-capable one)"),
    S_K ("discovery/wait_s", S_LONG, discovery_wait_s, "120", 1, 86400,
         "how long to look for the 'discover' neighbours before giving up (exit 1)"),
    S_K ("topology/kind", S_STR, topology, "ring", 0, 0,
         "ring, torus[:RxC], complete, exponential, regular:D, edges:A-B,..."),
    S_K ("train/data", S_STR, data, "", 0, 0,
         "MNIST-format directory or 'synthetic' (empty: Fashion-MNIST if installed, else synthetic)"),
    S_K ("train/split", S_STR, split, "iid", 0, 0, "iid, dirichlet:ALPHA or shards:S"),
    S_K ("train/model", S_STR, model, "784-256-128-10", 0, 0, "model spec, `KIND:ARGS`: `mlp:784-256-128-10` (or the sizes alone) is an MLP with those layer sizes; `gcnode train --help` lists the kinds"),
    S_K ("train/batch", S_LONG, batch, "32", 1, 65536, "minibatch size"),
    S_K ("train/local_steps", S_LONG, local_steps, "4", 1, 100000, "SGD steps per round"),
    S_K ("train/rounds", S_LONG, rounds, "300", 1, 100000000, "rounds to run"),
    S_K ("train/lr", S_DOUBLE, lr, "0.03", 0, 100, "base learning rate"),
    S_K ("train/momentum", S_DOUBLE, momentum, "0.9", 0, 0.9999, "heavy-ball momentum"),
    S_K ("train/nesterov", S_BOOL, nesterov, "0", 0, 0, "Nesterov momentum"),
    S_K ("train/weight_decay", S_DOUBLE, weight_decay, "5e-3", 0, 1, "decoupled weight decay"),
    S_K ("train/schedule", S_STR, schedule, "cosine", 0, 0,
         "constant, cosine or step:ROUNDS:GAMMA (time unit: rounds)"),
    S_K ("train/augment", S_STR, augment, "none", 0, 0,
         "image augmentation of every batch: a comma list of crop:P, flip, erase:P, or none (image data only)"),
    S_K ("train/label_smoothing", S_DOUBLE, label_smoothing, "0", 0, 1,
         "label smoothing EPS of the training loss, 0 <= EPS < 1: targets (1-EPS) onehot + EPS/classes (0: none)"),
    S_K ("train/warmup", S_DOUBLE, warmup, "0", 0, 1e9, "linear warm-up, in rounds"),
    S_K ("train/train_samples", S_LONG, train_samples, "0", 0, 1L << 30,
         "use only the first N training samples before the split (0: all)"),
    S_K ("train/test_samples", S_LONG, test_samples, "0", 0, 1L << 30,
         "evaluate on the first N test samples (0: all)"),
    S_K ("gossip/compress", S_STR, compress, "topk:0.01:fp16", 0, 0, "compressor spec (docs/ALGORITHMS.md)"),
    S_K ("gossip/ec", S_STR, ec, "liec:100", 0, 0, "error compensation"),
    S_K ("gossip/policy", S_STR, policy, "fixed", 0, 0,
         "ratio policy: the compressor's budget per round, or a chain A+B that takes the smaller "
         "of its stages' ratios each round (docs/ALGORITHMS.md, \"Chains\")"),
    S_K ("gossip/aggregator", S_STR, aggregator, "guard", 0, 0, "robust aggregation rule spec"),
    S_K ("gossip/validate", S_STR, validate, "auto", 0, 0,
         "local validation of the neighbours' models on samples held out of the own shard "
         "(docs/ALGORITHMS.md, \"Guard\"): auto (64:10:0.5:0.9:1 with guard, else off), off, or "
         "B[:R[:LO[:HI[:REL]]]]: B samples held out of training (at most an eighth of the shard), "
         "scored at random rounds, one in R; a neighbour whose held-out accuracy falls short of the "
         "inputs' median by more than the fraction LO of it loses weight, all of it at HI; with "
         "REL = 1 (the default; 0 turns it off) also one whose running shortfall exceeds the inputs' "
         "median shortfall (the neighbours the aggregator holds suspect, and copies of the own "
         "model, left out of it when they are half of the neighbours or more) by more than two paired standard errors of the "
         "held-out noise (or the peer's label skew), until it is back within that margin"),
    S_K ("gossip/fallback", S_LONG, fallback, "1", 0, 1,
         "too few fresh inputs for the rule: 1 mixes with the weaker variant they support (the rule's f "
         "lowered, docs/ALGORITHMS.md), 0 skips the mix"),
    S_K ("gossip/witness", S_LONG, witness, "0", 0, 1,
         "1: pass the headers accepted each round to the neighbours (WITNESS), so that an author who "
         "signs different messages for different neighbours under one seq is caught and excluded "
         "(docs/PROTOCOL.md section 9); needs signatures (not sim/skip_crypto)"),
    S_K ("gossip/gamma", S_DOUBLE, gamma, "1", 0, 1, "mixing step"),
    S_K ("gossip/keep_unsent", S_DOUBLE, keep_unsent, "0", 0, 1,
         "liec only, λ in [0, 1]: the mix is centred on x − λ·g, g the own training progress no payload has carried yet, so the mix no longer undoes it (docs/ALGORITHMS.md, Error compensation modes); 0: on x, as before"),
    S_K ("gossip/wait", S_STR, wait, "adaptive", 0, 0, "wait policy"),
    S_K ("gossip/timeout_ms", S_LONG, timeout_ms, "2000", 1, 3600000,
         "longest wait for neighbours in one round"),
    S_K ("gossip/staleness", S_LONG, staleness, "8", 0, 1000000,
         "replicas more than this many rounds old are left out of the mix"),
    S_K ("gossip/keyframe_every", S_LONG, keyframe_every, "0", 0, 1000000,
         "periodic keyframes every K rounds (0: only on request and to joining peers)"),
    S_K ("gossip/keyframe_fp16", S_BOOL, keyframe_fp16, "0", 0, 0, "keyframes in fp16"),
    S_K ("gossip/keyframe_interval_ms", S_LONG, keyframe_interval_ms, "1000", 0, 3600000,
         "at most one keyframe request per neighbour per interval, both ways"),
    S_K ("gossip/mute_after", S_LONG, mute_after, "20", 1, 1000000,
         "authenticated rejections (within 10 s) after which a peer is muted"),
    S_K ("gossip/mute_for_s", S_LONG, mute_for_s, "30", 0, 86400, "how long a muted peer stays muted"),
    S_K ("role/kind", S_STR, role, "honest", 0, 0, "honest or byzantine"),
    S_K ("role/attack", S_STR, attack, "", 0, 0, "the Byzantine attack spec (role/kind = byzantine)"),
};
#define S_NKEYS (sizeof s_keys / sizeof s_keys [0])

static const s_key_t *
s_find (const char *path)
{
    for (size_t i = 0; i < S_NKEYS; i++)
        if (!strcmp (s_keys [i].path, path))
            return &s_keys [i];
    return NULL;
}

static int
s_assign (gc_config_t *self, const s_key_t *k, const char *value, gc_err_t *err)
{
    void *field = (char *) self + k->offset;
    switch (k->type) {
        case S_STR: {
            char *copy = strdup (value);
            if (!copy)
                return gc_err_set (err, GC_E_NOMEM, "%s: out of memory", k->path);
            free (*(char **) field);
            *(char **) field = copy;
            return 0;
        }
        case S_LONG: {
            long v;
            if (gc_parse_long (value, (long) k->lo, (long) k->hi, &v, k->path, err))
                return -1;
            *(long *) field = v;
            return 0;
        }
        case S_DOUBLE:
            return gc_parse_double (value, k->lo, k->hi, (double *) field, k->path, err);
        case S_U64: {
            unsigned long long v;
            if (gc_parse_u64 (value, &v, k->path, err))
                return -1;
            *(uint64_t *) field = v;
            return 0;
        }
        case S_BOOL:
            if (!strcmp (value, "1") || !strcmp (value, "true") || !strcmp (value, "yes"))
                *(bool *) field = true;
            else
            if (!strcmp (value, "0") || !strcmp (value, "false") || !strcmp (value, "no"))
                *(bool *) field = false;
            else
                return gc_err_set (err, GC_E_CONFIG, "%s: '%s' is not a boolean (1/0, true/false, yes/no)",
                                   k->path, value);
            return 0;
    }
    return -1;
}

gc_config_t *
gc_config_new (void)
{
    gc_config_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->peers = calloc (GC_CONFIG_MAX_PEERS, sizeof *self->peers);
    if (!self->peers) {
        free (self);
        return NULL;
    }
    for (size_t i = 0; i < S_NKEYS; i++) {
        const s_key_t *k = &s_keys [i];
        if (k->type == S_LONG && !strcmp (k->def, "-1"))
            *(long *) ((char *) self + k->offset) = -1;     /* "unset" sentinel */
        else
        if (s_assign (self, k, k->def, NULL)) {
            gc_config_destroy (&self);
            return NULL;
        }
    }
    return self;
}

void
gc_config_destroy (gc_config_t **self_p)
{
    gc_config_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < S_NKEYS; i++)
        if (s_keys [i].type == S_STR)
            free (*(char **) ((char *) self + s_keys [i].offset));
    for (long i = 0; i < GC_CONFIG_MAX_PEERS; i++) {
        free (self->peers [i].endpoint);
        free (self->peers [i].key);
        free (self->peers [i].curve_key);
    }
    free (self->peers);
    free (self);
    *self_p = NULL;
}

//  peers/N/endpoint, peers/N/key, peers/N/curve_key, peers/N/revoked
static int
s_set_peer (gc_config_t *self, const char *rest, const char *value, gc_err_t *err)
{
    char *end;
    long index = strtol (rest, &end, 10);
    if (end == rest || *end != '/' || index < 0 || index >= GC_CONFIG_MAX_PEERS)
        return gc_err_set (err, GC_E_CONFIG, "peers/%s: expected peers/INDEX/endpoint, peers/INDEX/key, "
                           "peers/INDEX/curve_key or peers/INDEX/revoked with INDEX in 0..%d", rest,
                           GC_CONFIG_MAX_PEERS - 1);
    if (!strcmp (end + 1, "revoked")) {
        if (strcmp (value, "0") && strcmp (value, "1"))
            return gc_err_set (err, GC_E_CONFIG, "peers/%s: '%s': expected 0 or 1", rest, value);
        self->peers [index].revoked = *value == '1';
        if (index + 1 > self->n_peers)
            self->n_peers = index + 1;
        return 0;
    }
    char **field = !strcmp (end + 1, "endpoint") ? &self->peers [index].endpoint
                 : !strcmp (end + 1, "key") ? &self->peers [index].key
                 : !strcmp (end + 1, "curve_key") ? &self->peers [index].curve_key : NULL;
    if (!field)
        return gc_err_set (err, GC_E_CONFIG, "peers/%s: unknown key (expected endpoint, key, curve_key or revoked)",
                           rest);
    free (*field);
    *field = strdup (value);
    if (index + 1 > self->n_peers)
        self->n_peers = index + 1;
    return *field ? 0 : gc_err_set (err, GC_E_NOMEM, "peers: out of memory");
}

int
gc_config_set (gc_config_t *self, const char *path, const char *value, gc_err_t *err)
{
    if (!strncmp (path, "peers/", 6))
        return s_set_peer (self, path + 6, value, err);
    const s_key_t *k = s_find (path);
    if (!k)
        return gc_err_set (err, GC_E_CONFIG, "unknown key '%s' (see gcnode run --help-config)", path);
    return s_assign (self, k, value, err);
}

//  Walk the tree: every leaf with a value is a key path.
static int
s_walk (gc_config_t *self, zconfig_t *node, const char *prefix, const char *file, gc_err_t *err)
{
    for (zconfig_t *child = zconfig_child (node); child; child = zconfig_next (child)) {
        char path [256];
        int n = snprintf (path, sizeof path, "%s%s%s", prefix, *prefix ? "/" : "", zconfig_name (child));
        if (n < 0 || (size_t) n >= sizeof path)
            return gc_err_set (err, GC_E_CONFIG, "%s: key path too long under '%s'", file, prefix);
        const char *value = zconfig_value (child);
        if (zconfig_child (child)) {
            if (value && *value)
                return gc_err_set (err, GC_E_CONFIG, "%s: '%s' has both a value and sub-keys", file, path);
            if (s_walk (self, child, path, file, err))
                return -1;
        }
        else
        if (gc_config_set (self, path, value ? value : "", err))
            return gc_err_prefix (err, "%s: ", file);
    }
    return 0;
}

int
gc_config_load (gc_config_t *self, const char *path, gc_err_t *err)
{
    FILE *f = fopen (path, "r");
    if (!f)
        return gc_err_set (err, GC_E_IO, "%s: cannot open (%s)", path, strerror (errno));
    fclose (f);
    zconfig_t *root = zconfig_load (path);
    if (!root)
        return gc_err_set (err, GC_E_PARSE, "%s: not valid ZPL (see the zconfig message above)", path);
    int rc = s_walk (self, root, "", path, err);
    zconfig_destroy (&root);
    return rc;
}

int
gc_config_check (const gc_config_t *self, gc_err_t *err)
{
    if (self->index < 0)
        return gc_err_set (err, GC_E_CONFIG, "node/index: missing (this peer's index in the peers list)");
    if (!*self->key)
        return gc_err_set (err, GC_E_CONFIG, "node/key: missing (own private key file)");
    if (self->n_peers < 1)
        return gc_err_set (err, GC_E_CONFIG, "peers: no peers listed");
    if (self->index >= self->n_peers)
        return gc_err_set (err, GC_E_CONFIG, "node/index: %ld but only %ld peers are listed",
                           self->index, self->n_peers);
    for (long i = 0; i < self->n_peers; i++) {
        if (!self->peers [i].endpoint || !*self->peers [i].endpoint)
            return gc_err_set (err, GC_E_CONFIG, "peers/%ld/endpoint: missing", i);
        if (self->peers [i].revoked && i == self->index)
            return gc_err_set (err, GC_E_CONFIG, "peers/%ld/revoked: this peer itself (node/index)", i);
        if ((!self->peers [i].key || !*self->peers [i].key) && !self->peers [i].revoked)
            return gc_err_set (err, GC_E_CONFIG, "peers/%ld/key: missing (the peer's public key file; "
                               "peers/%ld/revoked = 1 revokes it)", i, i);
        if (!strcmp (self->peers [i].endpoint, GC_CONFIG_DISCOVER) && !self->discovery)
            return gc_err_set (err, GC_E_CONFIG, "peers/%ld/endpoint: '%s' needs discovery/enabled = 1", i,
                               GC_CONFIG_DISCOVER);
    }
    //  A beacon is not authenticated: only CURVE binds the endpoint it names
    //  to the key the DEALER then insists on.
    if (self->discovery && !self->curve)
        return gc_err_set (err, GC_E_CONFIG, "discovery/enabled = 1 needs node/curve = 1 (a forged beacon "
                           "could point this peer at any endpoint; CURVE admits only the neighbour's key)");
    if (!strcmp (self->peers [self->index].endpoint, GC_CONFIG_DISCOVER) && !*self->bind)
        return gc_err_set (err, GC_E_CONFIG, "peers/%ld/endpoint: this peer's own endpoint is '%s': "
                           "set node/bind (e.g. tcp://*:7100); its port is announced", self->index,
                           GC_CONFIG_DISCOVER);
    if (strcmp (self->role, "honest") && strcmp (self->role, "byzantine"))
        return gc_err_set (err, GC_E_CONFIG, "role/kind: '%s' (expected honest or byzantine)", self->role);
    if (!strcmp (self->role, "byzantine") && !*self->attack)
        return gc_err_set (err, GC_E_CONFIG, "role/attack: missing (role/kind is byzantine)");
    if (strcmp (self->progress, "auto") && strcmp (self->progress, "on") && strcmp (self->progress, "off"))
        return gc_err_set (err, GC_E_CONFIG, "node/progress: '%s' (expected auto, on or off)", self->progress);
    if (strcmp (self->log_to, "stderr") && strcmp (self->log_to, "syslog"))
        return gc_err_set (err, GC_E_CONFIG, "node/log_to: '%s' (expected stderr or syslog)", self->log_to);
    static const char *levels [] = { "error", "warning", "info", "debug" };
    bool level_ok = false;
    for (size_t i = 0; i < 4; i++)
        level_ok |= !strcmp (self->log_level, levels [i]);
    if (!level_ok)
        return gc_err_set (err, GC_E_CONFIG, "node/log_level: '%s' (expected error, warning, info or debug)",
                           self->log_level);
    return 0;
}

static void
s_format (const gc_config_t *self, const s_key_t *k, char *buf, size_t size)
{
    const void *field = (const char *) self + k->offset;
    switch (k->type) {
        case S_STR: snprintf (buf, size, "\"%s\"", *(char *const *) field); break;
        case S_LONG: snprintf (buf, size, "%ld", *(const long *) field); break;
        case S_DOUBLE: snprintf (buf, size, "%g", *(const double *) field); break;
        case S_U64: snprintf (buf, size, "%llu", (unsigned long long) *(const uint64_t *) field); break;
        case S_BOOL: snprintf (buf, size, "%d", *(const bool *) field); break;
    }
}

void
gc_config_print (const gc_config_t *self, FILE *out)
{
    const char *section = "";
    size_t section_len = 0;
    for (size_t i = 0; i < S_NKEYS; i++) {
        const s_key_t *k = &s_keys [i];
        const char *slash = strchr (k->path, '/');
        if ((size_t) (slash - k->path) != section_len || strncmp (k->path, section, section_len)) {
            section = k->path;
            section_len = (size_t) (slash - k->path);
            fprintf (out, "%.*s\n", (int) section_len, section);
        }
        char value [512];
        s_format (self, k, value, sizeof value);
        fprintf (out, "    %s = %s\n", slash + 1, value);
        if (!strcmp (k->path, "node/checkpoint_every")) {
            fprintf (out, "peers\n");
            for (long p = 0; p < self->n_peers; p++) {
                fprintf (out, "    %ld\n        endpoint = \"%s\"\n        key = \"%s\"\n", p,
                         self->peers [p].endpoint ? self->peers [p].endpoint : "",
                         self->peers [p].key ? self->peers [p].key : "");
                if (self->peers [p].curve_key)
                    fprintf (out, "        curve_key = \"%s\"\n", self->peers [p].curve_key);
            }
        }
    }
}

//  Keys naming a method: the reference lists the known ones from their
//  registries, so a method added there appears here.
static const struct {
    const char *path;
    const char *(*known) (char *buf, size_t size);
} s_methods [] = {
    { "gossip/compress", gc_compressor_known },
    { "gossip/ec", gc_ec_known },
    { "gossip/policy", gc_policy_known },
    { "gossip/aggregator", gc_robust_known },
    { "gossip/wait", gc_wait_known },
};

static const char *
s_known (const char *path, char *buf, size_t size)
{
    for (size_t i = 0; i < sizeof s_methods / sizeof s_methods [0]; i++)
        if (!strcmp (path, s_methods [i].path))
            return s_methods [i].known (buf, size);
    return NULL;
}

void
gc_config_print_reference (FILE *out)
{
    fprintf (out, "| key | type | default | meaning |\n| --- | --- | --- | --- |\n");
    static const char *types [] = { "text", "integer", "number", "boolean", "integer" };
    for (size_t i = 0; i < S_NKEYS; i++) {
        const s_key_t *k = &s_keys [i];
        char buf [512];
        const char *known = s_known (k->path, buf, sizeof buf);
        fprintf (out, "| `%s` | %s | `%s` | %s%s%s |\n", k->path, types [k->type],
                 !strcmp (k->def, "-1") ? "(required)" : *k->def ? k->def : "(empty)", k->help,
                 known ? ": " : "", known ? known : "");
        if (!strcmp (k->path, "node/checkpoint_every"))
            fprintf (out, "| `peers/N/endpoint` | text | (required) | ZeroMQ endpoint of peer N, e.g. tcp://10.0.0.2:7100 |\n"
                          "| `peers/N/key` | text | (required) | public key file of peer N |\n"
                          "| `peers/N/curve_key` | text | (derived) | CURVE public certificate of peer N "
                          "(empty: peers/N/key with .pub replaced by .curve.pub) |\n"
                          "| `peers/N/revoked` | 0/1 | `0` | 1: peer N is revoked: its key is not trusted (and "
                          "may be absent), nothing is sent to it, its CURVE key is not allowed |\n");
    }
}

//  path with `from` at its end replaced by `to` (or `to` appended).
static int
s_derive (const char *path, const char *from, const char *to, char *out, size_t size)
{
    size_t len = strlen (path), flen = strlen (from);
    if (len >= flen && !strcmp (path + len - flen, from))
        len -= flen;
    int n = snprintf (out, size, "%.*s%s", (int) len, path, to);
    return n > 0 && (size_t) n < size ? 0 : -1;
}

int
gc_config_curve_secret (const gc_config_t *self, char *out, size_t size)
{
    if (*self->curve_key)
        return snprintf (out, size, "%s", self->curve_key) < (int) size ? 0 : -1;
    return s_derive (self->key, ".key", ".curve", out, size);
}

int
gc_config_curve_public (const gc_config_t *self, long peer, char *out, size_t size)
{
    const gc_config_peer_t *p = &self->peers [peer];
    if (p->curve_key && *p->curve_key)
        return snprintf (out, size, "%s", p->curve_key) < (int) size ? 0 : -1;
    return s_derive (p->key ? p->key : "", ".pub", ".curve.pub", out, size);
}
