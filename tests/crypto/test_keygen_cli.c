/*  gcnode keygen / gcnode id as a user runs them: files, modes, the printed
    peer id, openssl-compatible PEM, and one clear line + exit 2 on bad input. */
#include "gc_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gc_key.h"

static char *s_gcnode;
static char *s_dir;

static int
s_setup (void **state)
{
    s_gcnode = gc_test_build_path ("gcnode");
    s_dir = gc_test_tmpdir ("keygen");
    return 0;
}

static int
s_teardown (void **state)
{
    gc_test_rmtree (s_dir);
    free (s_dir);
    free (s_gcnode);
    return 0;
}

//  Run gcnode with args (%s in args is replaced by the temporary directory);
//  returns its output (caller frees) after checking exit code and needle.
static char *
s_expect (const char *args, int code, const char *needle)
{
    char expanded [1024], cmd [2048];
    snprintf (expanded, sizeof expanded, args, s_dir, s_dir);
    snprintf (cmd, sizeof cmd, "%s %s", s_gcnode, expanded);
    return gc_test_expect (cmd, code, needle);
}

static void
test_keygen_writes_keys_and_id_matches (void **state)
{
    char *out = s_expect ("keygen --out %s/keys --name alice", 0, "peer_id=");
    const char *line = strstr (out, "peer_id=");
    char id [17] = { 0 };
    memcpy (id, line + 8, 16);
    assert_int_equal (strspn (id, "0123456789abcdef"), 16);
    char key [512], pub [512];
    snprintf (key, sizeof key, "%s/keys/alice.key", s_dir);
    snprintf (pub, sizeof pub, "%s/keys/alice.pub", s_dir);
    struct stat st;
    assert_int_equal (stat (key, &st), 0);
    assert_int_equal (st.st_mode & 0777, 0600);
    assert_int_equal (stat (pub, &st), 0);
    assert_int_equal (st.st_mode & 0777, 0644);
    snprintf (key, sizeof key, "%s/keys", s_dir);
    assert_int_equal (stat (key, &st), 0);
    assert_int_equal (st.st_mode & 0777, 0700);

    //  `gcnode id` prints the same id for both files; the library agrees.
    char *o1 = s_expect ("id %s/keys/alice.key", 0, id);
    char *o2 = s_expect ("id %s/keys/alice.pub", 0, id);
    assert_string_equal (o1, o2);
    assert_int_equal (strlen (o1), 17);     /* 16 hex digits and a newline */
    gc_err_t err = { 0 };
    gc_key_t *k = gc_key_load_public (pub, &err);
    assert_non_null (k);
    assert_string_equal (gc_key_peer_id_hex (k), id);
    gc_key_destroy (&k);
    free (o1);
    free (o2);
    o1 = s_expect ("id --public %s/keys/alice.pub", 0, id);
    assert_int_equal (strlen (o1), 16 + 1 + 64 + 1);
    free (o1);

    //  Refuses to overwrite without --force; with it, a new identity.
    free (s_expect ("keygen --out %s/keys --name alice", 2, "alice.key exists; use --force"));
    char *again = s_expect ("keygen --out %s/keys --name alice --force", 0, "peer_id=");
    assert_null (strstr (again, id));
    free (again);
    free (out);
}

static void
test_openssl_reads_the_files (void **state)
{
    free (s_expect ("keygen --out %s/ossl --name n", 0, "peer_id="));
    char cmd [1024];
    snprintf (cmd, sizeof cmd, "openssl pkey -in %s/ossl/n.key -noout -text", s_dir);
    char *out = NULL;
    int rc = gc_test_run (cmd, &out);
    if (rc == 127) {                        /* no openssl binary: nothing to compare with */
        free (out);
        skip ();
    }
    assert_int_equal (rc, 0);
    assert_non_null (strstr (out, "ED25519 Private-Key"));
    free (out);
    snprintf (cmd, sizeof cmd, "openssl pkey -pubin -in %s/ossl/n.pub -noout -text", s_dir);
    assert_int_equal (gc_test_run (cmd, &out), 0);
    assert_non_null (strstr (out, "ED25519 Public-Key"));
    free (out);
}

static void
test_bad_input_exit_2_with_one_line (void **state)
{
    free (s_expect ("keygen --out %s/perm --name p", 0, "peer_id="));
    char path [512];
    snprintf (path, sizeof path, "%s/perm/p.key", s_dir);
    assert_int_equal (chmod (path, 0644), 0);
    snprintf (path, sizeof path, "%s/file", s_dir);
    gc_test_write_file (path, "x", 1);
    static const struct { const char *args; const char *needle; } cases [] = {
        { "id %s/perm/p.key", "private key is accessible by group or others (mode 0644); run chmod 600" },
        { "id %s/file", "not a PEM key file" },
        { "id %s/missing.key", "No such file or directory" },
        { "id", "give a key file" },
        { "id a b", "unexpected argument 'b'" },
        { "id --frobnicate x", "unknown option '--frobnicate'" },
        { "keygen", "--out DIR is required" },
        { "keygen --out", "option --out needs a value" },
        { "keygen --out %s/k --name ../evil", "--name '../evil'" },
        { "keygen --out %s/k --name .hidden", "--name '.hidden'" },
        { "keygen --out %s/file", "is not a directory" },
        { "keygen --out %s/no/such/dir", "No such file or directory" },
        { "keygen --out %s/k extra", "unexpected argument 'extra'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        char *out = s_expect (cases [i].args, 2, cases [i].needle);
        //  One line, prefixed with the command.
        assert_non_null (strstr (out, "gcnode "));
        assert_ptr_equal (strchr (out, '\n'), out + strlen (out) - 1);
        free (out);
    }
    free (s_expect ("keygen --help", 0, "usage: gcnode keygen"));
    free (s_expect ("id --help", 0, "usage: gcnode id"));
    free (s_expect ("--help", 0, "keygen"));
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_keygen_writes_keys_and_id_matches),
        cmocka_unit_test (test_openssl_reads_the_files),
        cmocka_unit_test (test_bad_input_exit_2_with_one_line),
    };
    return cmocka_run_group_tests (tests, s_setup, s_teardown);
}
