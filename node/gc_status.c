#include "gc_status.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gc_fs.h"
#include "gc_json.h"

int
gc_status_render (const gc_snapshot_t *s, gc_buf_t *out, gc_err_t *err)
{
    const gc_engine_stats_t *e = &s->engine;
    int rc = gc_buf_printf (out, err, "{\"v\":1,\"state\":");
    rc = rc ? rc : gc_json_buf_string (out, s->state, err);
    rc = rc ? rc : gc_buf_printf (out, err, ",\"peer\":%u,\"peer_id\":", s->peer);
    rc = rc ? rc : gc_json_buf_string (out, s->peer_id, err);
    rc = rc ? rc : gc_buf_printf (out, err, ",\"pid\":%ld,\"network\":", s->pid);
    rc = rc ? rc : gc_json_buf_string (out, s->network, err);
    rc = rc ? rc : gc_buf_printf (out, err, ",\"role\":");
    rc = rc ? rc : gc_json_buf_string (out, s->role, err);
    rc = rc ? rc : gc_buf_printf (out, err, ",\"time\":%.3f,\"started\":%.3f,\"round\":%llu,\"rounds\":%llu",
                             s->unix_time, s->started_unix, (unsigned long long) e->round,
                             (unsigned long long) s->rounds_target);
    //  JSON has no NaN or Infinity: a diverged loss is null.
    if (isfinite (e->last_loss))
        rc = rc ? rc : gc_buf_printf (out, err, ",\"loss\":%.6g", e->last_loss);
    else
        rc = rc ? rc : gc_buf_printf (out, err, ",\"loss\":null");
    if (s->has_accuracy && isfinite (s->accuracy))
        rc = rc ? rc : gc_buf_printf (out, err, ",\"accuracy\":%.6f,\"accuracy_round\":%llu", s->accuracy,
                                 (unsigned long long) s->accuracy_round);
    else
        rc = rc ? rc : gc_buf_printf (out, err, ",\"accuracy\":null");
    rc = rc ? rc : gc_buf_printf (out, err, ",\"neighbours\":%zu,\"connected\":%d,\"max_staleness\":%lld"
                             ",\"bytes_sent\":%llu,\"bytes_recv\":%llu,\"msgs_recv\":%llu,\"rejected\":%llu"
                             ",\"http\":", s->n_neighbours, s->connected,
                             (long long) gc_snapshot_max_staleness (s), (unsigned long long) gc_snapshot_bytes_sent (s),
                             (unsigned long long) e->bytes_recv, (unsigned long long) e->msgs_recv,
                             (unsigned long long) e->rejected);
    rc = rc ? rc : gc_json_buf_string (out, s->http, err);
    long in = 0, none = 0, ahead = 0;
    char names [128] = "";
    size_t used = 0;
    for (size_t i = 0; i < s->n_neighbours; i++) {
        if (s->kind [i] == GC_REPLICA_NOT_IN || s->kind [i] == GC_SNAPSHOT_REVOKED)
            continue;
        in++;
        if (s->kind [i] == GC_REPLICA_STATE && s->lag [i] < 0)
            ahead++;
        if (s->kind [i] == GC_REPLICA_NEVER || s->kind [i] == GC_REPLICA_RESYNC) {
            none++;
            //  a long list is cut with "...": the count stays exact
            int k = snprintf (names + used, sizeof names - used, "%s%u", used ? "," : "", s->neighbours [i]);
            if (k < 0 || (size_t) k >= sizeof names - used - 4) {
                snprintf (names + used, sizeof names - used, ",...");
                used = sizeof names - 1;
            }
            else
                used += (size_t) k;
        }
    }
    rc = rc ? rc : gc_buf_printf (out, err, ",\"revoked\":%zu,\"in_neighbours\":%ld,\"no_state\":%ld,\"ahead\":%ld"
                             ",\"no_state_peers\":\"%s\",\"window_s\":%.1f,\"window_rounds\":%llu"
                             ",\"window_rejected\":%llu,\"window_mix_skipped\":%llu,\"window_mix_fallbacks\":%llu",
                             s->revoked, in, none, ahead, names, s->window_s, (unsigned long long) s->window_rounds,
                             (unsigned long long) s->window_rejected,
                             (unsigned long long) s->window_mix_skipped,
                             (unsigned long long) s->window_mix_fallbacks);
    return rc ? rc : gc_buf_printf (out, err, "}\n");
}

void
gc_status_window_update (gc_status_window_t *w, gc_snapshot_t *s)
{
    size_t at = (w->head + w->n) % GC_STATUS_WINDOW_MAX;
    if (w->n == GC_STATUS_WINDOW_MAX)
        w->head = (w->head + 1) % GC_STATUS_WINDOW_MAX;
    else
        w->n++;
    w->t [at] = s->unix_time;
    w->rejected [at] = s->engine.rejected;
    w->skipped [at] = s->engine.mix_skipped;
    w->fallbacks [at] = s->engine.mix_fallbacks;
    //  the baseline: the newest sample a window old, else the oldest kept
    size_t base = 0;
    for (size_t i = 1; i < w->n; i++)
        if (w->t [(w->head + i) % GC_STATUS_WINDOW_MAX] <= s->unix_time - GC_STATUS_WINDOW_S)
            base = i;
    size_t b = (w->head + base) % GC_STATUS_WINDOW_MAX;
    s->window_s = s->unix_time - w->t [b];
    s->window_rounds = w->n - 1 - base;
    s->window_rejected = s->engine.rejected - w->rejected [b];
    s->window_mix_skipped = s->engine.mix_skipped - w->skipped [b];
    s->window_mix_fallbacks = s->engine.mix_fallbacks - w->fallbacks [b];
}

int
gc_status_write (const char *path, const gc_snapshot_t *snap, gc_err_t *err)
{
    gc_buf_t buf;
    gc_buf_init (&buf);
    char tmp [4096];
    if ((size_t) snprintf (tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return gc_err_set (err, GC_E_CONFIG, "node/status_file: path too long");
    if (gc_status_render (snap, &buf, err))
        return -1;
    FILE *f = fopen (tmp, "w");
    int rc = f ? 0 : -1;
    if (f) {
        if (fwrite (buf.data, 1, buf.len, f) != buf.len)
            rc = -1;
        if (fclose (f) != 0)
            rc = -1;
    }
    //  No fsync: the file is rewritten every round and only has to be whole,
    //  not durable.
    if (rc == 0 && rename (tmp, path) != 0)
        rc = -1;
    gc_buf_free (&buf);
    if (rc) {
        int e = errno;
        unlink (tmp);
        return gc_err_set (err, GC_E_IO, "node/status_file: cannot write %s (%s)", path, strerror (e));
    }
    return 0;
}

//  ---------------------------------------------------------------------------
//  a flat JSON object: {"key": number | "string" | true | false | null, ...},
//  read with common/gc_json (hostile text: checked byte by byte there)

//  Store one field; `seen` marks the required ones.
static int
s_field (gc_status_t *st, const char *key, const gc_json_t *v, unsigned *seen, gc_err_t *err)
{
    static const struct { const char *key; int kind; size_t off, size; unsigned bit; } fields [] = {
#define S_STR(k, f, b)   { k, 0, offsetof (gc_status_t, f), sizeof ((gc_status_t *) 0)->f, b }
#define S_LNG(k, f, b)   { k, 1, offsetof (gc_status_t, f), 0, b }
#define S_U64(k, f, b)   { k, 2, offsetof (gc_status_t, f), 0, b }
#define S_DBL(k, f, b)   { k, 3, offsetof (gc_status_t, f), 0, b }
        S_STR ("state", state, 2), S_STR ("peer_id", peer_id, 0), S_STR ("network", network, 0),
        S_STR ("role", role, 0), S_STR ("http", http, 0), S_STR ("no_state_peers", no_state_peers, 0),
        S_LNG ("in_neighbours", in_neighbours, 0), S_LNG ("revoked", revoked, 0), S_LNG ("no_state", no_state, 0), S_LNG ("ahead", ahead, 0),
        S_U64 ("window_rounds", window_rounds, 0), S_U64 ("window_rejected", window_rejected, 0),
        S_U64 ("window_mix_skipped", window_mix_skipped, 0), S_U64 ("window_mix_fallbacks", window_mix_fallbacks, 0), S_DBL ("window_s", window_s, 0),
        S_LNG ("peer", peer, 4), S_LNG ("pid", pid, 0), S_LNG ("neighbours", neighbours, 0),
        S_LNG ("connected", connected, 0), S_LNG ("max_staleness", max_staleness, 0),
        S_U64 ("round", round, 16), S_U64 ("rounds", rounds, 0), S_U64 ("accuracy_round", accuracy_round, 0),
        S_U64 ("bytes_sent", bytes_sent, 0), S_U64 ("bytes_recv", bytes_recv, 0),
        S_U64 ("msgs_recv", msgs_recv, 0), S_U64 ("rejected", rejected, 0),
        S_DBL ("time", time, 8), S_DBL ("started", started, 0), S_DBL ("loss", loss, 0),
#undef S_STR
#undef S_LNG
#undef S_U64
#undef S_DBL
    };
    if (v->type == GC_JSON_NUMBER && !isfinite (v->number))
        return gc_err_set (err, GC_E_FORMAT, "status: %s is not a finite number", key);
    if (v->type == GC_JSON_ARRAY || v->type == GC_JSON_OBJECT)
        return gc_err_set (err, GC_E_FORMAT, "status: bad value for \"%s\" (flat objects only)", key);
    if (!strcmp (key, "v")) {
        if (v->type != GC_JSON_NUMBER || v->number != 1)
            return gc_err_set (err, GC_E_FORMAT, "status: version %g is not 1", v->type == GC_JSON_NUMBER ? v->number : -1);
        *seen |= 1;
        return 0;
    }
    if (!strcmp (key, "accuracy")) {
        if (v->type != GC_JSON_NUMBER && v->type != GC_JSON_NULL)
            return gc_err_set (err, GC_E_FORMAT, "status: accuracy is not a number or null");
        st->has_accuracy = v->type == GC_JSON_NUMBER;
        st->accuracy = st->has_accuracy ? v->number : 0;
        return 0;
    }
    for (size_t i = 0; i < sizeof fields / sizeof fields [0]; i++) {
        if (strcmp (key, fields [i].key))
            continue;
        char *at = (char *) st + fields [i].off;
        bool want_string = fields [i].kind == 0;
        bool null_ok = !strcmp (key, "loss") && v->type == GC_JSON_NULL;     /* a diverged loss */
        if (!null_ok && (want_string != (v->type == GC_JSON_STRING) || (!want_string && v->type != GC_JSON_NUMBER)))
            return gc_err_set (err, GC_E_FORMAT, "status: %s has the wrong type", key);
        if (fields [i].kind == 0)
            snprintf (at, fields [i].size, "%s", v->string);
        else
        if (fields [i].kind == 3)
            *(double *) at = v->type == GC_JSON_NULL ? NAN : v->number;
        else {
            //  Integers: whole numbers within range (doubles hold 2^53 exactly).
            if (v->number != floor (v->number) || v->number < (fields [i].kind == 2 ? 0 : -9.0e15) || v->number > 9.0e15)
                return gc_err_set (err, GC_E_FORMAT, "status: %s is not an integer in range", key);
            if (fields [i].kind == 1)
                *(long *) at = (long) v->number;
            else
                *(uint64_t *) at = (uint64_t) v->number;
        }
        *seen |= fields [i].bit;
        return 0;
    }
    return 0;                           /* unknown keys are for newer readers */
}

int
gc_status_parse (const char *text, size_t len, gc_status_t *out, gc_err_t *err)
{
    memset (out, 0, sizeof *out);
    out->connected = -1;
    out->max_staleness = -1;
    out->in_neighbours = out->no_state = out->ahead = -1;
    if (!text || len > GC_STATUS_FILE_MAX)
        return gc_err_set (err, GC_E_FORMAT, "status: empty or larger than %d bytes", GC_STATUS_FILE_MAX);
    gc_json_t *root = gc_json_parse (text, len, err);
    if (!root)
        return err ? gc_err_prefix (err, "status: ") : -1;
    int rc = root->type == GC_JSON_OBJECT ? 0 : gc_err_set (err, GC_E_FORMAT, "status: not a JSON object");
    unsigned seen = 0;
    //  members in order: a later duplicate key wins
    for (const gc_json_t *m = root->child; m && !rc; m = m->next)
        rc = s_field (out, m->key, m, &seen, err);
    gc_json_destroy (&root);
    if (rc)
        return -1;
    if ((seen & 31) != 31)
        return gc_err_set (err, GC_E_FORMAT, "status: missing one of v, state, peer, time, round");
    return 0;
}

int
gc_status_load (const char *path, gc_status_t *out, gc_err_t *err)
{
    char *text;
    size_t len;
    if (gc_fs_read_file (path, GC_STATUS_FILE_MAX, &text, &len, err))
        return -1;
    int rc = gc_status_parse (text, len, out, err);
    free (text);
    return rc ? gc_err_prefix (err, "%s: ", path) : 0;
}
