/*  gc_fs: mkdirs, bounded whole-file reads, atomic replacement. */
#include "gc_test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gc_fs.h"

static char *s_dir;

static int
s_setup (void **state)
{
    s_dir = gc_test_tmpdir ("gcfs");
    return s_dir ? 0 : -1;
}

static int
s_teardown (void **state)
{
    gc_test_rmtree (s_dir);
    free (s_dir);
    return 0;
}

static void
s_path (char *buf, size_t size, const char *rel)
{
    assert_true ((size_t) snprintf (buf, size, "%s/%s", s_dir, rel) < size);
}

static void
test_mkdirs (void **state)
{
    char plain [1024];
    s_path (plain, sizeof plain, "plain");
    gc_test_write_file (plain, "x", 1);
    static const struct { const char *rel; bool ok; const char *needle; } cases [] = {
        { "a/b/c", true, NULL },
        { "a/b/c", true, NULL },                /* exists: fine */
        { "a//b/d/", true, NULL },              /* doubled and trailing slashes */
        { "plain", false, "not a directory" },  /* a regular file in the way */
        { "plain/sub", false, "plain" },        /* under a regular file */
        { "plain/sub/deeper", false, "plain" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        char path [1024];
        s_path (path, sizeof path, cases [i].rel);
        gc_err_t err = { 0 };
        int rc = gc_fs_mkdirs (path, 0700, &err);
        struct stat st;
        if (cases [i].ok) {
            if (rc != 0 || stat (path, &st) != 0 || !S_ISDIR (st.st_mode))
                fail_msg ("%s: rc %d '%s'", cases [i].rel, rc, err.msg);
        }
        else
        if (rc != -1 || err.code != GC_E_IO || !strstr (err.msg, cases [i].needle))
            fail_msg ("%s: rc %d code %d '%s'", cases [i].rel, rc, err.code, err.msg);
    }
    //  The last directory gets the mode asked for, the ones above 0755.
    char path [1024];
    mode_t mask = umask (022);
    umask (mask);
    s_path (path, sizeof path, "m1/m2");
    assert_int_equal (gc_fs_mkdirs (path, 0700, NULL), 0);
    struct stat st;
    assert_int_equal (stat (path, &st), 0);
    assert_int_equal (st.st_mode & 0777, 0700);
    s_path (path, sizeof path, "m1");
    assert_int_equal (stat (path, &st), 0);
    assert_int_equal (st.st_mode & 0777, 0755 & ~mask);
}

static void
test_read_file (void **state)
{
    char path [1024];
    s_path (path, sizeof path, "data");
    gc_test_write_file (path, "hello\0world", 11);
    static const struct { size_t max; int rc, code; } cases [] = {
        { 11, 0, 0 }, { 1000, 0, 0 }, { 10, -1, GC_E_FORMAT }, { 0, -1, GC_E_FORMAT },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        char *buf = (char *) 1;
        size_t len = 99;
        gc_err_t err = { 0 };
        int rc = gc_fs_read_file (path, cases [i].max, &buf, &len, &err);
        if (rc != cases [i].rc || (rc && err.code != cases [i].code))
            fail_msg ("max %zu: rc %d code %d '%s'", cases [i].max, rc, err.code, err.msg);
        if (rc == 0) {
            assert_int_equal (len, 11);
            assert_memory_equal (buf, "hello\0world", 12);   /* NUL after the data */
        }
        else {
            assert_null (buf);
            assert_non_null (strstr (err.msg, "larger than"));
        }
        free (buf);
    }
    //  A file whose size stat reports as 0 but that has content: read by
    //  growing the buffer, bounded all the same.
    char *proc;
    size_t proc_len;
    assert_int_equal (gc_fs_read_file ("/proc/self/status", 1 << 20, &proc, &proc_len, NULL), 0);
    assert_true (proc_len > 100);
    assert_non_null (strstr (proc, "Name:"));
    free (proc);
    gc_err_t big;
    assert_int_equal (gc_fs_read_file ("/proc/self/status", 50, &proc, &proc_len, &big), -1);
    assert_int_equal (big.code, GC_E_FORMAT);
    assert_null (proc);
    //  Empty file, missing file, a directory.
    char *buf;
    size_t len;
    s_path (path, sizeof path, "empty");
    gc_test_write_file (path, "", 0);
    assert_int_equal (gc_fs_read_file (path, 10, &buf, &len, NULL), 0);
    assert_int_equal (len, 0);
    assert_string_equal (buf, "");
    free (buf);
    gc_err_t err;
    s_path (path, sizeof path, "missing");
    assert_int_equal (gc_fs_read_file (path, 10, &buf, &len, &err), -1);
    assert_int_equal (err.code, GC_E_IO);
    assert_int_equal (gc_fs_read_file (s_dir, 10, &buf, &len, &err), -1);
    assert_non_null (strstr (err.msg, "not a regular file"));
}

static size_t
s_entries (const char *dir)
{
    DIR *d = opendir (dir);
    assert_non_null (d);
    size_t n = 0;
    for (struct dirent *e; (e = readdir (d));)
        n += strcmp (e->d_name, ".") && strcmp (e->d_name, "..");
    closedir (d);
    return n;
}

static void
test_write_atomic (void **state)
{
    char dir [1024], path [1024];
    s_path (dir, sizeof dir, "w");
    assert_int_equal (gc_fs_mkdirs (dir, 0755, NULL), 0);
    s_path (path, sizeof path, "w/file");
    gc_test_write_file (path, "old content that is longer", 26);
    const char *texts [] = { "new", "", "third version\n" };
    const mode_t modes [] = { 0600, 0644, 0640 };
    for (size_t i = 0; i < 3; i++) {
        gc_err_t err = { 0 };
        if (gc_fs_write_atomic (path, texts [i], strlen (texts [i]), modes [i], &err))
            fail_msg ("%zu: %s", i, err.msg);
        char *buf;
        size_t len;
        assert_int_equal (gc_fs_read_file (path, 100, &buf, &len, NULL), 0);
        assert_string_equal (buf, texts [i]);
        free (buf);
        struct stat st;
        assert_int_equal (stat (path, &st), 0);
        assert_int_equal (st.st_mode & 0777, modes [i]);
        assert_int_equal (s_entries (dir), 1);  /* no temporary file left */
    }
    //  A directory that does not exist: an error, nothing created.
    gc_err_t err;
    s_path (path, sizeof path, "nodir/file");
    assert_int_equal (gc_fs_write_atomic (path, "x", 1, 0644, &err), -1);
    assert_int_equal (err.code, GC_E_IO);
    //  A name without a directory part goes to the current directory.
    s_path (path, sizeof path, "w");
    char cwd [1024];
    assert_non_null (getcwd (cwd, sizeof cwd));
    assert_int_equal (chdir (path), 0);
    assert_int_equal (gc_fs_write_atomic ("bare", "b", 1, 0644, NULL), 0);
    assert_int_equal (chdir (cwd), 0);
    assert_int_equal (s_entries (dir), 2);
}

//  What gc_fs_write_atomic would refuse is refused beforehand, leaving
//  nothing behind; what it would write passes, the file still absent.
static void
test_check_writable (void **state)
{
    char dir [1024];
    s_path (dir, sizeof dir, "c");
    assert_int_equal (gc_fs_mkdirs (dir, 0755, NULL), 0);
    static const struct { const char *rel; bool ok; const char *needle; } cases [] = {
        { "c/new.model", true, NULL },
        { "c", false, "is a directory" },
        { "c/missing/x.model", false, "cannot create a file next to it" },
        { "c/none/", false, "not a file name" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        char path [1024];
        s_path (path, sizeof path, cases [i].rel);
        gc_err_t err = { 0 };
        int rc = gc_fs_check_writable (path, &err);
        if (cases [i].ok ? rc != 0 : rc != -1 || err.code != GC_E_IO || !strstr (err.msg, cases [i].needle))
            fail_msg ("%s: rc %d code %d '%s'", cases [i].rel, rc, err.code, err.msg);
        assert_int_equal (s_entries (dir), 0);      /* no probe, no file left */
    }
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_mkdirs),
        cmocka_unit_test (test_read_file),
        cmocka_unit_test (test_write_atomic),
        cmocka_unit_test (test_check_writable),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
