#include "gc_run.h"

#include <czmq.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gc_config.h"
#include "gc_fs.h"
#include "gc_ctl.h"
#include "gc_netns.h"
#include "gc_parse.h"
#include "gc_ports.h"
#include "gc_proc.h"
#include "gc_time.h"
#include "gc_timeline.h"
#include "gc_topology.h"

#define S_TICK_MS        50
#define S_STOP_GRACE_S   10.0       /* SIGTERM → SIGKILL at the end */
#define S_PLAIN_EVERY_S  5.0        /* progress lines when not on a terminal */
#define S_NETNS_PORT     7100

volatile int gc_run_interrupted = 0;

typedef struct {
    gc_peer_result_t *res;
    char             *config, *log, *out, *metrics, *model, *ckpt, *control;
    gc_ctl_t         *ctl;
    bool              alive, frozen;
    bool              expect_exit;      /* gcnet signalled it: not a crash */
    gc_peer_state_t   expect_state;
    long              out_offset;       /* peerN.out size when the process started */
    char             *partition;        /* the last "partition 1,2,3" (NULL: none): a restarted
                                           process gets it again with the timeline's faults */
} s_peer_t;

typedef struct {
    const gc_run_opts_t *opts;
    const gc_scenario_t *sc;
    gc_result_t  *res;
    s_peer_t     *peers;
    uint32_t      n;
    char         *out;
    char          ctl_dir [128];        /* the peers' control sockets */
    gc_topology_t *topology;
    gc_netns_t   *netns;
    FILE         *events, *pids;
    double        t0;
    gc_timeline_t *timeline;
    bool          has_control, has_final_model, has_checkpoint, has_resume;
    char        **endpoints, **pubkeys;
    long          rounds;               /* train/rounds, for the progress line */
    char          last [160];           /* the last event, for the progress line */
    bool          line_shown;
    double        next_plain;           /* next progress line (plain: every 5 s, live: 4 Hz) */
    struct sigaction old_int, old_term;
} s_run_t;

static double
s_elapsed (const s_run_t *run)
{
    return gc_now_s () - run->t0;
}

static char *
s_printf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
static char *
s_printf (const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    char *s = NULL;
    if (vasprintf (&s, fmt, args) < 0)
        s = NULL;
    va_end (args);
    return s;
}

static void
s_on_signal (int sig)
{
    (void) sig;
    gc_run_interrupted++;
}

//  --- console ---------------------------------------------------------------

static void
s_clear_line (s_run_t *run)
{
    if (run->opts->log && run->opts->live && run->line_shown) {
        fputs ("\r\033[K", run->opts->log);
        run->line_shown = false;
    }
}

static double
s_median_round (const s_run_t *run)
{
    return run->timeline ? gc_timeline_median_round (run->timeline) : 0;
}

//  A line for the console (and events.log): the event, with when it fired.
static void s_event (s_run_t *run, bool record, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));
static void
s_event_line (s_run_t *run, bool record, double round, const char *text)
{
    double t = s_elapsed (run);
    if (run->opts->log) {
        s_clear_line (run);
        fprintf (run->opts->log, "gcnet: [%7.1f s, round %4.0f] %s\n", t, round, text);
        fflush (run->opts->log);
    }
    if (run->events) {
        fprintf (run->events, "%.3f\t%.0f\t%s\n", t, round, text);
        fflush (run->events);
    }
    snprintf (run->last, sizeof run->last, "%.120s (%.1f s)", text, t);
    if (record)
        gc_result_note (run->res, t, round, text);
}

static void
s_event (s_run_t *run, bool record, const char *fmt, ...)
{
    char text [512];
    va_list args;
    va_start (args, fmt);
    vsnprintf (text, sizeof text, fmt, args);
    va_end (args);
    s_event_line (run, record, s_median_round (run), text);
}

static void
s_progress (s_run_t *run, bool force)
{
    FILE *log = run->opts->log;
    if (!log)
        return;
    double t = s_elapsed (run);
    if (!force && t < run->next_plain)
        return;
    run->next_plain = t + (run->opts->live ? 0.25 : S_PLAIN_EVERY_S);
    double sum = 0, min = INFINITY;
    int with_acc = 0, up = 0;
    for (uint32_t i = 0; i < run->n; i++) {
        up += run->peers [i].alive && !run->peers [i].frozen;
        const gc_peer_result_t *p = run->peers [i].res;
        if (p->byzantine || !isfinite (p->stat->accuracy))
            continue;
        sum += p->stat->accuracy;
        min = fmin (min, p->stat->accuracy);
        with_acc++;
    }
    char acc [64] = "honest acc -";
    if (with_acc)
        snprintf (acc, sizeof acc, "honest acc %.4f (min %.4f)", sum / with_acc, min);
    char line [400];
    //  (the last event cut short: the live line must fit a terminal line)
    snprintf (line, sizeof line, "%7.1f s  round %.0f/%ld  %s  up %d/%u%s%.60s", t, s_median_round (run),
              run->rounds, acc, up, run->n, *run->last ? "  last: " : "", run->last);
    if (run->opts->live) {
        fprintf (log, "\r\033[K%s", line);
        run->line_shown = true;
    }
    else
        fprintf (log, "gcnet: %s\n", line);
    fflush (log);
}

//  --- files -------------------------------------------------------------------

static int
s_rm_entry (const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void) sb; (void) flag; (void) ftw;
    return remove (path);
}

static int
s_rmtree (const char *path)
{
    return nftw (path, s_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

//  An existing directory is reused only if empty or an earlier gcnet run
//  (it holds scenario.zpl): never delete somebody's files.
static int
s_prepare_out (const char *out, gc_err_t *err)
{
    struct stat st;
    if (stat (out, &st) == 0) {
        if (!S_ISDIR (st.st_mode))
            return gc_err_set (err, GC_E_IO, "--out %s: exists and is not a directory", out);
        DIR *dir = opendir (out);
        bool empty = true;
        struct dirent *e;
        while (dir && (e = readdir (dir)))
            if (strcmp (e->d_name, ".") && strcmp (e->d_name, ".."))
                empty = false;
        if (dir)
            closedir (dir);
        if (!empty) {
            char marker [4200];
            snprintf (marker, sizeof marker, "%s/scenario.zpl", out);
            if (access (marker, F_OK))
                return gc_err_set (err, GC_E_IO, "--out %s: not empty and not a gcnet run; choose another "
                                   "directory", out);
            if (s_rmtree (out))
                return gc_err_set (err, GC_E_IO, "--out %s: cannot remove the old run (%s)", out, strerror (errno));
        }
    }
    return gc_fs_mkdirs (out, 0755, err) ? gc_err_prefix (err, "--out: ") : 0;
}

static int
s_copy_file (const char *from, const char *to)
{
    FILE *in = fopen (from, "rb");
    if (!in)
        return -1;
    FILE *out = fopen (to, "wb");
    if (!out) {
        fclose (in);
        return -1;
    }
    char buf [8192];
    size_t n;
    while ((n = fread (buf, 1, sizeof buf, in)) > 0)
        fwrite (buf, 1, n, out);
    fclose (in);
    return fclose (out);
}

//  The last non-empty line of a file (its last 4 kB), e.g. a peer's error.
static void
s_last_line (const char *path, char *out, size_t size)
{
    out [0] = '\0';
    FILE *f = fopen (path, "rb");
    if (!f)
        return;
    char buf [4096];
    fseek (f, 0, SEEK_END);
    long len = ftell (f);
    fseek (f, len > (long) sizeof buf - 1 ? len - (long) sizeof buf + 1 : 0, SEEK_SET);
    size_t n = fread (buf, 1, sizeof buf - 1, f);
    fclose (f);
    buf [n] = '\0';
    while (n > 0 && (buf [n - 1] == '\n' || buf [n - 1] == '\r'))
        buf [--n] = '\0';
    char *start = strrchr (buf, '\n');
    start = start ? start + 1 : buf;
    size_t keep = strlen (start) < size ? strlen (start) : size - 1;
    memcpy (out, start, keep);
    out [keep] = '\0';
}

static long
s_file_size (const char *path)
{
    struct stat st;
    return stat (path, &st) == 0 ? (long) st.st_size : 0;
}

//  --- setup -------------------------------------------------------------------

char *
gc_run_find_gcnode (void)
{
    char self [4096];
    ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return NULL;
    self [n] = '\0';
    char *slash = strrchr (self, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    char *path = s_printf ("%s/gcnode", self);
    if (path && access (path, X_OK)) {
        free (path);
        return NULL;
    }
    return path;
}

//  What this gcnode offers beyond the core: from its own help texts.
static int
s_features (s_run_t *run, gc_err_t *err)
{
    const char *config_argv [] = { run->opts->gcnode, "run", "--help-config", NULL };
    const char *help_argv [] = { run->opts->gcnode, "run", "--help", NULL };
    char *keys = NULL, *help = NULL;
    if (gc_command_run (config_argv, 30, &keys, err) != 0 || gc_command_run (help_argv, 30, &help, err) != 0) {
        free (keys);
        free (help);
        return gc_err_prefix (err, "%s does not answer run --help-config / --help: ", run->opts->gcnode);
    }
    run->has_control = strstr (keys, "`node/control`") != NULL;
    run->has_final_model = strstr (keys, "`node/final_model`") != NULL;
    run->has_checkpoint = strstr (keys, "`node/checkpoint_dir`") != NULL;
    run->has_resume = strstr (help, "--resume") != NULL;
    free (keys);
    free (help);
    return 0;
}

static int
s_check_needs (s_run_t *run, gc_err_t *err)
{
    const gc_scenario_t *sc = run->sc;
    for (size_t e = 0; e < sc->n_events; e++) {
        const gc_event_t *ev = &sc->events [e];
        bool control = ev->action >= GC_ACT_DROP && !(ev->action == GC_ACT_RATE && run->opts->netns);
        if (control && !run->has_control)
            return gc_err_set (err, GC_E_USAGE, "%s: timeline/%s: '%s' needs the control channel of gcnode "
                               "(node/control), which %s does not have yet", sc->path, ev->name,
                               ev->text, run->opts->gcnode);
        if (ev->resume && (!run->has_resume || !run->has_checkpoint))
            return gc_err_set (err, GC_E_USAGE, "%s: timeline/%s: 'restart resume' needs gcnode run --resume and "
                               "node/checkpoint_dir, which %s does not have yet", sc->path, ev->name,
                               run->opts->gcnode);
    }
    return 0;
}

static int
s_keygen (s_run_t *run, gc_err_t *err)
{
    char *dir = s_printf ("%s/keys", run->out);
    if (!dir)
        return gc_err_set (err, GC_E_NOMEM, "out of memory");
    int rc = 0;
    for (uint32_t i = 0; i < run->n && rc == 0; i++) {
        char name [32];
        snprintf (name, sizeof name, "peer%u", i);
        const char *argv [] = { run->opts->gcnode, "keygen", "--out", dir, "--name", name, NULL };
        char *output = NULL;
        int code = gc_command_run (argv, 30, &output, err);
        if (code > 0)
            rc = gc_err_set (err, GC_E_SYS, "gcnode keygen: %s", output ? output : "failed");
        else
        if (code < 0)
            rc = -1;
        free (output);
        run->pubkeys [i] = s_printf ("%s/%s.pub", dir, name);
        if (!run->pubkeys [i] && rc == 0)
            rc = gc_err_set (err, GC_E_NOMEM, "out of memory");
    }
    free (dir);
    return rc;
}

static int
s_write_configs (s_run_t *run, gc_err_t *err)
{
    int base = run->sc->base_port;
    if (!run->netns && base == 0 && gc_ports_free (run->n, &base, err))
        return -1;
    for (uint32_t i = 0; i < run->n; i++)
        run->endpoints [i] = run->netns
            ? s_printf ("tcp://%s:%d", gc_netns_address (run->netns, i), S_NETNS_PORT)
            : s_printf ("tcp://127.0.0.1:%d", base + (int) i);
    for (uint32_t i = 0; i < run->n; i++) {
        s_peer_t *p = &run->peers [i];
        char *key = s_printf ("%s/keys/peer%u.key", run->out, i);
        char *bind = run->netns ? NULL : s_printf ("tcp://127.0.0.1:%d", base + (int) i);
        gc_peer_env_t env = {
            .endpoints = (const char *const *) run->endpoints,
            .public_keys = (const char *const *) run->pubkeys,
            .private_key = key, .bind = bind, .metrics = p->metrics,
            .control = run->has_control ? p->control : NULL,
            .final_model = run->has_final_model ? p->model : NULL,
            .checkpoint_dir = run->has_checkpoint && run->sc->uses_resume ? p->ckpt : NULL,
            //  On loopback only this machine reaches the peers: CURVE off
            //  (silently, as gcnode does there); namespaces keep the default.
            .curve = run->netns ? NULL : "0"
        };
        FILE *f = fopen (p->config, "w");
        int rc = f ? gc_scenario_write_config (run->sc, i, &env, f, err)
                   : gc_err_set (err, GC_E_IO, "%s: %s", p->config, strerror (errno));
        if (f && fclose (f) && rc == 0)
            rc = gc_err_set (err, GC_E_IO, "%s: cannot write", p->config);
        free (key);
        free (bind);
        if (rc)
            return -1;
        if (run->has_checkpoint && run->sc->uses_resume && gc_fs_mkdirs (p->ckpt, 0755, err))
            return -1;
    }
    return 0;
}

static int
s_setup_peers (s_run_t *run, gc_err_t *err)
{
    for (uint32_t i = 0; i < run->n; i++) {
        s_peer_t *p = &run->peers [i];
        gc_peer_result_t *r = &run->res->peers [i];
        p->res = r;
        r->index = i;
        r->byzantine = gc_scenario_is_byzantine (run->sc, i);
        r->attack = gc_scenario_attack (run->sc, i);
        r->final_accuracy = NAN;
        p->config = s_printf ("%s/peer%u.zpl", run->out, i);
        p->log = s_printf ("%s/peer%u.log", run->out, i);
        p->out = s_printf ("%s/peer%u.out", run->out, i);
        p->metrics = s_printf ("%s/peer%u.jsonl", run->out, i);
        p->model = s_printf ("%s/peer%u.model", run->out, i);
        p->ckpt = s_printf ("%s/peer%u.ckpt", run->out, i);
        p->control = s_printf ("ipc://%s/p%u.ctl", run->ctl_dir, i);
        if (!p->config || !p->log || !p->out || !p->metrics || !p->model || !p->ckpt || !p->control)
            return gc_err_set (err, GC_E_NOMEM, "out of memory");
        r->stat = gc_peerstat_new (p->metrics);
        p->ctl = gc_ctl_new (p->control);
        if (!r->stat || !p->ctl)
            return gc_err_set (err, GC_E_NOMEM, "out of memory");
    }
    return 0;
}

//  --- processes -------------------------------------------------------------

static int
s_spawn (s_run_t *run, uint32_t i, bool resume, gc_err_t *err)
{
    s_peer_t *p = &run->peers [i];
    const char *argv [] = { run->opts->gcnode, "run", "--config", p->config, resume ? "--resume" : NULL, NULL };
    gc_proc_opts_t po = { .argv = argv, .cwd = run->out, .stdout_path = p->out, .stderr_path = p->log,
                          .netns = run->netns ? gc_netns_file (run->netns, i) : NULL };
    p->out_offset = s_file_size (p->out);
    gc_peerstat_restart (p->res->stat, s_elapsed (run));
    pid_t pid = gc_proc_spawn (&po, err);
    if (pid < 0)
        return gc_err_prefix (err, "peer %u: ", i);
    p->res->pid = pid;
    p->res->starts++;
    p->res->state = GC_PEER_RUNNING;
    p->res->down = false;
    p->alive = true;
    p->frozen = false;
    p->expect_exit = false;
    if (run->pids) {
        fprintf (run->pids, "%u %d\n", i, (int) pid);
        fflush (run->pids);
    }
    return 0;
}

static void
s_signal (s_peer_t *p, int sig)
{
    if (p->alive)
        kill (-p->res->pid, sig);       /* the peer's process group */
}

static void
s_exited (s_run_t *run, uint32_t i, int status)
{
    s_peer_t *p = &run->peers [i];
    gc_peer_result_t *r = p->res;
    p->alive = false;
    p->frozen = false;
    gc_peerstat_poll (r->stat);
    char last [200];
    if (WIFEXITED (status)) {
        s_last_line (p->log, last, sizeof last);
        snprintf (r->detail, sizeof r->detail, "exit %d%s%.130s", WEXITSTATUS (status),
                  WEXITSTATUS (status) ? ": " : "", WEXITSTATUS (status) ? last : "");
    }
    else
        snprintf (r->detail, sizeof r->detail, "signal %d (%s)", WTERMSIG (status), strsignal (WTERMSIG (status)));
    if (p->expect_exit)
        r->state = p->expect_state;
    else
    if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
        r->state = GC_PEER_FINISHED;
    else {
        r->state = GC_PEER_CRASHED;
        r->crashes++;
        s_event (run, true, "peer %u (%s) crashed: %s", i, r->byzantine ? "byzantine" : "honest", r->detail);
    }
}

static void
s_reap (s_run_t *run)
{
    for (uint32_t i = 0; i < run->n; i++) {
        s_peer_t *p = &run->peers [i];
        if (!p->alive)
            continue;
        int status;
        pid_t got = waitpid (p->res->pid, &status, WNOHANG);
        if (got == p->res->pid)
            s_exited (run, i, status);
    }
}

//  Kill now and wait for it (restart, and the end of the run).
static void
s_kill_wait (s_run_t *run, uint32_t i, gc_peer_state_t as)
{
    s_peer_t *p = &run->peers [i];
    if (!p->alive)
        return;
    p->expect_exit = true;
    p->expect_state = as;
    s_signal (p, SIGKILL);
    int status;
    pid_t got;
    while ((got = waitpid (p->res->pid, &status, 0)) < 0 && errno == EINTR)
        ;
    if (got == p->res->pid)
        s_exited (run, i, status);
    else
        p->alive = false;
}

static void
s_stop_all (s_run_t *run)
{
    bool any = false;
    for (uint32_t i = 0; i < run->n; i++) {
        s_peer_t *p = &run->peers [i];
        if (!p->alive)
            continue;
        any = true;
        p->expect_exit = true;
        p->expect_state = GC_PEER_STOPPED;
        s_signal (p, SIGTERM);
        if (p->frozen)
            s_signal (p, SIGCONT);      /* a stopped process handles SIGTERM only when it runs */
    }
    if (!any)
        return;
    int seen = gc_run_interrupted;
    double deadline = gc_now_s () + S_STOP_GRACE_S;
    while (gc_now_s () < deadline) {
        s_reap (run);
        bool alive = false;
        for (uint32_t i = 0; i < run->n; i++)
            alive |= run->peers [i].alive;
        if (!alive)
            return;
        if (gc_run_interrupted > seen + 0)
            break;                      /* a second Ctrl-C: no more waiting */
        zclock_sleep (S_TICK_MS);
    }
    for (uint32_t i = 0; i < run->n; i++)
        if (run->peers [i].alive) {
            s_event (run, false, "peer %u did not stop within %.0f s: SIGKILL", i, S_STOP_GRACE_S);
            s_kill_wait (run, i, GC_PEER_STOPPED);
        }
}

//  --- faults ------------------------------------------------------------------

//  A restarted process gets the faults its predecessor had (its fault layer
//  died with it).
static void
s_queue_restore (s_run_t *run, uint32_t i, const gc_timeline_faults_t *f)
{
    s_peer_t *p = &run->peers [i];
    char cmd [64];
    if (!run->has_control)
        return;
    if (f->fault.drop > 0) {
        gc_fault_format (&f->fault, GC_FAULT_DROP, cmd, sizeof cmd);
        gc_ctl_queue (p->ctl, cmd);
    }
    if (f->fault.delay_ms > 0 || f->fault.jitter_ms > 0) {
        gc_fault_format (&f->fault, GC_FAULT_DELAY, cmd, sizeof cmd);
        gc_ctl_queue (p->ctl, cmd);
    }
    if (f->slow != 1) {
        snprintf (cmd, sizeof cmd, "slow %g", f->slow);
        gc_ctl_queue (p->ctl, cmd);
    }
    if (f->fault.rate > 0 && !run->netns) {
        gc_fault_format (&f->fault, GC_FAULT_RATE, cmd, sizeof cmd);
        gc_ctl_queue (p->ctl, cmd);
    }
    if (p->partition)
        gc_ctl_queue (p->ctl, p->partition);
}

static void
s_control (s_run_t *run, uint32_t i, const char *cmd)
{
    s_peer_t *p = &run->peers [i];
    if (p->alive && !gc_ctl_queue (p->ctl, cmd))
        s_event (run, false, "peer %u: out of memory queueing '%s'", i, cmd);
}

//  --- the timeline's operations: signals and the control channel --------------

static void
s_op_kill (void *ctx, uint32_t i, bool clean)
{
    s_run_t *run = ctx;
    s_peer_t *p = &run->peers [i];
    if (!p->alive)
        return;
    p->expect_exit = true;
    p->expect_state = GC_PEER_KILLED;
    s_signal (p, clean ? SIGTERM : SIGKILL);
    if (clean && p->frozen)
        s_signal (p, SIGCONT);          /* a stopped process handles SIGTERM only when it runs */
}

static void
s_op_freeze (void *ctx, uint32_t i, bool frozen)
{
    s_run_t *run = ctx;
    s_peer_t *p = &run->peers [i];
    if (!p->alive || p->frozen == frozen)
        return;
    s_signal (p, frozen ? SIGSTOP : SIGCONT);
    p->frozen = frozen;
}

static void
s_op_restart (void *ctx, uint32_t i, bool resume, const gc_timeline_faults_t *faults)
{
    s_run_t *run = ctx;
    gc_err_t err = { 0 };
    s_kill_wait (run, i, GC_PEER_KILLED);
    gc_ctl_reset (run->peers [i].ctl);
    if (s_spawn (run, i, resume, &err))
        s_event (run, true, "restart of peer %u failed: %s", i, err.msg);
    else
        s_queue_restore (run, i, faults);
}

static void
s_op_faults (void *ctx, uint32_t i, unsigned what, const gc_timeline_faults_t *f)
{
    s_run_t *run = ctx;
    char cmd [128];
    gc_err_t err = { 0 };
    if (what & GC_TIMELINE_SLOW)
        snprintf (cmd, sizeof cmd, "slow %g", f->slow);
    else
    if ((what & GC_FAULT_RATE) && run->netns) {
        //  under --netns the link's own shaping (tc) caps the rate
        if (gc_netns_rate (run->netns, i, f->fault.rate, &err))
            s_event (run, false, "peer %u: %s", i, err.msg);
        return;
    }
    else
        gc_fault_format (&f->fault, what, cmd, sizeof cmd);
    s_control (run, i, cmd);
}

static void
s_op_partition (void *ctx, uint32_t i, const uint32_t *allowed, size_t n)
{
    s_run_t *run = ctx;
    s_peer_t *p = &run->peers [i];
    free (p->partition);
    p->partition = NULL;
    if (n == 0) {
        s_control (run, i, "heal");
        return;
    }
    //  "partition 0,1,2": the side's own peers, this one included, so that a
    //  side of one is not an empty list (which would heal).
    char cmd [4096] = "partition ";
    size_t used = strlen (cmd);
    for (size_t m = 0; m < n && used < sizeof cmd - 8; m++)
        used += (size_t) snprintf (cmd + used, sizeof cmd - used, "%s%u", m ? "," : "", allowed [m]);
    p->partition = strdup (cmd);
    s_control (run, i, cmd);
}

static void
s_op_record (void *ctx, double round, const char *text)
{
    char line [512];                    /* as long as gcnet's other lines */
    snprintf (line, sizeof line, "%s", text);
    s_event_line (ctx, true, round, line);
}

static int64_t
s_op_round (void *ctx, uint32_t i)
{
    const s_run_t *run = ctx;
    const gc_peer_result_t *r = run->peers [i].res;
    return !r || !r->stat || r->byzantine ? -1 : (int64_t) r->stat->round;     /* (before setup: none) */
}

typedef struct {
    s_run_t  *run;
    uint32_t  peer;
} s_reply_ctx_t;

static void
s_on_reply (void *arg, const char *command, const char *reply)
{
    s_reply_ctx_t *ctx = arg;
    bool ok = !strncmp (reply, "ok", 2);
    if (ok && ctx->run->events) {
        fprintf (ctx->run->events, "%.3f\t-\tpeer %u: %s -> %.200s\n", s_elapsed (ctx->run), ctx->peer,
                 command, reply);
        fflush (ctx->run->events);
    }
    else
    if (!ok)
        s_event (ctx->run, true, "peer %u: control '%s' -> %.200s", ctx->peer, command, reply);
}

static void
s_poll_control (s_run_t *run)
{
    double now = gc_now_s ();
    for (uint32_t i = 0; i < run->n; i++) {
        s_peer_t *p = &run->peers [i];
        if (!p->alive || p->frozen)
            continue;
        s_reply_ctx_t ctx = { run, i };
        gc_ctl_poll (p->ctl, now, s_on_reply, &ctx);
    }
}

//  --- the loop ---------------------------------------------------------------

static void
s_loop (s_run_t *run)
{
    double grace_until = -1;
    while (true) {
        s_reap (run);
        for (uint32_t i = 0; i < run->n; i++)
            gc_peerstat_poll (run->peers [i].res->stat);
        if (gc_run_interrupted) {
            run->res->status = GC_RUN_INTERRUPTED;
            s_event (run, true, "interrupted: stopping every peer");
            break;
        }
        if (s_elapsed (run) > run->sc->timeout_s) {
            run->res->status = GC_RUN_TIMED_OUT;
            s_event (run, true, "timed out after %.0f s (scenario/timeout_s): stopping every peer",
                     run->sc->timeout_s);
            break;
        }
        gc_timeline_poll (run->timeline, s_elapsed (run));
        s_poll_control (run);
        bool honest_busy = false, any_alive = false;
        for (uint32_t i = 0; i < run->n; i++) {
            const s_peer_t *p = &run->peers [i];
            any_alive |= p->alive;
            if (!p->res->byzantine && (p->alive || gc_timeline_restart_pending (run->timeline, i)))
                honest_busy = true;
        }
        if (!any_alive && !honest_busy)
            break;
        if (!honest_busy) {
            //  The honest peers are done; others get grace_s to finish.
            if (grace_until < 0)
                grace_until = s_elapsed (run) + run->sc->grace_s;
            else
            if (s_elapsed (run) >= grace_until) {
                s_event (run, false, "honest peers done; stopping the others after %.0f s of grace",
                         run->sc->grace_s);
                break;
            }
        }
        s_progress (run, false);
        zclock_sleep (S_TICK_MS);
    }
    s_stop_all (run);
    s_progress (run, true);
    if (run->opts->live && run->opts->log && run->line_shown) {
        fputc ('\n', run->opts->log);
        run->line_shown = false;
    }
}

//  --- results ----------------------------------------------------------------

static void
s_collect (s_run_t *run)
{
    gc_result_t *res = run->res;
    for (uint32_t i = 0; i < run->n; i++) {
        s_peer_t *p = &run->peers [i];
        gc_peer_result_t *r = p->res;
        gc_peerstat_poll (r->stat);
        r->down = r->state == GC_PEER_KILLED;
        //  The final line of the last process, if it printed one.
        FILE *f = fopen (p->out, "r");
        if (f) {
            fseek (f, p->out_offset, SEEK_SET);
            char line [512];
            while (fgets (line, sizeof line, f)) {
                unsigned peer;
                unsigned long long rounds;
                double acc;
                if (sscanf (line, "peer=%u rounds=%llu test_accuracy=%lf", &peer, &rounds, &acc) == 3
                &&  peer == i && isfinite (acc)) {
                    r->has_final = true;
                    r->final_accuracy = acc;
                    r->final_rounds = rounds;
                }
            }
            fclose (f);
        }
        if (!r->has_final) {
            r->final_accuracy = r->stat->accuracy;
            r->final_rounds = r->stat->round;
        }
        if (run->has_final_model && access (p->model, R_OK) == 0)
            r->model_path = strdup (p->model);
    }
    gc_result_not_fired (res, run->timeline);
    res->elapsed_s = s_elapsed (run);
    res->has_final_model = run->has_final_model;
    res->has_control = run->has_control;
}

static void
s_teardown (s_run_t *run)
{
    for (uint32_t i = 0; i < run->n; i++)
        if (run->peers && run->peers [i].alive)
            s_kill_wait (run, i, GC_PEER_STOPPED);
    gc_netns_destroy (&run->netns);
    gc_topology_destroy (&run->topology);
    if (*run->ctl_dir) {
        s_rmtree (run->ctl_dir);
        rmdir (run->ctl_dir);
    }
    if (run->events)
        fclose (run->events);
    if (run->pids)
        fclose (run->pids);
    for (uint32_t i = 0; run->peers && i < run->n; i++) {
        s_peer_t *p = &run->peers [i];
        gc_ctl_destroy (&p->ctl);
        free (p->config);
        free (p->log);
        free (p->out);
        free (p->metrics);
        free (p->model);
        free (p->ckpt);
        free (p->control);
        free (p->partition);
    }
    free (run->peers);
    for (uint32_t i = 0; i < run->n; i++) {
        if (run->endpoints)
            free (run->endpoints [i]);
        if (run->pubkeys)
            free (run->pubkeys [i]);
    }
    free (run->endpoints);
    free (run->pubkeys);
    gc_timeline_destroy (&run->timeline);
    free (run->out);
}

//  Control sockets live in OUT/ctl when the path fits an ipc:// endpoint
//  (at most 107 bytes), so that a gcnet killed with SIGKILL leaves them in its
//  own run directory; otherwise in /tmp/gcnet-PID-ctl-XXXXXX, and such
//  directories of gcnets that no longer run are removed here.
static void
s_sweep_ctl_dirs (void)
{
    DIR *dir = opendir ("/tmp");
    struct dirent *e;
    while (dir && (e = readdir (dir))) {
        long pid;
        if (sscanf (e->d_name, "gcnet-%ld-ctl-", &pid) != 1 || strncmp (e->d_name, "gcnet-", 6) || pid <= 0)
            continue;
        if (kill ((pid_t) pid, 0) == 0 || errno != ESRCH)
            continue;
        char path [300];
        snprintf (path, sizeof path, "/tmp/%.250s", e->d_name);
        s_rmtree (path);
    }
    if (dir)
        closedir (dir);
}

static int
s_make_ctl_dir (s_run_t *run, gc_err_t *err)
{
    s_sweep_ctl_dirs ();
    if (strlen (run->out) + sizeof "/ctl/p253.ctl" < 100) {
        snprintf (run->ctl_dir, sizeof run->ctl_dir, "%s/ctl", run->out);
        if (mkdir (run->ctl_dir, 0700) == 0)
            return 0;
    }
    snprintf (run->ctl_dir, sizeof run->ctl_dir, "/tmp/gcnet-%d-ctl-XXXXXX", (int) getpid ());
    if (!mkdtemp (run->ctl_dir)) {
        run->ctl_dir [0] = '\0';
        return gc_err_set (err, GC_E_IO, "mkdtemp /tmp/gcnet-PID-ctl-XXXXXX: %s", strerror (errno));
    }
    return 0;
}

static int
s_setup (s_run_t *run, gc_err_t *err)
{
    const gc_scenario_t *sc = run->sc;
    if (s_features (run, err) || s_check_needs (run, err))
        return -1;
    char why [256];
    if (run->opts->netns && !gc_netns_available (why, sizeof why))
        return gc_err_set (err, GC_E_USAGE, "%s", why);
    if (s_prepare_out (run->opts->out_dir, err))
        return -1;
    run->out = realpath (run->opts->out_dir, NULL);
    if (!run->out)
        return gc_err_set (err, GC_E_IO, "--out %s: %s", run->opts->out_dir, strerror (errno));
    run->res->out_dir = strdup (run->out);
    char *path = s_printf ("%s/scenario.zpl", run->out);
    if (!path || s_copy_file (sc->path, path)) {
        //  A scenario from text has no file: write a marker instead.
        FILE *f = path ? fopen (path, "w") : NULL;
        if (f) {
            fprintf (f, "#   scenario %s (given as text)\n", sc->name);
            fclose (f);
        }
    }
    free (path);
    path = s_printf ("%s/events.log", run->out);
    run->events = path ? fopen (path, "w") : NULL;
    free (path);
    path = s_printf ("%s/pids.txt", run->out);
    run->pids = path ? fopen (path, "w") : NULL;
    free (path);
    if (!run->events || !run->pids)
        return gc_err_set (err, GC_E_IO, "%s: cannot write events.log / pids.txt", run->out);
    if (s_make_ctl_dir (run, err))
        return -1;
    if (s_setup_peers (run, err) || s_keygen (run, err))
        return -1;
    //  The topology as the peers will build it: for the namespaces' links.
    const char *topo = gc_scenario_value (sc, 0, "topology/kind");
    const char *seed_text = gc_scenario_value (sc, 0, "node/seed");
    gc_config_t *defaults = gc_config_new ();
    if (!defaults)
        return gc_err_set (err, GC_E_NOMEM, "out of memory");
    unsigned long long seed = defaults->seed;
    const char *rounds = gc_scenario_value (sc, 0, "train/rounds");
    run->rounds = rounds ? atol (rounds) : defaults->rounds;
    int rc = seed_text ? gc_parse_u64 (seed_text, &seed, "node/seed", err) : 0;
    if (rc == 0)
        run->topology = gc_topology_new (topo ? topo : defaults->topology, run->n, seed, err);
    gc_config_destroy (&defaults);
    if (!run->topology)
        return gc_err_prefix (err, "%s: topology/kind: ", sc->path);
    if (run->opts->netns) {
        int swept = gc_netns_sweep ();
        if (swept && run->opts->log)
            fprintf (run->opts->log, "gcnet: removed %d network namespaces left by an earlier gcnet\n", swept);
        run->netns = gc_netns_new (run->topology, err);
        if (!run->netns)
            return -1;
    }
    return s_write_configs (run, err);
}

int
gc_run (const gc_run_opts_t *opts, gc_result_t **result, gc_err_t *err)
{
    *result = NULL;
    const gc_scenario_t *sc = opts->scenario;
    s_run_t run = { .opts = opts, .sc = sc, .n = sc->n_peers };
    run.res = calloc (1, sizeof *run.res);
    run.peers = calloc (sc->n_peers, sizeof *run.peers);
    run.endpoints = calloc (sc->n_peers, sizeof *run.endpoints);
    run.pubkeys = calloc (sc->n_peers, sizeof *run.pubkeys);
    gc_timeline_ops_t ops = {
        .ctx = &run, .kill = s_op_kill, .freeze = s_op_freeze, .restart = s_op_restart,
        .faults = s_op_faults, .partition = s_op_partition, .record = s_op_record, .round = s_op_round
    };
    run.timeline = gc_timeline_new (sc, &ops);
    if (run.res) {
        run.res->peers = calloc (sc->n_peers, sizeof *run.res->peers);
        run.res->scenario = sc;
        run.res->n_peers = sc->n_peers;
        run.res->netns = opts->netns;
        run.res->gcnode = strdup (opts->gcnode);
    }
    if (!run.res || !run.peers || !run.endpoints || !run.pubkeys || !run.timeline || !run.res->peers) {
        gc_err_set (err, GC_E_NOMEM, "out of memory");
        s_teardown (&run);
        gc_result_destroy (&run.res);
        return -1;
    }
    //  CZMQ installs its own SIGINT handler when it starts: start it first,
    //  then take the signals over for the duration of the run.
    zsys_init ();
    gc_run_interrupted = 0;
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = s_on_signal;
    sigemptyset (&sa.sa_mask);
    sigaction (SIGINT, &sa, &run.old_int);
    sigaction (SIGTERM, &sa, &run.old_term);
    int rc = s_setup (&run, err);
    if (rc == 0) {
        run.t0 = gc_now_s ();
        if (opts->log) {
            fprintf (opts->log, "gcnet: %s: %u peers (%zu Byzantine), %s, %s, output in %s\n", sc->name,
                     run.n, gc_peerset_count (&sc->byzantine), gc_topology_name (run.topology),
                     opts->netns ? "one network namespace each" : "loopback", run.out);
            fflush (opts->log);
        }
        for (uint32_t i = 0; i < run.n && rc == 0; i++)
            rc = s_spawn (&run, i, false, err);
        if (rc == 0) {
            s_loop (&run);
            s_collect (&run);
        }
    }
    s_teardown (&run);
    sigaction (SIGINT, &run.old_int, NULL);
    sigaction (SIGTERM, &run.old_term, NULL);
    if (rc) {
        gc_result_destroy (&run.res);
        return -1;
    }
    *result = run.res;
    return 0;
}
