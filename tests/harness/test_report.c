/*  What a run measured, without running anything: a result built by hand
    (peers, their metrics, their final model files) goes through the summary,
    the assertions, the report files and the printed verdict. */
#include "gc_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gc_json.h"
#include "gc_report.h"

static void
s_write_model (const char *path, const float *x, uint64_t n, uint64_t claimed)
{
    FILE *f = fopen (path, "wb");
    assert_non_null (f);
    fwrite ("GCMODEL1", 1, 8, f);
    for (int i = 0; i < 8; i++)
        fputc ((int) ((claimed >> (8 * i)) & 0xff), f);
    fwrite (x, sizeof *x, n, f);        /* the test host is little-endian (x86) */
    fclose (f);
}

static void
test_model_files (void **state)
{
    (void) state;
    char *dir = gc_test_tmpdir ("report");
    char path [512];
    float x [3] = { 1, -2, 3.5f };
    float *got;
    size_t n;
    gc_err_t err = { 0 };
    snprintf (path, sizeof path, "%s/ok.model", dir);
    s_write_model (path, x, 3, 3);
    assert_int_equal (gc_report_read_model (path, &got, &n, &err), 0);
    assert_int_equal (n, 3);
    assert_true (got [0] == 1 && got [1] == -2 && got [2] == 3.5f);
    free (got);
    static const struct { uint64_t n, claimed; const char *expect; } bad [] = {
        { 3, 4, "do not match" }, { 3, 2, "do not match" }, { 0, 0, "do not match" },
        { 3, (1ull << 62), "do not match" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++) {
        s_write_model (path, x, bad [i].n, bad [i].claimed);
        assert_int_equal (gc_report_read_model (path, &got, &n, &err), -1);
        assert_non_null (strstr (err.msg, bad [i].expect));
        assert_null (got);
    }
    gc_test_write_file (path, "GCMODEL2\0\0\0\0\0\0\0\0", 16);
    assert_int_equal (gc_report_read_model (path, &got, &n, &err), -1);
    assert_non_null (strstr (err.msg, "not a model file"));
    assert_int_equal (gc_report_read_model ("/nonexistent/m", &got, &n, &err), -1);
    gc_test_rmtree (dir);
    free (dir);
}

//  4 peers: 0 Byzantine, 1 and 2 honest and measured, 3 honest but killed by
//  the scenario (down): it is reported, not measured.
static const char *s_scenario =
    "scenario\n    name = \"hand\"\n    peers = 4\n"
    "group\n    b\n        peers = \"0\"\n        role\n            attack = \"untrusted\"\n"
    "assert\n"
    "    honest_mean_accuracy = \">= 0.8\"\n"     /* (0.9 + 0.8) / 2 = 0.85: pass */
    "    honest_min_accuracy = \">= 0.85\"\n"     /* 0.8: fail */
    "    consensus_distance = \"<= 0.5\"\n"       /* 1/3: pass */
    "    min_rounds = \">= 100\"\n"               /* 90: fail */
    "    honest_crashes = \"== 1\"\n"             /* peer 3 crashed once before: pass */
    "    rejected.bad_signature = \"== 4\"\n"    /* at honest peers: 2 + 1 + 1 */
    "    accepted_from_untrusted = \"== 1\"\n"     /* peer 2 took something from 0 */
    "    events_not_fired = \"== 0\"\n";

static void
s_assert_plots (const char *dir)
{
    char path [600];
    snprintf (path, sizeof path, "%s/plots/accuracy_round.png", dir);
    if (access (path, R_OK))
        fail_msg ("no plot %s", path);
}

static void
test_summary_and_report (void **state)
{
    (void) state;
    char *dir = gc_test_tmpdir ("report");
    gc_err_t err = { 0 };
    gc_scenario_t *sc = gc_scenario_load_str (s_scenario, "hand.zpl", &err);
    if (!sc)
        fail_msg ("%s", err.msg);
    gc_result_t res = { .scenario = sc, .out_dir = dir, .n_peers = 4, .status = GC_RUN_COMPLETED,
                        .has_final_model = true, .elapsed_s = 12.5 };
    gc_peer_result_t peers [4];
    memset (peers, 0, sizeof peers);
    res.peers = peers;
    static const double acc [4] = { 0.1, 0.9, 0.8, 0.99 };
    static const uint64_t rounds [4] = { 100, 120, 90, 10 };
    //  measured models x1 = (2,2), x2 = (1,1): mean (1.5,1.5), each at
    //  (0.5 sqrt 2) / (1.5 sqrt 2) = 1/3 from it; peers 0 and 3 are left out.
    static const float models [4][2] = { { 100, 100 }, { 2, 2 }, { 1, 1 }, { 50, 50 } };
    char path [4][512];
    for (uint32_t i = 0; i < 4; i++) {
        gc_peer_result_t *p = &peers [i];
        p->index = i;
        p->byzantine = i == 0;
        p->attack = i == 0 ? "untrusted" : "";
        p->state = i == 3 ? GC_PEER_KILLED : GC_PEER_FINISHED;
        p->down = i == 3;
        p->crashes = i == 3;
        p->starts = 1;
        p->has_final = true;
        p->final_accuracy = acc [i];
        p->final_rounds = rounds [i];
        snprintf (path [i], sizeof path [i], "%s/peer%u.model", dir, i);
        s_write_model (path [i], models [i], 2, 2);
        p->model_path = path [i];
        snprintf (path [i] + 256, 200, "%s/peer%u.jsonl", dir, i);
        p->stat = gc_peerstat_new (path [i] + 256);
        char line [512];
        snprintf (line, sizeof line, "{\"t\":1,\"id\":\"%016x\",\"round\":%llu,\"accuracy\":%g,\"bytes_sent\":1000000,"
                  "\"staleness\":{\"0\":%d},\"rejections_by_peer\":{\"0\":{\"bad_signature\":%d}}}",
                  i + 1, (unsigned long long) rounds [i], acc [i], i == 2 ? 3 : (int) rounds [i], i == 0 ? 7 : 1 + (i == 1));
        assert_true (gc_peerstat_feed (p->stat, line, strlen (line)));
    }
    gc_summary_t sum;
    assert_int_equal (gc_report_summarise (&res, &sum, &err), 0);
    assert_int_equal (sum.n_honest, 3);
    assert_int_equal (sum.n_measured, 2);
    assert_true (fabs (sum.honest_mean_accuracy - 0.85) < 1e-12);
    assert_true (sum.honest_min_accuracy == 0.8);
    assert_true (sum.min_rounds == 90);
    assert_true (fabs (sum.consensus_distance - 1.0 / 3) < 1e-6);
    assert_true (isnan (sum.peer_distance [0]) && isnan (sum.peer_distance [3]));
    assert_int_equal (sum.honest_crashes, 1);
    assert_true (sum.accepted_from_untrusted == 1);
    const bool expect [] = { true, false, true, false, true, true, true, true };
    for (size_t c = 0; c < sc->n_checks; c++)
        if (sum.pass [c] != expect [c])
            fail_msg ("%s: measured %g, pass %d", sc->checks [c].text, sum.measured [c], sum.pass [c]);
    assert_false (sum.all_pass);
    //  the verdict: PASS/FAIL lines, honest_mean_accuracy= last
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);
    gc_report_print (&res, &sum, f);
    fclose (f);
    assert_non_null (strstr (buf, "FAIL honest_min_accuracy >= 0.85 (measured 0.8)"));
    assert_non_null (strstr (buf, "PASS consensus_distance <= 0.5"));
    char *last = buf + len - 1;
    while (last > buf && last [-1] != '\n')
        last--;
    assert_string_equal (last, "honest_mean_accuracy=0.8500\n");
    free (buf);
    //  the files: report.json parses and says the same
    assert_int_equal (gc_report_write (&res, &sum, NULL, &err), 0);
    char rpath [600];
    snprintf (rpath, sizeof rpath, "%s/report.json", dir);
    f = fopen (rpath, "rb");
    assert_non_null (f);
    char text [65536];
    size_t n = fread (text, 1, sizeof text, f);
    fclose (f);
    gc_json_t *j = gc_json_parse (text, n, &err);
    if (!j)
        fail_msg ("report.json: %s", err.msg);
    assert_int_equal (gc_json_get (j, "passed")->type, GC_JSON_BOOL);
    assert_true (gc_json_get (j, "passed")->number == 0);
    const gc_json_t *honest = gc_json_get (j, "honest");
    assert_true (fabs (gc_json_num (honest, "mean_accuracy", 0) - 0.85) < 1e-9);
    const gc_json_t *p3 = gc_json_get (j, "peers")->child->next->next->next;
    assert_string_equal (gc_json_str (p3, "status", ""), "killed");
    assert_true (gc_json_get (p3, "measured")->number == 0);
    assert_true (gc_json_num (gc_json_get (p3, "rejections"), "bad_signature", 0) == 1);
    gc_json_destroy (&j);
    snprintf (rpath, sizeof rpath, "%s/report.md", dir);
    assert_int_equal (access (rpath, R_OK), 0);
    //  the plots are drawn (gnuplot is one of the test command's packages),
    //  whether the output directory is named absolutely or relatively
    s_assert_plots (dir);
    char cwd [4096];
    assert_non_null (getcwd (cwd, sizeof cwd));
    assert_int_equal (chdir (dir), 0);
    res.out_dir = "relative";
    assert_int_equal (mkdir ("relative", 0755), 0);
    assert_int_equal (gc_report_write (&res, &sum, NULL, &err), 0);
    s_assert_plots ("relative");
    assert_int_equal (chdir (cwd), 0);
    res.out_dir = dir;
    //  a run that did not complete fails whatever the assertions say
    res.status = GC_RUN_TIMED_OUT;
    gc_summary_free (&sum);
    assert_int_equal (gc_report_summarise (&res, &sum, &err), 0);
    assert_false (sum.all_pass);
    //  without model files the distance is not measured, and fails
    res.status = GC_RUN_COMPLETED;
    res.has_final_model = false;
    gc_summary_free (&sum);
    assert_int_equal (gc_report_summarise (&res, &sum, &err), 0);
    assert_true (isnan (sum.consensus_distance) && !sum.pass [2]);
    assert_non_null (strstr (sum.consensus_note, "not measured"));
    gc_summary_free (&sum);
    for (uint32_t i = 0; i < 4; i++)
        gc_peerstat_destroy (&peers [i].stat);
    gc_scenario_destroy (&sc);
    gc_test_rmtree (dir);
    free (dir);
}

//  When the honest mean first reached the target: round, median time, mean MB.
//  3 honest peers evaluated at rounds 10 (mean 0.6) and 20 (mean 0.91).
static void
test_time_to_target (void **state)
{
    (void) state;
    static const struct {
        const char *target;
        double      round, time_s, mb;      /* NAN: never reached */
        bool        pass;                   /* of rounds_to_target <= 20 */
    } cases [] = {
        { "0.9",  20, 2.5, 2.0, true },     /* t 2.0 / 2.5 / 4.0 -> median 2.5 */
        { "0.55", 10, 1.0, 1.0, true },
        { "0.99", NAN, NAN, NAN, false },   /* never: the metric is NaN and fails */
    };
    static const double acc [2][3] = { { 0.5, 0.6, 0.7 }, { 0.85, 0.9, 0.98 } };
    static const double t [2][3] = { { 1.0, 0.5, 3.0 }, { 2.0, 4.0, 2.5 } };
    char *dir = gc_test_tmpdir ("target");
    for (size_t c = 0; c < sizeof cases / sizeof cases [0]; c++) {
        char text [512];
        snprintf (text, sizeof text, "scenario\n    peers = 3\n    target_accuracy = %s\n"
                  "assert\n    rounds_to_target = \"<= 20\"\n", cases [c].target);
        gc_err_t err = { 0 };
        gc_scenario_t *sc = gc_scenario_load_str (text, "target.zpl", &err);
        if (!sc)
            fail_msg ("%s", err.msg);
        gc_peer_result_t peers [3];
        memset (peers, 0, sizeof peers);
        gc_result_t res = { .scenario = sc, .out_dir = dir, .n_peers = 3, .status = GC_RUN_COMPLETED,
                            .peers = peers };
        char path [3][512];
        for (uint32_t i = 0; i < 3; i++) {
            snprintf (path [i], sizeof path [i], "%s/peer%u.jsonl", dir, i);
            peers [i].stat = gc_peerstat_new (path [i]);
            for (int r = 0; r < 2; r++) {
                char line [256];
                snprintf (line, sizeof line, "{\"t\":%g,\"round\":%d,\"accuracy\":%g,\"bytes_sent\":%u}",
                          t [r][i], 10 * (r + 1), acc [r][i], (r + 1) * (i + 1) * 500000u);
                assert_true (gc_peerstat_feed (peers [i].stat, line, strlen (line)));
            }
        }
        gc_summary_t sum;
        assert_int_equal (gc_report_summarise (&res, &sum, &err), 0);
        if (isnan (cases [c].round))
            assert_true (isnan (sum.rounds_to_target) && isnan (sum.time_to_target_s) && isnan (sum.mb_to_target));
        else {
            assert_true (sum.rounds_to_target == cases [c].round);
            assert_true (fabs (sum.time_to_target_s - cases [c].time_s) < 1e-9);
            assert_true (fabs (sum.mb_to_target - cases [c].mb) < 1e-9);
        }
        assert_int_equal (sum.pass [0], cases [c].pass);
        if (!cases [c].pass)
            assert_non_null (strstr (sum.note [0], "never reached"));
        gc_summary_free (&sum);
        for (uint32_t i = 0; i < 3; i++)
            gc_peerstat_destroy (&peers [i].stat);
        gc_scenario_destroy (&sc);
    }
    gc_test_rmtree (dir);
    free (dir);
}

int
main (void)
{
    const struct CMUnitTest tests [] = {
        cmocka_unit_test (test_model_files),
        cmocka_unit_test (test_summary_and_report),
        cmocka_unit_test (test_time_to_target),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
