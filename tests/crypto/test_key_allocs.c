/*  Reusable contexts: in steady state gc_key_sign / gc_key_verify / gc_sha256
    allocate less than the same operation on a fresh OpenSSL context (what
    remains is inside OpenSSL 3's Ed25519, which builds a SHA-512 context per
    call). Counted through OpenSSL's allocator hooks, so this test must set
    them before OpenSSL allocates anything. */
#include "gc_test.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>

#include "gc_key.h"
#include "gc_sha256.h"

static long s_allocs;

static void *
s_malloc (size_t n, const char *file, int line)
{
    (void) file; (void) line;
    s_allocs++;
    return malloc (n);
}

static void *
s_realloc (void *p, size_t n, const char *file, int line)
{
    (void) file; (void) line;
    s_allocs++;
    return realloc (p, n);
}

static void
s_free (void *p, const char *file, int line)
{
    (void) file; (void) line;
    free (p);
}

enum { N = 50 };

static void
test_steady_state_allocations (void **state)
{
    gc_key_t *key = gc_key_generate (NULL);
    assert_non_null (key);
    EVP_PKEY *pkey = EVP_PKEY_new_raw_private_key_ex (NULL, "ED25519", NULL,
                                                      (const uint8_t *) "0123456789abcdef0123456789abcdef", 32);
    assert_non_null (pkey);
    uint8_t msg [160] = { 1 }, sig [64], d [32];
    //  Warm up: contexts are built on first use.
    assert_int_equal (gc_key_sign (key, msg, sizeof msg, sig, NULL), 0);
    assert_int_equal (gc_key_verify (key, msg, sizeof msg, sig), 0);
    gc_sha256 (msg, sizeof msg, d);

    long before = s_allocs;
    for (int i = 0; i < N; i++)
        assert_int_equal (gc_key_sign (key, msg, sizeof msg, sig, NULL), 0);
    long ours_sign = s_allocs - before;
    before = s_allocs;
    for (int i = 0; i < N; i++)
        assert_int_equal (gc_key_verify (key, msg, sizeof msg, sig), 0);
    long ours_verify = s_allocs - before;
    before = s_allocs;
    for (int i = 0; i < N; i++)
        gc_sha256 (msg, sizeof msg, d);
    long ours_sha = s_allocs - before;

    //  The same operations with a context made per call.
    before = s_allocs;
    for (int i = 0; i < N; i++) {
        EVP_MD_CTX *ctx = EVP_MD_CTX_new ();
        size_t n = 64;
        assert_int_equal (EVP_DigestSignInit (ctx, NULL, NULL, NULL, pkey), 1);
        assert_int_equal (EVP_DigestSign (ctx, sig, &n, msg, sizeof msg), 1);
        EVP_MD_CTX_free (ctx);
    }
    long fresh_sign = s_allocs - before;
    before = s_allocs;
    for (int i = 0; i < N; i++) {
        EVP_MD_CTX *ctx = EVP_MD_CTX_new ();
        assert_int_equal (EVP_DigestVerifyInit (ctx, NULL, NULL, NULL, pkey), 1);
        assert_int_equal (EVP_DigestVerify (ctx, sig, 64, msg, sizeof msg), 1);
        EVP_MD_CTX_free (ctx);
    }
    long fresh_verify = s_allocs - before;
    before = s_allocs;
    for (int i = 0; i < N; i++) {
        unsigned int n;
        assert_int_equal (EVP_Digest (msg, sizeof msg, d, &n, EVP_sha256 (), NULL), 1);
    }
    long fresh_sha = s_allocs - before;
    print_message ("allocations per call: sign %.1f (fresh %.1f), verify %.1f (fresh %.1f), "
                   "sha256 %.1f (fresh %.1f)\n", (double) ours_sign / N, (double) fresh_sign / N,
                   (double) ours_verify / N, (double) fresh_verify / N, (double) ours_sha / N,
                   (double) fresh_sha / N);
    assert_true (ours_sign < fresh_sign);
    assert_true (ours_verify < fresh_verify);
    assert_true (ours_sha < fresh_sha);
    EVP_PKEY_free (pkey);
    gc_key_destroy (&key);
}

int
main (void)
{
    if (!CRYPTO_set_mem_functions (s_malloc, s_realloc, s_free)) {
        fprintf (stderr, "OpenSSL allocated before main; cannot count\n");
        return 1;
    }
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_steady_state_allocations),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
