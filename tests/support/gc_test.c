#include "gc_test.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gc_rng.h"

char *
gc_test_tmpdir (const char *tag)
{
    const char *base = getenv ("TMPDIR");
    char path [512];
    snprintf (path, sizeof path, "%s/gctest-%s-XXXXXX", base && *base ? base : "/tmp", tag);
    char *dir = mkdtemp (path);
    assert_non_null (dir);
    return strdup (dir);
}

static int
s_remove (const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void) sb; (void) flag; (void) ftw;
    return remove (path);
}

void
gc_test_rmtree (const char *path)
{
    if (path)
        nftw (path, s_remove, 16, FTW_DEPTH | FTW_PHYS);
}

void
gc_test_write_file (const char *path, const void *data, size_t size)
{
    FILE *f = fopen (path, "wb");
    assert_non_null (f);
    assert_int_equal (fwrite (data, 1, size, f), size);
    assert_int_equal (fclose (f), 0);
}

static char *
s_env_path (const char *var, const char *fallback, const char *rel)
{
    const char *base = getenv (var);
    if (!base || !*base)
        base = fallback;
    size_t len = strlen (base) + strlen (rel) + 2;
    char *path = malloc (len);
    assert_non_null (path);
    snprintf (path, len, "%s/%s", base, rel);
    return path;
}

char *
gc_test_build_path (const char *rel)
{
    return s_env_path ("GC_BUILD_DIR", ".", rel);
}

char *
gc_test_source_path (const char *rel)
{
    return s_env_path ("GC_SOURCE_DIR", "..", rel);
}

int
gc_test_run (const char *cmdline, char **out)
{
    char *full = NULL;
    size_t len = strlen (cmdline) + 8;
    full = malloc (len);
    assert_non_null (full);
    snprintf (full, len, "%s 2>&1", cmdline);
    FILE *p = popen (full, "r");
    free (full);
    if (!p)
        return -1;
    size_t cap = 4096, used = 0;
    char *buf = malloc (cap);
    assert_non_null (buf);
    size_t n;
    while ((n = fread (buf + used, 1, cap - used - 1, p)) > 0) {
        used += n;
        if (cap - used < 2) {
            cap *= 2;
            buf = realloc (buf, cap);
            assert_non_null (buf);
        }
    }
    buf [used] = '\0';
    int status = pclose (p);
    if (out)
        *out = buf;
    else
        free (buf);
    return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

char *
gc_test_expect (const char *cmdline, int code, const char *needle)
{
    char *out = NULL;
    int rc = gc_test_run (cmdline, &out);
    if (rc != code || !out || !strstr (out, needle))
        fail_msg ("`%s`: exit %d (wanted %d), output:\n%s\n(wanted '%s')", cmdline, rc, code,
                  out ? out : "", needle);
    return out;
}

float *
gc_test_normal (size_t n, uint64_t seed)
{
    gc_rng_t rng;
    gc_rng_init (&rng, seed, 0);
    float *x = malloc ((n ? n : 1) * sizeof *x);
    assert_non_null (x);
    gc_rng_fill_normal (&rng, x, n, 0.0f, 1.0f);
    return x;
}
