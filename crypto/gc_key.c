#include "gc_key.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gc_fs.h"
#include "gc_hex.h"
#include "gc_mem.h"
#include "gc_sha256.h"

struct gc_key_t {
    EVP_PKEY   *pkey;
    bool        has_private;
    //  Built on first use, then re-initialised in place for each message:
    //  the EVP_PKEY and the contexts live as long as the key.
    EVP_MD_CTX *sign_ctx;
    EVP_MD_CTX *verify_ctx;
    bool        sign_ready;
    bool        verify_ready;
    uint8_t     pub [GC_KEY_PUBLIC_SIZE];
    uint8_t     id [GC_PEER_ID_SIZE];
    char        id_hex [GC_PEER_ID_HEX_LEN + 1];
};

static const char s_pub_label [] = "-----BEGIN PUBLIC KEY-----";

void
gc_peer_id_of (const uint8_t pub [GC_KEY_PUBLIC_SIZE], uint8_t id [GC_PEER_ID_SIZE])
{
    uint8_t digest [GC_SHA256_SIZE];
    gc_sha256 (pub, GC_KEY_PUBLIC_SIZE, digest);
    memcpy (id, digest, GC_PEER_ID_SIZE);
}

void
gc_peer_id_hex (const uint8_t id [GC_PEER_ID_SIZE], char out [GC_PEER_ID_HEX_LEN + 1])
{
    gc_hex_encode (id, GC_PEER_ID_SIZE, out);
}

//  OpenSSL's error queue is per thread and would otherwise keep growing
//  with every rejected signature or unparsable file.
static int
s_openssl_error (gc_err_t *err, int code, const char *what)
{
    unsigned long e = ERR_get_error ();
    char detail [160] = "no detail";
    if (e)
        ERR_error_string_n (e, detail, sizeof detail);
    ERR_clear_error ();
    return gc_err_set (err, code, "%s (%s)", what, detail);
}

//  Take ownership of pkey and fill in the derived fields.
static gc_key_t *
s_wrap (EVP_PKEY *pkey, bool has_private, const char *origin, gc_err_t *err)
{
    if (!pkey) {
        s_openssl_error (err, GC_E_CRYPTO, "cannot create an Ed25519 key");
        return NULL;
    }
    if (!EVP_PKEY_is_a (pkey, "ED25519")) {
        gc_err_set (err, GC_E_FORMAT, "%s: holds a %s key, gcnode needs Ed25519",
                    origin, EVP_PKEY_get0_type_name (pkey));
        EVP_PKEY_free (pkey);
        return NULL;
    }
    gc_key_t *self = calloc (1, sizeof *self);
    size_t n = GC_KEY_PUBLIC_SIZE;
    if (!self || EVP_PKEY_get_raw_public_key (pkey, self->pub, &n) != 1 || n != GC_KEY_PUBLIC_SIZE) {
        s_openssl_error (err, GC_E_CRYPTO, "cannot read the raw Ed25519 public key");
        EVP_PKEY_free (pkey);
        free (self);
        return NULL;
    }
    self->pkey = pkey;
    self->has_private = has_private;
    gc_peer_id_of (self->pub, self->id);
    gc_peer_id_hex (self->id, self->id_hex);
    return self;
}

gc_key_t *
gc_key_generate (gc_err_t *err)
{
    return s_wrap (EVP_PKEY_Q_keygen (NULL, NULL, "ED25519"), true, "keygen", err);
}

gc_key_t *
gc_key_from_seed (const uint8_t seed [GC_KEY_SEED_SIZE], gc_err_t *err)
{
    return s_wrap (EVP_PKEY_new_raw_private_key_ex (NULL, "ED25519", NULL, seed, GC_KEY_SEED_SIZE),
                   true, "seed", err);
}

gc_key_t *
gc_key_from_public_raw (const uint8_t pub [GC_KEY_PUBLIC_SIZE], gc_err_t *err)
{
    return s_wrap (EVP_PKEY_new_raw_public_key_ex (NULL, "ED25519", NULL, pub, GC_KEY_PUBLIC_SIZE),
                   false, "public key", err);
}

//  Read a whole key file (at most GC_KEY_FILE_MAX bytes) into a NUL-terminated
//  buffer the caller cleanses and frees; *mode gets the permission bits of the
//  file actually opened, so the check cannot race with a rename.
static char *
s_read_file (const char *path, size_t *len_out, mode_t *mode, gc_err_t *err)
{
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        gc_err_set (err, GC_E_IO, "%s: %s", path, strerror (errno));
        return NULL;
    }
    struct stat st;
    if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode)) {
        gc_err_set (err, GC_E_IO, "%s: not a regular file", path);
        close (fd);
        return NULL;
    }
    if (st.st_size > GC_KEY_FILE_MAX) {
        gc_err_set (err, GC_E_FORMAT, "%s: %lld bytes, too large for a key file (max %d)",
                    path, (long long) st.st_size, GC_KEY_FILE_MAX);
        close (fd);
        return NULL;
    }
    char *buf = malloc (GC_KEY_FILE_MAX + 1);
    size_t used = 0;
    ssize_t n = 0;
    //  Read to EOF rather than trust st_size: the file may be growing.
    while (buf && used <= GC_KEY_FILE_MAX
           && (n = read (fd, buf + used, GC_KEY_FILE_MAX + 1 - used)) > 0)
        used += (size_t) n;
    int saved = errno;
    close (fd);
    if (!buf || n < 0 || used > GC_KEY_FILE_MAX) {
        if (!buf)
            gc_err_set (err, GC_E_NOMEM, "%s: out of memory", path);
        else if (n < 0)
            gc_err_set (err, GC_E_IO, "%s: %s", path, strerror (saved));
        else
            gc_err_set (err, GC_E_FORMAT, "%s: too large for a key file (max %d bytes)",
                        path, GC_KEY_FILE_MAX);
        if (buf)
            gc_wipe (buf, used);
        free (buf);
        return NULL;
    }
    buf [used] = '\0';
    *len_out = used;
    *mode = st.st_mode;
    return buf;
}

//  Never prompt on a terminal for a passphrase: an encrypted key fails.
static int
s_no_passphrase (char *buf, int size, int rwflag, void *u)
{
    (void) buf; (void) size; (void) rwflag; (void) u;
    return -1;
}

static gc_key_t *
s_parse (const char *path, const char *text, size_t len, bool want_private, gc_err_t *err)
{
    BIO *bio = BIO_new_mem_buf (text, (int) len);
    if (!bio) {
        gc_err_set (err, GC_E_NOMEM, "out of memory");
        return NULL;
    }
    EVP_PKEY *pkey = want_private
                   ? PEM_read_bio_PrivateKey (bio, NULL, s_no_passphrase, NULL)
                   : PEM_read_bio_PUBKEY (bio, NULL, s_no_passphrase, NULL);
    BIO_free (bio);
    if (!pkey) {
        ERR_clear_error ();
        if (want_private && strstr (text, "ENCRYPTED PRIVATE KEY"))
            gc_err_set (err, GC_E_FORMAT, "%s: encrypted private keys are not supported", path);
        else if (!want_private && strstr (text, "PRIVATE KEY-----"))
            gc_err_set (err, GC_E_FORMAT, "%s: holds a private key where a public key "
                        "(BEGIN PUBLIC KEY) is expected", path);
        else
            gc_err_set (err, GC_E_FORMAT, "%s: not a PEM %s key", path,
                        want_private ? "PKCS#8 private" : "SubjectPublicKeyInfo public");
        return NULL;
    }
    return s_wrap (pkey, want_private, path, err);
}

static gc_key_t *
s_load (const char *path, int kind, gc_err_t *err)   /* kind: 1 private, 0 public, -1 either */
{
    size_t len = 0;
    mode_t mode = 0;
    char *text = s_read_file (path, &len, &mode, err);
    if (!text)
        return NULL;
    //  Tell the kinds apart by PEM label before any other check, so a file
    //  that is no key at all gets a format error, not a permissions one.
    bool looks_private = strstr (text, "PRIVATE KEY-----") != NULL;
    bool want_private = kind == 1 || (kind < 0 && !strstr (text, s_pub_label));
    gc_key_t *key = NULL;
    if (kind < 0 && !looks_private && !strstr (text, s_pub_label))
        gc_err_set (err, GC_E_FORMAT, "%s: not a PEM key file (no BEGIN PRIVATE KEY or "
                    "BEGIN PUBLIC KEY)", path);
    else
    if (want_private && looks_private && (mode & 077))
        gc_err_set (err, GC_E_PERMS, "%s: private key is accessible by group or others "
                    "(mode %04o); run chmod 600 %s", path, (unsigned) (mode & 07777), path);
    else
        key = s_parse (path, text, len, want_private, err);
    gc_wipe (text, len);
    free (text);
    return key;
}

gc_key_t *
gc_key_load_private (const char *path, gc_err_t *err)
{
    return s_load (path, 1, err);
}

gc_key_t *
gc_key_load_public (const char *path, gc_err_t *err)
{
    return s_load (path, 0, err);
}

gc_key_t *
gc_key_load (const char *path, gc_err_t *err)
{
    return s_load (path, -1, err);
}

static int
s_save (const gc_key_t *self, const char *path, bool private, gc_err_t *err)
{
    if (private && !self->has_private)
        return gc_err_set (err, GC_E_ARG, "%s: key %s has no private part to save",
                           path, self->id_hex);
    //  Secure-heap BIO where available: cleared when freed.
    BIO *bio = BIO_new (BIO_s_secmem ());
    if (!bio)
        return gc_err_set (err, GC_E_NOMEM, "out of memory");
    int ok = private ? PEM_write_bio_PrivateKey (bio, self->pkey, NULL, NULL, 0, NULL, NULL)
                     : PEM_write_bio_PUBKEY (bio, self->pkey);
    char *data = NULL;
    long len = BIO_get_mem_data (bio, &data);
    int rc;
    if (ok != 1 || len <= 0)
        rc = s_openssl_error (err, GC_E_CRYPTO, "cannot encode the key as PEM");
    else
        rc = gc_fs_write_atomic (path, data, (size_t) len, private ? 0600 : 0644, err);
    BIO_free (bio);
    return rc;
}

int
gc_key_save_private (const gc_key_t *self, const char *path, gc_err_t *err)
{
    return s_save (self, path, true, err);
}

int
gc_key_save_public (const gc_key_t *self, const char *path, gc_err_t *err)
{
    return s_save (self, path, false, err);
}

bool
gc_key_has_private (const gc_key_t *self)
{
    return self->has_private;
}

const uint8_t *
gc_key_public_raw (const gc_key_t *self)
{
    return self->pub;
}

const uint8_t *
gc_key_peer_id (const gc_key_t *self)
{
    return self->id;
}

const char *
gc_key_peer_id_hex (const gc_key_t *self)
{
    return self->id_hex;
}

//  Ed25519 in OpenSSL 3 is one-shot, so the context must be initialised
//  before every message. Re-initialising with a NULL key keeps the provider
//  context (no EVP_PKEY_CTX rebuilt); a full init is the fallback.
static int
s_ready (EVP_MD_CTX **ctx_p, bool *ready, EVP_PKEY *pkey, bool verify)
{
    if (!*ctx_p && !(*ctx_p = EVP_MD_CTX_new ()))
        return -1;
    EVP_MD_CTX *ctx = *ctx_p;
    if (*ready) {
        int ok = verify ? EVP_DigestVerifyInit (ctx, NULL, NULL, NULL, NULL)
                        : EVP_DigestSignInit (ctx, NULL, NULL, NULL, NULL);
        if (ok == 1)
            return 0;
        ERR_clear_error ();
        *ready = false;
    }
    EVP_MD_CTX_reset (ctx);
    int ok = verify ? EVP_DigestVerifyInit (ctx, NULL, NULL, NULL, pkey)
                    : EVP_DigestSignInit (ctx, NULL, NULL, NULL, pkey);
    if (ok != 1)
        return -1;
    *ready = true;
    return 0;
}

int
gc_key_sign (gc_key_t *self, const uint8_t *msg, size_t len, uint8_t sig [GC_SIG_SIZE],
             gc_err_t *err)
{
    if (!self->has_private)
        return gc_err_set (err, GC_E_ARG, "key %s has no private part: cannot sign",
                           self->id_hex);
    size_t n = GC_SIG_SIZE;
    if (s_ready (&self->sign_ctx, &self->sign_ready, self->pkey, false) != 0
    ||  EVP_DigestSign (self->sign_ctx, sig, &n, msg, len) != 1 || n != GC_SIG_SIZE) {
        self->sign_ready = false;
        return s_openssl_error (err, GC_E_CRYPTO, "Ed25519 signing failed");
    }
    return 0;
}

int
gc_key_verify (gc_key_t *self, const uint8_t *msg, size_t len, const uint8_t sig [GC_SIG_SIZE])
{
    if (s_ready (&self->verify_ctx, &self->verify_ready, self->pkey, true) != 0) {
        ERR_clear_error ();
        return -1;
    }
    if (EVP_DigestVerify (self->verify_ctx, sig, GC_SIG_SIZE, msg, len) != 1) {
        ERR_clear_error ();
        return -1;
    }
    return 0;
}

void
gc_key_destroy (gc_key_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gc_key_t *self = *self_p;
    EVP_MD_CTX_free (self->sign_ctx);
    EVP_MD_CTX_free (self->verify_ctx);
    EVP_PKEY_free (self->pkey);
    free (self);
    *self_p = NULL;
}
