/*  gc_fault — the fault layer of a peer's sends: the timeline's drop, delay,
    jitter and rate (docs/SCENARIOS.md), as one pure function of the layer's
    settings, the link's state, the message's size and the time. gc_zmq
    holds a message back until its due time; gcsim schedules its arrival
    then. Both drive the same draws in the same order, so a scenario means
    the same on either.

    The control verbs that set the layer (node/control, gcnet's timeline)
    are parsed and written here too:
        drop P              each message to each destination is dropped with probability P
        delay MS [JITTER]   held back MS plus uniform jitter in [0, JITTER) ms
        rate B/S            each link carries at most B/S bytes per second (0: no cap) */
#ifndef GC_FAULT_H
#define GC_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"
#include "gc_rng.h"

typedef struct {
    double drop;                /* probability, [0, 1] */
    double delay_ms, jitter_ms; /* >= 0 */
    double rate;                /* bytes/s per link; 0: no cap */
} gc_fault_t;

//  Which settings a verb names (gc_fault_format).
enum { GC_FAULT_DROP = 1, GC_FAULT_DELAY = 2, GC_FAULT_RATE = 4 };

/*  Setters clamp into range (a negative delay is none). */
void gc_fault_set_drop (gc_fault_t *self, double p);
void gc_fault_set_delay (gc_fault_t *self, double delay_ms, double jitter_ms);
void gc_fault_set_rate (gc_fault_t *self, double bytes_per_s);

/*  One message of `bytes` to one destination, sent at `now` (ns): false when
    the layer drops it; else true with *due (>= now), when the link may carry
    it on. link_free is the link's rate state (0 at first): when it has sent
    what it holds. Draws from rng: the drop (when drop > 0), then the jitter
    (when delay or jitter > 0). */
bool gc_fault_route (const gc_fault_t *self, gc_rng_t *rng, int64_t *link_free, double bytes,
                     int64_t now, int64_t *due);

/*  A control request: 0 when it was a fault verb and is applied; 1 when it
    is not one (another verb, or the wrong number of words: the caller goes
    on); -1 when a fault verb's argument is out of range (err). */
int  gc_fault_control (gc_fault_t *self, const char *request, gc_err_t *err);

/*  The verbs that set what `what` names (GC_FAULT_* bits) to self's values,
    for gc_fault_control: one verb per call, the lowest bit set. Returns the
    length written (as snprintf). */
int  gc_fault_format (const gc_fault_t *self, unsigned what, char *buf, size_t size);

/*  "drop=0.2 delay_ms=0 jitter_ms=0 rate=0" */
void gc_fault_describe (const gc_fault_t *self, char *buf, size_t size);

#endif
