#include "gc_notify.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "gc_log.h"
#include "gc_time.h"

#ifdef GC_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

struct gc_notify_t {
    bool     active;            /* NOTIFY_SOCKET is set and we can use it */
    uint64_t watchdog_usec;
    int64_t  last_watchdog, last_status;
};

bool
gc_notify_available (void)
{
#ifdef GC_HAVE_SYSTEMD
    return true;
#else
    return false;
#endif
}

gc_notify_t *
gc_notify_new (void)
{
    gc_notify_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    const char *socket = getenv ("NOTIFY_SOCKET");
#ifdef GC_HAVE_SYSTEMD
    self->active = socket && *socket;
    uint64_t usec = 0;
    if (self->active && sd_watchdog_enabled (0, &usec) > 0)
        self->watchdog_usec = usec;
#else
    if (socket && *socket)
        gc_log_warning ("NOTIFY_SOCKET is set but this gcnode is built without libsystemd: "
                        "no READY=1 or watchdog (use Type=simple, or install libsystemd-dev and rebuild)");
#endif
    return self;
}

void
gc_notify_destroy (gc_notify_t **self_p)
{
    free (*self_p);
    *self_p = NULL;
}

static void
s_send (gc_notify_t *self, const char *text)
{
#ifdef GC_HAVE_SYSTEMD
    if (self && self->active && sd_notify (0, text) < 0)
        gc_log_debug ("sd_notify failed");
#else
    (void) self;
    (void) text;
#endif
}

void
gc_notify_ready (gc_notify_t *self, const char *status)
{
    if (!self || !self->active)
        return;
    char text [512];
    snprintf (text, sizeof text, "READY=1\nSTATUS=%s", status);
    s_send (self, text);
    self->last_status = gc_now_ns ();
    if (self->watchdog_usec) {
        s_send (self, "WATCHDOG=1");
        self->last_watchdog = self->last_status;
    }
}

void
gc_notify_status (gc_notify_t *self, bool force, const char *fmt, ...)
{
    if (!self || !self->active)
        return;
    int64_t now = gc_now_ns ();
    if (!force && now - self->last_status < 1000000000LL)
        return;
    char text [512] = "STATUS=";
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text + 7, sizeof text - 7, fmt, ap);
    va_end (ap);
    s_send (self, text);
    self->last_status = now;
}

void
gc_notify_watchdog (gc_notify_t *self)
{
    if (!self || !self->active || !self->watchdog_usec)
        return;
    int64_t now = gc_now_ns ();
    if (now - self->last_watchdog < (int64_t) (self->watchdog_usec * 1000 / 2))
        return;
    s_send (self, "WATCHDOG=1");
    self->last_watchdog = now;
}

void
gc_notify_stopping (gc_notify_t *self)
{
    if (self && self->active)
        s_send (self, "STOPPING=1\nSTATUS=stopping");
}

uint64_t
gc_notify_watchdog_usec (const gc_notify_t *self)
{
    return self ? self->watchdog_usec : 0;
}
