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
    assert_int_equal (len, 104 + 8 * S_N + 32);
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
        cmocka_unit_test_setup_teardown (test_kill_9_always_resumes, s_setup, s_teardown),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
