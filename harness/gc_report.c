#include "gc_report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gc_fs.h"
#include "gc_json.h"
#include "gc_command.h"

#define S_MODEL_MAX_PARAMS (1ull << 31)

static const char *s_run_status [] = { "completed", "interrupted", "timed_out" };

static bool
s_measured (const gc_peer_result_t *p)
{
    return !p->byzantine && !p->down && p->starts > 0 && isfinite (p->final_accuracy);
}

int
gc_report_read_model (const char *path, float **x, size_t *n, gc_err_t *err)
{
    *x = NULL;
    *n = 0;
    FILE *f = fopen (path, "rb");
    if (!f)
        return gc_err_set (err, GC_E_IO, "%s: %s", path, strerror (errno));
    unsigned char head [16];
    struct stat st;
    if (fread (head, 1, 16, f) != 16 || memcmp (head, "GCMODEL1", 8) || fstat (fileno (f), &st)) {
        fclose (f);
        return gc_err_set (err, GC_E_FORMAT, "%s: not a model file (expected GCMODEL1)", path);
    }
    uint64_t count = 0;
    for (int i = 0; i < 8; i++)
        count |= (uint64_t) head [8 + i] << (8 * i);
    if (count == 0 || count > S_MODEL_MAX_PARAMS || (uint64_t) st.st_size != 16 + 4 * count) {
        fclose (f);
        return gc_err_set (err, GC_E_FORMAT, "%s: %llu parameters do not match the file size %lld", path,
                           (unsigned long long) count, (long long) st.st_size);
    }
    float *buf = malloc (count * sizeof *buf);
    unsigned char *raw = (unsigned char *) buf;
    if (!buf || fread (buf, 4, count, f) != count) {
        free (buf);
        fclose (f);
        return gc_err_set (err, GC_E_IO, "%s: cannot read %llu parameters", path, (unsigned long long) count);
    }
    fclose (f);
    //  little-endian on disk; this also works on a big-endian host
    for (uint64_t i = 0; i < count; i++) {
        uint32_t v = (uint32_t) raw [4 * i] | (uint32_t) raw [4 * i + 1] << 8
                   | (uint32_t) raw [4 * i + 2] << 16 | (uint32_t) raw [4 * i + 3] << 24;
        memcpy (&buf [i], &v, 4);
    }
    *x = buf;
    *n = (size_t) count;
    return 0;
}

//  max over measured honest peers of ||x_i - mean|| / ||mean||.
static void
s_consensus (const gc_result_t *res, gc_summary_t *s)
{
    s->consensus_distance = NAN;
    if (!res->has_final_model) {
        snprintf (s->consensus_note, sizeof s->consensus_note,
                  "not measured: this gcnode does not write node/final_model");
        return;
    }
    float **models = calloc (res->n_peers, sizeof *models);
    double *mean = NULL;
    size_t d = 0;
    int k = 0, missing = 0;
    char problem [GC_ERR_MSG_MAX] = "";
    for (uint32_t i = 0; models && i < res->n_peers; i++) {
        const gc_peer_result_t *p = &res->peers [i];
        if (!s_measured (p))
            continue;
        size_t n = 0;
        gc_err_t err = { 0 };
        if (!p->model_path || gc_report_read_model (p->model_path, &models [i], &n, &err)) {
            missing++;
            if (p->model_path && !*problem)
                snprintf (problem, sizeof problem, "%s", err.msg);
            continue;
        }
        if (d && n != d) {
            snprintf (problem, sizeof problem, "peer %u's model has %zu parameters, others %zu", i, n, d);
            free (models [i]);
            models [i] = NULL;
            missing++;
            continue;
        }
        d = n;
        k++;
    }
    if (k >= 1 && (mean = calloc (d, sizeof *mean))) {
        for (uint32_t i = 0; i < res->n_peers; i++)
            if (models [i])
                for (size_t j = 0; j < d; j++)
                    mean [j] += models [i] [j];
        double norm = 0;
        for (size_t j = 0; j < d; j++) {
            mean [j] /= k;
            norm += mean [j] * mean [j];
        }
        norm = sqrt (norm);
        double worst = 0;
        for (uint32_t i = 0; i < res->n_peers; i++) {
            if (!models [i])
                continue;
            double dist = 0;
            for (size_t j = 0; j < d; j++) {
                double diff = models [i] [j] - mean [j];
                dist += diff * diff;
            }
            dist = norm > 0 ? sqrt (dist) / norm : (dist > 0 ? INFINITY : 0);
            s->peer_distance [i] = dist;
            worst = fmax (worst, dist);
        }
        s->consensus_distance = worst;
        snprintf (s->consensus_note, sizeof s->consensus_note, "over %d honest models%s%s", k,
                  missing ? "; some missing: " : "", missing ? problem : "");
        if (missing)
            s->consensus_distance = NAN;    /* a partial figure would pass too easily */
    }
    else
        snprintf (s->consensus_note, sizeof s->consensus_note, "not measured: %s",
                  *problem ? problem : "no honest model file");
    for (uint32_t i = 0; models && i < res->n_peers; i++)
        free (models [i]);
    free (models);
    free (mean);
}

//  Pairs (honest peer, in-neighbour with the `untrusted` attack) where the
//  honest peer's replica moved on from the initial state: its round is set
//  only by messages it accepted (docs/SCENARIOS.md).
static double
s_accepted_from_untrusted (const gc_result_t *res)
{
    double accepted = 0;
    for (uint32_t j = 0; j < res->n_peers; j++) {
        if (!res->peers [j].byzantine || strncmp (res->peers [j].attack, "untrusted", 9))
            continue;
        for (uint32_t i = 0; i < res->n_peers; i++) {
            const gc_peer_result_t *p = &res->peers [i];
            if (p->byzantine)
                continue;
            int64_t lag = gc_peerstat_staleness (p->stat, j);
            if (lag >= 0 && (uint64_t) lag < p->stat->round)
                accepted++;
        }
    }
    return accepted;
}

//  --- the honest series ----------------------------------------------------------

static int
s_cmp_double (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static double
s_median (double *v, int n)
{
    qsort (v, (size_t) n, sizeof *v, s_cmp_double);
    return n ? v [n / 2] : NAN;
}

//  The first evaluated round after `last` that some honest peer reports (each
//  peer's last point of that round); false when there is none.
static bool
s_honest_next (const gc_result_t *res, double last, gc_honest_point_t *out)
{
    double next = INFINITY;
    for (uint32_t i = 0; i < res->n_peers; i++) {
        const gc_peerstat_t *st = res->peers [i].stat;
        if (res->peers [i].byzantine)
            continue;
        for (size_t k = 0; k < st->n_series; k++)
            if (st->series [k].round > last && st->series [k].round < next)
                next = st->series [k].round;
    }
    if (!isfinite (next))
        return false;
    double sum = 0, mb = 0, min = INFINITY, walls [GC_PEERSET_MAX];
    int count = 0;
    for (uint32_t i = 0; i < res->n_peers; i++) {
        const gc_peerstat_t *st = res->peers [i].stat;
        if (res->peers [i].byzantine)
            continue;
        for (size_t k = st->n_series; k-- > 0;)
            if (st->series [k].round == next) {
                sum += st->series [k].accuracy;
                min = fmin (min, st->series [k].accuracy);
                mb += st->series [k].bytes_sent / 1e6;
                walls [count++] = st->series [k].wall_s;
                break;
            }
    }
    *out = (gc_honest_point_t) { .round = next, .mean = sum / count, .min = min, .peers = count,
                                 .median_wall_s = s_median (walls, count),
                                 .mean_mb_sent = mb / count };
    return true;
}

//  The honest series, once: every evaluated round in order.
static int
s_honest_series (const gc_result_t *res, gc_summary_t *s)
{
    size_t cap = 0;
    gc_honest_point_t pt;
    for (double last = -1; s_honest_next (res, last, &pt); last = pt.round) {
        if (s->n_series == cap) {
            cap = cap ? 2 * cap : 64;
            gc_honest_point_t *grown = realloc (s->series, cap * sizeof *grown);
            if (!grown)
                return -1;
            s->series = grown;
        }
        s->series [s->n_series++] = pt;
    }
    return 0;
}

//  When the honest mean accuracy first reached the scenario's target.
static void
s_to_target (const gc_result_t *res, gc_summary_t *s)
{
    s->target_accuracy = res->scenario->target_accuracy;
    s->rounds_to_target = s->time_to_target_s = s->mb_to_target = NAN;
    for (size_t i = 0; i < s->n_series; i++)
        if (s->series [i].mean >= s->target_accuracy) {
            s->rounds_to_target = s->series [i].round;
            s->time_to_target_s = s->series [i].median_wall_s;
            s->mb_to_target = s->series [i].mean_mb_sent;
            return;
        }
}

double
gc_report_metric (const gc_result_t *res, const gc_summary_t *s, const char *metric, char *note, size_t size)
{
    if (note && size)
        note [0] = '\0';
    if (!strcmp (metric, "honest_mean_accuracy") || !strcmp (metric, "honest_min_accuracy")
    ||  !strcmp (metric, "min_rounds")) {
        if (s->n_measured == 0 && note)
            snprintf (note, size, "no honest peer was measured");
        return !strcmp (metric, "honest_mean_accuracy") ? s->honest_mean_accuracy
             : !strcmp (metric, "honest_min_accuracy") ? s->honest_min_accuracy : s->min_rounds;
    }
    if (!strcmp (metric, "consensus_distance")) {
        if (note)
            snprintf (note, size, "%s", s->consensus_note);
        return s->consensus_distance;
    }
    if (!strcmp (metric, "honest_crashes"))
        return s->honest_crashes;
    if (!strcmp (metric, "rounds_to_target") || !strcmp (metric, "time_to_target_s")
    ||  !strcmp (metric, "mb_to_target")) {
        if (isnan (s->rounds_to_target) && note)
            snprintf (note, size, "the honest mean accuracy never reached %g", s->target_accuracy);
        return !strcmp (metric, "rounds_to_target") ? s->rounds_to_target
             : !strcmp (metric, "time_to_target_s") ? s->time_to_target_s : s->mb_to_target;
    }
    if (!strcmp (metric, "accepted_from_untrusted"))
        return s->accepted_from_untrusted;
    if (!strcmp (metric, "rounds_redone")) {
        double most = 0;
        for (uint32_t i = 0; i < res->n_peers; i++)
            if (!res->peers [i].byzantine)
                most = fmax (most, (double) res->peers [i].stat->rounds_redone);
        return most;
    }
    if (!strcmp (metric, "events_not_fired"))
        return s->events_not_fired;
    if (!strcmp (metric, "rejected_total"))
        return s->rejected_total;
    if (!strncmp (metric, "rejected.", 9)) {
        double total = 0;
        for (uint32_t i = 0; i < res->n_peers; i++)
            if (!res->peers [i].byzantine)
                total += (double) gc_peerstat_rejections (res->peers [i].stat, metric + 9);
        return total;
    }
    if (note)
        snprintf (note, size, "unknown metric");
    return NAN;
}

int
gc_report_summarise (const gc_result_t *res, gc_summary_t *s, gc_err_t *err)
{
    memset (s, 0, sizeof *s);
    const gc_scenario_t *sc = res->scenario;
    size_t nc = sc->n_checks ? sc->n_checks : 1;
    s->peer_distance = malloc (res->n_peers * sizeof *s->peer_distance);
    s->measured = calloc (nc, sizeof *s->measured);
    s->pass = calloc (nc, sizeof *s->pass);
    s->note = calloc (nc, sizeof *s->note);
    if (!s->peer_distance || !s->measured || !s->pass || !s->note) {
        gc_summary_free (s);
        return gc_err_set (err, GC_E_NOMEM, "out of memory");
    }
    double sum = 0, min = INFINITY, min_rounds = INFINITY;
    for (uint32_t i = 0; i < res->n_peers; i++) {
        const gc_peer_result_t *p = &res->peers [i];
        s->peer_distance [i] = NAN;
        if (p->byzantine)
            continue;
        s->n_honest++;
        s->honest_crashes += p->crashes > 0;
        s->rejected_total += (double) gc_peerstat_rejections_total (p->stat);
        if (!s_measured (p))
            continue;
        s->n_measured++;
        sum += p->final_accuracy;
        min = fmin (min, p->final_accuracy);
        min_rounds = fmin (min_rounds, (double) p->final_rounds);
    }
    s->honest_mean_accuracy = s->n_measured ? sum / s->n_measured : NAN;
    s->honest_min_accuracy = s->n_measured ? min : NAN;
    s->min_rounds = s->n_measured ? min_rounds : NAN;
    s->accepted_from_untrusted = s_accepted_from_untrusted (res);
    s->events_not_fired = (double) res->n_not_fired;
    s_consensus (res, s);
    if (s_honest_series (res, s)) {
        gc_summary_free (s);
        return gc_err_set (err, GC_E_NOMEM, "out of memory");
    }
    s_to_target (res, s);
    s->all_pass = res->status == GC_RUN_COMPLETED;
    for (size_t c = 0; c < sc->n_checks; c++) {
        const gc_check_t *check = &sc->checks [c];
        s->measured [c] = gc_report_metric (res, s, check->metric, s->note [c], sizeof s->note [c]);
        s->pass [c] = gc_cmp_holds (check->cmp, s->measured [c], check->value);
        s->all_pass &= s->pass [c];
    }
    return 0;
}

void
gc_summary_free (gc_summary_t *self)
{
    free (self->peer_distance);
    free (self->measured);
    free (self->pass);
    free (self->note);
    free (self->series);
    memset (self, 0, sizeof *self);
}

void
gc_report_print (const gc_result_t *res, const gc_summary_t *s, FILE *out)
{
    const gc_scenario_t *sc = res->scenario;
    if (res->status != GC_RUN_COMPLETED)
        fprintf (out, "FAIL run %s after %.1f s\n", s_run_status [res->status], res->elapsed_s);
    for (size_t c = 0; c < sc->n_checks; c++)
        fprintf (out, "%s %s (measured %.6g)%s%s\n", s->pass [c] ? "PASS" : "FAIL", sc->checks [c].text,
                 s->measured [c], *s->note [c] ? ": " : "", s->note [c]);
    if (res->n_not_fired)
        fprintf (out, "note: %zu timeline events never fired (%s%s)\n", res->n_not_fired,
                 res->not_fired [0], res->n_not_fired > 1 ? ", ..." : "");
    fprintf (out, "%s: %d of %d honest peers measured, consensus distance %.4g, %s\n", sc->name,
             s->n_measured, s->n_honest, s->consensus_distance, s->all_pass ? "all assertions hold" :
             "FAILED");
    fprintf (out, "honest_mean_accuracy=%.4f\n", s->honest_mean_accuracy);
    fflush (out);
}

//  --- report.json ---------------------------------------------------------------

static void
s_json_reasons (FILE *f, const gc_peerstat_t *stat)
{
    fputc ('{', f);
    bool first = true;
    for (size_t r = 0; r < stat->n_reasons; r++) {
        uint64_t n = stat->reasons [r].base + stat->reasons [r].now;
        if (!n)
            continue;
        fprintf (f, "%s", first ? "" : ",");
        gc_json_write_string (f, stat->reasons [r].name);
        fprintf (f, ":%llu", (unsigned long long) n);
        first = false;
    }
    fputc ('}', f);
}

static int
s_write_json (const gc_result_t *res, const gc_summary_t *s, const char *path)
{
    const gc_scenario_t *sc = res->scenario;
    FILE *f = fopen (path, "w");
    if (!f)
        return -1;
    fprintf (f, "{\n  \"scenario\": {\"name\": ");
    gc_json_write_string (f, sc->name);
    fprintf (f, ", \"file\": ");
    gc_json_write_string (f, sc->path);
    fprintf (f, ", \"description\": ");
    gc_json_write_string (f, sc->description ? sc->description : "");
    fprintf (f, ", \"peers\": %u, \"byzantine\": %zu, \"netns\": %s},\n", sc->n_peers,
             gc_peerset_count (&sc->byzantine), res->netns ? "true" : "false");
    fprintf (f, "  \"status\": \"%s\",\n  \"interrupted\": %s,\n  \"elapsed_s\": %.3f,\n  \"passed\": %s,\n",
             s_run_status [res->status], res->status == GC_RUN_INTERRUPTED ? "true" : "false",
             res->elapsed_s, s->all_pass ? "true" : "false");
    fprintf (f, "  \"peers\": [\n");
    for (uint32_t i = 0; i < res->n_peers; i++) {
        const gc_peer_result_t *p = &res->peers [i];
        fprintf (f, "    {\"index\": %u, \"id\": ", i);
        gc_json_write_string (f, p->stat->id);
        fprintf (f, ", \"role\": \"%s\", \"attack\": ", p->byzantine ? "byzantine" : "honest");
        gc_json_write_string (f, p->attack);
        fprintf (f, ", \"status\": \"%s\", \"detail\": ", gc_peer_state_name (p->state));
        gc_json_write_string (f, p->detail);
        fprintf (f, ", \"starts\": %d, \"crashes\": %d, \"down\": %s, \"measured\": %s, \"final_accuracy\": ",
                 p->starts, p->crashes, p->down ? "true" : "false", s_measured (p) ? "true" : "false");
        gc_json_write_number (f, p->final_accuracy);
        fprintf (f, ", \"accuracy_from\": \"%s\", \"rounds\": %llu, \"bytes_sent\": %llu, \"bytes_recv\": %llu"
                 ", \"consensus_distance\": ", p->has_final ? "final_line" : "metrics",
                 (unsigned long long) p->final_rounds,
                 (unsigned long long) gc_peerstat_bytes_sent (p->stat),
                 (unsigned long long) gc_peerstat_bytes_recv (p->stat));
        gc_json_write_number (f, s->peer_distance [i]);
        fprintf (f, ", \"rejections\": ");
        s_json_reasons (f, p->stat);
        fprintf (f, "}%s\n", i + 1 < res->n_peers ? "," : "");
    }
    fprintf (f, "  ],\n  \"honest\": {\"peers\": %d, \"measured\": %d, \"mean_accuracy\": ", s->n_honest,
             s->n_measured);
    gc_json_write_number (f, s->honest_mean_accuracy);
    fprintf (f, ", \"min_accuracy\": ");
    gc_json_write_number (f, s->honest_min_accuracy);
    fprintf (f, ", \"min_rounds\": ");
    gc_json_write_number (f, s->min_rounds);
    fprintf (f, ", \"crashes\": %d, \"consensus_distance\": ", s->honest_crashes);
    gc_json_write_number (f, s->consensus_distance);
    fprintf (f, ", \"consensus_note\": ");
    gc_json_write_string (f, s->consensus_note);
    fprintf (f, ", \"rejected_total\": %.0f, \"accepted_from_untrusted\": %.0f", s->rejected_total,
             s->accepted_from_untrusted);
    fprintf (f, ", \"target_accuracy\": ");
    gc_json_write_number (f, s->target_accuracy);
    fprintf (f, ", \"rounds_to_target\": ");
    gc_json_write_number (f, s->rounds_to_target);
    fprintf (f, ", \"time_to_target_s\": ");
    gc_json_write_number (f, s->time_to_target_s);
    fprintf (f, ", \"mb_to_target\": ");
    gc_json_write_number (f, s->mb_to_target);
    fprintf (f, "},\n");
    fprintf (f, "  \"events\": [\n");
    for (size_t e = 0; e < res->n_fired; e++) {
        fprintf (f, "    {\"t\": %.3f, \"round\": %.0f, \"text\": ", res->fired [e].t, res->fired [e].round);
        gc_json_write_string (f, res->fired [e].text);
        fprintf (f, "}%s\n", e + 1 < res->n_fired ? "," : "");
    }
    fprintf (f, "  ],\n  \"events_not_fired\": [");
    for (size_t e = 0; e < res->n_not_fired; e++) {
        fprintf (f, "%s", e ? ", " : "");
        gc_json_write_string (f, res->not_fired [e]);
    }
    fprintf (f, "],\n  \"assertions\": [\n");
    for (size_t c = 0; c < sc->n_checks; c++) {
        fprintf (f, "    {\"check\": ");
        gc_json_write_string (f, sc->checks [c].text);
        fprintf (f, ", \"metric\": ");
        gc_json_write_string (f, sc->checks [c].metric);
        fprintf (f, ", \"measured\": ");
        gc_json_write_number (f, s->measured [c]);
        fprintf (f, ", \"pass\": %s, \"note\": ", s->pass [c] ? "true" : "false");
        gc_json_write_string (f, s->note [c]);
        fprintf (f, "}%s\n", c + 1 < sc->n_checks ? "," : "");
    }
    fprintf (f, "  ]\n}\n");
    return fclose (f);
}

//  --- report.md ---------------------------------------------------------------

static void
s_md_number (FILE *f, double v, const char *fmt)
{
    if (isfinite (v))
        fprintf (f, fmt, v);
    else
        fputs ("–", f);
}

static int
s_write_md (const gc_result_t *res, const gc_summary_t *s, const char *plots_note, const char *path)
{
    const gc_scenario_t *sc = res->scenario;
    FILE *f = fopen (path, "w");
    if (!f)
        return -1;
    fprintf (f, "# gcnet report: %s\n\n", sc->name);
    if (sc->description)
        fprintf (f, "%s\n\n", sc->description);
    fprintf (f, "- scenario: `%s`, %u peers (%zu Byzantine), %s\n", sc->path, sc->n_peers,
             gc_peerset_count (&sc->byzantine), res->netns ? "one network namespace per peer" : "loopback");
    fprintf (f, "- run: **%s** after %.1f s; assertions: **%s**\n", s_run_status [res->status],
             res->elapsed_s, s->all_pass ? "all hold" : "FAILED");
    fprintf (f, "- honest peers: %d measured of %d; mean accuracy ", s->n_measured, s->n_honest);
    s_md_number (f, s->honest_mean_accuracy, "%.4f");
    fprintf (f, ", min ");
    s_md_number (f, s->honest_min_accuracy, "%.4f");
    fprintf (f, ", consensus distance ");
    s_md_number (f, s->consensus_distance, "%.4g");
    fprintf (f, " (%s)\n", s->consensus_note);
    fprintf (f, "- honest mean accuracy %g reached: ", s->target_accuracy);
    if (isnan (s->rounds_to_target))
        fprintf (f, "never\n\n");
    else
        fprintf (f, "round %.0f, after %.1f s (median over the honest peers), %.2f MB sent per honest peer\n\n",
                 s->rounds_to_target, s->time_to_target_s, s->mb_to_target);
    fprintf (f, "## Assertions\n\n| result | assertion | measured | note |\n| --- | --- | --- | --- |\n");
    for (size_t c = 0; c < sc->n_checks; c++) {
        fprintf (f, "| %s | `%s` | ", s->pass [c] ? "PASS" : "**FAIL**", sc->checks [c].text);
        s_md_number (f, s->measured [c], "%.6g");
        fprintf (f, " | %s |\n", s->note [c]);
    }
    fprintf (f, "\n## Peers\n\n| peer | id | role | attack | status | accuracy | rounds | MB sent | MB recv "
                "| consensus dist. | rejections |\n"
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (uint32_t i = 0; i < res->n_peers; i++) {
        const gc_peer_result_t *p = &res->peers [i];
        fprintf (f, "| %u | `%s` | %s | %s | %s%s%s | ", i, p->stat->id, p->byzantine ? "byzantine" : "honest",
                 *p->attack ? p->attack : "", gc_peer_state_name (p->state),
                 p->starts > 1 ? ", restarted" : "", p->crashes ? ", **crashed**" : "");
        s_md_number (f, p->final_accuracy, "%.4f");
        fprintf (f, " | %llu | %.2f | %.2f | ", (unsigned long long) p->final_rounds,
                 (double) gc_peerstat_bytes_sent (p->stat) / 1e6, (double) gc_peerstat_bytes_recv (p->stat) / 1e6);
        s_md_number (f, s->peer_distance [i], "%.4g");
        fprintf (f, " | ");
        bool any = false;
        for (size_t r = 0; r < p->stat->n_reasons; r++) {
            uint64_t n = p->stat->reasons [r].base + p->stat->reasons [r].now;
            if (n) {
                fprintf (f, "%s%s %llu", any ? ", " : "", p->stat->reasons [r].name, (unsigned long long) n);
                any = true;
            }
        }
        fprintf (f, " |\n");
    }
    for (uint32_t i = 0; i < res->n_peers; i++)
        if (res->peers [i].crashes || res->peers [i].state == GC_PEER_CRASHED)
            fprintf (f, "\npeer %u: %s\n", i, res->peers [i].detail);
    fprintf (f, "\n## Timeline\n\n| time (s) | median honest round | event |\n| --- | --- | --- |\n");
    for (size_t e = 0; e < res->n_fired; e++)
        fprintf (f, "| %.1f | %.0f | %s |\n", res->fired [e].t, res->fired [e].round, res->fired [e].text);
    for (size_t e = 0; e < res->n_not_fired; e++)
        fprintf (f, "| – | – | %s: never fired |\n", res->not_fired [e]);
    fprintf (f, "\n## Plots\n\n%s\n", plots_note);
    return fclose (f);
}

//  --- plots ---------------------------------------------------------------------

static int
s_write_series (const gc_result_t *res, const gc_summary_t *s, const char *dir)
{
    char path [4300];
    for (uint32_t i = 0; i < res->n_peers; i++) {
        snprintf (path, sizeof path, "%s/peer%u.dat", dir, i);
        FILE *f = fopen (path, "w");
        if (!f)
            return -1;
        const gc_peerstat_t *st = res->peers [i].stat;
        fprintf (f, "# round wall_s accuracy mb_sent\n");
        for (size_t k = 0; k < st->n_series; k++)
            fprintf (f, "%.0f %.3f %.6f %.6f\n", st->series [k].round, st->series [k].wall_s,
                     st->series [k].accuracy, st->series [k].bytes_sent / 1e6);
        if (fclose (f))
            return -1;
    }
    //  Honest mean and min per evaluated round (over the peers that report it).
    snprintf (path, sizeof path, "%s/honest.dat", dir);
    FILE *f = fopen (path, "w");
    if (!f)
        return -1;
    fprintf (f, "# round mean min median_wall_s peers mean_mb_sent\n");
    for (size_t k = 0; k < s->n_series; k++) {
        const gc_honest_point_t *pt = &s->series [k];
        fprintf (f, "%.0f %.6f %.6f %.3f %d %.6f\n", pt->round, pt->mean, pt->min, pt->median_wall_s,
                 pt->peers, pt->mean_mb_sent);
    }
    if (fclose (f))
        return -1;
    return 0;
}

static void
s_gp_peers (FILE *gp, const gc_result_t *res)
{
    fprintf (gp, "honest = \"");
    bool first = true;
    for (uint32_t i = 0; i < res->n_peers; i++)
        if (!res->peers [i].byzantine) {
            fprintf (gp, "%s%u", first ? "" : " ", i);
            first = false;
        }
    fprintf (gp, "\"\n");
}

static void
s_gp_plots (FILE *gp, const gc_result_t *res, const gc_summary_t *s, const char *term, const char *ext)
{
    const char *name = res->scenario->name;
    fprintf (gp, "set terminal %s size 1000,600\n", term);
    fprintf (gp, "set output \"accuracy_round.%s\"\n", ext);
    fprintf (gp, "set title \"%s: honest test accuracy against round\"\n", name);
    fprintf (gp, "set xlabel \"round\"\nset ylabel \"test accuracy\"\n");
    fprintf (gp, "plot for [i in honest] sprintf(\"peer%%s.dat\", i) using 1:3 with lines lw 1 "
                 "title sprintf(\"peer %%s\", i), \\\n"
                 "     \"honest.dat\" using 1:2 with lines lw 3 lc rgb \"black\" title \"honest mean\", \\\n"
                 "     \"honest.dat\" using 1:3 with lines lw 2 dt 2 lc rgb \"red\" title \"honest min\"\n");
    fprintf (gp, "set output \"accuracy_time.%s\"\n", ext);
    fprintf (gp, "set title \"%s: honest test accuracy against wall time (dashed: timeline events)\"\n", name);
    fprintf (gp, "set xlabel \"seconds since start\"\n");
    for (size_t e = 0; e < res->n_fired; e++) {
        fprintf (gp, "set arrow from %.3f, graph 0 to %.3f, graph 1 nohead dt 2 lc rgb \"gray\"\n",
                 res->fired [e].t, res->fired [e].t);
        //  labelled with the event's name (what precedes ':'), quotes dropped
        char label [64];
        size_t n = 0;
        for (const char *c = res->fired [e].text; *c && *c != ':' && n < sizeof label - 1; c++)
            if (*c != '"' && *c != '\\')
                label [n++] = *c;
        label [n] = '\0';
        fprintf (gp, "set label %zu \"%s\" at %.3f, graph 0.03 left rotate by 90 offset -0.7,0 "
                     "tc rgb \"gray40\"\n", e + 1, label, res->fired [e].t);
    }
    fprintf (gp, "plot for [i in honest] sprintf(\"peer%%s.dat\", i) using 2:3 with lines lw 1 "
                 "title sprintf(\"peer %%s\", i)\n");
    fprintf (gp, "unset arrow\nunset label\n");
    fprintf (gp, "set output \"bytes_accuracy.%s\"\n", ext);
    fprintf (gp, "set title \"%s: honest test accuracy against megabytes sent\"\n", name);
    fprintf (gp, "set xlabel \"MB sent by the peer\"\n");
    fprintf (gp, "plot for [i in honest] sprintf(\"peer%%s.dat\", i) using 4:3 with lines lw 1 "
                 "title sprintf(\"peer %%s\", i)\n");
    if (isfinite (s->consensus_distance)) {
        fprintf (gp, "set output \"consensus.%s\"\n", ext);
        fprintf (gp, "set title \"%s: final distance to the honest mean model, ||x_i - mean|| / ||mean||\"\n",
                 name);
        fprintf (gp, "set xlabel \"peer\"\nset ylabel \"relative distance\"\nset style fill solid 0.6\n"
                     "set boxwidth 0.7\nset yrange [0:*]\n");
        fprintf (gp, "plot \"consensus.dat\" using 1:2 with boxes notitle\n");
        fprintf (gp, "set autoscale y\nset style fill empty\n");
    }
    fprintf (gp, "set ylabel \"test accuracy\"\n");
}

//  Writes plots/; returns a note for report.md (what was made, or why not).
static void
s_plots (const gc_result_t *res, const gc_summary_t *s, FILE *log, char *note, size_t size)
{
    char dir [4200];
    snprintf (dir, sizeof dir, "%s/plots", res->out_dir);
    if (!gc_command_which ("gnuplot")) {
        snprintf (note, size, "No plots: gnuplot is not installed (Debian: gnuplot-nox).");
        if (log)
            fprintf (log, "gcnet: gnuplot not found: plots skipped (install gnuplot-nox)\n");
        return;
    }
    if (gc_fs_mkdirs (dir, 0755, NULL)) {
        snprintf (note, size, "No plots: cannot create %.300s.", dir);
        return;
    }
    if (s_write_series (res, s, dir)) {
        snprintf (note, size, "No plots: cannot write the data files in %.300s.", dir);
        return;
    }
    char path [4300];
    if (isfinite (s->consensus_distance)) {
        snprintf (path, sizeof path, "%s/consensus.dat", dir);
        FILE *f = fopen (path, "w");
        for (uint32_t i = 0; f && i < res->n_peers; i++)
            if (isfinite (s->peer_distance [i]))
                fprintf (f, "%u %.6g\n", i, s->peer_distance [i]);
        if (f)
            fclose (f);
    }
    const char *probe [] = { "gnuplot", "-e", "set terminal pngcairo", NULL };
    bool cairo = gc_command_run (probe, 30, NULL, NULL) == 0;
    snprintf (path, sizeof path, "%s/plots.gp", dir);
    FILE *gp = fopen (path, "w");
    if (!gp) {
        snprintf (note, size, "No plots: cannot write %.300s.", path);
        return;
    }
    fprintf (gp, "#   gnuplot script written by gcnet (run it in this directory)\n"
                 "set key outside right\nset grid\n");
    s_gp_peers (gp, res);
    s_gp_plots (gp, res, s, cairo ? "pngcairo" : "png", "png");
    s_gp_plots (gp, res, s, "svg", "svg");
    fclose (gp);
    //  gnuplot runs the script from the plots directory (its data files are
    //  named relative to it).
    char cd [4300];
    snprintf (cd, sizeof cd, "cd '%s'", dir);
    const char *argv [] = { "gnuplot", "-e", cd, "plots.gp", NULL };
    char *output = NULL;
    gc_err_t err = { 0 };
    int rc = strchr (dir, '\'') ? gc_err_set (&err, GC_E_ARG, "the path holds a quote") : gc_command_run (argv, 120, &output, &err);
    if (rc != 0) {
        snprintf (note, size, "gnuplot failed (%s): %.200s", rc < 0 ? err.msg : "see plots/plots.gp",
                  output ? output : "");
        if (log)
            fprintf (log, "gcnet: %s\n", note);
    }
    else
        snprintf (note, size, "![accuracy against round](plots/accuracy_round.png)\n"
                  "![accuracy against time](plots/accuracy_time.png)\n"
                  "![accuracy against bytes](plots/bytes_accuracy.png)\n%s"
                  "\nSVG versions and the data (peerN.dat, honest.dat) are in plots/; "
                  "`gnuplot plots.gp` there redraws them.",
                  isfinite (s->consensus_distance) ? "![consensus distance](plots/consensus.png)\n" : "");
    free (output);
}

int
gc_report_write (const gc_result_t *res, const gc_summary_t *s, FILE *log, gc_err_t *err)
{
    char path [4200], note [1024];
    s_plots (res, s, log, note, sizeof note);
    snprintf (path, sizeof path, "%s/report.json", res->out_dir);
    if (s_write_json (res, s, path))
        return gc_err_set (err, GC_E_IO, "%s: cannot write", path);
    snprintf (path, sizeof path, "%s/report.md", res->out_dir);
    if (s_write_md (res, s, note, path))
        return gc_err_set (err, GC_E_IO, "%s: cannot write", path);
    return 0;
}
