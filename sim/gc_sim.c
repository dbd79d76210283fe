/*  gc_sim — setup, the event loop, the worker thread, routing and the
    timeline's operations. gc_sim_peer.c handles one peer's events; gc_sim_report.c turns
    the run into gcnet's report. */
#include "gc_sim.h"

#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "gc_attack.h"
#include "gc_cli.h"
#include "gc_fault.h"
#include "gc_fs.h"
#include "gc_mem.h"
#include "gc_model.h"
#include "gc_partition.h"
#include "gc_peerstat.h"
#include "gc_setup.h"
#include "gc_sim_internal.h"
#include "gc_time.h"

//  ---------------------------------------------------------------------------
//  setup

//  A peer's gcnode configuration: defaults, then the scenario's keys for
//  every peer, then its groups' (what gc_scenario_write_config puts in the
//  file gcnode reads), then --seed.
static gc_config_t *
s_peer_config (gc_sim_t *sim, uint32_t i, gc_err_t *err)
{
    const gc_scenario_t *sc = sim->sc;
    gc_config_t *cfg = gc_config_new ();
    if (!cfg) {
        gc_err_set (err, GC_E_NOMEM, "out of memory");
        return NULL;
    }
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < sc->n_settings; k++)
        rc = gc_config_set (cfg, sc->settings [k].path, sc->settings [k].value, err);
    for (size_t g = 0; rc == 0 && g < sc->n_groups; g++)
        if (gc_peerset_has (&sc->groups [g].peers, i))
            for (size_t k = 0; rc == 0 && k < sc->groups [g].n_settings; k++)
                rc = gc_config_set (cfg, sc->groups [g].settings [k].path, sc->groups [g].settings [k].value, err);
    //  the peer's index, as gcnet writes it into peerN.zpl
    char index [16];
    snprintf (index, sizeof index, "%u", i);
    if (rc == 0)
        rc = gc_config_set (cfg, "node/index", index, err);
    if (rc == 0 && sim->opts.has_seed) {
        char text [32];
        snprintf (text, sizeof text, "%llu", (unsigned long long) sim->opts.seed);
        rc = gc_config_set (cfg, "node/seed", text, err);
    }
    if (rc) {
        gc_err_prefix (err, "%s: peer %u: ", sc->path, i);
        gc_config_destroy (&cfg);
    }
    return cfg;
}

static bool
s_same (const char *a, const char *b)
{
    return !strcmp (a ? a : "", b ? b : "");
}

//  Keys gcsim needs equal for every peer, because it loads the data once.
static int
s_check_shared (gc_sim_t *sim, gc_err_t *err)
{
    const gc_config_t *a = sim->peers [0].cfg;
    for (uint32_t i = 1; i < sim->n; i++) {
        const gc_config_t *b = sim->peers [i].cfg;
        if (!s_same (a->data, b->data) || a->train_samples != b->train_samples
        ||  a->test_samples != b->test_samples)
            return gc_err_set (err, GC_E_CONFIG, "%s: peer %u: train/data, train/train_samples and train/test_samples "
                               "must be the same for every peer under gcsim (it loads the data once)",
                               sim->sc->path, i);
    }
    return 0;
}

//  Protocol attacks send what only the signature and digest checks refuse.
static int
s_check_skip_crypto (gc_sim_t *sim, gc_err_t *err)
{
    if (!sim->scfg->skip_crypto)
        return 0;
    static const gc_attack_kind_t protocol [] = {
        GC_ATTACK_UNTRUSTED, GC_ATTACK_MALFORMED, GC_ATTACK_REPLAY, GC_ATTACK_FLOOD, GC_ATTACK_NAN,
        GC_ATTACK_FORK
    };
    for (uint32_t i = 0; i < sim->n; i++) {
        //  Unsigned headers prove nothing: witnessing them would be silently off.
        if (sim->peers [i].ecfg.witness)
            return gc_err_set (err, GC_E_CONFIG, "%s: sim/skip_crypto: peer %u sets gossip/witness = 1, "
                               "which compares signed headers: turn skip_crypto off", sim->sc->path, i);
        gc_attack_t a;
        if (gc_attack_parse (sim->peers [i].ecfg.attack, &a, NULL))
            continue;
        for (size_t k = 0; k < sizeof protocol / sizeof protocol [0]; k++)
            if (a.kind == protocol [k])
                return gc_err_set (err, GC_E_CONFIG, "%s: sim/skip_crypto: peer %u runs the protocol attack '%s', "
                                   "which only signature checks refuse: turn skip_crypto off",
                                   sim->sc->path, i, gc_attack_name (a.kind));
    }
    return 0;
}

static int
s_setup_data (gc_sim_t *sim, gc_err_t *err)
{
    const gc_config_t *cfg = sim->peers [0].cfg;
    bool fell_back = false;
    gc_dataset_t train;
    if (gc_setup_data (cfg, &train, &sim->test, &fell_back, err))
        return -1;
    if (fell_back && sim->opts.log)
        fprintf (sim->opts.log, "gcsim: no Fashion-MNIST installed: the built-in synthetic task\n");
    gc_split_t split;
    uint32_t *owner = malloc ((train.n ? train.n : 1) * sizeof *owner);
    uint32_t *idx = malloc ((train.n ? train.n : 1) * sizeof *idx);
    int rc = owner && idx ? gc_split_parse (cfg->split, &split, err) : gc_err_set (err, GC_E_NOMEM, "out of memory");
    if (rc == 0)
        rc = gc_partition_assign (train.y, train.n, train.n_classes, &split, sim->n, sim->seed, owner, err);
    for (uint32_t i = 0; rc == 0 && i < sim->n; i++) {
        //  the indices gc_partition_peer gives peer i, in the same order
        size_t count = 0;
        for (size_t s = 0; s < train.n; s++)
            if (owner [s] == i)
                idx [count++] = (uint32_t) s;
        rc = gc_dataset_subset (&train, idx, count, &sim->peers [i].shard, err);
    }
    free (owner);
    free (idx);
    gc_dataset_free (&train);
    return rc ? gc_err_prefix (err, "train/split: ") : 0;
}

static int
s_setup_keys (gc_sim_t *sim, gc_err_t *err)
{
    sim->ids = calloc (sim->n, sizeof *sim->ids);
    if (!sim->ids)
        return gc_err_set (err, GC_E_NOMEM, "out of memory");
    for (int c = 0; c < sim->threads; c++)
        if (!(sim->classes [c].trust = gc_trust_new ()))
            return gc_err_set (err, GC_E_NOMEM, "out of memory");
    for (uint32_t i = 0; i < sim->n; i++) {
        //  keys from the seed: the same ids (and report) every run
        uint8_t seed [GC_KEY_SEED_SIZE];
        for (size_t b = 0; b < sizeof seed; b += 8) {
            uint64_t v = gc_seed_derive (gc_seed_derive (sim->seed, 0x6B6579), (uint64_t) i * 4 + b / 8);
            memcpy (seed + b, &v, 8);
        }
        gc_sim_peer_t *p = &sim->peers [i];
        if (!(p->key = gc_key_from_seed (seed, err)))
            return -1;
        memcpy (sim->ids [i], gc_key_peer_id (p->key), 8);
        for (int c = 0; c < sim->threads; c++)
            if (gc_trust_add_raw (sim->classes [c].trust, gc_key_public_raw (p->key), "gcsim", err))
                return -1;
    }
    return 0;
}

static int
s_engine_config (gc_sim_t *sim, gc_sim_peer_t *p, gc_err_t *err)
{
    gc_sim_class_t *cl = &sim->classes [p->cls];
    gc_setup_parts_t parts = { .topology = sim->topology, .key = p->key, .trust = cl->trust,
                               .peer_ids = (const uint8_t (*) [8]) sim->ids, .train = &p->shard,
                               .test = &sim->test };
    if (gc_setup_engine (p->cfg, &parts, &p->ecfg, err))
        return gc_err_prefix (err, "peer %u: ", p->index);
    p->ecfg.observer = p->sp->omniscient && p->byzantine ? &sim->observer : NULL;
    p->ecfg.skip_crypto = sim->scfg->skip_crypto;
    return 0;
}

//  Omniscient attackers (sim/omniscient): the moments of every honest model,
//  computed once per batch. They run in the serial phase, after the honest
//  peers of the batch, so what they see does not depend on thread timing.
static void
s_omni_moments (void *ctx, uint32_t attacker, float *mean, float *std)
{
    gc_sim_t *sim = ctx;
    (void) attacker;
    if (sim->omni_batch != sim->batch_no) {
        size_t k = 0;
        for (uint32_t i = 0; i < sim->n; i++)
            if (!sim->peers [i].byzantine && sim->peers [i].engine)
                sim->omni_models [k++] = gc_engine_params (sim->peers [i].engine);
        if (k)
            gc_attack_moments (sim->omni_models, k, sim->d, sim->omni_mean, sim->omni_std);
        sim->omni_batch = sim->batch_no;
    }
    memcpy (mean, sim->omni_mean, sim->d * sizeof *mean);
    memcpy (std, sim->omni_std, sim->d * sizeof *std);
}

static const float *
s_omni_model (void *ctx, uint32_t peer)
{
    gc_sim_t *sim = ctx;
    return peer < sim->n && sim->peers [peer].engine ? gc_engine_params (sim->peers [peer].engine) : NULL;
}

static int
s_setup_peers (gc_sim_t *sim, gc_err_t *err)
{
    const gc_config_t *cfg0 = sim->peers [0].cfg;
    gc_model_t *model = gc_model_new (cfg0->model, err);
    if (!model)
        return gc_err_prefix (err, "train/model: ");
    sim->d = gc_model_n_params (model);
    gc_model_destroy (&model);
    for (int c = 0; c < sim->threads; c++) {
        gc_sim_class_t *cl = &sim->classes [c];
        cl->update = gc_falloc (sim->d);
        cl->sent = gc_falloc (sim->d);
        cl->agg = gc_falloc (sim->d);
        if (!(cl->eval_model = gc_model_new (cfg0->model, err)))
            return -1;
        cl->line_size = 1 << 20;
        cl->line = malloc (cl->line_size);
        if (!cl->update || !cl->sent || !cl->agg || !cl->line)
            return gc_err_set (err, GC_E_NOMEM, "out of memory");
    }
    sim->observer = (gc_engine_observer_t) { .ctx = sim, .moments = s_omni_moments, .model = s_omni_model };
    for (uint32_t i = 0; i < sim->n; i++) {
        gc_sim_peer_t *p = &sim->peers [i];
        if (s_engine_config (sim, p, err))
            return -1;
        if (p->sp->omniscient && p->byzantine && !sim->omni_mean) {
            sim->omni_mean = gc_falloc (sim->d);
            sim->omni_std = gc_falloc (sim->d);
            sim->omni_models = calloc (sim->n, sizeof *sim->omni_models);
            if (!sim->omni_mean || !sim->omni_std || !sim->omni_models)
                return gc_err_set (err, GC_E_NOMEM, "out of memory");
        }
        //  one local step: 2 (forward) + 4 (backward) flops per weight and sample
        p->step_ns = p->sp->step_ms > 0 ? llround (p->sp->step_ms * 1e6)
                   : llround (6.0 * (double) sim->d * (double) p->ecfg.batch / (p->sp->gflops * 1e9) * 1e9);
        //  contacts: in ∪ out, ascending (both lists are sorted)
        const uint32_t *in, *out;
        size_t n_in = gc_topology_in (sim->topology, i, &in), n_out = gc_topology_out (sim->topology, i, &out);
        uint32_t *contacts = calloc (n_in + n_out + 1, sizeof *contacts);
        p->links = calloc (n_in + n_out + 1, sizeof *p->links);
        p->held_from = calloc (n_in + n_out + 1, sizeof *p->held_from);
        if (!contacts || !p->links || !p->held_from) {
            free (contacts);
            return gc_err_set (err, GC_E_NOMEM, "out of memory");
        }
        size_t a = 0, b = 0, k = 0;
        while (a < n_in || b < n_out) {
            uint32_t pa = a < n_in ? in [a] : UINT32_MAX, pb = b < n_out ? out [b] : UINT32_MAX;
            contacts [k++] = pa < pb ? pa : pb;
            a += pa <= pb;
            b += pb <= pa;
        }
        p->contacts = contacts;
        p->n_contacts = k;
        p->ctl_slow = 1;
        p->deadline_pending = -1;
        gc_rng_init (&p->rng, sim->seed, 0x51A0000ULL + i);
        gc_rng_init (&p->compute_rng, sim->seed, 0xC0A0000ULL + i);
    }
    //  `restart resume` needs the checkpoints gcnode would have written
    for (size_t e = 0; e < sim->sc->n_events; e++) {
        const gc_event_t *ev = &sim->sc->events [e];
        if (ev->action == GC_ACT_RESTART && ev->resume)
            for (uint32_t i = 0; i < sim->n; i++)
                if (gc_peerset_has (&ev->peers, i))
                    sim->peers [i].wants_snap = true;
    }
    return 0;
}

static int
s_setup_result (gc_sim_t *sim, gc_err_t *err)
{
    gc_result_t *res = calloc (1, sizeof *res);
    sim->res = res;
    if (!res || !(res->peers = calloc (sim->n, sizeof *res->peers))
    ||  !(res->out_dir = strdup (sim->opts.out_dir)) || !(res->gcnode = strdup ("gcsim")))
        return gc_err_set (err, GC_E_NOMEM, "out of memory");
    res->scenario = sim->sc;
    res->n_peers = sim->n;
    for (uint32_t i = 0; i < sim->n; i++) {
        gc_peer_result_t *r = &res->peers [i];
        char label [64];
        snprintf (label, sizeof label, "peer%u (simulated)", i);
        r->index = i;
        r->byzantine = gc_scenario_is_byzantine (sim->sc, i);
        r->attack = gc_scenario_attack (sim->sc, i);
        r->state = GC_PEER_NOT_STARTED;
        r->final_accuracy = NAN;
        if (!(r->stat = gc_peerstat_new (label)))
            return gc_err_set (err, GC_E_NOMEM, "out of memory");
        sim->peers [i].res = r;
    }
    return 0;
}

/*  The scenario, its sim section, the peers' configs and the topology are
    the run's input: a failure there is bad input (exit 2, as gcnet refuses
    a scenario), even when the code below says a file could not be read or
    comes from a parser not yet naming its codes. Out of memory stays one. */
static int
s_input_error (gc_err_t *err)
{
    if (err->code != GC_E_NOMEM && gc_cli_exit_code (err) != GC_EXIT_USAGE)
        err->code = GC_E_CONFIG;
    return -1;
}

static void s_route (gc_sim_t *sim, gc_sim_peer_t *p);
static gc_timeline_t *s_timeline_new (gc_sim_t *sim);
static void *s_worker (void *arg);

static int
s_setup (gc_sim_t *sim, gc_err_t *err)
{
    double t0 = gc_now_s ();
    pthread_mutex_init (&sim->states_lock, NULL);        /* s_teardown, which always follows, destroys it */
    sim->sc = gc_scenario_load_sim (sim->opts.scenario, sim->opts.peers, err);
    if (!sim->sc)
        return s_input_error (err);
    int violations = gc_scenario_lint (sim->sc, NULL, err);
    if (violations < 0)
        return s_input_error (err);
    if (violations > 0 && sim->opts.log) {
        fprintf (sim->opts.log, "gcsim: warning: %s: %d honest peers have more Byzantine neighbours than "
                 "their rule tolerates:\n", sim->sc->name, violations);
        gc_scenario_lint (sim->sc, sim->opts.log, NULL);
    }
    if (!(sim->scfg = gc_simcfg_load (sim->opts.scenario, sim->sc, err)))
        return s_input_error (err);
    sim->threads = sim->opts.threads ? sim->opts.threads : sim->scfg->threads;
    if (sim->threads < 1 || sim->threads > GC_SIM_MAX_THREADS)
        return gc_err_set (err, GC_E_USAGE, "--threads %d: 1 or 2", sim->threads);
    sim->n = sim->sc->n_peers;
    sim->peers = calloc (sim->n, sizeof *sim->peers);
    sim->timeline = s_timeline_new (sim);
    sim->chain_first = malloc (sim->n * sizeof *sim->chain_first);
    sim->chain_last = malloc (sim->n * sizeof *sim->chain_last);
    sim->active = malloc (sim->n * sizeof *sim->active);
    if (!sim->peers || !sim->timeline || !sim->chain_first || !sim->chain_last || !sim->active
    ||  !(sim->q = gc_evq_new ()))
        return gc_err_set (err, GC_E_NOMEM, "out of memory");
    for (uint32_t i = 0; i < sim->n; i++) {
        gc_sim_peer_t *p = &sim->peers [i];
        p->sim = sim;
        p->index = i;
        p->cls = (int) (i % (uint32_t) sim->threads);
        p->byzantine = gc_scenario_is_byzantine (sim->sc, i);
        p->sp = &sim->scfg->peers [i];
        sim->chain_first [i] = -1;
        if (!(p->cfg = s_peer_config (sim, i, err)))
            return s_input_error (err);
    }
    sim->seed = sim->peers [0].cfg->seed;
    sim->eval_every = sim->peers [0].cfg->eval_every;
    sim->checkpoint_every = sim->peers [0].cfg->checkpoint_every;
    if (s_check_shared (sim, err) || s_setup_result (sim, err))
        return -1;
    if (!(sim->topology = gc_topology_new (sim->peers [0].cfg->topology, sim->n, sim->seed, err))) {
        gc_err_prefix (err, "topology/kind: ");
        return s_input_error (err);
    }
    if (s_setup_keys (sim, err) || s_setup_data (sim, err) || s_setup_peers (sim, err))
        return -1;
    if (s_check_skip_crypto (sim, err))
        return -1;
    gc_cli_set_blas_threads (1);
    if (sim->threads > 1) {
        if (pthread_barrier_init (&sim->go, NULL, 2) || pthread_barrier_init (&sim->done, NULL, 2)
        ||  pthread_create (&sim->worker, NULL, s_worker, sim))
            return gc_err_set (err, GC_E_SYS, "cannot start the worker thread");
        sim->worker_started = true;
    }
    //  the timeline's timed events and the run's limit
    gc_timeline_start (sim->timeline);
    if (sim->timeline_oom || gc_evq_push (sim->q, llround (sim->sc->timeout_s * 1e9), GC_SIM_EV_TIMEOUT, 0, 0, NULL))
        return gc_err_set (err, GC_E_NOMEM, "out of memory");
    //  every peer starts at time 0
    for (uint32_t i = 0; i < sim->n; i++) {
        gc_sim_peer_spawn (sim, &sim->peers [i], false);
        s_route (sim, &sim->peers [i]);
    }
    sim->wall_setup_s = gc_now_s () - t0;
    return 0;
}

static void
s_teardown (gc_sim_t *sim)
{
    if (sim->worker_started) {
        sim->quit = true;
        pthread_barrier_wait (&sim->go);
        pthread_join (sim->worker, NULL);
        pthread_barrier_destroy (&sim->go);
        pthread_barrier_destroy (&sim->done);
    }
    if (sim->q) {
        gc_evq_item_t ev;
        while (!gc_evq_empty (sim->q)) {
            gc_evq_pop (sim->q, &ev);
            if (ev.kind == GC_SIM_EV_DELIVER)
                gc_sim_msg_release (ev.ptr);
        }
        gc_evq_destroy (&sim->q);
    }
    for (uint32_t i = 0; sim->peers && i < sim->n; i++) {
        gc_sim_peer_t *p = &sim->peers [i];
        gc_engine_destroy (&p->engine);
        for (size_t k = 0; k < p->n_held; k++)
            gc_sim_msg_release (p->held [k]);
        for (size_t k = 0; k < p->n_sends; k++)
            gc_sim_msg_release (p->sends [k].msg);
        free (p->held);
        free (p->sends);
        free (p->dests);
        free (p->news);
        free ((void *) p->contacts);
        free (p->links);
        free (p->held_from);
        free (p->partition);
        gc_mem_free (p->snap_x);
        gc_mem_free (p->snap_v);
        gc_dataset_free (&p->shard);
        gc_key_destroy (&p->key);
        gc_config_destroy (&p->cfg);
    }
    for (int c = 0; c < GC_SIM_MAX_THREADS; c++) {
        gc_sim_class_t *cl = &sim->classes [c];
        gc_mem_free (cl->update);
        gc_mem_free (cl->sent);
        gc_mem_free (cl->agg);
        free (cl->line);
        gc_model_destroy (&cl->eval_model);
        gc_trust_destroy (&cl->trust);
    }
    gc_sim_state_release (sim->initial);        /* after the engines and messages holding states */
    pthread_mutex_destroy (&sim->states_lock);
    gc_mem_free (sim->omni_mean);
    gc_mem_free (sim->omni_std);
    free (sim->omni_models);
    free (sim->peers);
    free (sim->ids);
    gc_timeline_destroy (&sim->timeline);
    free (sim->batch);
    free (sim->round_wall);
    free (sim->round_rss_mb);
    free (sim->chain_first);
    free (sim->chain_last);
    free (sim->chain_next);
    free (sim->active);
    gc_result_destroy (&sim->res);
    gc_dataset_free (&sim->test);
    gc_topology_destroy (&sim->topology);
    gc_simcfg_destroy (&sim->scfg);
    gc_scenario_destroy (&sim->sc);
}

//  ---------------------------------------------------------------------------
//  routing: the fault layer of the sender (gossip/gc_fault.h, as gc_zmq
//  applies it), then the link (bandwidth, latency, jitter; in order)

static void
s_route_one (gc_sim_t *sim, gc_sim_peer_t *p, uint32_t to, gc_sim_msg_t *msg, int64_t t)
{
    size_t ci = gc_sim_peer_contact (p, to);
    if (ci == SIZE_MAX || to >= sim->n)
        return;                         /* the engine only sends to its contacts */
    gc_sim_link_t *link = &p->links [ci];
    double bytes = (double) msg->hlen + (double) msg->plen;
    int64_t due;
    if (!gc_fault_route (&p->fault, &p->rng, &link->fault_free, bytes, t, &due)) {
        sim->dropped_fault++;
        return;
    }
    //  the link: the slower end decides
    const gc_simpeer_t *a = p->sp, *b = sim->peers [to].sp;
    double latency = fmax (a->latency_ms, b->latency_ms), jitter = fmax (a->jitter_ms, b->jitter_ms);
    double bw = a->bandwidth > 0 && b->bandwidth > 0 ? fmin (a->bandwidth, b->bandwidth)
              : fmax (a->bandwidth, b->bandwidth);
    int64_t start = link->link_free > due ? link->link_free : due, done = start;
    if (bw > 0) {
        done = start + (int64_t) (bytes / bw * 1e9);
        link->link_free = done;
    }
    int64_t arrival = done + (int64_t) (latency * 1e6);
    if (jitter > 0)
        arrival += (int64_t) (jitter * 1e6 * gc_rng_double (&p->rng));
    if (arrival < link->last_arrival)
        arrival = link->last_arrival;
    link->last_arrival = arrival;
    atomic_fetch_add_explicit (&msg->refs, 1, memory_order_relaxed);
    if (gc_evq_push (sim->q, arrival, GC_SIM_EV_DELIVER, to, 0, msg))
        gc_sim_msg_release (msg);
    else
        sim->messages++;
}

static void
s_route (gc_sim_t *sim, gc_sim_peer_t *p)
{
    for (size_t s = 0; s < p->n_sends; s++) {
        gc_sim_send_t *send = &p->sends [s];
        for (size_t k = 0; k < send->n_dests; k++)
            s_route_one (sim, p, p->dests [send->first_dest + k], send->msg, send->t);
        gc_sim_msg_release (send->msg);
    }
    for (size_t e = 0; e < p->n_news; e++)
        if (gc_evq_push (sim->q, p->news [e].t, p->news [e].kind, p->index, p->news [e].arg, NULL))
            p->oom = true;
    p->n_sends = p->n_dests = p->n_news = 0;
}

//  ---------------------------------------------------------------------------
//  the timeline's operations (harness/gc_timeline.h): engine calls; after
//  each peer's, what it sent is routed

static void
s_record (gc_sim_t *sim, double round, const char *text)
{
    double t = (double) sim->now * 1e-9;
    if (sim->opts.log)
        fprintf (sim->opts.log, "gcsim: [%8.3f s, round %4.0f] %s\n", t, round, text);
    gc_result_note (sim->res, t, round, text);
}

static void
s_set_partition (gc_sim_peer_t *p, const uint32_t *allowed, size_t n)
{
    free (p->partition);
    p->partition = NULL;
    p->n_partition = 0;
    if (n && (p->partition = malloc (n * sizeof *allowed))) {
        memcpy (p->partition, allowed, n * sizeof *allowed);
        p->n_partition = n;
    }
    if (p->engine)
        gc_engine_partition (p->engine, p->partition, p->n_partition);
}

static void
s_op_kill (void *ctx, uint32_t i, bool clean)
{
    gc_sim_t *sim = ctx;
    gc_sim_peer_kill (sim, &sim->peers [i], GC_PEER_KILLED, clean);
}

static void
s_op_freeze (void *ctx, uint32_t i, bool frozen)
{
    gc_sim_t *sim = ctx;
    (frozen ? gc_sim_peer_freeze : gc_sim_peer_thaw) (sim, &sim->peers [i]);
}

//  The fault layer and `slow` live in the peer (not its engine): a restarted
//  process keeps them, as gcnet sends them again.
static void
s_op_restart (void *ctx, uint32_t i, bool resume, const gc_timeline_faults_t *faults)
{
    gc_sim_t *sim = ctx;
    gc_sim_peer_t *p = &sim->peers [i];
    (void) faults;
    gc_sim_peer_kill (sim, p, GC_PEER_KILLED, false);
    gc_sim_peer_discard (p);
    gc_sim_peer_spawn (sim, p, resume);
}

static void
s_op_faults (void *ctx, uint32_t i, unsigned what, const gc_timeline_faults_t *faults)
{
    gc_sim_peer_t *p = &((gc_sim_t *) ctx)->peers [i];
    (void) what;
    p->fault = faults->fault;
    p->ctl_slow = faults->slow;
}

static void
s_op_partition (void *ctx, uint32_t i, const uint32_t *allowed, size_t n)
{
    s_set_partition (&((gc_sim_t *) ctx)->peers [i], allowed, n);
}

//  After an event's action on a peer: route what it sent (a killed peer's
//  last words, a spawned one's first events).
static void
s_op_acted (void *ctx, uint32_t i)
{
    gc_sim_t *sim = ctx;
    gc_sim_peer_t *p = &sim->peers [i];
    p->touched = sim->rounds_moved = true;
    s_route (sim, p);
}

static void
s_op_record (void *ctx, double round, const char *text)
{
    s_record (ctx, round, text);
}

static int64_t
s_op_round (void *ctx, uint32_t i)
{
    const gc_sim_t *sim = ctx;
    return sim->peers [i].byzantine ? -1 : (int64_t) sim->peers [i].round;
}

static void
s_op_schedule (void *ctx, size_t e, double delay_s)
{
    gc_sim_t *sim = ctx;
    if (gc_evq_push (sim->q, sim->now + llround (delay_s * 1e9), GC_SIM_EV_TIMELINE, 0, e, NULL))
        sim->timeline_oom = true;
}

static gc_timeline_t *
s_timeline_new (gc_sim_t *sim)
{
    gc_timeline_ops_t ops = {
        .ctx = sim, .kill = s_op_kill, .freeze = s_op_freeze, .restart = s_op_restart,
        .faults = s_op_faults, .partition = s_op_partition, .acted = s_op_acted, .record = s_op_record,
        .round = s_op_round, .schedule = s_op_schedule
    };
    return gc_timeline_new (sim->sc, &ops);
}

static double
s_median_round (gc_sim_t *sim)
{
    return gc_timeline_median_round (sim->timeline);
}

static void
s_after_batch (gc_sim_t *sim)
{
    gc_timeline_poll (sim->timeline, (double) sim->now * 1e-9);      /* the round events */
    if (sim->honest_done) {
        //  in their grace: stop as soon as nobody runs any more
        bool running = false;
        for (uint32_t i = 0; i < sim->n && !running; i++)
            running = sim->peers [i].engine && sim->peers [i].phase != GC_SIM_DONE;
        sim->stop |= !running;
        return;
    }
    bool busy = false, others = false;
    for (uint32_t i = 0; i < sim->n && !busy; i++) {
        const gc_sim_peer_t *p = &sim->peers [i];
        bool running = p->engine && p->phase != GC_SIM_DONE;
        if (!p->byzantine)
            busy = running || (p->phase == GC_SIM_DOWN && gc_timeline_restart_pending (sim->timeline, i));
        else
            others |= running;
    }
    if (busy)
        return;
    sim->honest_done = true;
    if (others) {
        //  as gcnet: the others get grace_s to finish
        gc_evq_push (sim->q, sim->now + llround (sim->sc->grace_s * 1e9), GC_SIM_EV_GRACE, 0, 0, NULL);
    }
    else
        sim->stop = true;
}

//  ---------------------------------------------------------------------------
//  the event loop

static bool
s_serial_peer (const gc_sim_peer_t *p)
{
    return p->ecfg.observer != NULL;        /* reads other peers' models */
}

static void
s_process_class (gc_sim_t *sim, int cls)
{
    for (size_t a = 0; a < sim->n_active; a++) {
        gc_sim_peer_t *p = &sim->peers [sim->active [a]];
        if (p->cls == cls && !s_serial_peer (p))
            gc_sim_peer_events (sim, p, sim->chain_first [p->index]);
    }
}

static void *
s_worker (void *arg)
{
    gc_sim_t *sim = arg;
    while (true) {
        pthread_barrier_wait (&sim->go);
        if (sim->quit)
            break;
        s_process_class (sim, 1);
        pthread_barrier_wait (&sim->done);
    }
    return NULL;
}

static int
s_cmp_u32 (const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
    return (x > y) - (x < y);
}

//  Every event queued for the earliest time: the run's own first, then each
//  peer's in queue order, peers independently (class 0 here, class 1 in the
//  worker), omniscient attackers last and alone, then the routing in peer
//  order.
static int
s_batch (gc_sim_t *sim)
{
    int64_t t = gc_evq_top (sim->q)->t;
    sim->now = t;
    sim->batch_no++;
    sim->n_batch = 0;
    while (!gc_evq_empty (sim->q) && gc_evq_top (sim->q)->t == t) {
        if (sim->n_batch == sim->cap_batch) {
            size_t cap = sim->cap_batch ? 2 * sim->cap_batch : 1024;
            gc_evq_item_t *grown = realloc (sim->batch, cap * sizeof *grown);
            int32_t *next = realloc (sim->chain_next, cap * sizeof *next);
            if (grown)
                sim->batch = grown;
            if (next)
                sim->chain_next = next;
            if (!grown || !next)
                return -1;
            sim->cap_batch = cap;
        }
        gc_evq_pop (sim->q, &sim->batch [sim->n_batch++]);
    }
    for (size_t i = 0; i < sim->n_batch && !sim->stop; i++) {
        const gc_evq_item_t *ev = &sim->batch [i];
        if (ev->kind == GC_SIM_EV_TIMELINE)
            gc_timeline_fire (sim->timeline, (size_t) ev->arg, (double) sim->now * 1e-9);
        else
        if (ev->kind == GC_SIM_EV_GRACE) {
            gc_timeline_note (sim->timeline, "honest peers done; the others stopped after their grace");
            sim->stop = true;
        }
        else
        if (ev->kind == GC_SIM_EV_TIMEOUT) {
            sim->status = GC_RUN_TIMED_OUT;
            gc_timeline_note (sim->timeline, "timed out (scenario/timeout_s of virtual time): stopping every peer");
            sim->stop = true;
        }
    }
    sim->n_active = 0;
    for (size_t i = 0; i < sim->n_batch; i++) {
        gc_evq_item_t *ev = &sim->batch [i];
        if (ev->kind < GC_SIM_EV_COMPUTE)
            continue;
        if (sim->stop) {
            if (ev->kind == GC_SIM_EV_DELIVER)
                gc_sim_msg_release (ev->ptr);
            continue;
        }
        uint32_t p = ev->peer;
        sim->chain_next [i] = -1;
        if (sim->chain_first [p] < 0) {
            sim->chain_first [p] = (int32_t) i;
            sim->active [sim->n_active++] = p;
        }
        else
            sim->chain_next [sim->chain_last [p]] = (int32_t) i;
        sim->chain_last [p] = (int32_t) i;
    }
    if (sim->stop)
        return 0;
    qsort (sim->active, sim->n_active, sizeof *sim->active, s_cmp_u32);
    bool busy [GC_SIM_MAX_THREADS] = { false };
    for (size_t a = 0; a < sim->n_active; a++) {
        const gc_sim_peer_t *p = &sim->peers [sim->active [a]];
        busy [p->cls] |= !s_serial_peer (p);
    }
    if (busy [0] && busy [1]) {
        pthread_barrier_wait (&sim->go);
        s_process_class (sim, 0);
        pthread_barrier_wait (&sim->done);
    }
    else
    if (busy [0] || busy [1])
        s_process_class (sim, busy [0] ? 0 : 1);      /* the other class's thread is idle */
    for (size_t a = 0; a < sim->n_active; a++) {
        gc_sim_peer_t *p = &sim->peers [sim->active [a]];
        if (s_serial_peer (p))
            gc_sim_peer_events (sim, p, sim->chain_first [p->index]);
    }
    for (size_t a = 0; a < sim->n_active; a++) {
        gc_sim_peer_t *p = &sim->peers [sim->active [a]];
        s_route (sim, p);
        sim->chain_first [p->index] = -1;
        sim->rounds_moved |= p->touched;
        p->touched = false;
        if (p->oom)
            return -1;
    }
    return 0;
}

static double
s_rss_mb (void)
{
    long size = 0, pages = 0;           /* statm: size, resident, ... in pages */
    FILE *f = fopen ("/proc/self/statm", "r");
    if (f) {
        if (fscanf (f, "%ld %ld", &size, &pages) != 2)
            pages = 0;
        fclose (f);
    }
    return (double) pages * (double) sysconf (_SC_PAGESIZE) / (1024.0 * 1024.0);
}

static void
s_progress (gc_sim_t *sim, double *next_log, bool force)
{
    if (!sim->opts.log)
        return;
    double wall = gc_now_s ();
    if (!force && wall < *next_log)
        return;
    *next_log = wall + 5.0;
    double sum = 0, min = INFINITY;
    int with = 0;
    for (uint32_t i = 0; i < sim->n; i++) {
        const gc_sim_peer_t *p = &sim->peers [i];
        if (p->byzantine || !isfinite (p->res->stat->accuracy))
            continue;
        sum += p->res->stat->accuracy;
        min = fmin (min, p->res->stat->accuracy);
        with++;
    }
    char acc [64] = "not evaluated yet";
    if (with)
        snprintf (acc, sizeof acc, "%.4f (min %.4f)", sum / with, min);
    fprintf (sim->opts.log, "gcsim: virtual %8.3f s  round %4.0f  honest acc %s  wall %.1f s  RSS %.1f GB\n",
             (double) sim->now * 1e-9, s_median_round (sim), acc, wall - sim->wall_loop_s,
             s_rss_mb () / 1024.0);
    fflush (sim->opts.log);
}

static double
s_cpu_s (void)
{
    struct rusage ru;
    getrusage (RUSAGE_SELF, &ru);
    return (double) ru.ru_utime.tv_sec + (double) ru.ru_utime.tv_usec * 1e-6
         + (double) ru.ru_stime.tv_sec + (double) ru.ru_stime.tv_usec * 1e-6;
}

//  Where the wall time went, round by round (timing.json): shows one-time
//  costs such as the first rounds' page faults apart from the steady rate.
static void
s_note_rounds (gc_sim_t *sim, double wall)
{
    if (!sim->rounds_moved)
        return;                         /* the median cannot have moved */
    sim->rounds_moved = false;
    double median = s_median_round (sim);
    if ((double) sim->n_round_wall >= median)
        return;
    double rss = s_rss_mb ();
    while ((double) sim->n_round_wall < median) {
        if (sim->n_round_wall == sim->cap_round_wall) {
            size_t cap = sim->cap_round_wall ? 2 * sim->cap_round_wall : 64;
            double *walls = realloc (sim->round_wall, cap * sizeof *walls);
            if (walls)
                sim->round_wall = walls;
            float *rss_mb = realloc (sim->round_rss_mb, cap * sizeof *rss_mb);
            if (rss_mb)
                sim->round_rss_mb = rss_mb;
            if (!walls || !rss_mb)
                return;                 /* a shorter record; the run goes on */
            sim->cap_round_wall = cap;
        }
        sim->round_wall [sim->n_round_wall] = wall;
        sim->round_rss_mb [sim->n_round_wall++] = (float) rss;
    }
}

static int
s_loop (gc_sim_t *sim, gc_err_t *err)
{
    double t0 = gc_now_s (), next_log = t0 + 5.0, cpu0 = s_cpu_s ();
    sim->wall_loop_s = t0;
    while (!sim->stop) {
        if (gc_evq_empty (sim->q)) {
            //  nothing left that could happen (e.g. honest peers frozen)
            sim->status = GC_RUN_TIMED_OUT;
            sim->now = llround (sim->sc->timeout_s * 1e9);
            gc_timeline_note (sim->timeline, "nothing left to happen: the run cannot complete");
            break;
        }
        if (s_batch (sim))
            return gc_err_set (err, GC_E_NOMEM, "out of memory at %.3f s of virtual time", (double) sim->now * 1e-9);
        s_after_batch (sim);
        s_note_rounds (sim, gc_now_s () - t0);
        s_progress (sim, &next_log, false);
    }
    s_progress (sim, &next_log, true);
    sim->wall_loop_s = gc_now_s () - t0;
    sim->cpu_loop_s = s_cpu_s () - cpu0;
    //  as gcnet's stop: running peers end cleanly (evaluate, final line)
    for (uint32_t i = 0; i < sim->n; i++) {
        gc_sim_peer_t *p = &sim->peers [i];
        if (p->engine && p->phase != GC_SIM_DONE)
            gc_sim_peer_finish (sim, p, GC_PEER_STOPPED);
        p->res->down = p->res->state == GC_PEER_KILLED;
        p->res->final_rounds = p->res->has_final ? p->res->final_rounds : p->res->stat->round;
        if (!p->res->has_final)
            p->res->final_accuracy = p->res->stat->accuracy;
    }
    gc_result_t *res = sim->res;
    gc_result_not_fired (res, sim->timeline);
    res->status = sim->status;
    res->elapsed_s = (double) sim->now * 1e-9;
    return 0;
}

int
gc_sim_run (const gc_sim_opts_t *opts, gc_err_t *err)
{
    gc_sim_t sim = { .opts = *opts, .status = GC_RUN_COMPLETED };
    //  Messages and dense payload buffers come and go every round: keep
    //  them on the heap instead of fresh mmaps (each a page fault per 4 kB).
    mallopt (M_MMAP_THRESHOLD, 256 << 20);
    mallopt (M_TRIM_THRESHOLD, 512 << 20);
    if (sim.opts.target <= 0)
        sim.opts.target = 0.85;
    //  --jsonl appends to peerN.jsonl from the first round: the directory
    //  must exist before the report creates it at the end.
    if (sim.opts.jsonl && gc_fs_mkdirs (sim.opts.out_dir, 0755, err)) {
        gc_err_prefix (err, "--out: ");
        return gc_cli_exit_code (err);
    }
    int rc = s_setup (&sim, err);
    if (rc == 0)
        rc = s_loop (&sim, err);
    if (rc == 0)
        rc = gc_sim_report (&sim, err);
    s_teardown (&sim);
    return rc < 0 ? gc_cli_exit_code (err) : rc;
}
