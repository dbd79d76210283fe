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
//  Passed on (gossip/witness): an equivocator that sends each version to a
//  disjoint set of neighbours is seen by no single neighbour. So each peer
//  passes the headers it accepted in a round (self-authenticating, 192
//  bytes) to its out-neighbours as one WITNESS; a receiver compares each
//  with the header it got from that author directly, or with one another
//  neighbour passed on, under the same seq. Passed-on headers are kept
//  unverified: only a conflict costs signature checks (both headers), and
//  one that turns out forged counts against whoever passed it on.
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
    uint32_t from [S_SEEN];                         /* witnessed: who passed it on */
};

int
gc_equiv_init (gc_engine_t *self, gc_err_t *err)
{
    self->excluded = calloc (self->n_peers ? self->n_peers : 1, sizeof *self->excluded);
    if (!self->excluded)
        return gc_err_set (err, GC_E_NOMEM, "engine: out of memory");
    for (uint32_t i = 0; i < self->n_peers; i++)
        atomic_init (&self->excluded [i], false);
    if (self->cfg.witness && !self->cfg.skip_crypto
    &&  !(self->witness.by_author = calloc (self->n_peers ? self->n_peers : 1, sizeof *self->witness.by_author)))
        return gc_err_set (err, GC_E_NOMEM, "engine: out of memory");
    return 0;
}

void
gc_equiv_fini (gc_engine_t *self)
{
    for (size_t i = 0; self->contacts && i < self->n_contacts; i++) {
        free (self->contacts [i].seen);
        self->contacts [i].seen = NULL;
    }
    for (uint32_t i = 0; self->witness.by_author && i < self->n_peers; i++)
        free (self->witness.by_author [i]);
    free (self->witness.by_author);
    self->witness.by_author = NULL;
    pthread_mutex_destroy (&self->witness.lock);
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

//  ---------------------------------------------------------------------------
//  gossip/witness

void
gc_equiv_witness_note (gc_engine_t *self, const uint8_t *header)
{
    if (!self->witness.by_author)
        return;
    pthread_mutex_lock (&self->witness.lock);
    //  More than a round's worth (a peer with over 64 in-neighbours, or a
    //  burst of keyframes) waits for no one: the rest goes unwitnessed.
    if (self->witness.n < GC_WIRE_WITNESS_MAX)
        memcpy (self->witness.header [self->witness.n++], header, GC_WIRE_HEADER_SIZE);
    pthread_mutex_unlock (&self->witness.lock);
}

int
gc_equiv_witness_send (gc_engine_t *self, gc_err_t *err)
{
    if (!self->witness.by_author || self->role.ops->silent || self->n_out == 0)
        return 0;
    uint8_t payload [GC_WIRE_WITNESS_MAX * GC_WIRE_HEADER_SIZE];
    pthread_mutex_lock (&self->witness.lock);
    size_t n = self->witness.n;
    memcpy (payload, self->witness.header, n * GC_WIRE_HEADER_SIZE);
    self->witness.n = 0;
    pthread_mutex_unlock (&self->witness.lock);
    if (n == 0)
        return 0;
    if (gc_engine_send (self, self->out_peers, self->n_out, GC_MSG_WITNESS, 0, 0, payload,
                        n * GC_WIRE_HEADER_SIZE, err))
        return -1;
    gc_counter_add (&self->ctr.witness_sent, self->n_out);
    return 0;
}

static bool
s_authentic (gc_engine_t *self, const uint8_t *header, const gc_msg_header_t *h)
{
    gc_err_t err = { 0 };
    gc_counter_add (&self->ctr.verifies, 1);
    return gc_wire_verify_header (self->network_id, self->cfg.trust, header, h, &err) == GC_WIRE_OK;
}

//  Two authentic headers of `author` under one seq: the proof.
static void
s_convict (gc_engine_t *self, uint32_t author, const uint8_t *a, const uint8_t *b)
{
    uint8_t proof [GC_WIRE_EVIDENCE_SIZE];
    gc_err_t err = { 0 };
    if (gc_wire_evidence_build (a, b, proof, &err) == 0) {
        gc_counter_add (&self->ctr.evidence_found, 1);
        gc_equiv_convict (self, author, proof);
    }
}

//  One passed-on header of `author` (parsed as h) from contact `from`.
//  GC_WIRE_BAD_EVIDENCE when it is forged (from's fault).
static int
s_witnessed (gc_engine_t *self, uint32_t from, uint32_t author, const uint8_t *header,
             const gc_msg_header_t *h, int64_t now)
{
    size_t slot = h->seq % S_SEEN;
    //  What the author sent us itself (verified when it was accepted)
    gc_contact_t *direct = gc_engine_contact (self, author);
    if (direct && direct->seen && direct->seen->seq [slot] == h->seq) {
        const uint8_t *kept = direct->seen->header [slot];
        if (!memcmp (kept, header, GC_WIRE_SIGNED_SIZE))
            return GC_WIRE_OK;
        if (!s_authentic (self, header, h))
            return GC_WIRE_BAD_EVIDENCE;
        s_convict (self, author, kept, header);
        return GC_WIRE_OK;
    }
    //  What other neighbours passed on (unverified until a conflict)
    struct gc_equiv_seen_t *w = self->witness.by_author [author];
    if (!w && !(w = self->witness.by_author [author] = calloc (1, sizeof *w)))
        return GC_WIRE_OK;              /* out of memory: unwatched */
    if (w->seq [slot] != h->seq) {
        if (w->seq [slot] < h->seq) {
            w->seq [slot] = h->seq;
            memcpy (w->header [slot], header, GC_WIRE_HEADER_SIZE);
            w->from [slot] = from;
        }
        return GC_WIRE_OK;
    }
    if (!memcmp (w->header [slot], header, GC_WIRE_SIGNED_SIZE))
        return GC_WIRE_OK;
    if (!s_authentic (self, header, h))
        return GC_WIRE_BAD_EVIDENCE;
    gc_msg_header_t kh;
    gc_err_t err = { 0 };
    if (gc_wire_parse (w->header [slot], GC_WIRE_HEADER_SIZE, 0, UINT32_MAX, &kh, &err) == GC_WIRE_OK
    &&  s_authentic (self, w->header [slot], &kh)) {
        s_convict (self, author, w->header [slot], header);
        return GC_WIRE_OK;
    }
    //  The kept one was the forgery: its forwarder's fault (and towards
    //  muting it, as a forgery of its own message would be); keep this one.
    gc_engine_reject (self, gc_engine_contact (self, w->from [slot]), GC_WIRE_BAD_EVIDENCE, now);
    memcpy (w->header [slot], header, GC_WIRE_HEADER_SIZE);
    w->from [slot] = from;
    return GC_WIRE_OK;
}

int
gc_equiv_on_witness (gc_engine_t *self, gc_contact_t *c, const uint8_t *payload, size_t len,
                     int64_t now)
{
    if (!self->witness.by_author)
        return GC_WIRE_OK;              /* witness off here: nothing to compare with */
    for (size_t off = 0; off + GC_WIRE_HEADER_SIZE <= len; off += GC_WIRE_HEADER_SIZE) {
        const uint8_t *header = payload + off;
        gc_msg_header_t h;
        gc_err_t err = { 0 };
        if (gc_wire_parse (header, GC_WIRE_HEADER_SIZE, 0, UINT32_MAX, &h, &err) != GC_WIRE_OK
        ||  (h.type != GC_MSG_DELTA && h.type != GC_MSG_KEYFRAME))
            return GC_WIRE_BAD_EVIDENCE;
        uint32_t author = gc_engine_peer_of (self, h.sender);
        if (author == UINT32_MAX || author == self->cfg.self || author == c->peer
        ||  gc_engine_excluded (self, author))
            continue;                   /* nobody we compare, or already out */
        if (s_witnessed (self, c->peer, author, header, &h, now) != GC_WIRE_OK)
            return GC_WIRE_BAD_EVIDENCE;
    }
    return GC_WIRE_OK;
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
