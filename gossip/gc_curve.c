#include "gc_curve.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gc_fs.h"
#include "gc_mem.h"
#include "gc_zap.h"

#define S_FILE_MAX  16384           /* a certificate is a few hundred bytes */
#define S_MAX_PEERS 4096

typedef struct {
    uint32_t peer;
    bool     allowed;               /* false: revoked, known only to name it */
    char     key [GC_CURVE_KEY_TXT];
} s_peer_key_t;

struct gc_curve_t {
    zcert_t       *own;
    s_peer_key_t  *peers;
    size_t         n_peers;
    gc_zap_t      *zap;
    bool           inbox;
    atomic_uint_fast64_t failed_auth, failed_protocol, failed_other, succeeded;
    pthread_mutex_t lock;           /* guards failed_address */
    char           failed_address [64];
};

bool
gc_curve_available (void)
{
    return zsys_has_curve ();
}

//  A Z85 key: 40 characters that decode.
static bool
s_key_ok (const char *txt, uint8_t raw [32])
{
    return txt && strlen (txt) == 40 && zmq_z85_decode (raw, txt) != NULL;
}

//  Write a certificate through a fresh temporary file in the same directory
//  (created 0600 by mkstemp), then set the final mode, fsync and rename, so
//  a reader sees the old file or the complete new one.
static int
s_save (zcert_t *cert, const char *path, bool secret, gc_err_t *err)
{
    char tmp [4096];
    if ((size_t) snprintf (tmp, sizeof tmp, "%s.XXXXXX", path) >= sizeof tmp)
        return gc_err_set (err, GC_E_IO, "%s: path too long", path);
    int fd = mkstemp (tmp);
    if (fd < 0)
        return gc_err_set (err, GC_E_IO, "%s: cannot create (%s)", path, strerror (errno));
    close (fd);
    int rc = secret ? zcert_save_secret (cert, tmp) : zcert_save_public (cert, tmp);
    if (rc == 0 && chmod (tmp, secret ? 0600 : 0644) != 0)
        rc = -1;
    if (rc == 0 && (fd = open (tmp, O_RDONLY)) >= 0) {
        rc = fsync (fd);
        close (fd);
    }
    if (rc == 0)
        rc = rename (tmp, path);
    if (rc != 0) {
        int e = errno;
        unlink (tmp);
        return gc_err_set (err, GC_E_IO, "%s: cannot write (%s)", path, strerror (e));
    }
    return 0;
}

int
gc_curve_keygen (const char *path, const char *meta_id, gc_err_t *err)
{
    if (!gc_curve_available ())
        return gc_err_set (err, GC_E_USAGE, "CURVE: this libzmq is built without CURVE support");
    char pub [4096];
    if ((size_t) snprintf (pub, sizeof pub, "%s.pub", path) >= sizeof pub)
        return gc_err_set (err, GC_E_IO, "%s: path too long", path);
    zcert_t *cert = zcert_new ();
    if (!cert)
        return gc_err_set (err, GC_E_CRYPTO, "CURVE: cannot generate a key pair");
    if (meta_id)
        zcert_set_meta (cert, "peer-id", "%s", meta_id);
    //  Secret first: a .pub without its secret would be a key nobody has.
    int rc = s_save (cert, path, true, err);
    if (rc == 0)
        rc = s_save (cert, pub, false, err);
    zcert_destroy (&cert);
    return rc;
}

//  The curve/public-key and curve/secret-key values of a certificate (the
//  zcert text: ZPL sections "metadata" and "curve", 4-space indented
//  `name = "value"` lines, # comment lines). Read here rather than by zconfig so
//  that a wrong file gives one clear error and no parser noise.
static void
s_cert_values (char *text, char pub [64], char sec [64])
{
    bool in_curve = false;
    pub [0] = sec [0] = 0;
    for (char *line = strtok (text, "\n"); line; line = strtok (NULL, "\n")) {
        //  '#' starts a comment only at the start of a line: Z85 keys use it
        if (line [strspn (line, " \t")] == '#')
            continue;
        if (*line != ' ' && *line != '\t') {
            size_t len = strcspn (line, " \t\r");
            in_curve = len == 5 && !strncmp (line, "curve", 5);
            continue;
        }
        if (!in_curve)
            continue;
        char name [32], value [64];
        if (sscanf (line, " %31[a-z-] = \"%63[^\"]\"", name, value) != 2
        &&  sscanf (line, " %31[a-z-] = %63s", name, value) != 2)
            continue;
        if (!strcmp (name, "public-key"))
            snprintf (pub, 64, "%s", value);
        else
        if (!strcmp (name, "secret-key"))
            snprintf (sec, 64, "%s", value);
    }
}

//  Read a certificate: its public key as text and, with secret, the secret
//  key (checked against the public one) as 32 bytes.
static int
s_read (const char *path, bool secret, char pub_out [GC_CURVE_KEY_TXT], uint8_t sec_out [32],
        gc_err_t *err)
{
    struct stat st;
    if (stat (path, &st) != 0)
        return gc_err_set (err, GC_E_IO, "%s: cannot open (%s)", path, strerror (errno));
    char *text;
    size_t len;
    if (gc_fs_read_file (path, S_FILE_MAX, &text, &len, err))
        return -1;
    if (memchr (text, 0, len) || strstr (text, "-----BEGIN")) {
        gc_wipe (text, len);            /* a PEM private key, perhaps */
        free (text);
        return gc_err_set (err, GC_E_FORMAT, "%s: not a CURVE certificate (a PEM key? CURVE keys are "
                           "NAME.curve and NAME.curve.pub)", path);
    }
    char pub_txt [64], sec_txt [64];
    s_cert_values (text, pub_txt, sec_txt);
    uint8_t raw [32], sec [32];
    int rc = 0;
    if (!s_key_ok (pub_txt, raw))
        rc = gc_err_set (err, GC_E_FORMAT, "%s: not a CURVE certificate (no valid curve/public-key)", path);
    else
    if (secret && !s_key_ok (sec_txt, sec))
        rc = gc_err_set (err, GC_E_FORMAT, "%s: no valid curve/secret-key (is this the .pub file?)", path);
    else
    if (secret && (st.st_mode & 077))
        rc = gc_err_set (err, GC_E_PERMS, "%s: secret CURVE key is accessible by group or others "
                         "(mode %03o; chmod 600 it)", path, (unsigned) (st.st_mode & 0777));
    else
    if (secret) {
        //  A secret whose public half is not the one recorded next to it
        //  would make every neighbour refuse us with a confusing error.
        char derived [GC_CURVE_KEY_TXT];
        if (zmq_curve_public (derived, sec_txt) != 0 || strcmp (derived, pub_txt))
            rc = gc_err_set (err, GC_E_FORMAT, "%s: the secret key does not match the public key", path);
        else
        if (sec_out)
            memcpy (sec_out, sec, 32);
    }
    if (rc == 0)
        snprintf (pub_out, GC_CURVE_KEY_TXT, "%s", pub_txt);
    gc_wipe (sec, sizeof sec);
    gc_wipe (sec_txt, sizeof sec_txt);
    gc_wipe (text, len);
    free (text);
    return rc;
}

int
gc_curve_read_key (const char *path, bool secret, char out [GC_CURVE_KEY_TXT], gc_err_t *err)
{
    return s_read (path, secret, out, NULL, err);
}

gc_curve_t *
gc_curve_new (const char *own_secret, gc_err_t *err)
{
    if (!gc_curve_available ()) {
        gc_err_set (err, GC_E_USAGE, "CURVE: this libzmq is built without CURVE support");
        return NULL;
    }
    char pub_txt [GC_CURVE_KEY_TXT];
    uint8_t pub [32], sec [32];
    if (s_read (own_secret, true, pub_txt, sec, err))
        return NULL;
    zmq_z85_decode (pub, pub_txt);
    gc_curve_t *self = calloc (1, sizeof *self);
    if (self) {
        pthread_mutex_init (&self->lock, NULL);
        self->own = zcert_new_from (pub, sec);
        self->peers = calloc (S_MAX_PEERS, sizeof *self->peers);
    }
    gc_wipe (sec, sizeof sec);
    if (!self || !self->own || !self->peers) {
        gc_curve_destroy (&self);
        gc_err_set (err, GC_E_NOMEM, "CURVE: out of memory");
    }
    return self;
}

static const s_peer_key_t *
s_peer (const gc_curve_t *self, uint32_t peer)
{
    for (size_t i = 0; i < self->n_peers; i++)
        if (self->peers [i].peer == peer)
            return &self->peers [i];
    return NULL;
}

static const char *
s_peer_key (const gc_curve_t *self, uint32_t peer)
{
    const s_peer_key_t *p = s_peer (self, peer);
    return p && p->allowed ? p->key : NULL;
}

static int
s_add (gc_curve_t *self, uint32_t peer, bool allowed, const char *public_file, gc_err_t *err)
{
    if (self->zap)
        return gc_err_set (err, GC_E_ARG, "CURVE: peers must be added before start");
    if (s_peer (self, peer))
        return 0;
    if (self->n_peers == S_MAX_PEERS)
        return gc_err_set (err, GC_E_RANGE, "CURVE: more than %d neighbours", S_MAX_PEERS);
    s_peer_key_t *p = &self->peers [self->n_peers];
    if (gc_curve_read_key (public_file, false, p->key, err))
        return -1;
    p->peer = peer;
    p->allowed = allowed;
    self->n_peers++;
    return 0;
}

int
gc_curve_add_peer (gc_curve_t *self, uint32_t peer, const char *public_file, gc_err_t *err)
{
    return s_add (self, peer, true, public_file, err);
}

int
gc_curve_add_revoked (gc_curve_t *self, uint32_t peer, const char *public_file, gc_err_t *err)
{
    return s_add (self, peer, false, public_file, err);
}

int
gc_curve_start (gc_curve_t *self, gc_err_t *err)
{
    gc_zap_key_t *keys = calloc (self->n_peers + 1, sizeof *keys);
    if (!keys)
        return gc_err_set (err, GC_E_NOMEM, "CURVE: out of memory");
    for (size_t i = 0; i < self->n_peers; i++) {
        zmq_z85_decode (keys [i].key, self->peers [i].key);
        keys [i].peer = self->peers [i].peer;
        keys [i].allowed = self->peers [i].allowed;
    }
    self->zap = gc_zap_new (keys, self->n_peers, err);
    free (keys);
    return self->zap ? 0 : -1;
}

void
gc_curve_event (void *vself, int event, const char *address)
{
    gc_curve_t *self = vself;
#ifdef ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
        atomic_fetch_add (&self->failed_auth, 1);
    else
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
        atomic_fetch_add (&self->failed_protocol, 1);
    else
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
        atomic_fetch_add (&self->failed_other, 1);
    else
    if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
        atomic_fetch_add (&self->succeeded, 1);
    //  Refusals by key are named by the ZAP handler, which sees the key.
    if (address && (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL || event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)) {
        pthread_mutex_lock (&self->lock);
        snprintf (self->failed_address, sizeof self->failed_address, "%s", address);
        pthread_mutex_unlock (&self->lock);
    }
#else
    (void) self;
    (void) event;
    (void) address;
#endif
}

static int
s_secure_inbox (gc_curve_t *self, zsock_t *sock, gc_err_t *err)
{
    if (!self->zap)
        return gc_err_set (err, GC_E_ARG, "CURVE: the ZAP handler is not started (gc_curve_start)");
    if (self->inbox)
        return gc_err_set (err, GC_E_ARG, "CURVE: one inbox per process");
    self->inbox = true;
    zsock_set_curve_server (sock, 1);
    zsock_set_zap_domain (sock, "gcnode");
    return 0;
}

int
gc_curve_apply (void *vself, void *zsock, uint32_t peer, gc_err_t *err)
{
    gc_curve_t *self = vself;
    zsock_t *sock = zsock;
    zcert_apply (self->own, sock);
    if (peer == GC_CURVE_INBOX)
        return s_secure_inbox (self, sock, err);
    const char *key = s_peer_key (self, peer);
    if (!key)
        return gc_err_set (err, GC_E_CONFIG, "CURVE: no key for peer %u (peers/%u/curve_key)", peer, peer);
    zsock_set_curve_serverkey (sock, key);
    return 0;
}

void
gc_curve_stats (gc_curve_t *self, gc_curve_stats_t *out)
{
    out->handshake_failed_auth = atomic_load (&self->failed_auth);
    out->handshake_failed_protocol = atomic_load (&self->failed_protocol);
    out->handshake_failed_other = atomic_load (&self->failed_other);
    out->handshake_succeeded = atomic_load (&self->succeeded);
    pthread_mutex_lock (&self->lock);
    snprintf (out->failed_address, sizeof out->failed_address, "%s", self->failed_address);
    pthread_mutex_unlock (&self->lock);
    gc_zap_stats_t zs = { .last_peer = GC_ZAP_NO_PEER };
    if (self->zap)
        gc_zap_stats (self->zap, &zs);
    snprintf (out->refused_address, sizeof out->refused_address, "%s", zs.last_address);
    snprintf (out->refused_key, sizeof out->refused_key, "%s", zs.last_key);
    out->refused_peer = zs.last_peer;
}

const char *
gc_curve_public_txt (const gc_curve_t *self)
{
    return zcert_public_txt (self->own);
}

void
gc_curve_destroy (gc_curve_t **self_p)
{
    gc_curve_t *self = *self_p;
    if (!self)
        return;
    gc_zap_destroy (&self->zap);
    zcert_destroy (&self->own);
    free (self->peers);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}
