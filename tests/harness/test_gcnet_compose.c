/*  gcnet compose: what it writes for docker/scenarios/smoke.zpl (services,
    Byzantine profile, fixed addresses, per-peer keys and configs, the trust
    store, ownership), that a second run keeps the identities, and that bad
    options are refused with a message naming them. No Docker engine needed:
    tests/docker/smoke.sh runs the generated file for real. */
#include "gc_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    char *dir, *out, *gcnet, *scenario;
} s_env_t;

static int
s_setup (void **state)
{
    s_env_t *e = calloc (1, sizeof *e);
    assert_non_null (e);
    e->dir = gc_test_tmpdir ("gcnet_compose");
    assert_true (asprintf (&e->out, "%s/net", e->dir) > 0);
    e->gcnet = gc_test_build_path ("gcnet");
    e->scenario = gc_test_source_path ("docker/scenarios/smoke.zpl");
    *state = e;
    return 0;
}

static int
s_teardown (void **state)
{
    s_env_t *e = *state;
    gc_test_rmtree (e->dir);
    free (e->dir);
    free (e->out);
    free (e->gcnet);
    free (e->scenario);
    free (e);
    return 0;
}

static char *
s_read (const char *dir, const char *rel)
{
    char *path = NULL;
    assert_true (asprintf (&path, "%s/%s", dir, rel) > 0);
    FILE *f = fopen (path, "rb");
    if (!f)
        fail_msg ("%s: cannot read", path);
    char *buf = calloc (1, 1 << 16);
    assert_non_null (buf);
    size_t n = fread (buf, 1, (1 << 16) - 1, f);
    buf [n] = '\0';
    fclose (f);
    free (path);
    return buf;
}

static size_t
s_count (const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr (p, needle)); p += strlen (needle))
        n++;
    return n;
}

static void
s_generate (s_env_t *e, const char *extra)
{
    char *cmd = NULL;
    assert_true (asprintf (&cmd, "'%s' compose --scenario '%s' --out '%s' %s", e->gcnet, e->scenario,
                           e->out, extra) > 0);
    free (gc_test_expect (cmd, 0, "4 peers (1 Byzantine, profile 'byzantine')"));
    free (cmd);
}

static void
test_compose_file (void **state)
{
    s_env_t *e = *state;
    s_generate (e, "--project smoke-test --subnet 10.123.45.0/24");
    char *yml = s_read (e->out, "compose.yml");
    //  One service per peer, the Byzantine one (peer 3) alone in the profile.
    static const char *expected [] = {
        "  peer0:\n", "  peer1:\n", "  peer2:\n", "  peer3:\n",
        "    command: [\"run\", \"--resume\"]\n", "    restart: \"on-failure\"\n",
        "org.gcnode.role: \"byzantine\"", "org.gcnode.attack: \"untrusted\"",
        "- \"./keys/peer3:/etc/gcnode/keys:ro\"", "- \"./trust:/etc/gcnode/trust:ro\"",
        "- \"./peer2/gcnode.zpl:/etc/gcnode/gcnode.zpl:ro\"",
        "- \"./peer1/checkpoints:/var/lib/gcnode/checkpoints\"",
        "ipv4_address: \"10.123.45.2\"", "ipv4_address: \"10.123.45.5\"",
        "- \"peer3:10.123.45.5\"", "- subnet: \"10.123.45.0/24\"",
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected [0]; i++)
        if (!strstr (yml, expected [i]))
            fail_msg ("compose.yml lacks '%s':\n%s", expected [i], yml);
    assert_int_equal (s_count (yml, "profiles: [\"byzantine\"]"), 1);
    assert_int_equal (s_count (yml, "org.gcnode.role: \"honest\""), 3);
    assert_int_equal (s_count (yml, "- \"peer0:10.123.45.2\""), 4);     /* in every /etc/hosts */
    assert_null (strstr (yml, "\nversion:"));
    assert_null (strstr (yml, "\nname:"));
    //  Root: the image's own user owns keys and volumes; anyone else: compose
    //  runs the containers as that user.
    if (geteuid () == 0)
        assert_null (strstr (yml, "    user:"));
    else
        assert_non_null (strstr (yml, "    user: \""));
    free (yml);

    char *env = s_read (e->out, ".env");
    assert_string_equal (env, "COMPOSE_PROJECT_NAME=smoke-test\n");
    free (env);

    char *cfg = s_read (e->out, "peer3/gcnode.zpl");
    static const char *keys [] = {
        "index = \"3\"", "key = \"/etc/gcnode/keys/peer3.key\"", "endpoint = \"tcp://peer0:7100\"",
        "key = \"/etc/gcnode/trust/peer2.pub\"", "metrics = \"/var/lib/gcnode/metrics/peer3.jsonl\"",
        "checkpoint_dir = \"/var/lib/gcnode/checkpoints\"", "attack = \"untrusted\"",
        "curve = \"1\"",
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys [0]; i++)
        if (!strstr (cfg, keys [i]))
            fail_msg ("peer3/gcnode.zpl lacks '%s':\n%s", keys [i], cfg);
    free (cfg);

    //  Per peer, each secret (Ed25519, CURVE) in its own directory, 0600, owned by
    //  the container's user; each public half in trust/ only (where
    //  peers/N/key and peers/N/curve_key are derived from).
    static const struct { const char *secret, *public; } pairs [] = { { "key", "pub" }, { "curve", "curve.pub" } };
    for (int i = 0; i < 4; i++)
        for (size_t k = 0; k < sizeof pairs / sizeof pairs [0]; k++) {
            char path [4096];
            struct stat st;
            snprintf (path, sizeof path, "%s/keys/peer%d/peer%d.%s", e->out, i, i, pairs [k].secret);
            assert_int_equal (stat (path, &st), 0);
            assert_int_equal (st.st_mode & 0777, 0600);
            if (geteuid () == 0)
                assert_int_equal (st.st_uid, 10001);
            snprintf (path, sizeof path, "%s/keys/peer%d/peer%d.%s", e->out, i, i, pairs [k].public);
            assert_int_not_equal (stat (path, &st), 0);
            snprintf (path, sizeof path, "%s/trust/peer%d.%s", e->out, i, pairs [k].public);
            assert_int_equal (stat (path, &st), 0);
        }
}

static void
test_keys_are_kept (void **state)
{
    s_env_t *e = *state;
    s_generate (e, "");
    char *before = s_read (e->out, "trust/peer1.pub");
    s_generate (e, "--restart always");
    char *after = s_read (e->out, "trust/peer1.pub");
    assert_string_equal (before, after);
    //  A directory from before the CURVE keys were published gets them.
    char *curve = s_read (e->out, "trust/peer1.curve.pub"), from [4096], to [4096];
    snprintf (from, sizeof from, "%s/trust/peer1.curve.pub", e->out);
    snprintf (to, sizeof to, "%s/keys/peer1/peer1.curve.pub", e->out);
    assert_int_equal (rename (from, to), 0);
    s_generate (e, "--restart always");
    char *curve_after = s_read (e->out, "trust/peer1.curve.pub");
    assert_string_equal (curve, curve_after);
    free (curve);
    free (curve_after);
    char *yml = s_read (e->out, "compose.yml");
    assert_non_null (strstr (yml, "    restart: \"always\"\n"));
    free (yml);
    free (before);
    free (after);
}

static void
test_bad_options (void **state)
{
    s_env_t *e = *state;
    static const struct {
        const char *options;        /* after gcnet compose */
        const char *needle;
    } cases [] = {
        { "--scenario S --out O --subnet 10.0.0.0/30", "room for 1 peers" },
        { "--scenario S --out O --subnet 10.0.0.1/24", "host part is not zero" },
        { "--scenario S --out O --subnet 10.0.0/24", "--subnet '10.0.0/24'" },
        { "--scenario S --out O --restart sometimes", "--restart 'sometimes'" },
        { "--scenario S --out O --image 'a b'", "--image 'a b'" },
        { "--scenario S --out O --port 70000", "--port" },
        { "--scenario S --out O --uid x", "--uid" },
        { "--scenario S", "--out DIR are required" },
        { "--scenario /nonexistent.zpl --out O", "nonexistent" },
        { "--scenario S --out O --bogus", "unknown option '--bogus'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        //  S and O stand for the real scenario and output directory.
        char opts [512] = "", *p = opts;
        for (const char *c = cases [i].options; *c && p < opts + sizeof opts - 256; c++) {
            if (c [0] == ' ' && c [1] == 'S' && (c [2] == ' ' || !c [2]))
                p += sprintf (p, " '%s'", e->scenario), c++;
            else
            if (c [0] == ' ' && c [1] == 'O' && (c [2] == ' ' || !c [2]))
                p += sprintf (p, " '%s'", e->out), c++;
            else
                *p++ = *c;
        }
        *p = '\0';
        char *cmd = NULL;
        assert_true (asprintf (&cmd, "'%s' compose %s", e->gcnet, opts) > 0);
        free (gc_test_expect (cmd, 2, cases [i].needle));
        free (cmd);
    }
    //  Nothing was written by the refused runs.
    struct stat st;
    assert_int_not_equal (stat (e->out, &st), 0);
}

//  run and suite share their option parser: their errors, without a network.
static void
test_run_and_suite_options (void **state)
{
    s_env_t *e = *state;
    static const struct { const char *options, *needle; } cases [] = {
        { "run --progress x S", "gcnet run: --progress 'x' (expected auto, on or off)" },
        { "suite --progress sometimes", "gcnet suite: --progress 'sometimes'" },
        { "suite --bogus", "unknown option '--bogus'" },
        { "run", "expected one scenario file" },
        { "bogus", "unknown command 'bogus'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        char *cmd = NULL;
        const char *s_at = strstr (cases [i].options, " S");
        if (s_at)
            assert_true (asprintf (&cmd, "'%s' %.*s '%s'", e->gcnet, (int) (s_at - cases [i].options),
                                   cases [i].options, e->scenario) > 0);
        else
            assert_true (asprintf (&cmd, "'%s' %s", e->gcnet, cases [i].options) > 0);
        free (gc_test_expect (cmd, 2, cases [i].needle));
        free (cmd);
    }
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test_setup_teardown (test_compose_file, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_keys_are_kept, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_run_and_suite_options, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_bad_options, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
