#include "gc_ctl.h"

#include <czmq.h>
#include <string.h>

struct gc_ctl_t {
    char    *endpoint;
    zsock_t *sock;
    zlist_t *queue;             /* char * commands, oldest first */
    char    *in_flight;
    double   waited_s;          /* polling time spent waiting for the reply */
    double   last_poll_s;
};

gc_ctl_t *
gc_ctl_new (const char *endpoint)
{
    gc_ctl_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->endpoint = strdup (endpoint);
    self->queue = zlist_new ();
    if (!self->endpoint || !self->queue) {
        gc_ctl_destroy (&self);
        return NULL;
    }
    zlist_autofree (self->queue);
    return self;
}

static void
s_drop_socket (gc_ctl_t *self)
{
    zsock_destroy (&self->sock);
    free (self->in_flight);
    self->in_flight = NULL;
    self->waited_s = 0;
}

void
gc_ctl_destroy (gc_ctl_t **self_p)
{
    gc_ctl_t *self = *self_p;
    if (!self)
        return;
    s_drop_socket (self);
    zlist_destroy (&self->queue);
    free (self->endpoint);
    free (self);
    *self_p = NULL;
}

bool
gc_ctl_queue (gc_ctl_t *self, const char *command)
{
    return zlist_append (self->queue, (void *) command) == 0;
}

void
gc_ctl_reset (gc_ctl_t *self)
{
    s_drop_socket (self);
    zlist_purge (self->queue);
}

size_t
gc_ctl_pending (const gc_ctl_t *self)
{
    return zlist_size (self->queue) + (self->in_flight != NULL);
}

void
gc_ctl_poll (gc_ctl_t *self, double now_s, gc_ctl_reply_fn *fn, void *arg)
{
    //  Only time between close polls counts as waiting (see gc_ctl.h).
    if (self->in_flight && self->last_poll_s > 0 && now_s - self->last_poll_s < 1.0)
        self->waited_s += now_s - self->last_poll_s;
    self->last_poll_s = now_s;
    if (self->in_flight && self->sock && (zsock_events (self->sock) & ZMQ_POLLIN)) {
        char *reply = zstr_recv (self->sock);
        if (fn)
            fn (arg, self->in_flight, reply ? reply : "error: empty reply");
        zstr_free (&reply);
        free (self->in_flight);
        self->in_flight = NULL;
        self->waited_s = 0;
    }
    else
    if (self->in_flight && self->waited_s > GC_CTL_TIMEOUT_S) {
        if (fn)
            fn (arg, self->in_flight, "error: no reply (gave up)");
        s_drop_socket (self);       /* a REQ socket cannot send again before a reply */
    }
    if (self->in_flight || zlist_size (self->queue) == 0)
        return;
    if (!self->sock) {
        self->sock = zsock_new (ZMQ_REQ);
        if (!self->sock)
            return;
        zsock_set_linger (self->sock, 0);
        zsock_set_sndtimeo (self->sock, 0);
        if (zsock_connect (self->sock, "%s", self->endpoint)) {
            if (fn)
                fn (arg, (const char *) zlist_first (self->queue), "error: cannot connect");
            zsock_destroy (&self->sock);
            free (zlist_pop (self->queue));
            return;
        }
    }
    char *command = (char *) zlist_pop (self->queue);
    if (!command)
        return;
    //  Before the peer has bound, the message waits in the socket's queue.
    zsock_set_sndtimeo (self->sock, 100);
    if (zstr_send (self->sock, command)) {
        //  Not even queued: try again at the next poll.
        zlist_push (self->queue, command);
        free (command);
        return;
    }
    self->in_flight = command;
    self->waited_s = 0;
}
