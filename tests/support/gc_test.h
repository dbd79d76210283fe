/*  gc_test — the one include for a cmocka test, plus the common setup. */
#ifndef GC_TEST_H
#define GC_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/*  A fresh, empty directory under $TMPDIR for this test; removed (with its
    contents) by gc_test_rmtree. Returns a static buffer's copy (caller frees). */
char *gc_test_tmpdir (const char *tag);
/*  n N(0, 1) floats drawn from seed (stream 0); the caller frees. */
float *gc_test_normal (size_t n, uint64_t seed);
void  gc_test_rmtree (const char *path);
/*  Write bytes to path; fails the test on error. */
void  gc_test_write_file (const char *path, const void *data, size_t size);
/*  $GC_BUILD_DIR/rel or $GC_SOURCE_DIR/rel (malloc'd). */
char *gc_test_build_path (const char *rel);
char *gc_test_source_path (const char *rel);
/*  Run a command line through /bin/sh, capture stdout+stderr into out
    (malloc'd, NUL-terminated); returns the exit status or -1. */
int   gc_test_run (const char *cmdline, char **out);
/*  Run cmdline; fail the test unless it exits with code and its output
    contains needle. Returns the output (caller frees). */
char *gc_test_expect (const char *cmdline, int code, const char *needle);

#endif
