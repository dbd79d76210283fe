#include "gc_fault.h"

#include <stdio.h>
#include <string.h>

#include "gc_parse.h"

void
gc_fault_set_drop (gc_fault_t *self, double p)
{
    self->drop = p < 0 ? 0 : p > 1 ? 1 : p;
}

void
gc_fault_set_delay (gc_fault_t *self, double delay_ms, double jitter_ms)
{
    self->delay_ms = delay_ms > 0 ? delay_ms : 0;
    self->jitter_ms = jitter_ms > 0 ? jitter_ms : 0;
}

void
gc_fault_set_rate (gc_fault_t *self, double bytes_per_s)
{
    self->rate = bytes_per_s > 0 ? bytes_per_s : 0;
}

bool
gc_fault_route (const gc_fault_t *self, gc_rng_t *rng, int64_t *link_free, double bytes,
                int64_t now, int64_t *due)
{
    if (self->drop > 0 && gc_rng_double (rng) < self->drop)
        return false;
    int64_t t = now;
    if (self->delay_ms > 0 || self->jitter_ms > 0)
        t += (int64_t) ((self->delay_ms + self->jitter_ms * gc_rng_double (rng)) * 1e6);
    if (self->rate > 0) {
        //  the link sends one message after the other at the capped rate
        int64_t start = *link_free > now ? *link_free : now;
        *link_free = start + (int64_t) (bytes / self->rate * 1e9);
        if (*link_free > t)
            t = *link_free;
    }
    *due = t;
    return true;
}

int
gc_fault_control (gc_fault_t *self, const char *request, gc_err_t *err)
{
    char verb [32] = "", arg1 [4096] = "", arg2 [64] = "";
    int n = sscanf (request, "%31s %4095s %63s", verb, arg1, arg2);
    double a = 0, b = 0;
    if (!strcmp (verb, "drop") && n == 2) {
        if (gc_parse_double (arg1, 0, 1, &a, "drop probability", err))
            return -1;
        gc_fault_set_drop (self, a);
        return 0;
    }
    if (!strcmp (verb, "delay") && (n == 2 || n == 3)) {
        if (gc_parse_double (arg1, 0, 3600e3, &a, "delay ms", err)
        ||  (n == 3 && gc_parse_double (arg2, 0, 3600e3, &b, "jitter ms", err)))
            return -1;
        gc_fault_set_delay (self, a, b);
        return 0;
    }
    if (!strcmp (verb, "rate") && n == 2) {
        if (gc_parse_double (arg1, 0, 1e12, &a, "rate bytes/s", err))
            return -1;
        gc_fault_set_rate (self, a);
        return 0;
    }
    return 1;
}

int
gc_fault_format (const gc_fault_t *self, unsigned what, char *buf, size_t size)
{
    if (what & GC_FAULT_DROP)
        return snprintf (buf, size, "drop %g", self->drop);
    if (what & GC_FAULT_DELAY)
        return snprintf (buf, size, "delay %g %g", self->delay_ms, self->jitter_ms);
    if (what & GC_FAULT_RATE)
        return snprintf (buf, size, "rate %.0f", self->rate);
    return snprintf (buf, size, "%s", "");
}

void
gc_fault_describe (const gc_fault_t *self, char *buf, size_t size)
{
    snprintf (buf, size, "drop=%g delay_ms=%g jitter_ms=%g rate=%g", self->drop, self->delay_ms,
              self->jitter_ms, self->rate);
}
