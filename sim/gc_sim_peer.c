/*  One simulated peer: the gcnode process (node/cmd_run.c) replayed against
    the virtual clock. Everything here touches only this peer's engine and
    state, and writes what it sends and schedules into the peer's outputs,
    so peers of one batch can run in parallel (gc_sim.c routes the outputs
    afterwards, in peer order). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gc_mem.h"
#include "gc_metrics.h"
#include "gc_peerstat.h"
#include "gc_sim_internal.h"
#include "gc_time.h"
#include "gc_vec.h"

static void s_mix (gc_sim_t *sim, gc_sim_peer_t *p);

void
gc_sim_msg_release (gc_sim_msg_t *msg)
{
    if (atomic_fetch_sub_explicit (&msg->refs, 1, memory_order_acq_rel) == 1) {
        gc_sim_msg_forget (msg);
        if (msg->payload != msg->data + msg->hlen)
            free (msg->payload);
        free (msg);
    }
}

static bool
s_grow (void **items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    size_t cap2 = *cap ? 2 * *cap : 16;
    while (cap2 < need)
        cap2 *= 2;
    void *grown = realloc (*items, cap2 * size);
    if (!grown)
        return false;
    *items = grown;
    *cap = cap2;
    return true;
}

void
gc_sim_peer_schedule (gc_sim_peer_t *p, int64_t t, uint32_t kind, uint64_t arg)
{
    if (!s_grow ((void **) &p->news, &p->cap_news, p->n_news + 1, sizeof *p->news)) {
        p->oom = true;
        return;
    }
    p->news [p->n_news++] = (gc_sim_new_t) { .t = t, .kind = kind, .arg = arg };
}

//  The engine's transport: one message for all its destinations, routed
//  when the batch is over. The payload is copied after the header, or the
//  engine's block is taken (take: not NULL).
static int
s_send_msg (gc_sim_peer_t *p, const uint32_t *dests, size_t n_dests, const uint8_t *header,
            size_t hlen, const uint8_t *copy, uint8_t *take, size_t plen)
{
    if (hlen > UINT32_MAX || plen > UINT32_MAX)
        return -1;
    gc_sim_msg_t *msg = malloc (sizeof *msg + hlen + (take ? 0 : plen));
    if (!msg
    ||  !s_grow ((void **) &p->sends, &p->cap_sends, p->n_sends + 1, sizeof *p->sends)
    ||  !s_grow ((void **) &p->dests, &p->cap_dests, p->n_dests + n_dests, sizeof *p->dests)) {
        free (msg);
        p->oom = true;
        return -1;
    }
    atomic_init (&msg->refs, 1);
    msg->n_memo = 0;
    msg->from = p->index;
    msg->hlen = (uint32_t) hlen;
    msg->plen = (uint32_t) plen;
    if (hlen)
        memcpy (msg->data, header, hlen);
    msg->payload = take ? take : msg->data + hlen;
    if (copy && plen)
        memcpy (msg->payload, copy, plen);
    p->sends [p->n_sends++] = (gc_sim_send_t) { .msg = msg, .t = p->now, .first_dest = p->n_dests,
                                                 .n_dests = n_dests };
    memcpy (p->dests + p->n_dests, dests, n_dests * sizeof *dests);
    p->n_dests += n_dests;
    return 0;
}

static int
s_send (void *ctx, const uint32_t *dests, size_t n_dests, const uint8_t *header, size_t hlen,
        const uint8_t *payload, size_t plen)
{
    return s_send_msg (ctx, dests, n_dests, header, hlen, payload, NULL, plen);
}

static int
s_send_owned (void *ctx, const uint32_t *dests, size_t n_dests, const uint8_t *header, size_t hlen,
              uint8_t *payload, size_t plen)
{
    return s_send_msg (ctx, dests, n_dests, header, hlen, NULL, payload, plen);
}

//  The bytes/s of p's slowest out-link: the link model's (the slower end
//  decides) and the fault layer's cap, 0 when nothing limits them.
static double
s_link_rate (gc_sim_peer_t *p)
{
    const gc_sim_t *sim = p->sim;
    const uint32_t *out;
    size_t n_out = gc_topology_out (sim->topology, p->index, &out);
    double rate = p->fault.rate > 0 ? p->fault.rate : 0;
    for (size_t j = 0; j < n_out; j++) {
        const gc_simpeer_t *a = p->sp, *b = sim->peers [out [j]].sp;
        double bw = a->bandwidth > 0 && b->bandwidth > 0 ? fmin (a->bandwidth, b->bandwidth)
                  : fmax (a->bandwidth, b->bandwidth);
        if (bw > 0 && (rate == 0 || bw < rate))
            rate = bw;
    }
    return rate;
}

int64_t
gc_sim_peer_compute_ns (gc_sim_peer_t *p)
{
    double steps = p->ecfg.local_steps ? (double) p->ecfg.local_steps : 1.0;
    double jitter = p->sp->compute_jitter > 0 ? 1.0 + p->sp->compute_jitter * gc_rng_double (&p->compute_rng) : 1.0;
    long cores = p->sim->scfg->cores;
    double shared = cores > 0 && (long) p->sim->n > cores ? (double) p->sim->n / (double) cores : 1.0;
    double ns = ((double) p->step_ns * steps + p->sp->round_ms * 1e6) * p->sp->slow * p->ctl_slow * jitter * shared;
    //  A ratio policy budgets against this round's virtual compute and link,
    //  and the last whole round's virtual time (from its compute's start to
    //  this one's, the wait for the neighbours included).
    double round_s = p->round_t0 >= 0 ? (double) (p->now - p->round_t0) * 1e-9 : 0;
    p->round_t0 = p->now;
    if (p->engine)
        gc_engine_set_link (p->engine, ns * 1e-9, round_s, s_link_rate (p));
    return llround (ns);
}

//  One metrics line, as gcnode writes it, fed to the peer's gc_peerstat (and
//  to peerN.jsonl with --jsonl). The line's "t" is virtual: seconds since this
//  process of the peer started.
static void
s_feed (gc_sim_t *sim, gc_sim_peer_t *p, bool evaluated, double accuracy, double loss)
{
    gc_sim_class_t *c = &sim->classes [p->cls];
    FILE *f = fmemopen (c->line, c->line_size, "w");
    if (!f)
        return;
    gc_metrics_ctx_t m = {
        .peer = p->index, .peer_id = gc_key_peer_id_hex (p->key), .role = p->cfg->role,
        .elapsed_s = (double) (p->now - p->spawn_t) * 1e-9, .evaluated = evaluated,
        .accuracy = accuracy, .test_loss = loss
    };
    gc_metrics_write_json (p->engine, &m, f);
    long len = ftell (f);
    fclose (f);
    if (len <= 0 || (size_t) len >= c->line_size - 1)
        return;                             /* cut short: not a line */
    gc_peerstat_feed (p->res->stat, c->line, (size_t) len);
    if (sim->opts.jsonl) {
        char path [4200];
        snprintf (path, sizeof path, "%s/peer%u.jsonl", sim->opts.out_dir, p->index);
        FILE *out = fopen (path, "a");
        if (out) {
            fwrite (c->line, 1, (size_t) len, out);
            fclose (out);
        }
    }
}

static void
s_evaluate (gc_sim_t *sim, gc_sim_peer_t *p, double *accuracy, double *loss)
{
    double t0 = gc_now_s ();
    *accuracy = NAN;
    *loss = NAN;
    //  gc_engine_evaluate's computation on the class's model object: its
    //  evaluation workspace (some MB) exists once per thread, not per peer
    gc_model_t *model = sim->classes [p->cls].eval_model;
    if (gc_model_evaluate (model, gc_engine_params (p->engine), &sim->test, accuracy, loss, NULL))
        *accuracy = *loss = NAN;
    sim->classes [p->cls].eval_s += gc_now_s () - t0;
}

//  gcnode prints `peer=N rounds=R test_accuracy=0.XXXX` when it ends; gcnet
//  reads the accuracy from that line, so it has four decimals.
static void
s_final_line (gc_sim_peer_t *p, double accuracy)
{
    char text [64];
    snprintf (text, sizeof text, "%.4f", accuracy);
    p->res->has_final = isfinite (accuracy);
    p->res->final_accuracy = isfinite (accuracy) ? strtod (text, NULL) : NAN;
    p->res->final_rounds = p->round;
}

static void
s_snapshot (gc_sim_t *sim, gc_sim_peer_t *p)
{
    if (!p->snap_x) {
        p->snap_x = gc_falloc (sim->d);
        p->snap_v = gc_falloc (sim->d);
        if (!p->snap_x || !p->snap_v)
            return;
    }
    const float *x, *v;
    gc_engine_snapshot (p->engine, &p->snap_round, &p->snap_seq, &x, &v);
    gc_vec_copy (p->snap_x, x, sim->d);
    gc_vec_copy (p->snap_v, v, sim->d);
    p->has_snap = true;
}

static void
s_release_held (gc_sim_peer_t *p)
{
    for (size_t i = 0; i < p->n_held; i++)
        gc_sim_msg_release (p->held [i]);
    p->n_held = 0;
    if (p->held_from)
        memset (p->held_from, 0, p->n_contacts * sizeof *p->held_from);
}

static void
s_down (gc_sim_peer_t *p)
{
    uint64_t round;
    const float *x, *v;
    gc_engine_snapshot (p->engine, &round, &p->last_seq, &x, &v);
    gc_engine_destroy (&p->engine);
    s_release_held (p);
    p->phase = GC_SIM_DOWN;
    p->frozen = false;
    p->epoch++;
    p->deadline_pending = -1;
    p->touched = true;
}

//  How many crashes the log names (the report holds every one): a
//  configuration error crashes every peer at once.
#define S_CRASHES_SHOWN 3u

//  The process failed (gcnode would exit non-zero).
static void
s_crash (gc_sim_t *sim, gc_sim_peer_t *p, const char *why)
{
    if (sim->opts.log) {
        unsigned shown = atomic_fetch_add (&sim->crashes_shown, 1);
        if (shown < S_CRASHES_SHOWN)
            fprintf (sim->opts.log, "gcsim: peer %u crashed: %s%s\n", p->index, why,
                     shown + 1 == S_CRASHES_SHOWN ? " (further crashes: report.md)" : "");
    }
    s_feed (sim, p, false, NAN, NAN);       /* the process's last metrics line */
    snprintf (p->res->detail, sizeof p->res->detail, "%.150s", why);
    p->res->crashes++;
    p->res->state = GC_PEER_CRASHED;
    p->res->has_final = false;
    s_down (p);
}

void
gc_sim_peer_kill (gc_sim_t *sim, gc_sim_peer_t *p, gc_peer_state_t state, bool clean)
{
    if (!p->engine || p->phase == GC_SIM_DONE)
        return;                         /* the process has exited already */
    p->now = sim->now;
    if (clean) {
        //  SIGTERM: gcnode checkpoints, evaluates, reports and prints its line
        if (p->wants_snap)
            s_snapshot (sim, p);
        double accuracy, loss;
        s_evaluate (sim, p, &accuracy, &loss);
        s_feed (sim, p, true, accuracy, loss);
        s_final_line (p, accuracy);
    }
    else {
        s_feed (sim, p, false, NAN, NAN);
        p->res->has_final = false;
    }
    p->res->state = state;
    s_down (p);
}

void
gc_sim_peer_discard (gc_sim_peer_t *p)
{
    if (p->engine)
        s_down (p);
}

void
gc_sim_peer_finish (gc_sim_t *sim, gc_sim_peer_t *p, gc_peer_state_t state)
{
    if (!p->engine || p->phase == GC_SIM_DONE)
        return;
    p->now = sim->now;
    double accuracy, loss;
    s_evaluate (sim, p, &accuracy, &loss);
    s_feed (sim, p, true, accuracy, loss);
    s_final_line (p, accuracy);
    p->res->state = state;
    p->phase = GC_SIM_DONE;
    p->frozen = false;
    p->epoch++;
    p->touched = true;
    s_release_held (p);
}

int
gc_sim_peer_spawn (gc_sim_t *sim, gc_sim_peer_t *p, bool resume)
{
    p->now = sim->now;
    p->round_t0 = -1;
    //  gcnode starts its sequence numbers from the wall clock (µs): here the
    //  virtual clock, and always above what an earlier process used.
    uint64_t seq = GC_SIM_SEQ_BASE + (uint64_t) (sim->now / 1000);
    p->ecfg.seq_start = seq > p->last_seq ? seq : p->last_seq + 1;
    gc_engine_io_t io = { .ctx = p, .send = s_send, .send_owned = s_send_owned };
    gc_err_t err = { 0 };
    p->res->starts++;
    if (p->res->starts > 1)
        gc_peerstat_restart (p->res->stat, (double) sim->now * 1e-9);
    p->spawn_t = sim->now;
    p->res->has_final = false;
    p->engine = gc_engine_new (&p->ecfg, &io, &err);
    if (!p->engine) {
        snprintf (p->res->detail, sizeof p->res->detail, "exit 2: %.150s", err.msg);
        p->res->crashes++;
        p->res->state = GC_PEER_CRASHED;
        p->phase = GC_SIM_DOWN;
        return -1;
    }
    gc_sim_class_t *c = &sim->classes [p->cls];
    gc_engine_set_scratch (p->engine, c->update, c->sent, c->agg);
    if (resume && p->has_snap)
        gc_engine_restore (p->engine, p->snap_round, p->snap_seq, p->snap_x, p->snap_v);
    gc_sim_share_states (sim, p);
    if (p->n_partition)
        gc_engine_partition (p->engine, p->partition, p->n_partition);
    p->res->state = GC_PEER_RUNNING;
    p->phase = GC_SIM_COMPUTING;
    p->frozen = false;
    p->epoch++;
    p->deadline_pending = -1;
    p->round = gc_engine_round (p->engine);
    p->touched = true;
    if (gc_engine_start (p->engine, sim->now))
        snprintf (p->res->detail, sizeof p->res->detail, "could not announce itself");
    //  processes do not start in step (sim/start_ms): the first start only
    int64_t delay = p->res->starts == 1 && p->sp->start_ms > 0
                  ? llround (p->sp->start_ms * 1e6 * gc_rng_double (&p->compute_rng)) : 0;
    p->compute_due = sim->now + delay + gc_sim_peer_compute_ns (p);
    gc_sim_peer_schedule (p, p->compute_due, GC_SIM_EV_COMPUTE, p->epoch);
    return 0;
}

//  SIGSTOP: nothing runs; deliveries wait in the sockets (bounded, as the
//  receive and send high-water marks bound them in gcnode).
void
gc_sim_peer_freeze (gc_sim_t *sim, gc_sim_peer_t *p)
{
    if (!p->engine || p->frozen || p->phase == GC_SIM_DONE)
        return;
    p->frozen = true;
    p->freeze_t = sim->now;
    p->remaining = p->phase == GC_SIM_COMPUTING ? p->compute_due - sim->now : 0;
    p->epoch++;
    p->deadline_pending = -1;
}

//  SIGCONT: held messages arrive now, the compute goes on where it stopped,
//  a wait whose deadline passed ends at once. Runs in the serial phase, so it
//  schedules on the queue directly.
void
gc_sim_peer_thaw (gc_sim_t *sim, gc_sim_peer_t *p)
{
    if (!p->engine || !p->frozen)
        return;
    p->frozen = false;
    for (size_t i = 0; i < p->n_held; i++)
        if (gc_evq_push (sim->q, sim->now, GC_SIM_EV_DELIVER, p->index, 0, p->held [i]))
            gc_sim_msg_release (p->held [i]);
    p->n_held = 0;
    memset (p->held_from, 0, p->n_contacts * sizeof *p->held_from);
    if (p->phase == GC_SIM_COMPUTING) {
        p->compute_due = sim->now + p->remaining;
        gc_evq_push (sim->q, p->compute_due, GC_SIM_EV_COMPUTE, p->index, p->epoch, NULL);
    }
    else
    if (p->phase == GC_SIM_WAITING) {
        int64_t deadline = gc_engine_wait_deadline (p->engine);
        p->deadline_pending = deadline > sim->now ? deadline : sim->now;
        gc_evq_push (sim->q, p->deadline_pending, GC_SIM_EV_DEADLINE, p->index, p->epoch, NULL);
    }
}

static void
s_arm_deadline (gc_sim_peer_t *p)
{
    //  at most one pending deadline event: deadlines only move later, and
    //  an early one re-arms itself when it fires
    if (p->deadline_pending >= 0)
        return;
    p->deadline_pending = gc_engine_wait_deadline (p->engine);
    gc_sim_peer_schedule (p, p->deadline_pending, GC_SIM_EV_DEADLINE, p->epoch);
}

static void
s_compute (gc_sim_t *sim, gc_sim_peer_t *p)
{
    gc_engine_train (p->engine);
    gc_err_t err = { 0 };
    if (gc_engine_publish (p->engine, p->now, &err)) {
        char why [GC_ERR_MSG_MAX + 64];
        snprintf (why, sizeof why, "round %llu: %s", (unsigned long long) p->round, err.msg);
        s_crash (sim, p, why);
        return;
    }
    gc_engine_trim (p->engine);
    gc_engine_wait_begin (p->engine, p->now);
    p->phase = GC_SIM_WAITING;
    if (gc_engine_ready (p->engine, p->now))
        s_mix (sim, p);
    else
        s_arm_deadline (p);
}

static void
s_mix (gc_sim_t *sim, gc_sim_peer_t *p)
{
    gc_engine_mix (p->engine, p->now, NULL);
    p->round = gc_engine_round (p->engine);
    p->rounds_done++;
    p->touched = true;
    if (p->wants_snap && sim->checkpoint_every > 0 && p->round % (uint64_t) sim->checkpoint_every == 0)
        s_snapshot (sim, p);
    long every = p->cfg->eval_every;
    bool evaluated = every > 0 && p->round % (uint64_t) every == 0;
    double accuracy = NAN, loss = NAN;
    if (evaluated) {
        s_evaluate (sim, p, &accuracy, &loss);
        s_feed (sim, p, true, accuracy, loss);
    }
    if (gc_engine_done (p->engine)) {
        //  gcnode evaluates once more after its loop: the same model, the
        //  same figure, so the one just made is reused
        if (!evaluated)
            s_evaluate (sim, p, &accuracy, &loss);
        s_feed (sim, p, true, accuracy, loss);
        s_final_line (p, accuracy);
        p->res->state = GC_PEER_FINISHED;
        p->phase = GC_SIM_DONE;
        p->epoch++;
        return;
    }
    p->phase = GC_SIM_COMPUTING;
    p->compute_due = p->now + gc_sim_peer_compute_ns (p);
    gc_sim_peer_schedule (p, p->compute_due, GC_SIM_EV_COMPUTE, p->epoch);
}

size_t
gc_sim_peer_contact (const gc_sim_peer_t *p, uint32_t peer)
{
    size_t lo = 0, hi = p->n_contacts;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->contacts [mid] == peer)
            return mid;
        if (p->contacts [mid] < peer)
            lo = mid + 1;
        else
            hi = mid;
    }
    return SIZE_MAX;
}

static void
s_deliver (gc_sim_t *sim, gc_sim_peer_t *p, gc_sim_msg_t *msg)
{
    if (!p->engine || p->phase == GC_SIM_DOWN || p->phase == GC_SIM_DONE) {
        p->dropped_down++;              /* nobody listens: ZMQ_IMMEDIATE drops it */
        gc_sim_msg_release (msg);
        return;
    }
    if (p->frozen) {
        size_t ci = gc_sim_peer_contact (p, msg->from);
        if ((ci != SIZE_MAX && p->held_from [ci] >= GC_SIM_HELD_PER_LINK)
        ||  !s_grow ((void **) &p->held, &p->cap_held, p->n_held + 1, sizeof *p->held)) {
            p->dropped_frozen++;
            gc_sim_msg_release (msg);
            return;
        }
        if (ci != SIZE_MAX)
            p->held_from [ci]++;
        p->held [p->n_held++] = msg;
        return;
    }
    p->delivering = msg;
    gc_engine_on_message (p->engine, msg->data, msg->hlen, msg->payload, msg->plen, p->now);
    p->delivering = NULL;
    gc_sim_msg_release (msg);
    if (p->phase == GC_SIM_WAITING && gc_engine_ready (p->engine, p->now))
        s_mix (sim, p);
}

void
gc_sim_peer_events (gc_sim_t *sim, gc_sim_peer_t *p, int32_t first)
{
    for (int32_t i = first; i >= 0; i = sim->chain_next [i]) {
        const gc_evq_item_t *ev = &sim->batch [i];
        p->now = ev->t;
        switch (ev->kind) {
            case GC_SIM_EV_COMPUTE:
                if (ev->arg == p->epoch && p->engine && p->phase == GC_SIM_COMPUTING)
                    s_compute (sim, p);
                break;
            case GC_SIM_EV_DEADLINE:
                if (ev->arg != p->epoch || !p->engine)
                    break;
                p->deadline_pending = -1;
                if (p->phase != GC_SIM_WAITING)
                    break;
                if (p->now >= gc_engine_wait_deadline (p->engine))
                    s_mix (sim, p);
                else
                    s_arm_deadline (p);
                break;
            case GC_SIM_EV_DELIVER:
                s_deliver (sim, p, ev->ptr);
                break;
            default:
                break;
        }
    }
}
