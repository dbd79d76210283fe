/*  gcnet on real networks of gcnode processes: the fast scenarios pass, and
    nothing outlives gcnet (after success, after Ctrl-C, after kill -9).

    One source, one executable per case (GC_CASE, tests/harness/CMakeLists.txt),
    so that ctest shows and times each case. The checks are about outcomes
    (exit codes, reports, processes), never about how long anything took. */
#include "gc_test.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gc_json.h"
#include "gc_proc.h"
#include "gc_time.h"

#ifndef GC_CASE
#define GC_CASE "baseline"
#endif

typedef enum { S_RUN, S_NETNS, S_INTERRUPT, S_KILL9 } s_kind_t;

typedef void (s_check_fn) (const char *out);
static s_check_fn s_check_thin_links;

static const struct {
    const char *name;
    const char *scenario;           /* under the source tree; NULL: s_long */
    s_kind_t    kind;
    const char *needs;              /* a gcnode feature ("`node/control`", "--resume"), or NULL */
    s_check_fn *check;              /* more about the run's output directory, or NULL */
} s_cases [] = {
    { "baseline", "configs/scenarios/fast/baseline.zpl", S_RUN, NULL, NULL },
    { "crash_restart", "configs/scenarios/fast/crash-restart.zpl", S_RUN, "--resume", NULL },
    { "freeze", "configs/scenarios/fast/freeze.zpl", S_RUN, NULL, NULL },
    { "partition", "configs/scenarios/fast/partition.zpl", S_RUN, "`node/control`", NULL },
    { "drop", "configs/scenarios/fast/drop.zpl", S_RUN, "`node/control`", NULL },
    { "resume_all", "configs/scenarios/fast/resume-all.zpl", S_RUN, "--resume", NULL },
    { "interrupt", NULL, S_INTERRUPT, NULL, NULL },
    { "kill9", NULL, S_KILL9, NULL, NULL },
    { "netns", "configs/scenarios/fast/baseline.zpl", S_NETNS, NULL, NULL },
    { "thin_links", "configs/scenarios/fast/thin-links.zpl", S_RUN, "`node/control`", s_check_thin_links },
};

//  A run that would go on for long: it is interrupted or killed.
static const char *s_long =
    "scenario\n    name = \"long\"\n    peers = 4\n    timeout_s = 600\n"
    "node\n    eval_every = 1000\n"
    "train\n    data = \"synthetic:12000:2000:784\"\n    rounds = 1000000\n"
    "assert\n    min_rounds = \">= 1000000\"\n";

#define S_PEERS_LONG 4

typedef struct {
    char *dir;                      /* this test's temporary directory */
    char *gcnet, *gcnode;
} s_env_t;

static char *
s_path (const char *dir, const char *name)
{
    char *path = NULL;
    assert_true (asprintf (&path, "%s/%s", dir, name) > 0);
    return path;
}

//  The pids gcnet recorded ("peer pid" lines); returns how many.
static int
s_pids (const char *out, pid_t *pids, int max)
{
    char *path = s_path (out, "pids.txt");
    FILE *f = fopen (path, "r");
    free (path);
    int n = 0;
    unsigned peer;
    int pid;
    while (f && n < max && fscanf (f, "%u %d", &peer, &pid) == 2)
        pids [n++] = pid;
    if (f)
        fclose (f);
    return n;
}

//  kill (pid, 0) fails with ESRCH for every process gcnet ever started.
static void
s_assert_all_gone (const char *out, double wait_s)
{
    pid_t pids [64];
    int n = s_pids (out, pids, 64);
    assert_true (n > 0);
    double deadline = gc_now_s () + wait_s;
    for (int i = 0; i < n; i++) {
        //  Orphans come to us (child subreaper): reap them while waiting.
        while (kill (pids [i], 0) == 0 && gc_now_s () < deadline) {
            while (waitpid (-1, NULL, WNOHANG) > 0)
                ;
            usleep (50 * 1000);
        }
        if (kill (pids [i], 0) == 0 || errno != ESRCH)
            fail_msg ("process %d (recorded in %s/pids.txt) is still there", (int) pids [i], out);
    }
}

static gc_json_t *
s_report (const char *out)
{
    char *path = s_path (out, "report.json");
    FILE *f = fopen (path, "rb");
    if (!f)
        fail_msg ("%s is missing", path);
    free (path);
    static char text [1 << 20];
    size_t n = fread (text, 1, sizeof text, f);
    fclose (f);
    gc_err_t err = { 0 };
    gc_json_t *j = gc_json_parse (text, n, &err);
    if (!j)
        fail_msg ("report.json: %s", err.msg);
    return j;
}

//  The last line of peer's metrics file.
static gc_json_t *
s_last_metrics (const char *out, unsigned peer)
{
    char name [32], line [1 << 16], last [1 << 16] = "";
    snprintf (name, sizeof name, "peer%u.jsonl", peer);
    char *path = s_path (out, name);
    FILE *f = fopen (path, "r");
    if (!f)
        fail_msg ("%s is missing", path);
    while (fgets (line, sizeof line, f))
        if (*line == '{')
            memcpy (last, line, sizeof line);
    fclose (f);
    gc_err_t err = { 0 };
    gc_json_t *j = gc_json_parse (last, strlen (last), &err);
    if (!j)
        fail_msg ("%s: last line: %s", path, err.msg);
    free (path);
    return j;
}

//  thin-links.zpl: peers 0 and 1 on capped links budget their sends down
//  to the policy's floor (R/10 = 0.01), 2 and 3 keep top-k's R = 0.1.
static void
s_check_thin_links (const char *out)
{
    for (unsigned peer = 0; peer < 4; peer++) {
        gc_json_t *m = s_last_metrics (out, peer);
        const gc_json_t *b = gc_json_get (m, "send_budget");
        assert_non_null (b);
        double budget = b->number;
        printf ("peer %u (%s link): send_budget %.4f\n", peer, peer < 2 ? "20 kB/s" : "uncapped", budget);
        if (peer < 2)
            assert_true (budget < 0.02);
        else
            assert_true (budget > 0.09 && budget < 0.11);
        gc_json_destroy (&m);
    }
}

static bool
s_has_feature (const s_env_t *env, const char *needs)
{
    char *cmd = NULL, *out = NULL;
    assert_true (asprintf (&cmd, "'%s' run --help-config; '%s' run --help", env->gcnode, env->gcnode) > 0);
    gc_test_run (cmd, &out);
    bool has = out && strstr (out, needs);
    free (cmd);
    free (out);
    return has;
}

static void
s_run (const s_env_t *env, const char *scenario, bool netns, s_check_fn *check)
{
    char *out = s_path (env->dir, "out"), *cmd = NULL, *text = NULL;
    assert_true (asprintf (&cmd, "'%s' run '%s' --out '%s' --progress off%s", env->gcnet, scenario, out,
                           netns ? " --netns" : "") > 0);
    int rc = gc_test_run (cmd, &text);
    if (rc != 0) {
        //  all of it: cmocka's message buffer is short
        printf ("%s\n", text ? text : "");
        fail_msg ("%s: exit %d (output above; the run is in %s)", cmd, rc, out);
    }
    //  scripts read the last line of stdout; stderr (progress) is mixed in
    //  here, so look for the line rather than at the very end
    char *line = strstr (text, "\nhonest_mean_accuracy=0.");
    assert_non_null (line);
    gc_json_t *report = s_report (out);
    assert_string_equal (gc_json_str (report, "status", ""), "completed");
    assert_true (gc_json_get (report, "passed")->number == 1);
    gc_json_destroy (&report);
    s_assert_all_gone (out, 10);
    if (check)
        check (out);
    free (text);
    free (cmd);
    free (out);
}

//  Start gcnet on the long scenario and wait until every peer trains.
static pid_t
s_start_long (const s_env_t *env, char **out_p)
{
    char *scenario = s_path (env->dir, "long.zpl");
    gc_test_write_file (scenario, s_long, strlen (s_long));
    char *out = s_path (env->dir, "out"), *log = s_path (env->dir, "gcnet.log");
    const char *argv [] = { env->gcnet, "run", scenario, "--out", out, "--progress", "off", NULL };
    gc_proc_opts_t opts = { .argv = argv, .stdout_path = log, .stderr_path = log };
    gc_err_t err = { 0 };
    pid_t pid = gc_proc_spawn (&opts, &err);
    if (pid < 0)
        fail_msg ("%s", err.msg);
    //  every peer started and wrote a metrics line
    double deadline = gc_now_s () + 300;
    bool ready = false;
    while (!ready && gc_now_s () < deadline) {
        pid_t pids [8];
        ready = s_pids (out, pids, 8) == S_PEERS_LONG;
        for (int i = 0; ready && i < S_PEERS_LONG; i++) {
            char name [32];
            snprintf (name, sizeof name, "peer%d.jsonl", i);
            char *metrics = s_path (out, name);
            struct stat st;
            ready = stat (metrics, &st) == 0 && st.st_size > 0;
            free (metrics);
        }
        if (waitpid (pid, NULL, WNOHANG) == pid)
            fail_msg ("gcnet ended before its peers trained (see %s)", log);
        usleep (100 * 1000);
    }
    if (!ready)
        fail_msg ("the peers did not start training (see %s)", log);
    free (scenario);
    free (log);
    *out_p = out;
    return pid;
}

static int
s_wait_exit (pid_t pid, double wait_s)
{
    double deadline = gc_now_s () + wait_s;
    int status;
    while (gc_now_s () < deadline) {
        if (waitpid (pid, &status, WNOHANG) == pid)
            return status;
        usleep (50 * 1000);
    }
    kill (pid, SIGKILL);
    waitpid (pid, &status, 0);
    fail_msg ("gcnet did not end within %.0f s", wait_s);
    return -1;
}

//  Ctrl-C: gcnet stops every peer, writes a report marked interrupted,
//  exits 130, and leaves no process behind.
static void
s_interrupt (const s_env_t *env)
{
    char *out = NULL;
    pid_t pid = s_start_long (env, &out);
    assert_int_equal (kill (pid, SIGINT), 0);
    int status = s_wait_exit (pid, 120);
    assert_true (WIFEXITED (status));
    assert_int_equal (WEXITSTATUS (status), 130);
    gc_json_t *report = s_report (out);
    assert_string_equal (gc_json_str (report, "status", ""), "interrupted");
    assert_true (gc_json_get (report, "interrupted")->number == 1);
    assert_true (gc_json_get (report, "passed")->number == 0);
    gc_json_destroy (&report);
    s_assert_all_gone (out, 1);
    free (out);
}

//  kill -9 of gcnet: it cannot clean up, the kernel does (PR_SET_PDEATHSIG).
static void
s_kill9 (const s_env_t *env)
{
    assert_int_equal (prctl (PR_SET_CHILD_SUBREAPER, 1), 0);
    char *out = NULL;
    pid_t pid = s_start_long (env, &out);
    assert_int_equal (kill (pid, SIGKILL), 0);
    int status = s_wait_exit (pid, 30);
    assert_true (WIFSIGNALED (status));
    s_assert_all_gone (out, 30);
    free (out);
}

static void
test_case (void **state)
{
    (void) state;
    size_t c;
    for (c = 0; c < sizeof s_cases / sizeof s_cases [0]; c++)
        if (!strcmp (s_cases [c].name, GC_CASE))
            break;
    if (c == sizeof s_cases / sizeof s_cases [0])
        fail_msg ("unknown case %s", GC_CASE);
    s_env_t env = { .gcnet = gc_test_build_path ("gcnet"), .gcnode = gc_test_build_path ("gcnode") };
    if (s_cases [c].needs && !s_has_feature (&env, s_cases [c].needs)) {
        printf ("gcnode lacks %s: %s skipped\n", s_cases [c].needs, GC_CASE);
        free (env.gcnet);
        free (env.gcnode);
        skip ();
    }
    if (s_cases [c].kind == S_NETNS && (geteuid () != 0 || !gc_command_which ("ip") || !gc_command_which ("tc"))) {
        printf ("--netns needs root and iproute2: skipped\n");
        free (env.gcnet);
        free (env.gcnode);
        skip ();
    }
    env.dir = gc_test_tmpdir ("gcnet");
    char *scenario = s_cases [c].scenario ? gc_test_source_path (s_cases [c].scenario) : NULL;
    switch (s_cases [c].kind) {
        case S_RUN: s_run (&env, scenario, false, s_cases [c].check); break;
        case S_NETNS: s_run (&env, scenario, true, s_cases [c].check); break;
        case S_INTERRUPT: s_interrupt (&env); break;
        case S_KILL9: s_kill9 (&env); break;
    }
    gc_test_rmtree (env.dir);
    free (env.dir);
    free (scenario);
    free (env.gcnet);
    free (env.gcnode);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_case),
    };
    return cmocka_run_group_tests_name (GC_CASE, tests, NULL, NULL);
}
