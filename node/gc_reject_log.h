/*  gc_reject_log — rejected messages in the log, rate-limited: the first
    rejection of each (peer, reason) is logged at once, the
    following ones as one line with a count at most every `every_s` seconds
    (and by gc_reject_log_flush when nothing new arrives). Every line names
    the reason, the peer index when the rejection is attributed to one of
    ours, the (last) claimed sender id, and the peer's configured endpoint
    where known.

    Off until gc_reject_log_enable (gcnode run turns it on; simulators and
    tests count rejections without logging them). Thread-safe: the network
    thread notes, the trainer thread flushes. */
#ifndef GC_REJECT_LOG_H
#define GC_REJECT_LOG_H

#include <stdbool.h>
#include <stdint.h>

/*  gcnode run's interval: one line per (peer, reason) a minute. */
#define GC_REJECT_LOG_EVERY_S 60.0

/*  Turn logging on (every_s > 0) or off (0); forgets what was noted. */
void gc_reject_log_enable (double every_s);
/*  The endpoint to name for peer (copied; NULL or "" forgets it). */
void gc_reject_log_set_endpoint (uint32_t peer, const char *endpoint);
/*  One rejection: peer is the attributed peer index (UINT32_MAX: none),
    sender the id the message claims (NULL: unreadable), now in ns. */
void gc_reject_log_note (uint32_t peer, const uint8_t *sender, int reason, int64_t now);
/*  Log the counts whose interval is over. */
void gc_reject_log_flush (int64_t now);
/*  Lines written since enable (for tests). */
uint64_t gc_reject_log_lines (void);

#endif
