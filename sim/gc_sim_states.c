/*  Replica states shared by the simulated engines (gc_engine_states_t in
    node/gc_engine.h). A dense update reaches every neighbour of its sender,
    and each neighbour's replica of the sender holds the same state before
    and after it, so decoding it once per (state, message) instead of once
    per receiver is the same computation done less often: states are
    reference-counted immutable buffers, and each message remembers the
    states built from it while it is alive (it is freed when its last
    destination has it). The result does not depend on which receiver
    builds a state first, so reports stay byte-identical with one or two
    threads and with sharing off (gcsim --no-share). */
#include <stdlib.h>
#include <string.h>

#include "gc_sim_internal.h"

//  A state's reference count sits in the 64 bytes before its floats, which
//  keeps the floats 64-byte aligned as gc_falloc does.
#define S_HEAD 64

static atomic_int *
s_refs (const float *x)
{
    return (atomic_int *) (void *) ((char *) (uintptr_t) x - S_HEAD);
}

float *
gc_sim_state_new (size_t n)
{
    void *block;
    if (posix_memalign (&block, 64, S_HEAD + (n ? n : 1) * sizeof (float)))
        return NULL;
    atomic_init ((atomic_int *) block, 1);
    return (float *) (void *) ((char *) block + S_HEAD);
}

void
gc_sim_state_hold (const float *x)
{
    atomic_fetch_add_explicit (s_refs (x), 1, memory_order_relaxed);
}

void
gc_sim_state_release (const float *x)
{
    if (x && atomic_fetch_sub_explicit (s_refs (x), 1, memory_order_acq_rel) == 1)
        free (s_refs (x));
}

void
gc_sim_msg_forget (gc_sim_msg_t *msg)
{
    for (uint32_t i = 0; i < msg->n_memo; i++) {
        gc_sim_state_release (msg->memo [i].base);
        gc_sim_state_release (msg->memo [i].built);
    }
    msg->n_memo = 0;
}

//  The message being delivered to p, if payload is its payload: the engine
//  decodes nothing else, but the store answers only for what it can name.
static gc_sim_msg_t *
s_message (gc_sim_peer_t *p, const uint8_t *payload)
{
    gc_sim_msg_t *msg = p->delivering;
    return msg && payload == msg->payload ? msg : NULL;
}

//  The state msg built on base, held for the caller, or NULL. Caller holds
//  states_lock.
static const float *
s_memo_take (gc_sim_msg_t *msg, const float *base)
{
    for (uint32_t i = 0; i < msg->n_memo; i++)
        if (msg->memo [i].base == base) {
            gc_sim_state_hold (msg->memo [i].built);
            return msg->memo [i].built;
        }
    return NULL;
}

static const float *
s_find (void *ctx, const float *base, const uint8_t *payload)
{
    gc_sim_peer_t *p = ctx;
    gc_sim_msg_t *msg = s_message (p, payload);
    if (!msg)
        return NULL;
    pthread_mutex_lock (&p->sim->states_lock);
    const float *found = s_memo_take (msg, base);
    pthread_mutex_unlock (&p->sim->states_lock);
    if (found)
        p->sim->states_shared++;
    return found;
}

static float *
s_alloc (void *ctx)
{
    gc_sim_peer_t *p = ctx;
    return gc_sim_state_new (p->sim->d);
}

static const float *
s_offer (void *ctx, const float *base, const uint8_t *payload, float *built)
{
    gc_sim_peer_t *p = ctx;
    gc_sim_msg_t *msg = s_message (p, payload);
    if (!msg)
        return built;
    pthread_mutex_lock (&p->sim->states_lock);
    const float *first = s_memo_take (msg, base);   /* built at the same time: equal */
    if (!first && msg->n_memo < GC_SIM_MEMO) {
        //  The entry holds its base too: a freed base's address, reused by a
        //  new state, must not name this result.
        if (base)
            gc_sim_state_hold (base);
        gc_sim_state_hold (built);
        msg->memo [msg->n_memo++] = (gc_sim_memo_t) { .base = base, .built = built };
    }
    pthread_mutex_unlock (&p->sim->states_lock);
    p->sim->states_built++;
    if (!first)
        return built;
    gc_sim_state_release (built);
    return first;
}

static void
s_hold (void *ctx, const float *state)
{
    (void) ctx;
    gc_sim_state_hold (state);
}

static void
s_release (void *ctx, const float *state)
{
    (void) ctx;
    gc_sim_state_release (state);
}

void
gc_sim_share_states (gc_sim_t *sim, gc_sim_peer_t *p)
{
    if (sim->opts.no_share)
        return;
    pthread_mutex_lock (&sim->states_lock);
    if (!sim->initial && (sim->initial = gc_sim_state_new (sim->d)))
        memcpy (sim->initial, gc_engine_params (p->engine), sim->d * sizeof *sim->initial);
    pthread_mutex_unlock (&sim->states_lock);
    gc_engine_states_t states = { .ctx = p, .find = s_find, .alloc = s_alloc, .offer = s_offer,
                                  .hold = s_hold, .release = s_release };
    gc_engine_share_states (p->engine, &states, sim->initial);
}
