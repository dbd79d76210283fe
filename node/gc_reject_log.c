#include "gc_reject_log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_engine.h"
#include "gc_hex.h"
#include "gc_log.h"

//  Keyed by (peer, reason), never by the claimed sender: a flood of
//  invented ids is one key (the line shows the last id claimed). More keys
//  than slots (a network of thousands) recycle the least recently logged
//  slot, its pending count logged first.
#define S_SLOTS     256
#define S_ENDPOINTS 1024

typedef struct {
    bool     used;
    uint32_t peer;
    uint8_t  sender [8];            /* the last claimed, for the line */
    bool     has_sender;
    int      reason;
    int64_t  last_line;             /* when this key was last logged */
    uint64_t pending;               /* rejections since then */
} s_slot_t;

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t s_every_ns;
static s_slot_t s_slots [S_SLOTS];
static char *s_endpoints [S_ENDPOINTS];
static uint64_t s_lines;

void
gc_reject_log_enable (double every_s)
{
    pthread_mutex_lock (&s_lock);
    s_every_ns = every_s > 0 ? (int64_t) (every_s * 1e9) : 0;
    memset (s_slots, 0, sizeof s_slots);
    s_lines = 0;
    pthread_mutex_unlock (&s_lock);
}

void
gc_reject_log_set_endpoint (uint32_t peer, const char *endpoint)
{
    if (peer >= S_ENDPOINTS)
        return;
    pthread_mutex_lock (&s_lock);
    free (s_endpoints [peer]);
    s_endpoints [peer] = endpoint && *endpoint ? strdup (endpoint) : NULL;
    pthread_mutex_unlock (&s_lock);
}

//  "peer 3 (id 0f38..., tcp://10.0.0.3:7000)" or "unattributed sender
//  (claims id 0f38...)". Caller holds the lock.
static void
s_describe (const s_slot_t *k, char *out, size_t size)
{
    char hex [17] = "unreadable";
    if (k->has_sender)
        gc_hex_encode (k->sender, 8, hex);
    if (k->peer == UINT32_MAX)
        snprintf (out, size, "an unattributed sender (last claimed id %s)", hex);
    else {
        const char *ep = k->peer < S_ENDPOINTS ? s_endpoints [k->peer] : NULL;
        char detail [160] = "";
        if (k->has_sender || ep)
            snprintf (detail, sizeof detail, " (%s%s%s%s)", k->has_sender ? "id " : "", k->has_sender ? hex : "",
                      k->has_sender && ep ? ", " : "", ep ? ep : "");
        snprintf (out, size, "peer %u%s", k->peer, detail);
    }
}

static void
s_line (s_slot_t *k, int64_t now, bool first)
{
    char who [200];
    s_describe (k, who, sizeof who);
    const char *reason = gc_engine_reason_name (k->reason);
    if (first)
        gc_log_warning ("rejected a message from %s: %s (more of these at most one line per %.0f s)", who,
                        reason, 1e-9 * (double) s_every_ns);
    else
        gc_log_warning ("rejected %llu more message(s) from %s: %s in the last %.0f s",
                        (unsigned long long) k->pending, who, reason, 1e-9 * (double) (now - k->last_line));
    k->pending = 0;
    k->last_line = now;
    s_lines++;
}

void
gc_reject_log_note (uint32_t peer, const uint8_t *sender, int reason, int64_t now)
{
    pthread_mutex_lock (&s_lock);
    if (!s_every_ns) {
        pthread_mutex_unlock (&s_lock);
        return;
    }
    s_slot_t key = { .used = true, .peer = peer, .has_sender = sender != NULL, .reason = reason };
    if (sender)
        memcpy (key.sender, sender, 8);
    s_slot_t *hit = NULL, *oldest = &s_slots [0];
    for (size_t i = 0; i < S_SLOTS && !hit; i++) {
        s_slot_t *k = &s_slots [i];
        if (k->used && k->peer == peer && k->reason == reason)
            hit = k;
        else
        if (!k->used || (oldest->used && k->last_line < oldest->last_line))
            oldest = k;
    }
    if (hit) {
        hit->has_sender = key.has_sender;
        memcpy (hit->sender, key.sender, 8);
        hit->pending++;
        if (now - hit->last_line >= s_every_ns)
            s_line (hit, now, false);
    }
    else {
        if (oldest->used && oldest->pending)
            s_line (oldest, now, false);
        *oldest = key;
        s_line (oldest, now, true);
    }
    pthread_mutex_unlock (&s_lock);
}

void
gc_reject_log_flush (int64_t now)
{
    pthread_mutex_lock (&s_lock);
    for (size_t i = 0; s_every_ns && i < S_SLOTS; i++)
        if (s_slots [i].used && s_slots [i].pending && now - s_slots [i].last_line >= s_every_ns)
            s_line (&s_slots [i], now, false);
    pthread_mutex_unlock (&s_lock);
}

uint64_t
gc_reject_log_lines (void)
{
    pthread_mutex_lock (&s_lock);
    uint64_t n = s_lines;
    pthread_mutex_unlock (&s_lock);
    return n;
}
