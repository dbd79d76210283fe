#include "gc_peerstat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_json.h"

//  A metrics line is a few kB; anything far longer is not one.
#define S_LINE_MAX (1u << 20)

gc_peerstat_t *
gc_peerstat_new (const char *path)
{
    gc_peerstat_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->path = strdup (path);
    if (!self->path) {
        free (self);
        return NULL;
    }
    self->accuracy = NAN;
    return self;
}

void
gc_peerstat_destroy (gc_peerstat_t **self_p)
{
    gc_peerstat_t *self = *self_p;
    if (!self)
        return;
    free (self->path);
    free (self->partial);
    free (self->series);
    free (self);
    *self_p = NULL;
}

static gc_reason_t *
s_reason (gc_peerstat_t *self, const char *name)
{
    for (size_t i = 0; i < self->n_reasons; i++)
        if (!strcmp (self->reasons [i].name, name))
            return &self->reasons [i];
    if (self->n_reasons == GC_PEERSTAT_REASONS || strlen (name) >= sizeof self->reasons [0].name)
        return NULL;
    gc_reason_t *r = &self->reasons [self->n_reasons++];
    memset (r, 0, sizeof *r);
    snprintf (r->name, sizeof r->name, "%s", name);
    return r;
}

static uint64_t
s_count (double v)
{
    return isfinite (v) && v > 0 && v < 1.8e19 ? (uint64_t) v : 0;
}

//  {"reason": n, ...}
static void
s_add_reasons (gc_peerstat_t *self, const gc_json_t *obj)
{
    if (!obj || obj->type != GC_JSON_OBJECT)
        return;
    for (const gc_json_t *c = obj->child; c; c = c->next) {
        gc_reason_t *r = c->type == GC_JSON_NUMBER ? s_reason (self, c->key) : NULL;
        if (r)
            r->now += s_count (c->number);
    }
}

static void
s_push_point (gc_peerstat_t *self, gc_point_t p)
{
    if (self->n_series == self->cap_series) {
        size_t cap = self->cap_series ? self->cap_series * 2 : 64;
        gc_point_t *grown = realloc (self->series, cap * sizeof *grown);
        if (!grown)
            return;
        self->series = grown;
        self->cap_series = cap;
    }
    self->series [self->n_series++] = p;
}

bool
gc_peerstat_feed (gc_peerstat_t *self, const char *line, size_t len)
{
    gc_json_t *obj = gc_json_parse (line, len, NULL);
    if (!obj || obj->type != GC_JSON_OBJECT || !gc_json_get (obj, "round")) {
        gc_json_destroy (&obj);
        self->bad_lines++;
        return false;
    }
    self->lines++;
    const char *id = gc_json_str (obj, "id", NULL);
    if (id)
        snprintf (self->id, sizeof self->id, "%s", id);
    self->round = s_count (gc_json_num (obj, "round", 0));
    if (self->await_first_line) {
        self->await_first_line = false;
        if (self->round_before_restart > self->round
        &&  self->round_before_restart - self->round > self->rounds_redone)
            self->rounds_redone = self->round_before_restart - self->round;
    }
    self->t = gc_json_num (obj, "t", self->t);
    self->bytes_sent = s_count (gc_json_num (obj, "bytes_sent", 0));
    self->bytes_recv = s_count (gc_json_num (obj, "bytes_recv", 0));
    //  Rejections are cumulative per process: recount from this line (when
    //  it has them).
    const gc_json_t *by_peer = gc_json_get (obj, "rejections_by_peer");
    const gc_json_t *unattributed = gc_json_get (obj, "rejections_unattributed");
    if (by_peer || unattributed)
        for (size_t i = 0; i < self->n_reasons; i++)
            self->reasons [i].now = 0;
    if (by_peer && by_peer->type == GC_JSON_OBJECT)
        for (const gc_json_t *c = by_peer->child; c; c = c->next)
            s_add_reasons (self, c);
    s_add_reasons (self, unattributed);
    self->n_stale = 0;
    const gc_json_t *stale = gc_json_get (obj, "staleness");
    if (stale && stale->type == GC_JSON_OBJECT)
        for (const gc_json_t *c = stale->child; c && self->n_stale < GC_PEERSTAT_STALE; c = c->next) {
            char *end;
            unsigned long peer = strtoul (c->key, &end, 10);
            if (*end || end == c->key || c->type != GC_JSON_NUMBER || peer > UINT32_MAX
            ||  !(c->number > -1e15 && c->number < 1e15))
                continue;
            self->stale_peer [self->n_stale] = (uint32_t) peer;
            self->stale_lag [self->n_stale++] = (int64_t) c->number;
        }
    const gc_json_t *acc = gc_json_get (obj, "accuracy");
    if (acc && acc->type == GC_JSON_NUMBER && isfinite (acc->number)) {
        self->accuracy = acc->number;
        self->accuracy_round = self->round;
        gc_point_t p = { .round = (double) self->round, .wall_s = self->spawn_wall_s + self->t,
                         .accuracy = acc->number,
                         .bytes_sent = (double) (self->base_bytes_sent + self->bytes_sent) };
        s_push_point (self, p);
    }
    gc_json_destroy (&obj);
    return true;
}

size_t
gc_peerstat_poll (gc_peerstat_t *self)
{
    FILE *f = fopen (self->path, "r");
    if (!f)
        return 0;
    size_t lines = 0;
    if (fseek (f, self->offset, SEEK_SET) == 0) {
        char chunk [65536];
        size_t got;
        while ((got = fread (chunk, 1, sizeof chunk, f)) > 0) {
            self->offset += (long) got;
            size_t start = 0;
            for (size_t i = 0; i < got; i++) {
                if (chunk [i] != '\n')
                    continue;
                if (self->partial_len) {
                    //  Complete the line begun in an earlier read.
                    size_t len = self->partial_len + (i - start);
                    char *line = realloc (self->partial, len + 1);
                    if (line) {
                        memcpy (line + self->partial_len, chunk + start, i - start);
                        self->partial = line;
                        lines += gc_peerstat_feed (self, line, len);
                    }
                    self->partial_len = 0;
                }
                else
                    lines += gc_peerstat_feed (self, chunk + start, i - start);
                start = i + 1;
            }
            if (start < got) {
                size_t len = self->partial_len + (got - start);
                if (len > S_LINE_MAX) {
                    self->partial_len = 0;          /* not a metrics line: skip it */
                    self->bad_lines++;
                    continue;
                }
                char *grown = realloc (self->partial, len + 1);
                if (!grown)
                    continue;
                memcpy (grown + self->partial_len, chunk + start, got - start);
                self->partial = grown;
                self->partial_len = len;
            }
        }
    }
    fclose (f);
    return lines;
}

void
gc_peerstat_restart (gc_peerstat_t *self, double spawn_wall_s)
{
    self->base_bytes_sent += self->bytes_sent;
    self->base_bytes_recv += self->bytes_recv;
    self->bytes_sent = self->bytes_recv = 0;
    for (size_t i = 0; i < self->n_reasons; i++) {
        self->reasons [i].base += self->reasons [i].now;
        self->reasons [i].now = 0;
    }
    //  Half a line of a killed process never completes.
    if (self->partial_len)
        self->bad_lines++;
    self->partial_len = 0;
    self->n_stale = 0;
    self->t = 0;
    self->spawn_wall_s = spawn_wall_s;
    if (self->lines) {
        self->round_before_restart = self->round;
        self->await_first_line = true;
    }
}

uint64_t
gc_peerstat_bytes_sent (const gc_peerstat_t *self)
{
    return self->base_bytes_sent + self->bytes_sent;
}

uint64_t
gc_peerstat_bytes_recv (const gc_peerstat_t *self)
{
    return self->base_bytes_recv + self->bytes_recv;
}

uint64_t
gc_peerstat_rejections (const gc_peerstat_t *self, const char *reason)
{
    for (size_t i = 0; i < self->n_reasons; i++)
        if (!strcmp (self->reasons [i].name, reason))
            return self->reasons [i].base + self->reasons [i].now;
    return 0;
}

uint64_t
gc_peerstat_rejections_total (const gc_peerstat_t *self)
{
    uint64_t total = 0;
    for (size_t i = 0; i < self->n_reasons; i++)
        total += self->reasons [i].base + self->reasons [i].now;
    return total;
}

int64_t
gc_peerstat_staleness (const gc_peerstat_t *self, uint32_t peer)
{
    for (size_t i = 0; i < self->n_stale; i++)
        if (self->stale_peer [i] == peer)
            return self->stale_lag [i];
    return -1;
}
