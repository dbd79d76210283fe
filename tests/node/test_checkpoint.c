/*  Checkpoints: round trip; every truncation and every flipped byte is
    refused with a reason and the previous checkpoint is used; and a peer
    killed with SIGKILL at random moments always resumes. */
#include "gc_test.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gc_checkpoint.h"
#include "gc_rng.h"

#define S_N 10

static char *s_dir;

static int
s_setup (void **state)
{
    s_dir = gc_test_tmpdir ("ckpt");
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
s_make (gc_checkpoint_t *c, float *x, float *v, uint64_t round)
{
    memset (c, 0, sizeof *c);
    c->round = round;
    c->seq = 1000 + round;
    c->n = S_N;
    snprintf (c->spec, sizeof c->spec, "4-2");
    for (int i = 0; i < S_N; i++) {
        x [i] = (float) round + 0.5f * (float) i;
        v [i] = -(float) i;
    }
    c->x = x;
    c->v = v;
}

static void
s_reader (gc_checkpoint_t *c, float *x, float *v)
{
    memset (c, 0, sizeof *c);
    c->n = S_N;
    snprintf (c->spec, sizeof c->spec, "4-2");
    c->x = x;
    c->v = v;
}

static int s_refusals;
static char s_last_refusal [256];

static void
s_count (void *ctx, const char *msg)
{
    s_refusals++;
    snprintf (s_last_refusal, sizeof s_last_refusal, "%s", msg);
}

static void
test_round_trip_and_pruning (void **state)
{
    float x [S_N], v [S_N], rx [S_N], rv [S_N];
    gc_checkpoint_t c, r;
    for (uint64_t round = 1; round <= 5; round++) {
        s_make (&c, x, v, round * 10);
        assert_int_equal (gc_checkpoint_save (s_dir, &c, NULL), 0);
    }
    s_reader (&r, rx, rv);
    char path [1024];
    assert_int_equal (gc_checkpoint_load_newest (s_dir, &r, s_count, NULL, path, sizeof path, NULL), 0);
    assert_int_equal (r.round, 50);
    assert_int_equal (r.seq, 1050);
    assert_memory_equal (rx, x, sizeof x);
    assert_memory_equal (rv, v, sizeof v);
    //  only the newest GC_CHECKPOINT_KEEP remain
    char old [1024];
    snprintf (old, sizeof old, "%s/ckpt-%020d.gcc", s_dir, 10);
    assert_int_not_equal (access (old, F_OK), 0);
    //  a checkpoint of another model is refused
    gc_checkpoint_t other;
    s_reader (&other, rx, rv);
    snprintf (other.spec, sizeof other.spec, "4-3");
    gc_err_t err = { 0 };
    assert_int_equal (gc_checkpoint_load_file (path, &other, &err), -1);
    assert_non_null (strstr (err.msg, "this peer runs 4-3"));
}

//  Damage the newest checkpoint; the loader reports it and falls back.
static void
s_expect_fallback (const uint8_t *image, size_t len, const char *newest)
{
    gc_test_write_file (newest, image, len);
    float rx [S_N], rv [S_N];
    gc_checkpoint_t r;
    s_reader (&r, rx, rv);
    s_refusals = 0;
    assert_int_equal (gc_checkpoint_load_newest (s_dir, &r, s_count, NULL, NULL, 0, NULL), 0);
    assert_int_equal (s_refusals, 1);
    assert_int_equal (r.round, 40);
}

static void
test_damage_is_refused_and_previous_used (void **state)
{
    float x [S_N], v [S_N];
    gc_checkpoint_t c;
    s_make (&c, x, v, 40);
    assert_int_equal (gc_checkpoint_save (s_dir, &c, NULL), 0);
    s_make (&c, x, v, 60);
    assert_int_equal (gc_checkpoint_save (s_dir, &c, NULL), 0);
    char newest [1024];
    snprintf (newest, sizeof newest, "%s/ckpt-%020d.gcc", s_dir, 60);
    uint8_t image [512];
    FILE *f = fopen (newest, "rb");
    size_t len = fread (image, 1, sizeof image, f);
    fclose (f);
    assert_int_equal (len, 144 + 8 * S_N + 32);
    for (size_t cut = 0; cut < len; cut++) {
        s_expect_fallback (image, cut, newest);
        assert_non_null (strstr (s_last_refusal, newest));
    }
    for (size_t at = 0; at < len; at++) {
        uint8_t damaged [512];
        memcpy (damaged, image, len);
        damaged [at] ^= 0x10;
        s_expect_fallback (damaged, len, newest);
    }
    gc_test_write_file (newest, image, len);
}

static bool
s_exists (uint64_t round)
{
    char path [1024];
    snprintf (path, sizeof path, "%s/ckpt-%020llu.gcc", s_dir, (unsigned long long) round);
    return access (path, F_OK) == 0;
}

//  Sequences of saves by different runs, models and peers in one directory:
//  a save prunes only its own run's older files and never the one it just
//  wrote. Before, pruning kept the three highest rounds of any file, so a
//  second run's (or a new model's) checkpoints below the old maximum were
//  deleted right after each successful save.
static void
test_prune_keeps_this_runs_newest (void **state)
{
    static const struct {
        uint8_t     run;            /* run id's first byte */
        uint8_t     peer;           /* peer id's first byte */
        const char *spec;
        uint64_t    round;
    } saves [] = {
        { 1, 1, "4-2", 10 }, { 1, 1, "4-2", 20 }, { 1, 1, "4-2", 30 }, { 1, 1, "4-2", 40 },
        { 1, 1, "4-2", 50 },        /* run 1 keeps 30, 40, 50 */
        { 2, 1, "4-2", 5 },         /* a second run of the same peer and model */
        { 3, 1, "4-9", 6 },         /* another model (same size) */
        { 4, 2, "4-2", 7 },         /* another peer sharing the directory */
        { 2, 1, "4-2", 8 }, { 2, 1, "4-2", 9 }, { 2, 1, "4-2", 11 },    /* run 2: 8, 9, 11 */
    };
    static const struct { uint64_t round; bool exists; } after [] = {
        { 10, false }, { 20, false }, { 30, true }, { 40, true }, { 50, true },
        { 5, false }, { 6, true }, { 7, true }, { 8, true }, { 9, true }, { 11, true },
    };
    float x [S_N], v [S_N];
    for (size_t i = 0; i < sizeof saves / sizeof saves [0]; i++) {
        gc_checkpoint_t c;
        s_make (&c, x, v, saves [i].round);
        c.run [0] = saves [i].run;
        c.peer [0] = saves [i].peer;
        snprintf (c.spec, sizeof c.spec, "%s", saves [i].spec);
        assert_int_equal (gc_checkpoint_save (s_dir, &c, NULL), 0);
        if (!s_exists (saves [i].round))
            fail_msg ("save %zu (run %d, round %llu) was pruned right after it was written", i,
                      saves [i].run, (unsigned long long) saves [i].round);
    }
    for (size_t i = 0; i < sizeof after / sizeof after [0]; i++)
        if (s_exists (after [i].round) != after [i].exists)
            fail_msg ("round %llu: %s", (unsigned long long) after [i].round,
                      after [i].exists ? "deleted" : "kept");
}

//  What binds a checkpoint: another peer's or another network's is refused
//  with the reason; a version 1 file is refused with a hint; the loaded run
//  id is handed back.
static void
test_binding_is_checked (void **state)
{
    float x [S_N], v [S_N], rx [S_N], rv [S_N];
    gc_checkpoint_t c, r;
    s_make (&c, x, v, 10);
    c.network [0] = 0xAB;
    c.peer [0] = 3;
    c.run [0] = 0x5A;
    assert_int_equal (gc_checkpoint_save (s_dir, &c, NULL), 0);
    char path [1024];
    snprintf (path, sizeof path, "%s/ckpt-%020d.gcc", s_dir, 10);
    static const struct { uint8_t network, peer; const char *why; } cases [] = {
        { 0xAB, 3, NULL }, { 0xAB, 4, "another peer" }, { 0xAC, 3, "another network" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases [0]; i++) {
        s_reader (&r, rx, rv);
        r.network [0] = cases [i].network;
        r.peer [0] = cases [i].peer;
        gc_err_t err = { 0 };
        int rc = gc_checkpoint_load_file (path, &r, &err);
        if (!cases [i].why) {
            assert_int_equal (rc, 0);
            assert_int_equal (r.run [0], 0x5A);
        }
        else {
            assert_int_equal (rc, -1);
            assert_non_null (strstr (err.msg, cases [i].why));
        }
    }
    //  a version 1 file (the layout before the binding)
    uint8_t image [512];
    FILE *f = fopen (path, "rb");
    size_t len = fread (image, 1, sizeof image, f);
    fclose (f);
    image [8] = 1;
    gc_test_write_file (path, image, len);
    s_reader (&r, rx, rv);
    r.network [0] = 0xAB;
    r.peer [0] = 3;
    gc_err_t err = { 0 };
    assert_int_equal (gc_checkpoint_load_file (path, &r, &err), -1);
    assert_non_null (strstr (err.msg, "format version 1"));
}

//  At start: a directory that cannot be created or written is an error (it
//  was ignored: the peer ran without crash safety and exited 0); a fresh run
//  in a directory holding this peer's checkpoints is refused, a resume is
//  not; another peer's files do not count. An over-long path is an error.
static void
test_open_checks_the_directory (void **state)
{
    float x [S_N], v [S_N];
    gc_checkpoint_t c;
    s_make (&c, x, v, 10);
    c.peer [0] = 1;
    char file [1024], sub [1200];
    snprintf (file, sizeof file, "%s/a-file", s_dir);
    gc_test_write_file (file, (const uint8_t *) "x", 1);
    snprintf (sub, sizeof sub, "%s/ckpt", file);
    gc_err_t err = { 0 };
    assert_int_equal (gc_checkpoint_open (sub, &c, false, &err), -1);
    assert_int_equal (gc_checkpoint_open (sub, &c, true, NULL), -1);
    snprintf (sub, sizeof sub, "%s/ckpt", s_dir);
    assert_int_equal (gc_checkpoint_open (sub, &c, false, NULL), 0);       /* created, empty */
    assert_int_equal (gc_checkpoint_save (sub, &c, NULL), 0);
    err = (gc_err_t) { 0 };
    assert_int_equal (gc_checkpoint_open (sub, &c, false, &err), -1);
    assert_non_null (strstr (err.msg, "--resume"));
    assert_int_equal (gc_checkpoint_open (sub, &c, true, NULL), 0);
    c.peer [0] = 2;
    assert_int_equal (gc_checkpoint_open (sub, &c, false, NULL), 0);
    char deep [1100];
    memset (deep, 'd', sizeof deep - 1);
    deep [sizeof deep - 1] = '\0';
    assert_int_equal (gc_checkpoint_save (deep, &c, NULL), -1);
    assert_int_equal (gc_checkpoint_open (deep, &c, false, NULL), -1);
}

//  The sequence lease file: none, a round trip, damage of every byte refused.
static void
test_seq_lease_file (void **state)
{
    uint64_t end = 7;
    assert_int_equal (gc_checkpoint_lease_read (s_dir, &end, NULL), 1);
    assert_int_equal (end, 7);
    assert_int_equal (gc_checkpoint_lease_write (s_dir, 1ULL << 62, NULL), 0);
    assert_int_equal (gc_checkpoint_lease_read (s_dir, &end, NULL), 0);
    assert_int_equal (end, 1ULL << 62);
    char path [1024];
    snprintf (path, sizeof path, "%s/seq.lease", s_dir);
    uint8_t image [64];
    FILE *f = fopen (path, "rb");
    size_t len = fread (image, 1, sizeof image, f);
    fclose (f);
    assert_int_equal (len, 48);
    for (size_t at = 0; at <= len; at++) {
        uint8_t damaged [64];
        memcpy (damaged, image, len);
        if (at < len)
            damaged [at] ^= 0x01;
        gc_test_write_file (path, damaged, at < len ? len : len - 1);    /* last: truncated */
        gc_err_t err = { 0 };
        assert_int_equal (gc_checkpoint_lease_read (s_dir, &end, &err), -1);
        assert_non_null (strstr (err.msg, "damaged sequence lease"));
    }
}

//  A peer killed with SIGKILL at random moments (checkpoints every round,
//  so many kills land inside a write) always resumes, never from a torn file,
//  and its round never goes backwards.
static void
test_kill_9_always_resumes (void **state)
{
    char *gcnode = gc_test_build_path ("gcnode");
    char cmd [4096];
    snprintf (cmd, sizeof cmd, "cd %s && %s keygen --out . --name p >/dev/null", s_dir, gcnode);
    assert_int_equal (system (cmd), 0);
    char cfg [1024];
    snprintf (cfg, sizeof cfg, "%s/p.zpl", s_dir);
    FILE *f = fopen (cfg, "w");
    fprintf (f, "node\n    index = 0\n    key = \"%s/p.key\"\n    checkpoint_dir = \"%s/ckpt\"\n"
                "    checkpoint_every = 1\n    eval_every = 0\n    progress = \"off\"\n"
                "peers\n    0\n        endpoint = \"ipc://%s/p.sock\"\n        key = \"%s/p.pub\"\n"
                "train\n    data = \"synthetic:2000:200:64\"\n    model = \"64-512-512-10\"\n"
                "    rounds = 100000\n    local_steps = 1\n"
                "gossip\n    aggregator = \"mean\"\n",
             s_dir, s_dir, s_dir, s_dir);
    fclose (f);
    gc_rng_t rng;
    gc_rng_init (&rng, 2024, 0);
    long last = -1;
    int resumed = 0;
    for (int kill_no = 0; kill_no < 50; kill_no++) {
        char log [1024];
        snprintf (log, sizeof log, "%s/run.log", s_dir);
        unlink (log);       /* else the wait below may see the previous run's log (ops) */
        pid_t pid = fork ();
        assert_true (pid >= 0);
        if (pid == 0) {
            freopen (log, "w", stderr);
            freopen ("/dev/null", "w", stdout);
            execl (gcnode, gcnode, "run", "--config", cfg, "--resume", NULL);
            _exit (127);
        }
        //  wait until the peer has resumed (or started fresh), then kill it
        //  at a random moment of its run
        for (int wait = 0; wait < 600; wait++) {
            char *seen = NULL;
            snprintf (cmd, sizeof cmd, "grep -c -e 'starting fresh' -e 'resumed from' %s", log);
            int found = gc_test_run (cmd, &seen) == 0;
            free (seen);
            if (found)
                break;
            usleep (50000);
        }
        usleep (20000 + (useconds_t) gc_rng_below (&rng, 250000));
        kill (pid, SIGKILL);
        int status;
        waitpid (pid, &status, 0);
        char *out = NULL;
        snprintf (cmd, sizeof cmd, "cat %s", log);
        gc_test_run (cmd, &out);
        assert_null (strstr (out, "checkpoint refused"));
        const char *at = strstr (out, "(round ");
        if (at) {
            long round = atol (at + 7);
            assert_true (round >= last);
            last = round;
            resumed++;
        }
        else if (!strstr (out, "starting fresh"))
            fail_msg ("restart %d neither resumed nor started fresh:\n%s", kill_no, out);
        else
            assert_true (last < 0);     /* fresh only while no checkpoint exists */
        free (out);
    }
    print_message ("50 kills, %d resumes, last resumed round %ld\n", resumed, last);
    assert_true (resumed >= 45);
    free (gcnode);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test_setup_teardown (test_round_trip_and_pruning, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_damage_is_refused_and_previous_used, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_prune_keeps_this_runs_newest, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_binding_is_checked, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_open_checks_the_directory, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_seq_lease_file, s_setup, s_teardown),
        cmocka_unit_test_setup_teardown (test_kill_9_always_resumes, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
