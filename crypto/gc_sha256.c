#include "gc_sha256.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

//  The fetched algorithm and one context per thread: a context built per call
//  costs three allocations and a provider lookup, and this runs once per
//  message on both sides. A thread's context is freed when the thread exits.
static pthread_once_t s_once = PTHREAD_ONCE_INIT;
static pthread_key_t  s_ctx_key;
static EVP_MD        *s_md;

static void
s_ctx_free (void *ctx)
{
    EVP_MD_CTX_free (ctx);
}

static void
s_init (void)
{
    s_md = EVP_MD_fetch (NULL, "SHA256", NULL);
    if (pthread_key_create (&s_ctx_key, s_ctx_free) != 0)
        s_md = NULL;
}

static void
s_die (void)
{
    fprintf (stderr, "gc_sha256: OpenSSL cannot provide SHA-256\n");
    abort ();
}

void
gc_sha256 (const void *data, size_t len, uint8_t out [GC_SHA256_SIZE])
{
    pthread_once (&s_once, s_init);
    if (!s_md)
        s_die ();
    EVP_MD_CTX *ctx = pthread_getspecific (s_ctx_key);
    if (!ctx) {
        ctx = EVP_MD_CTX_new ();
        if (!ctx || pthread_setspecific (s_ctx_key, ctx) != 0)
            s_die ();
    }
    unsigned int n = 0;
    if (!EVP_DigestInit_ex (ctx, s_md, NULL)
    ||  !EVP_DigestUpdate (ctx, data, len)
    ||  !EVP_DigestFinal_ex (ctx, out, &n) || n != GC_SHA256_SIZE)
        s_die ();
}
