/*  gcnet suite — run scenarios one after another and summarise them. */
#include <dirent.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gc_run.h"
#include "gcnet.h"

#ifndef GC_SOURCE_DIR
#define GC_SOURCE_DIR "."
#endif

#define S_BEGIN "<!-- gcnet suite --full: begin (generated, do not edit by hand) -->"
#define S_END   "<!-- gcnet suite --full: end -->"
#define S_FASHION "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"

static void
s_help (void)
{
    printf (
        "usage: gcnet suite [options] [SCENARIO.zpl...]\n\n"
        "Run scenarios one after another (each writes its own report) and print a\n"
        "summary table. Without files: the fast subset, configs/scenarios/fast/*.zpl\n"
        "(synthetic data, seconds each); with --full: the library,\n"
        "configs/scenarios/*.zpl (16 peers on Fashion-MNIST; minutes each), and the\n"
        "table is written into docs/RESULTS.md between marker comments.\n\n"
        "  --full             the whole library; write the results table\n"
        "  --dir DIR          where the scenarios are (default configs/scenarios)\n"
        "  -o, --out DIR      output directory (default runs/suite-DATE-TIME)\n"
        "  --results FILE     write the table into FILE (default with --full:\n"
        "                     docs/RESULTS.md next to --dir's configs/)\n"
        "  --netns            every run in network namespaces (root only)\n"
        "  --gcnode PATH      the gcnode binary (default: next to gcnet)\n"
        "  --progress WHEN    auto, on, off\n"
        "  -q, --quiet        only the results\n"
        "  -h, --help         this text\n");
}

static int
s_cmp (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

//  Every *.zpl directly in dir, sorted.
static char **
s_list (const char *dir, int *n)
{
    *n = 0;
    DIR *d = opendir (dir);
    if (!d)
        return NULL;
    char **list = NULL;
    struct dirent *e;
    while ((e = readdir (d))) {
        size_t len = strlen (e->d_name);
        if (len < 5 || strcmp (e->d_name + len - 4, ".zpl"))
            continue;
        char **grown = realloc (list, (size_t) (*n + 1) * sizeof *grown);
        if (!grown)
            break;
        list = grown;
        if (asprintf (&list [*n], "%s/%s", dir, e->d_name) >= 0)
            (*n)++;
    }
    closedir (d);
    if (list)
        qsort (list, (size_t) *n, sizeof *list, s_cmp);
    return list;
}

static void
s_num (FILE *f, double v, const char *fmt)
{
    if (isfinite (v))
        fprintf (f, fmt, v);
    else
        fputs ("–", f);
}

static void
s_table (FILE *f, const gcnet_outcome_t *o, int n)
{
    fprintf (f, "| scenario | result | honest mean acc. | honest min acc. | consensus dist. | min rounds "
                "| MB sent / honest peer | time (s) | s to target | first failure |\n"
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < n; i++) {
        fprintf (f, "| %s | %s | ", o [i].name, o [i].exit_code == 0 ? "pass" : "**FAIL**");
        s_num (f, o [i].mean, "%.4f");
        fputs (" | ", f);
        s_num (f, o [i].min, "%.4f");
        fputs (" | ", f);
        s_num (f, o [i].consensus, "%.3g");
        fputs (" | ", f);
        s_num (f, o [i].min_rounds, "%.0f");
        fputs (" | ", f);
        s_num (f, o [i].mb_sent, "%.1f");
        fputs (" | ", f);
        s_num (f, o [i].elapsed_s, "%.0f");
        fputs (" | ", f);
        if (isfinite (o [i].time_to_target_s))
            fprintf (f, "%.0f (%.2f)", o [i].time_to_target_s, o [i].target);
        else
            fputs ("–", f);
        //  '|' would break the table
        char failed [sizeof o [i].failed];
        snprintf (failed, sizeof failed, "%s", o [i].failed);
        for (char *p = failed; *p; p++)
            if (*p == '|')
                *p = '/';
        fprintf (f, " | %s |\n", failed);
    }
}

//  Replace what is between the markers (or append a section with them).
static int
s_write_results (const char *path, const gcnet_outcome_t *o, int n, bool netns)
{
    char *old = NULL;
    size_t len = 0;
    FILE *f = fopen (path, "r");
    if (f) {
        fseek (f, 0, SEEK_END);
        long size = ftell (f);
        fseek (f, 0, SEEK_SET);
        old = calloc (1, (size_t) (size > 0 ? size : 0) + 1);
        len = old ? fread (old, 1, (size_t) (size > 0 ? size : 0), f) : 0;
        fclose (f);
    }
    char *begin = old ? strstr (old, S_BEGIN) : NULL;
    char *end = begin ? strstr (begin, S_END) : NULL;
    char tmp [4200];
    snprintf (tmp, sizeof tmp, "%s.tmp", path);
    f = fopen (tmp, "w");
    if (!f) {
        free (old);
        return -1;
    }
    if (begin && end)
        fwrite (old, 1, (size_t) (begin - old), f);
    else {
        if (old && len)
            fprintf (f, "%s%s", old, old [len - 1] == '\n' ? "\n" : "\n\n");
        fprintf (f, "## Fault-injection suite (gcnet)\n\n"
                    "Command: `build/gcnet suite --full` (every scenario of configs/scenarios/, one after\n"
                    "another; each run's report.md and plots are in its output directory). Scenario\n"
                    "format and library: docs/SCENARIOS.md.\n\n");
    }
    time_t now = time (NULL);
    char stamp [64];
    strftime (stamp, sizeof stamp, "%Y-%m-%d %H:%M", localtime (&now));
    fprintf (f, "%s\n\nRun %s, %s; %s.\n\n", S_BEGIN, stamp, netns ? "network namespaces (--netns)" : "loopback",
             access (S_FASHION, R_OK) == 0 ? "Fashion-MNIST" : "synthetic data (Fashion-MNIST not installed)");
    s_table (f, o, n);
    fprintf (f, "\n%s", S_END);
    if (begin && end)
        fputs (end + strlen (S_END), f);
    else
        fputc ('\n', f);
    free (old);
    if (fclose (f))
        return -1;
    return rename (tmp, path);
}

int
gcnet_cmd_suite (int argc, char **argv)
{
    static const struct option longopts [] = {
        { "full", no_argument, NULL, 'f' },
        { "dir", required_argument, NULL, 'd' },
        { "out", required_argument, NULL, 'o' },
        { "results", required_argument, NULL, 'r' },
        { "netns", no_argument, NULL, 'n' },
        { "gcnode", required_argument, NULL, 'g' },
        { "progress", required_argument, NULL, 'p' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    gcnet_args_t args = { .progress = "auto" };
    bool full = false;
    const char *dir = NULL, *out = NULL, *results = NULL;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long (argc, argv, ":o:qh", longopts, NULL)) != -1) {
        if (gcnet_args_option (&args, c, optarg))
            continue;
        switch (c) {
            case 'f': full = true; break;
            case 'd': dir = optarg; break;
            case 'o': out = optarg; break;
            case 'r': results = optarg; break;
            case 'h': s_help (); return GCNET_EXIT_OK;
            case ':': return gcnet_error ("suite", GCNET_EXIT_USAGE, "%s needs a value", argv [optind - 1]);
            default: return gcnet_error ("suite", GCNET_EXIT_USAGE, "unknown option '%s' (see gcnet suite --help)",
                                         argv [optind - 1]);
        }
    }
    if (gcnet_args_check ("suite", &args))
        return GCNET_EXIT_USAGE;
    char dirbuf [4096];
    if (!dir) {
        //  From the source tree when run from elsewhere (e.g. build/).
        dir = access ("configs/scenarios", R_OK) == 0 ? "configs/scenarios" : GC_SOURCE_DIR "/configs/scenarios";
    }
    char **files = NULL;
    int n = 0;
    if (optind < argc) {
        n = argc - optind;
        files = calloc ((size_t) n, sizeof *files);
        for (int i = 0; files && i < n; i++)
            files [i] = strdup (argv [optind + i]);
    }
    else {
        snprintf (dirbuf, sizeof dirbuf, "%s%s", dir, full ? "" : "/fast");
        files = s_list (dirbuf, &n);
        if (n == 0) {
            free (files);
            return gcnet_error ("suite", GCNET_EXIT_USAGE, "no scenarios (*.zpl) in %s", dirbuf);
        }
    }
    if (!files)
        return gcnet_error ("suite", GCNET_EXIT_FAIL, "out of memory");
    char resbuf [4096];
    if (full && !results) {
        //  docs/RESULTS.md of the tree the scenarios come from
        snprintf (resbuf, sizeof resbuf, "%s/../../docs/RESULTS.md", dir);
        results = resbuf;
    }
    if (full && access (S_FASHION, R_OK))
        fprintf (stderr, "gcnet suite: warning: Fashion-MNIST is not installed (dataset-fashion-mnist): "
                 "the peers fall back to synthetic data\n");
    char outbuf [4096];
    if (!out) {
        time_t now = time (NULL);
        char stamp [32];
        strftime (stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime (&now));
        snprintf (outbuf, sizeof outbuf, "runs/suite-%s", stamp);
        out = outbuf;
    }
    gcnet_outcome_t *outcomes = calloc ((size_t) n, sizeof *outcomes);
    if (!outcomes)
        return gcnet_error ("suite", GCNET_EXIT_FAIL, "out of memory");
    int failed = 0, done = 0;
    bool interrupted = false;
    for (int i = 0; i < n && !interrupted; i++) {
        char sub [4200];
        const char *base = strrchr (files [i], '/');
        base = base ? base + 1 : files [i];
        snprintf (sub, sizeof sub, "%s/%.*s", out, (int) strcspn (base, "."), base);
        gcnet_args_t one = args;
        one.out_dir = sub;
        fprintf (stderr, "gcnet suite: [%d/%d] %s\n", i + 1, n, files [i]);
        int rc = gcnet_run_scenario ("suite", files [i], &one, &outcomes [i]);
        done++;
        failed += rc != GCNET_EXIT_OK;
        interrupted = rc == GCNET_EXIT_INTERRUPTED;
    }
    printf ("\n");
    s_table (stdout, outcomes, done);
    printf ("\n%d of %d scenarios passed%s; reports in %s/\n", done - failed, n,
            interrupted ? " (interrupted)" : "", out);
    if (results && !interrupted) {
        if (s_write_results (results, outcomes, done, args.netns))
            gcnet_error ("suite", 0, "cannot write %s", results);
        else
            printf ("results table written to %s\n", results);
    }
    for (int i = 0; i < n; i++)
        free (files [i]);
    free (files);
    free (outcomes);
    return interrupted ? GCNET_EXIT_INTERRUPTED : failed ? GCNET_EXIT_FAIL : GCNET_EXIT_OK;
}
