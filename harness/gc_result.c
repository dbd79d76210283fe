#include "gc_result.h"

#include <stdlib.h>
#include <string.h>

const char *
gc_peer_state_name (gc_peer_state_t state)
{
    static const char *names [] = { "not started", "running", "finished", "killed", "crashed", "stopped" };
    return (size_t) state < sizeof names / sizeof names [0] ? names [state] : "?";
}

void
gc_result_destroy (gc_result_t **self_p)
{
    gc_result_t *self = *self_p;
    if (!self)
        return;
    for (uint32_t i = 0; self->peers && i < self->n_peers; i++) {
        gc_peerstat_destroy (&self->peers [i].stat);
        free (self->peers [i].model_path);
    }
    free (self->peers);
    for (size_t i = 0; i < self->n_fired; i++)
        free (self->fired [i].text);
    free (self->fired);
    for (size_t i = 0; i < self->n_not_fired; i++)
        free (self->not_fired [i]);
    free (self->not_fired);
    free (self->out_dir);
    free (self->gcnode);
    free (self);
    *self_p = NULL;
}

void
gc_result_note (gc_result_t *self, double t, double round, const char *text)
{
    gc_fired_t *grown = realloc (self->fired, (self->n_fired + 1) * sizeof *grown);
    if (!grown)
        return;                         /* a shorter record; the run goes on */
    self->fired = grown;
    grown [self->n_fired] = (gc_fired_t) { .t = t, .round = round, .text = strdup (text) };
    if (grown [self->n_fired].text)
        self->n_fired++;
}

void
gc_result_not_fired (gc_result_t *self, const gc_timeline_t *timeline)
{
    for (size_t e = 0; e < self->scenario->n_events; e++)
        if (!gc_timeline_fired (timeline, e)) {
            char **grown = realloc (self->not_fired, (self->n_not_fired + 1) * sizeof *grown);
            if (!grown)
                break;
            self->not_fired = grown;
            if ((grown [self->n_not_fired] = strdup (self->scenario->events [e].name)))
                self->n_not_fired++;
        }
}
