/*  The simulated run as gcnet reports a real one (gc_report.h), plus:
      - report.json's "sim" member: how the simulation ran and the figures
        the results tables use (all virtual, so reproducible);
      - series.dat: the honest peers' mean and min accuracy, virtual time and
        bytes sent per evaluated round;
      - timing.json: wall-clock cost (not reproducible, never in report.json). */
#include <errno.h>
#include <malloc.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gc_fs.h"
#include "gc_json.h"
#include "gc_peerstat.h"
#include "gc_report.h"
#include "gc_sim_internal.h"

//  node/gc_model_file.h's format; without its fsync (a thousand files would
//  wait on the disk for nothing: they are read back at once).
static int
s_write_model (const char *path, const float *x, size_t n)
{
    FILE *f = fopen (path, "wb");
    if (!f)
        return -1;
    unsigned char head [16] = "GCMODEL1";
    for (int i = 0; i < 8; i++)
        head [8 + i] = (unsigned char) ((uint64_t) n >> (8 * i));
    size_t ok = fwrite (head, 1, 16, f);
    //  little-endian on disk; this host is little-endian (x86-64)
    ok += fwrite (x, 4, n, f);
    return fclose (f) || ok != 16 + n ? -1 : 0;
}

//  report.json is gcnet's; the simulator's member goes in before its final
//  brace (gc_report writes the object and nothing after it).
static int
s_add_sim_member (const char *path, const char *member)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return -1;
    fseek (f, 0, SEEK_END);
    long size = ftell (f);
    fseek (f, 0, SEEK_SET);
    char *text = size > 0 ? malloc ((size_t) size + 1) : NULL;
    if (!text || fread (text, 1, (size_t) size, f) != (size_t) size) {
        free (text);
        fclose (f);
        return -1;
    }
    fclose (f);
    long end = size;
    while (end > 0 && text [end - 1] != '}')
        end--;
    long last = end - 1;
    while (last > 0 && (text [last - 1] == '\n' || text [last - 1] == ' '))
        last--;
    if (end == 0 || last <= 0) {
        free (text);
        return -1;
    }
    f = fopen (path, "wb");
    if (!f) {
        free (text);
        return -1;
    }
    fwrite (text, 1, (size_t) last, f);
    fprintf (f, ",\n  \"sim\": %s\n}\n", member);
    free (text);
    return fclose (f);
}

static void
s_num (FILE *f, const char *name, double v, bool comma)
{
    fprintf (f, "\"%s\": ", name);
    gc_json_write_number (f, v);
    if (comma)
        fputs (", ", f);
}

static char *
s_sim_member (gc_sim_t *sim, const gc_honest_point_t *series, size_t n_series)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&text, &len);
    if (!f)
        return NULL;
    const gc_honest_point_t *hit = NULL;
    for (size_t i = 0; i < n_series && !hit; i++)
        if (series [i].mean >= sim->opts.target)
            hit = &series [i];
    double mb = 0, rounds = 0;
    uint64_t dropped_down = 0, dropped_frozen = 0;
    int honest = 0;
    for (uint32_t i = 0; i < sim->n; i++) {
        const gc_sim_peer_t *p = &sim->peers [i];
        rounds += (double) p->rounds_done;
        dropped_down += p->dropped_down;
        dropped_frozen += p->dropped_frozen;
        if (!p->byzantine) {
            mb += (double) gc_peerstat_bytes_sent (p->res->stat) / 1e6;
            honest++;
        }
    }
    bool omniscient = false;
    for (uint32_t i = 0; i < sim->n; i++)
        omniscient |= sim->peers [i].ecfg.observer != NULL;
    const gc_simpeer_t *sp = &sim->scfg->peers [0];
    fprintf (f, "{\"simulator\": \"gcsim\", \"seed\": %llu, \"peers\": %u, ",
             (unsigned long long) sim->seed, sim->n);
    fprintf (f, "\"topology\": ");
    gc_json_write_string (f, gc_topology_name (sim->topology));
    fprintf (f, ", \"skip_crypto\": %s, \"omniscient\": %s, ", sim->scfg->skip_crypto ? "true" : "false",
             omniscient ? "true" : "false");
    s_num (f, "step_ms", (double) sim->peers [0].step_ns * 1e-6, true);
    s_num (f, "latency_ms", sp->latency_ms, true);
    s_num (f, "bandwidth_bytes_per_s", sp->bandwidth, true);
    s_num (f, "virtual_s", (double) sim->now * 1e-9, true);
    s_num (f, "peer_rounds", rounds, true);
    fprintf (f, "\"messages\": {\"routed\": %llu, \"dropped_by_fault\": %llu, \"to_down_peers\": %llu, "
             "\"dropped_while_frozen\": %llu}, ", (unsigned long long) sim->messages,
             (unsigned long long) sim->dropped_fault, (unsigned long long) dropped_down,
             (unsigned long long) dropped_frozen);
    s_num (f, "honest_mb_sent_per_peer", honest ? mb / honest : NAN, true);
    s_num (f, "target_accuracy", sim->opts.target, true);
    s_num (f, "rounds_to_target", hit ? hit->round : NAN, true);
    s_num (f, "virtual_s_to_target", hit ? hit->median_wall_s : NAN, true);
    s_num (f, "mb_sent_per_peer_to_target", hit ? hit->mean_mb_sent : NAN, true);
    double best = NAN;
    for (size_t i = 0; i < n_series; i++)
        best = isnan (best) ? series [i].mean : fmax (best, series [i].mean);
    s_num (f, "best_honest_mean_accuracy", best, false);
    fputc ('}', f);
    fclose (f);
    return text;
}

//  0, or -1 when the file could not be written (err names it).
static int
s_write_series (gc_sim_t *sim, const gc_honest_point_t *series, size_t n, gc_err_t *err)
{
    char path [4200];
    snprintf (path, sizeof path, "%s/series.dat", sim->opts.out_dir);
    FILE *f = fopen (path, "w");
    if (!f)
        return gc_err_set (err, GC_E_IO, "%s: cannot write", path);
    fprintf (f, "# honest peers per evaluated round (gcsim; virtual time)\n"
                "# round mean_accuracy min_accuracy median_virtual_s mean_mb_sent peers\n");
    for (size_t i = 0; i < n; i++)
        fprintf (f, "%.0f %.6f %.6f %.6f %.6f %.0f\n", series [i].round, series [i].mean, series [i].min,
                 series [i].median_wall_s, series [i].mean_mb_sent, (double) series [i].peers);
    if (ferror (f) | fclose (f))
        return gc_err_set (err, GC_E_IO, "%s: cannot write", path);
    return 0;
}

//  timing.json's last fields: the loop's wall seconds and resident MB when
//  the median honest round reached 1, 2, ...
static void
s_write_round_walls (const gc_sim_t *sim, FILE *f)
{
    fprintf (f, " \"round_wall_s\": [");
    for (size_t r = 0; r < sim->n_round_wall; r++)
        fprintf (f, "%s%.3f", r ? ", " : "", sim->round_wall [r]);
    fprintf (f, "],\n \"round_rss_mb\": [");
    for (size_t r = 0; r < sim->n_round_wall; r++)
        fprintf (f, "%s%.0f", r ? ", " : "", (double) sim->round_rss_mb [r]);
    fprintf (f, "]}\n");
}

//  timing.json, and its figures on the log. 0, or -1 with err.
static int
s_write_timing (gc_sim_t *sim, double honest_rounds, gc_err_t *err)
{
    double peer_rounds = 0, eval_s = 0;
    for (uint32_t i = 0; i < sim->n; i++)
        peer_rounds += (double) sim->peers [i].rounds_done;
    for (int c = 0; c < sim->threads; c++)
        eval_s += sim->classes [c].eval_s;
    struct rusage ru;
    getrusage (RUSAGE_SELF, &ru);
    double loop = sim->wall_loop_s, rss_mb = (double) ru.ru_maxrss / 1024.0;
    //  evaluation time is summed over threads: share it out like the loop
    double eval_wall = eval_s / sim->threads;
    double per = peer_rounds > 0 ? 1e3 / peer_rounds : 0;      /* seconds -> ms per peer-round */
    double rounds_per_s = loop > 0 ? honest_rounds / loop : 0;
    double loop_no_eval = fmax (0, loop - eval_wall);
    double rounds_per_s_no_eval = loop_no_eval > 0 ? honest_rounds / loop_no_eval : 0;
    double cost = loop * per, cost_no_eval = loop_no_eval * per, cpu = sim->cpu_loop_s * per;
    char path [4200];
    snprintf (path, sizeof path, "%s/timing.json", sim->opts.out_dir);
    FILE *f = fopen (path, "w");
    if (!f)
        return gc_err_set (err, GC_E_IO, "%s: cannot write", path);
    fprintf (f, "{\"note\": \"wall-clock figures of this run (not reproducible; report.json has the results)\",\n"
                " \"threads\": %d, \"peers\": %u, \"skip_crypto\": %s, \"setup_s\": %.3f, \"loop_s\": %.3f,\n"
                " \"loop_cpu_s\": %.3f, \"cpu_per_round_per_peer_ms\": %.4f,\n"
                " \"eval_cpu_s\": %.3f, \"peer_rounds\": %.0f, \"rounds\": %.0f, \"rounds_per_s\": %.3f,\n"
                " \"rounds_per_s_without_eval\": %.3f,\n"
                " \"cost_per_round_per_peer_ms\": %.4f, \"cost_per_round_per_peer_ms_without_eval\": %.4f,\n"
                " \"max_rss_mb\": %.1f, \"share_states\": %s, \"states_built\": %llu, \"states_shared\": %llu,\n",
             sim->threads, sim->n, sim->scfg->skip_crypto ? "true" : "false", sim->wall_setup_s, loop,
             sim->cpu_loop_s, cpu, eval_s, peer_rounds, honest_rounds, rounds_per_s, rounds_per_s_no_eval,
             cost, cost_no_eval,
             rss_mb, sim->opts.no_share ? "false" : "true",
             (unsigned long long) sim->states_built, (unsigned long long) sim->states_shared);
    s_write_round_walls (sim, f);
    if (ferror (f) | fclose (f))
        return gc_err_set (err, GC_E_IO, "%s: cannot write", path);
    if (sim->opts.log)
        fprintf (sim->opts.log, "gcsim: %u peers, %.0f rounds in %.2f s wall (%d thread%s): %.1f rounds/s, "
                 "%.3f ms per round per peer (%.3f without evaluation; CPU %.3f), max RSS %.0f MB\n",
                 sim->n, honest_rounds, loop, sim->threads, sim->threads > 1 ? "s" : "",
                 rounds_per_s, cost, cost_no_eval, cpu, rss_mb);
    return 0;
}

int
gc_sim_report (gc_sim_t *sim, gc_err_t *err)
{
    gc_result_t *res = sim->res;
    //  too long a --out is the user's to fix (exit 2), as it always was
    if (strlen (sim->opts.out_dir) >= PATH_MAX)
        return gc_err_set (err, GC_E_USAGE, "--out: path too long");
    if (gc_fs_mkdirs (sim->opts.out_dir, 0755, err))
        return -1;
    //  final models, for the consensus distance (as node/final_model)
    for (uint32_t i = 0; i < sim->n; i++) {
        gc_sim_peer_t *p = &sim->peers [i];
        if (!p->engine)
            continue;
        char path [4200];
        snprintf (path, sizeof path, "%s/peer%u.model", sim->opts.out_dir, i);
        if (s_write_model (path, gc_engine_params (p->engine), gc_engine_n_params (p->engine)) == 0)
            p->res->model_path = strdup (path);
    }
    //  The report forks gnuplot: drop the engines first (a fork copies the
    //  page tables of every gigabyte they hold).
    for (uint32_t i = 0; i < sim->n; i++)
        gc_engine_destroy (&sim->peers [i].engine);
    malloc_trim (0);
    res->has_final_model = true;
    res->has_control = true;
    gc_summary_t sum;
    if (gc_report_summarise (res, &sum, err))
        return -1;
    int rc = gc_report_write (res, &sum, sim->opts.log, err);
    if (rc == 0) {
        char *member = s_sim_member (sim, sum.series, sum.n_series);
        char path [4200];
        snprintf (path, sizeof path, "%s/report.json", sim->opts.out_dir);
        if (!member || s_add_sim_member (path, member))
            rc = gc_err_set (err, GC_E_IO, "%s: cannot add the sim member", path);
        free (member);
    }
    double honest_rounds = 0;
    for (uint32_t i = 0; i < sim->n; i++)
        if (!sim->peers [i].byzantine)
            honest_rounds = fmax (honest_rounds, (double) sim->peers [i].round);
    gc_err_t werr = { 0 };
    //  both files are written even when the first fails (| not ||)
    if ((s_write_series (sim, sum.series, sum.n_series, &werr) | s_write_timing (sim, honest_rounds, &werr))
    &&  rc == 0)
        rc = gc_err_set (err, GC_E_IO, "%s", werr.msg);
    if (rc == 0) {
        if (sim->opts.log)
            fprintf (sim->opts.log, "gcsim: report: %s/report.md\n", sim->opts.out_dir);
        gc_report_print (res, &sum, stdout);
    }
    if (!sim->opts.keep_models)
        for (uint32_t i = 0; i < sim->n; i++)
            if (res->peers [i].model_path)
                unlink (res->peers [i].model_path);
    int outcome = rc ? -1 : sum.all_pass ? 0 : 1;
    gc_summary_free (&sum);
    return outcome;
}
