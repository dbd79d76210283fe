/*  gc_replay — the per-sender replay guard.

    For each sender it remembers the highest accepted sequence number `last`
    and which of the `window` numbers below it were accepted too. A message is
    fresh when seq > last, or when seq is within the window below last and not
    yet accepted (reordering on the way). Anything else is dropped and counted:
    seq already accepted -> GC_WIRE_REPLAY; seq more than `window` below last
    -> GC_WIRE_STALE. Window 0 means strictly increasing sequence numbers.

    Checking is separate from accepting: the decoder checks before the
    (expensive) signature verification and accepts only after the signature
    and the payload digest are good, so forged messages never move a window.
    Memory: one entry per sender ever accepted, and only authenticated
    messages create entries, so the trust store bounds it. */
#ifndef GC_REPLAY_H
#define GC_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"
#include "gc_wire_reason.h"

#define GC_REPLAY_MAX_WINDOW     63
#define GC_REPLAY_DEFAULT_WINDOW 32

typedef struct gc_replay_t gc_replay_t;

gc_replay_t *gc_replay_new (unsigned window, gc_err_t *err);

/*  GC_WIRE_OK, GC_WIRE_REPLAY or GC_WIRE_STALE; a rejection is counted
    against the sender (the claimed sender: this runs before verification). */
int  gc_replay_check (gc_replay_t *self, const uint8_t sender [8], uint64_t seq);
/*  Record seq as accepted. GC_WIRE_OK, GC_WIRE_REPLAY / GC_WIRE_STALE (nothing
    changed), or GC_WIRE_INTERNAL when out of memory (err says so). */
int  gc_replay_accept (gc_replay_t *self, const uint8_t sender [8], uint64_t seq, gc_err_t *err);

/*  The highest accepted seq of sender; false when none was accepted yet. */
bool     gc_replay_last (const gc_replay_t *self, const uint8_t sender [8], uint64_t *last);
/*  Messages from sender rejected as replay or stale. */
uint64_t gc_replay_drops (const gc_replay_t *self, const uint8_t sender [8]);
/*  Start over for sender (e.g. an operator reset after its key was
    re-issued); its drop count is kept. */
void     gc_replay_forget (gc_replay_t *self, const uint8_t sender [8]);
size_t   gc_replay_size (const gc_replay_t *self);
unsigned gc_replay_window (const gc_replay_t *self);

void gc_replay_destroy (gc_replay_t **self_p);

#endif
