#include "gc_zap.h"

#include <czmq.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define S_ENDPOINT "inproc://zeromq.zap.01"

struct gc_zap_t {
    gc_zap_key_t    *keys;
    size_t           n_keys;
    zactor_t        *actor;
    atomic_int       bound;         /* set by the actor before it signals: 1 ok, -1 failed */
    pthread_mutex_t  lock;          /* guards stats */
    gc_zap_stats_t   stats;
};

static const gc_zap_key_t *
s_lookup (const gc_zap_t *self, const uint8_t key [32])
{
    for (size_t i = 0; i < self->n_keys; i++)
        if (!memcmp (self->keys [i].key, key, 32))
            return &self->keys [i];
    return NULL;
}

static bool
s_frame_is (zframe_t *f, const char *text)
{
    size_t len = strlen (text);
    return f && zframe_size (f) == len && !memcmp (zframe_data (f), text, len);
}

//  Decide on one request: "200" with the key as User-Id, or "400".
//  frames: version, request id, domain, address, routing id, mechanism,
//  credentials (for CURVE: the client's 32-byte public key).
static void
s_answer (gc_zap_t *self, zsock_t *handler)
{
    zmsg_t *req = zmsg_recv (handler);
    if (!req)
        return;
    zframe_t *version = zmsg_first (req), *request_id = zmsg_next (req);
    zmsg_next (req);                                    /* domain: ours are all "gcnode" */
    zframe_t *address = zmsg_next (req);
    zmsg_next (req);                                    /* the client's routing id */
    zframe_t *mechanism = zmsg_next (req), *key = zmsg_next (req);
    const char *code = "400", *text = "not a neighbour's key";
    char user [GC_ZAP_KEY_TXT] = "";
    pthread_mutex_lock (&self->lock);
    if (!s_frame_is (version, "1.0") || !s_frame_is (mechanism, "CURVE") || !key || zframe_size (key) != 32) {
        self->stats.malformed++;
        code = "500", text = "not a ZAP 1.0 CURVE request";
    }
    else {
        const gc_zap_key_t *k = s_lookup (self, zframe_data (key));
        zmq_z85_encode (user, zframe_data (key), 32);
        if (k && k->allowed) {
            self->stats.admitted++;
            code = "200", text = "OK";
        }
        else {
            self->stats.refused++;
            size_t alen = address ? zframe_size (address) : 0;
            if (alen >= sizeof self->stats.last_address)
                alen = sizeof self->stats.last_address - 1;
            memcpy (self->stats.last_address, alen ? zframe_data (address) : (byte *) "", alen);
            self->stats.last_address [alen] = 0;
            memcpy (self->stats.last_key, user, sizeof user);
            self->stats.last_peer = k ? k->peer : GC_ZAP_NO_PEER;
            user [0] = 0;
        }
    }
    pthread_mutex_unlock (&self->lock);
    zmsg_t *rep = zmsg_new ();
    zmsg_addstr (rep, "1.0");
    zmsg_addmem (rep, request_id ? zframe_data (request_id) : NULL, request_id ? zframe_size (request_id) : 0);
    zmsg_addstr (rep, code);
    zmsg_addstr (rep, text);
    zmsg_addstr (rep, user);
    zmsg_addmem (rep, "", 0);                           /* no metadata */
    zmsg_send (&rep, handler);
    zmsg_destroy (&req);
}

static void
s_actor (zsock_t *pipe, void *args)
{
    gc_zap_t *self = args;
    zsock_t *handler = zsock_new (ZMQ_REP);
    bool ok = handler && zsock_bind (handler, S_ENDPOINT) == 0;
    atomic_store (&self->bound, ok ? 1 : -1);
    zsock_signal (pipe, 0);
    zpoller_t *poller = ok ? zpoller_new (pipe, handler, NULL) : NULL;
    while (poller) {
        void *which = zpoller_wait (poller, -1);
        if (which == handler)
            s_answer (self, handler);
        else {
            //  $TERM from zactor_destroy, or the context ending
            char *cmd = which == pipe ? zstr_recv (pipe) : NULL;
            bool term = !cmd || !strcmp (cmd, "$TERM");
            zstr_free (&cmd);
            if (term)
                break;
        }
    }
    zpoller_destroy (&poller);
    //  An inproc unbind is synchronous, a close is not: the endpoint is
    //  free for the next gc_zap_new as soon as this actor has ended.
    if (ok)
        zsock_unbind (handler, S_ENDPOINT);
    zsock_destroy (&handler);
}

gc_zap_t *
gc_zap_new (const gc_zap_key_t *keys, size_t n_keys, gc_err_t *err)
{
    gc_zap_t *self = calloc (1, sizeof *self);
    if (!self || (n_keys && !(self->keys = calloc (n_keys, sizeof *keys)))) {
        free (self);
        gc_err_set (err, GC_E_NOMEM, "CURVE: out of memory");
        return NULL;
    }
    if (n_keys)
        memcpy (self->keys, keys, n_keys * sizeof *keys);
    self->n_keys = n_keys;
    self->stats.last_peer = GC_ZAP_NO_PEER;
    pthread_mutex_init (&self->lock, NULL);
    self->actor = zactor_new (s_actor, self);
    if (!self->actor || atomic_load (&self->bound) != 1) {
        gc_zap_destroy (&self);
        gc_err_set (err, GC_E_CONFIG, "CURVE: another peer of this process has CURVE on, and a process "
                    "has one ZAP handler: one peer per process, or node/curve = 0 on loopback");
    }
    return self;
}

void
gc_zap_stats (gc_zap_t *self, gc_zap_stats_t *out)
{
    pthread_mutex_lock (&self->lock);
    *out = self->stats;
    pthread_mutex_unlock (&self->lock);
}

void
gc_zap_destroy (gc_zap_t **self_p)
{
    gc_zap_t *self = *self_p;
    if (!self)
        return;
    zactor_destroy (&self->actor);
    pthread_mutex_destroy (&self->lock);
    free (self->keys);
    free (self);
    *self_p = NULL;
}
