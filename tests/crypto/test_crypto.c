/*  crypto/: SHA-256 and Ed25519 against published vectors, signing with
    reused contexts, key files and their permission check, the trust store. */
#include "gc_test.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gc_hex.h"
#include "gc_key.h"
#include "gc_rng.h"
#include "gc_sha256.h"
#include "gc_trust.h"

static char *s_dir;

static int
s_setup (void **state)
{
    s_dir = gc_test_tmpdir ("crypto");
    return 0;
}

static int
s_teardown (void **state)
{
    gc_test_rmtree (s_dir);
    free (s_dir);
    return 0;
}

static void
s_unhex (const char *hex, uint8_t *out, size_t want)
{
    size_t n = 0;
    gc_err_t err;
    if (gc_hex_decode (hex, out, want, &n, "test", &err) || n != want)
        fail_msg ("bad hex in test: %s", hex);
}

static void
s_path (char *buf, size_t size, const char *name)
{
    snprintf (buf, size, "%s/%s", s_dir, name);
}

static void
test_sha256_known_answers (void **state)
{
    static const struct { const char *in; const char *hex; } cases [] = {
        { "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
        { "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        uint8_t got [32], want [32];
        gc_sha256 (cases [i].in, strlen (cases [i].in), got);
        s_unhex (cases [i].hex, want, 32);
        assert_memory_equal (got, want, 32);
    }
    //  A large input goes through the same reused context.
    size_t n = 1 << 20;
    uint8_t *big = calloc (n, 1), d1 [32], d2 [32];
    assert_non_null (big);
    gc_sha256 (big, n, d1);
    big [n - 1] = 1;
    gc_sha256 (big, n, d2);
    assert_memory_not_equal (d1, d2, 32);
    free (big);
}

//  RFC 8032 section 7.1, tests 1 and 2.
static void
test_ed25519_rfc8032_vectors (void **state)
{
    static const struct { const char *seed, *pub, *msg, *sig; } cases [] = {
        { "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
          "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
          "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b" },
        { "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
          "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
          "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        uint8_t seed [32], pub [32], msg [1], want [64], sig [64];
        s_unhex (cases [i].seed, seed, 32);
        s_unhex (cases [i].pub, pub, 32);
        s_unhex (cases [i].sig, want, 64);
        size_t mlen = strlen (cases [i].msg) / 2;
        s_unhex (cases [i].msg, msg, mlen);
        gc_err_t err = { 0 };
        gc_key_t *key = gc_key_from_seed (seed, &err);
        assert_non_null (key);
        assert_memory_equal (gc_key_public_raw (key), pub, 32);
        assert_int_equal (gc_key_sign (key, msg, mlen, sig, &err), 0);
        assert_memory_equal (sig, want, 64);
        gc_key_t *pub_only = gc_key_from_public_raw (pub, &err);
        assert_non_null (pub_only);
        assert_false (gc_key_has_private (pub_only));
        assert_int_equal (gc_key_verify (pub_only, msg, mlen, sig), 0);
        //  The peer id is SHA-256 of the raw key, first 8 bytes.
        uint8_t digest [32];
        gc_sha256 (pub, 32, digest);
        assert_memory_equal (gc_key_peer_id (pub_only), digest, 8);
        char hex [17];
        gc_hex_encode (digest, 8, hex);
        assert_string_equal (gc_key_peer_id_hex (pub_only), hex);
        gc_key_destroy (&key);
        gc_key_destroy (&pub_only);
        assert_null (key);
    }
}

static void
test_sign_verify_reuses_contexts (void **state)
{
    gc_err_t err = { 0 };
    gc_key_t *a = gc_key_generate (&err), *b = gc_key_generate (&err);
    assert_non_null (a);
    assert_non_null (b);
    gc_key_t *a_pub = gc_key_from_public_raw (gc_key_public_raw (a), &err);
    assert_non_null (a_pub);
    gc_rng_t rng;
    gc_rng_init (&rng, 3, 0);
    uint8_t msg [300], sig [64];
    //  Interleave good and bad verifications on the same contexts: a failed
    //  verification must not poison the next one.
    for (int i = 0; i < 200; i++) {
        size_t len = gc_rng_below (&rng, sizeof msg + 1);
        for (size_t j = 0; j < len; j++)
            msg [j] = (uint8_t) gc_rng_next (&rng);
        assert_int_equal (gc_key_sign (a, msg, len, sig, &err), 0);
        assert_int_equal (gc_key_verify (a_pub, msg, len, sig), 0);
        assert_int_equal (gc_key_verify (a, msg, len, sig), 0);
        assert_int_equal (gc_key_verify (b, msg, len, sig), -1);
        uint8_t bad [64];
        memcpy (bad, sig, 64);
        bad [gc_rng_below (&rng, 64)] ^= (uint8_t) (1u << gc_rng_below (&rng, 8));
        assert_int_equal (gc_key_verify (a_pub, msg, len, bad), -1);
        if (len) {
            msg [gc_rng_below (&rng, len)] ^= 0x80;
            assert_int_equal (gc_key_verify (a_pub, msg, len, sig), -1);
        }
    }
    //  Signing needs the private part.
    assert_int_equal (gc_key_sign (a_pub, msg, 10, sig, &err), -1);
    assert_int_equal (err.code, GC_E_ARG);
    gc_key_destroy (&a);
    gc_key_destroy (&b);
    gc_key_destroy (&a_pub);
}

static void
test_key_files_round_trip (void **state)
{
    gc_err_t err = { 0 };
    gc_key_t *key = gc_key_generate (&err);
    assert_non_null (key);
    char priv [512], pub [512];
    s_path (priv, sizeof priv, "rt.key");
    s_path (pub, sizeof pub, "rt.pub");
    //  Saving over an existing file replaces it (atomically).
    gc_test_write_file (priv, "old", 3);
    assert_int_equal (gc_key_save_private (key, priv, &err), 0);
    assert_int_equal (gc_key_save_public (key, pub, &err), 0);
    struct stat st;
    assert_int_equal (stat (priv, &st), 0);
    assert_int_equal (st.st_mode & 0777, 0600);
    assert_int_equal (stat (pub, &st), 0);
    assert_int_equal (st.st_mode & 0777, 0644);

    gc_key_t *lp = gc_key_load_private (priv, &err);
    gc_key_t *lq = gc_key_load_public (pub, &err);
    gc_key_t *any_priv = gc_key_load (priv, &err), *any_pub = gc_key_load (pub, &err);
    assert_non_null (lp);
    assert_non_null (lq);
    assert_non_null (any_priv);
    assert_non_null (any_pub);
    assert_true (gc_key_has_private (lp) && gc_key_has_private (any_priv));
    assert_false (gc_key_has_private (lq) || gc_key_has_private (any_pub));
    assert_memory_equal (gc_key_public_raw (lp), gc_key_public_raw (key), 32);
    assert_memory_equal (gc_key_public_raw (lq), gc_key_public_raw (key), 32);
    assert_string_equal (gc_key_peer_id_hex (any_pub), gc_key_peer_id_hex (key));
    uint8_t sig [64];
    assert_int_equal (gc_key_sign (lp, (const uint8_t *) "m", 1, sig, &err), 0);
    assert_int_equal (gc_key_verify (lq, (const uint8_t *) "m", 1, sig), 0);
    //  A public-only key cannot be saved as a private one.
    assert_int_equal (gc_key_save_private (lq, priv, &err), -1);
    assert_int_equal (err.code, GC_E_ARG);
    gc_key_destroy (&key);
    gc_key_destroy (&lp);
    gc_key_destroy (&lq);
    gc_key_destroy (&any_priv);
    gc_key_destroy (&any_pub);
}

static void
test_private_key_permissions (void **state)
{
    static const struct { mode_t mode; int ok; } cases [] = {
        { 0600, 1 }, { 0400, 1 }, { 0700, 1 },
        { 0640, 0 }, { 0604, 0 }, { 0660, 0 }, { 0610, 0 }, { 0601, 0 }, { 0644, 0 },
    };
    gc_err_t err = { 0 };
    gc_key_t *key = gc_key_generate (&err);
    char path [512];
    s_path (path, sizeof path, "perm.key");
    assert_int_equal (gc_key_save_private (key, path, &err), 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        assert_int_equal (chmod (path, cases [i].mode), 0);
        for (int any = 0; any < 2; any++) {
            gc_err_clear (&err);
            gc_key_t *loaded = any ? gc_key_load (path, &err) : gc_key_load_private (path, &err);
            if (cases [i].ok)
                assert_non_null (loaded);
            else {
                assert_null (loaded);
                assert_int_equal (err.code, GC_E_PERMS);
                assert_non_null (strstr (err.msg, "chmod 600"));
                assert_non_null (strstr (err.msg, "perm.key"));
            }
            gc_key_destroy (&loaded);
        }
    }
    gc_key_destroy (&key);
}

//  Write a key of another algorithm, or an encrypted one, with OpenSSL.
static void
s_write_foreign (const char *path, const char *alg, const char *pass)
{
    EVP_PKEY *pkey = !strcmp (alg, "EC") ? EVP_PKEY_Q_keygen (NULL, NULL, "EC", "P-256")
                                         : EVP_PKEY_Q_keygen (NULL, NULL, alg);
    assert_non_null (pkey);
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    int ok = pass ? PEM_write_PKCS8PrivateKey (f, pkey, EVP_aes_128_cbc (), NULL, 0, NULL, (void *) pass)
                  : PEM_write_PrivateKey (f, pkey, NULL, NULL, 0, NULL, NULL);
    assert_int_equal (ok, 1);
    fclose (f);
    chmod (path, 0600);
    EVP_PKEY_free (pkey);
}

static void
test_bad_key_files (void **state)
{
    gc_err_t err = { 0 };
    gc_key_t *key = gc_key_generate (&err);
    char pub [512], priv [512], ec [512], enc [512], junk [512], big [512], empty [512], none [512];
    s_path (pub, sizeof pub, "good.pub");
    s_path (priv, sizeof priv, "good.key");
    s_path (ec, sizeof ec, "ec.key");
    s_path (enc, sizeof enc, "enc.key");
    s_path (junk, sizeof junk, "junk.key");
    s_path (big, sizeof big, "big.key");
    s_path (empty, sizeof empty, "empty.key");
    s_path (none, sizeof none, "missing.key");
    assert_int_equal (gc_key_save_public (key, pub, &err), 0);
    assert_int_equal (gc_key_save_private (key, priv, &err), 0);
    s_write_foreign (ec, "EC", NULL);
    s_write_foreign (enc, "ED25519", "secret");
    const char *junk_text = "-----BEGIN PRIVATE KEY-----\nnot base64 at all\n-----END PRIVATE KEY-----\n";
    gc_test_write_file (junk, junk_text, strlen (junk_text));
    char *blob = calloc (GC_KEY_FILE_MAX + 10, 1);
    memset (blob, 'A', GC_KEY_FILE_MAX + 9);
    gc_test_write_file (big, blob, GC_KEY_FILE_MAX + 9);
    free (blob);
    gc_test_write_file (empty, "", 0);
    chmod (junk, 0600);
    chmod (big, 0600);
    chmod (empty, 0600);

    static const struct { int kind; int which; int code; const char *needle; } cases [] = {
        { 1, 0, GC_E_FORMAT, "not a PEM PKCS#8 private key" },      /* .pub as private */
        { 0, 1, GC_E_FORMAT, "holds a private key" },               /* .key as public */
        { 1, 2, GC_E_FORMAT, "gcnode needs Ed25519" },              /* EC key */
        { -1, 2, GC_E_FORMAT, "gcnode needs Ed25519" },
        { 1, 3, GC_E_FORMAT, "encrypted private keys are not supported" },
        { 1, 4, GC_E_FORMAT, "not a PEM PKCS#8 private key" },
        { 1, 5, GC_E_FORMAT, "too large for a key file" },
        { -1, 6, GC_E_FORMAT, "not a PEM key file" },
        { 1, 7, GC_E_IO, "No such file" },
        { 0, 8, GC_E_IO, "not a regular file" },                    /* a directory */
    };
    const char *paths [] = { pub, priv, ec, enc, junk, big, empty, none, s_dir };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        gc_err_clear (&err);
        const char *p = paths [cases [i].which];
        gc_key_t *k = cases [i].kind == 1 ? gc_key_load_private (p, &err)
                    : cases [i].kind == 0 ? gc_key_load_public (p, &err) : gc_key_load (p, &err);
        if (k || err.code != cases [i].code || !strstr (err.msg, cases [i].needle))
            fail_msg ("case %zu (%s): code %d '%s', wanted %d '%s'", i, p, err.code, err.msg,
                      cases [i].code, cases [i].needle);
    }
    gc_key_destroy (&key);
}

static void
test_trust_store (void **state)
{
    gc_err_t err = { 0 };
    char dir [512], path [600];
    s_path (dir, sizeof dir, "trust");
    assert_int_equal (mkdir (dir, 0700), 0);
    gc_key_t *keys [4];
    const char *names [4] = { "b.pub", "a.pub", ".hidden.pub", "c.pubkey" };
    for (int i = 0; i < 4; i++) {
        keys [i] = gc_key_generate (&err);
        snprintf (path, sizeof path, "%s/%s", dir, names [i]);
        assert_int_equal (gc_key_save_public (keys [i], path, &err), 0);
    }
    gc_trust_t *trust = gc_trust_new ();
    assert_int_equal (gc_trust_add_dir (trust, dir, &err), 0);
    //  Only the two visible *.pub files, in name order.
    assert_int_equal (gc_trust_size (trust), 2);
    assert_non_null (gc_trust_lookup (trust, gc_key_peer_id (keys [0])));
    assert_non_null (gc_trust_lookup (trust, gc_key_peer_id (keys [1])));
    assert_null (gc_trust_lookup (trust, gc_key_peer_id (keys [2])));
    assert_null (gc_trust_lookup (trust, gc_key_peer_id (keys [3])));
    assert_memory_equal (gc_key_public_raw (gc_trust_at (trust, 0)), gc_key_public_raw (keys [1]), 32);
    assert_non_null (strstr (gc_trust_origin (trust, 0), "a.pub"));
    //  The key found verifies with the full public key.
    uint8_t sig [64];
    assert_int_equal (gc_key_sign (keys [0], (const uint8_t *) "x", 1, sig, &err), 0);
    assert_int_equal (gc_key_verify (gc_trust_lookup (trust, gc_key_peer_id (keys [0])),
                                     (const uint8_t *) "x", 1, sig), 0);
    //  The same key again (from the config list) is harmless.
    assert_int_equal (gc_trust_add_raw (trust, gc_key_public_raw (keys [0]), "config", &err), 0);
    assert_int_equal (gc_trust_add_dir (trust, dir, &err), 0);
    assert_int_equal (gc_trust_size (trust), 2);
    assert_int_equal (gc_trust_add_raw (trust, gc_key_public_raw (keys [3]), "config", &err), 0);
    assert_int_equal (gc_trust_size (trust), 3);
    assert_non_null (gc_trust_lookup (trust, gc_key_peer_id (keys [3])));

    //  All or nothing: one bad .pub file in a directory adds none of it.
    char dir2 [512];
    s_path (dir2, sizeof dir2, "trust2");
    assert_int_equal (mkdir (dir2, 0700), 0);
    snprintf (path, sizeof path, "%s/good.pub", dir2);
    assert_int_equal (gc_key_save_public (keys [2], path, &err), 0);
    snprintf (path, sizeof path, "%s/zbad.pub", dir2);
    gc_test_write_file (path, "junk\n", 5);
    gc_err_clear (&err);
    assert_int_equal (gc_trust_add_dir (trust, dir2, &err), -1);
    assert_non_null (strstr (err.msg, "zbad.pub"));
    assert_int_equal (gc_trust_size (trust), 3);
    assert_null (gc_trust_lookup (trust, gc_key_peer_id (keys [2])));
    //  Lookups still work after the rollback.
    for (int i = 0; i < 2; i++)
        assert_non_null (gc_trust_lookup (trust, gc_key_peer_id (keys [i])));
    assert_int_equal (gc_trust_add_dir (trust, "/nonexistent/trust", &err), -1);
    assert_non_null (strstr (err.msg, "/nonexistent/trust"));
    gc_trust_destroy (&trust);
    assert_null (trust);
    for (int i = 0; i < 4; i++)
        gc_key_destroy (&keys [i]);
}

static void
test_trust_store_many_keys (void **state)
{
    //  Enough keys to grow the index several times; every one is found.
    enum { N = 300 };
    gc_trust_t *trust = gc_trust_new ();
    gc_err_t err = { 0 };
    uint8_t pubs [N][32];
    for (int i = 0; i < N; i++) {
        uint8_t seed [32] = { 0 };
        seed [0] = (uint8_t) i;
        seed [1] = (uint8_t) (i >> 8);
        gc_key_t *k = gc_key_from_seed (seed, &err);
        assert_non_null (k);
        memcpy (pubs [i], gc_key_public_raw (k), 32);
        assert_int_equal (gc_trust_add_raw (trust, pubs [i], "list", &err), 0);
        gc_key_destroy (&k);
    }
    assert_int_equal (gc_trust_size (trust), N);
    for (int i = 0; i < N; i++) {
        uint8_t id [8];
        gc_peer_id_of (pubs [i], id);
        gc_key_t *k = gc_trust_lookup (trust, id);
        assert_non_null (k);
        assert_memory_equal (gc_key_public_raw (k), pubs [i], 32);
    }
    uint8_t stranger [8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    assert_null (gc_trust_lookup (trust, stranger));
    gc_trust_destroy (&trust);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_sha256_known_answers),
        cmocka_unit_test (test_ed25519_rfc8032_vectors),
        cmocka_unit_test (test_sign_verify_reuses_contexts),
        cmocka_unit_test (test_key_files_round_trip),
        cmocka_unit_test (test_private_key_permissions),
        cmocka_unit_test (test_bad_key_files),
        cmocka_unit_test (test_trust_store),
        cmocka_unit_test (test_trust_store_many_keys),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
