//  Equivocation: an author that signs two different headers under one seq
//  (docs/PROTOCOL.md section 9) is excluded for the rest of the run.
//
//  Found here: each contact's last accepted headers are kept by seq (as many
//  as the replay window spans); a message the window refuses as a replay or
//  as stale whose header is not the one kept for its seq gets one signature
//  check, and if it is authentic the two headers are the proof. Learned from
//  others: an EVIDENCE message the decoder verified in full (both headers,
//  gc_wire_evidence_verify), whoever forwarded it. Either way the proof is
//  kept, counted and passed on once to the out-neighbours, so a peer that
//  saw one version convicts too.
//
//  No one is framed by a relay: a proof needs two valid signatures of the
//  author over different signed bytes with one seq, which only the author's
//  key can make; an honest peer never signs two headers under one seq
//  (sequence numbers come from a persisted lease, gc_engine_seq_lease).
#include "gc_engine_internal.h"

#include <stdlib.h>

//  As many seqs as the replay window accepts out of order: a second header
//  for a seq older than that is refused as stale without being compared.
#define S_SEEN GC_REPLAY_DEFAULT_WINDOW

struct gc_equiv_seen_t {
    uint64_t seq [S_SEEN];                          /* 0: empty (seqs start at 1) */
    uint8_t  header [S_SEEN][GC_WIRE_HEADER_SIZE];
};

int
gc_equiv_init (gc_engine_t *self, gc_err_t *err)
{
    self->excluded = calloc (self->n_peers ? self->n_peers : 1, sizeof *self->excluded);
    if (!self->excluded)
        return gc_err_set (err, GC_E_NOMEM, "engine: out of memory");
    for (uint32_t i = 0; i < self->n_peers; i++)
        atomic_init (&self->excluded [i], false);
    return 0;
}

void
gc_equiv_fini (gc_engine_t *self)
{
    for (size_t i = 0; self->contacts && i < self->n_contacts; i++) {
        free (self->contacts [i].seen);
        self->contacts [i].seen = NULL;
    }
    free (self->excluded);
    free (self->evidence.proof);
    free (self->evidence.accused);
    self->excluded = NULL;
    self->evidence.proof = NULL;
    self->evidence.accused = NULL;
    pthread_mutex_destroy (&self->evidence.lock);
}

void
gc_equiv_record (gc_engine_t *self, gc_contact_t *c, const uint8_t *header, uint64_t seq)
{
    //  Unsigned messages (skip_crypto) prove nothing: nothing to keep.
    if (self->cfg.skip_crypto)
        return;
    if (!c->seen && !(c->seen = calloc (1, sizeof *c->seen)))
        return;                     /* out of memory: this contact goes unwatched */
    size_t slot = seq % S_SEEN;
    c->seen->seq [slot] = seq;
    memcpy (c->seen->header [slot], header, GC_WIRE_HEADER_SIZE);
}

int
gc_equiv_check (gc_engine_t *self, gc_contact_t *c, const uint8_t *header,
                const gc_msg_header_t *h, uint8_t proof [GC_WIRE_EVIDENCE_SIZE])
{
    if (self->cfg.skip_crypto || !c || !c->seen)
        return 0;
    size_t slot = h->seq % S_SEEN;
    const uint8_t *kept = c->seen->header [slot];
    //  The signed bytes decide: the same statement twice is a replay, even
    //  with other signature bytes.
    if (c->seen->seq [slot] != h->seq || !memcmp (kept, header, GC_WIRE_SIGNED_SIZE))
        return 0;
    gc_err_t err = { 0 };
    int r = gc_wire_verify_header (self->network_id, self->cfg.trust, header, h, &err);
    if (r != GC_WIRE_OK)
        return r;
    return gc_wire_evidence_build (kept, header, proof, &err) == 0 ? 1 : 0;
}

bool
gc_equiv_convict (gc_engine_t *self, uint32_t peer, const uint8_t proof [GC_WIRE_EVIDENCE_SIZE])
{
    if (peer >= self->n_peers || peer == self->cfg.self)
        return false;
    if (atomic_exchange (&self->excluded [peer], true))
        return false;
    pthread_mutex_lock (&self->evidence.lock);
    if (self->evidence.n == self->evidence.cap) {
        size_t cap = self->evidence.cap ? 2 * self->evidence.cap : 4;
        uint8_t (*p) [GC_WIRE_EVIDENCE_SIZE] = realloc (self->evidence.proof, cap * sizeof *p);
        if (p)
            self->evidence.proof = p;
        uint32_t *a = p ? realloc (self->evidence.accused, cap * sizeof *a) : NULL;
        if (a) {
            self->evidence.accused = a;
            self->evidence.cap = cap;
        }
    }
    //  Out of memory, the author is excluded all the same; only the proof
    //  is not kept nor passed on.
    if (self->evidence.n < self->evidence.cap) {
        memcpy (self->evidence.proof [self->evidence.n], proof, GC_WIRE_EVIDENCE_SIZE);
        self->evidence.accused [self->evidence.n++] = peer;
    }
    pthread_mutex_unlock (&self->evidence.lock);
    gc_counter_add (&self->ctr.equivocators, 1);
    //  Out of the mix from now on: the prefilter refuses its messages, so
    //  the replica never syncs again, and no keyframe is asked of it.
    gc_contact_t *c = gc_engine_contact (self, peer);
    if (c && c->in >= 0) {
        gc_replica_t *r = &self->replicas [c->in];
        pthread_mutex_lock (&r->lock);
        r->synced = false;
        pthread_mutex_unlock (&r->lock);
        atomic_store (&r->want_keyframe, false);
    }
    return true;
}

int
gc_equiv_forward (gc_engine_t *self, gc_err_t *err)
{
    if (self->role.ops->silent)
        return 0;
    for (;;) {
        uint8_t proof [GC_WIRE_EVIDENCE_SIZE];
        uint32_t accused = UINT32_MAX;
        pthread_mutex_lock (&self->evidence.lock);
        bool more = self->evidence.sent < self->evidence.n;
        if (more) {
            memcpy (proof, self->evidence.proof [self->evidence.sent], sizeof proof);
            accused = self->evidence.accused [self->evidence.sent++];
        }
        pthread_mutex_unlock (&self->evidence.lock);
        if (!more)
            return 0;
        uint32_t dests [self->n_out ? self->n_out : 1];
        size_t n = 0;
        for (size_t i = 0; i < self->n_out; i++)
            if (self->out_peers [i] != accused)
                dests [n++] = self->out_peers [i];
        if (n == 0)
            continue;
        if (gc_engine_send (self, dests, n, GC_MSG_EVIDENCE, 0, 0, proof, sizeof proof, err))
            return -1;
        gc_counter_add (&self->ctr.evidence_sent, n);
    }
}

bool
gc_engine_excluded (gc_engine_t *self, uint32_t peer)
{
    return peer < self->n_peers && atomic_load (&self->excluded [peer]);
}

bool
gc_engine_evidence (gc_engine_t *self, size_t i, uint8_t out [GC_WIRE_EVIDENCE_SIZE])
{
    pthread_mutex_lock (&self->evidence.lock);
    bool have = i < self->evidence.n;
    if (have)
        memcpy (out, self->evidence.proof [i], GC_WIRE_EVIDENCE_SIZE);
    pthread_mutex_unlock (&self->evidence.lock);
    return have;
}
