/*  gc_notify — the systemd notification protocol (sd_notify): READY=1 once
    the peer's sockets are bound, STATUS= lines, WATCHDOG=1 keep-alives when
    the unit sets WatchdogSec, STOPPING=1 on the way out.

    Keep-alives are sent from the trainer thread, at the end of rounds (at
    most every half watchdog interval): a peer whose round loop hangs stops
    sending them and systemd restarts it. A round is bounded by
    gossip/timeout_ms plus the local training steps, so WatchdogSec must be
    well above that (and above the 10 s startup wait for neighbours).

    Does nothing when NOTIFY_SOCKET is unset (not started by systemd, or
    Type=simple). Built without libsystemd, it logs once that it cannot
    notify if NOTIFY_SOCKET is set. */
#ifndef GC_NOTIFY_H
#define GC_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

typedef struct gc_notify_t gc_notify_t;

bool         gc_notify_available (void);
gc_notify_t *gc_notify_new (void);
void         gc_notify_destroy (gc_notify_t **self_p);
/*  READY=1 with a STATUS= line. */
void         gc_notify_ready (gc_notify_t *self, const char *status);
/*  STATUS=..., at most once a second unless force. */
void         gc_notify_status (gc_notify_t *self, bool force, const char *fmt, ...)
                __attribute__ ((format (printf, 3, 4)));
/*  WATCHDOG=1 if the watchdog is on and half its interval has passed. */
void         gc_notify_watchdog (gc_notify_t *self);
void         gc_notify_stopping (gc_notify_t *self);
/*  Watchdog interval in microseconds (0: off). */
uint64_t     gc_notify_watchdog_usec (const gc_notify_t *self);

#endif
