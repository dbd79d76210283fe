#include "gc_replay.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint8_t  id [8];
    bool     used;      /* slot holds this id */
    bool     known;     /* some seq was accepted (false after forget) */
    uint64_t last;
    uint64_t seen;      /* bit d set: seq last - d was accepted (bit 0 = last) */
    uint64_t drops;
} s_slot_t;

struct gc_replay_t {
    s_slot_t *slots;
    size_t    cap;      /* power of two, kept at most half full */
    size_t    n;
    unsigned  window;
};

gc_replay_t *
gc_replay_new (unsigned window, gc_err_t *err)
{
    if (window > GC_REPLAY_MAX_WINDOW) {
        gc_err_set (err, GC_E_RANGE, "replay window %u is larger than the maximum %d",
                    window, GC_REPLAY_MAX_WINDOW);
        return NULL;
    }
    gc_replay_t *self = calloc (1, sizeof *self);
    if (self)
        self->slots = calloc (self->cap = 16, sizeof *self->slots);
    if (!self || !self->slots) {
        free (self);
        gc_err_set (err, GC_E_NOMEM, "replay guard: out of memory");
        return NULL;
    }
    self->window = window;
    return self;
}

static size_t
s_home (const uint8_t id [8], size_t mask)
{
    uint64_t x;
    memcpy (&x, id, sizeof x);
    x *= 0x9E3779B97F4A7C15ull;
    return (size_t) (x >> 32) & mask;
}

static s_slot_t *
s_find (const gc_replay_t *self, const uint8_t id [8])
{
    size_t mask = self->cap - 1;
    for (size_t s = s_home (id, mask);; s = (s + 1) & mask) {
        s_slot_t *slot = &self->slots [s];
        if (!slot->used)
            return NULL;
        if (!memcmp (slot->id, id, 8))
            return slot;
    }
}

static s_slot_t *
s_place (s_slot_t *slots, size_t cap, const uint8_t id [8])
{
    size_t mask = cap - 1, s = s_home (id, mask);
    while (slots [s].used)
        s = (s + 1) & mask;
    return &slots [s];
}

static s_slot_t *
s_insert (gc_replay_t *self, const uint8_t id [8])
{
    if (2 * (self->n + 1) > self->cap) {
        size_t cap = 2 * self->cap;
        s_slot_t *slots = calloc (cap, sizeof *slots);
        if (!slots)
            return NULL;
        for (size_t i = 0; i < self->cap; i++)
            if (self->slots [i].used)
                *s_place (slots, cap, self->slots [i].id) = self->slots [i];
        free (self->slots);
        self->slots = slots;
        self->cap = cap;
    }
    s_slot_t *slot = s_place (self->slots, self->cap, id);
    memcpy (slot->id, id, 8);
    slot->used = true;
    self->n++;
    return slot;
}

static int
s_classify (const gc_replay_t *self, const s_slot_t *slot, uint64_t seq)
{
    if (!slot || !slot->known || seq > slot->last)
        return GC_WIRE_OK;
    uint64_t d = slot->last - seq;
    if (d > self->window)
        return GC_WIRE_STALE;
    return (slot->seen >> d) & 1 ? GC_WIRE_REPLAY : GC_WIRE_OK;
}

int
gc_replay_check (gc_replay_t *self, const uint8_t sender [8], uint64_t seq)
{
    s_slot_t *slot = s_find (self, sender);
    int r = s_classify (self, slot, seq);
    if (r != GC_WIRE_OK)
        slot->drops++;
    return r;
}

int
gc_replay_accept (gc_replay_t *self, const uint8_t sender [8], uint64_t seq, gc_err_t *err)
{
    s_slot_t *slot = s_find (self, sender);
    int r = s_classify (self, slot, seq);
    if (r != GC_WIRE_OK)
        return r;
    if (!slot && !(slot = s_insert (self, sender))) {
        gc_err_set (err, GC_E_NOMEM, "replay guard: out of memory");
        return GC_WIRE_INTERNAL;
    }
    if (!slot->known) {
        slot->known = true;
        slot->last = seq;
        slot->seen = 1;
    }
    else
    if (seq > slot->last) {
        uint64_t shift = seq - slot->last;
        slot->seen = shift >= 64 ? 1 : (slot->seen << shift) | 1;
        slot->last = seq;
    }
    else
        slot->seen |= 1ull << (slot->last - seq);
    return GC_WIRE_OK;
}

bool
gc_replay_last (const gc_replay_t *self, const uint8_t sender [8], uint64_t *last)
{
    const s_slot_t *slot = s_find (self, sender);
    if (!slot || !slot->known)
        return false;
    if (last)
        *last = slot->last;
    return true;
}

uint64_t
gc_replay_drops (const gc_replay_t *self, const uint8_t sender [8])
{
    const s_slot_t *slot = s_find (self, sender);
    return slot ? slot->drops : 0;
}

void
gc_replay_forget (gc_replay_t *self, const uint8_t sender [8])
{
    s_slot_t *slot = s_find (self, sender);
    if (slot) {
        slot->known = false;
        slot->last = slot->seen = 0;
    }
}

size_t
gc_replay_size (const gc_replay_t *self)
{
    return self->n;
}

unsigned
gc_replay_window (const gc_replay_t *self)
{
    return self->window;
}

void
gc_replay_destroy (gc_replay_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free ((*self_p)->slots);
    free (*self_p);
    *self_p = NULL;
}
