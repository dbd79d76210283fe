/*  gc_report — what a run measured, the scenario's assertions checked
    against it, and the report: report.json (machine-readable), report.md
    (the same as tables) and plots made with gnuplot (PNG and SVG).

    Honest peers are measured when they are up at the end: an honest peer
    the scenario killed and did not restart is reported ("killed") but left
    out of the honest accuracy, rounds and consensus figures. */
#ifndef GC_REPORT_H
#define GC_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "gc_err.h"
#include "gc_result.h"

//  One evaluated round of the honest peers: their mean and min accuracy, the median
//  (wall or virtual) time at which they reported it, the megabytes they had sent (mean).
typedef struct {
    double  round, mean, min, median_wall_s, mean_mb_sent;
    int     peers;
} gc_honest_point_t;

typedef struct {
    int     n_honest;
    int     n_measured;                 /* honest, up at the end, with an accuracy */
    double  honest_mean_accuracy;       /* NAN when nobody was measured */
    double  honest_min_accuracy;
    double  consensus_distance;         /* max_i ||x_i - mean|| / ||mean||, NAN: not measured */
    char    consensus_note [200];
    double *peer_distance;              /* per peer, NAN when not part of it */
    int     honest_crashes;
    double  min_rounds;
    double  accepted_from_untrusted;
    double  rejected_total;             /* rejections at honest peers */
    double  events_not_fired;
    //  when the honest mean accuracy first reached scenario/target_accuracy (NAN: never)
    double  target_accuracy;
    double  rounds_to_target;
    double  time_to_target_s;           /* median wall time of that evaluation over the peers */
    double  mb_to_target;               /* mean MB sent per honest peer by then */
    gc_honest_point_t *series;          /* every evaluated round, in order */
    size_t  n_series;
    //  per assertion of the scenario
    double *measured;
    bool   *pass;
    char  (*note) [160];
    bool    all_pass;                   /* every assertion, and the run completed */
} gc_summary_t;

int    gc_report_summarise (const gc_result_t *res, gc_summary_t *out, gc_err_t *err);
void   gc_summary_free (gc_summary_t *self);
/*  The value of an assertion metric (NAN when it cannot be measured, with the
    reason in note). */
double gc_report_metric (const gc_result_t *res, const gc_summary_t *sum, const char *metric,
                         char *note, size_t size);
/*  report.json, report.md and plots/ in the run's directory. Problems with
    plots (no gnuplot) are said on log and in report.md, not errors. */
int    gc_report_write (const gc_result_t *res, const gc_summary_t *sum, FILE *log, gc_err_t *err);
/*  PASS/FAIL per assertion with the measured value, then (last) the line
    honest_mean_accuracy=0.XXXX that scripts read. */
void   gc_report_print (const gc_result_t *res, const gc_summary_t *sum, FILE *out);

/*  Read a final model file ("GCMODEL1", u64 n, n float32, little-endian).
    *x is malloc'd. */
int    gc_report_read_model (const char *path, float **x, size_t *n, gc_err_t *err);

#endif
