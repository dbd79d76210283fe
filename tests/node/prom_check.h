/*  prom_check — a strict reader of the Prometheus text exposition format
    (0.0.4) for the tests, stricter than Prometheus where gcnode promises
    more: every sample's family has # HELP and # TYPE before its samples,
    a family's samples are contiguous, no series twice, counters end in
    _total and are not negative. */
#ifndef PROM_CHECK_H
#define PROM_CHECK_H

#include <stddef.h>

/*  0 when text follows the rules; else -1 with the first problem (and its
    line number) in msg. */
int    prom_check (const char *text, char *msg, size_t size);
/*  The value of the sample written exactly as `series` (name{labels} as it
    appears), or NAN when there is none. */
double prom_value (const char *text, const char *series);

#endif
