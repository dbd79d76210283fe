/*  gc_ctl — gcnet's client of one peer's control channel (node/control: a
    ZeroMQ REP socket; one text frame each way, replies start with "ok" or
    "error:").

    Never blocks: commands are queued and sent one at a time from
    gc_ctl_poll, which the run loop calls often. A peer that is frozen holds
    its request until it runs again (the runner does not poll a stopped
    peer, so the wait does not count against it); a request unanswered for
    GC_CTL_TIMEOUT_S of polling is given up, and the socket recreated. */
#ifndef GC_CTL_H
#define GC_CTL_H

#include <stdbool.h>
#include <stddef.h>

#define GC_CTL_TIMEOUT_S 20.0

typedef struct gc_ctl_t gc_ctl_t;

/*  Called once per request with its reply (or "error: no reply" when given
    up). */
typedef void (gc_ctl_reply_fn) (void *arg, const char *command, const char *reply);

gc_ctl_t *gc_ctl_new (const char *endpoint);
void      gc_ctl_destroy (gc_ctl_t **self_p);
/*  Queue a command (copied); false when out of memory. */
bool      gc_ctl_queue (gc_ctl_t *self, const char *command);
/*  Send the next command if none is in flight; hand replies to fn. */
void      gc_ctl_poll (gc_ctl_t *self, double now_s, gc_ctl_reply_fn *fn, void *arg);
/*  The peer process was replaced: forget the socket, the request in flight
    and the queue (the runner queues the state the new process needs). */
void      gc_ctl_reset (gc_ctl_t *self);
/*  Commands queued or in flight. */
size_t    gc_ctl_pending (const gc_ctl_t *self);

#endif
