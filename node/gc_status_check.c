#include "gc_status_check.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_fs.h"

//  Findings collected per level, printed worst first.
typedef struct {
    char   text [3][512];
    size_t len [3];
} s_findings_t;

static void __attribute__ ((format (printf, 3, 4)))
s_find (s_findings_t *f, gc_check_level_t level, const char *fmt, ...)
{
    int i = level == GC_CHECK_CRITICAL ? 0 : level == GC_CHECK_WARNING ? 1 : 2;
    size_t room = sizeof f->text [i] - f->len [i];
    if (room < 8)
        return;
    int k = snprintf (f->text [i] + f->len [i], room, "%s", f->len [i] ? "; " : "");
    va_list ap;
    va_start (ap, fmt);
    int m = vsnprintf (f->text [i] + f->len [i] + k, room - (size_t) k, fmt, ap);
    va_end (ap);
    f->len [i] += (size_t) k + (m < 0 ? 0 : (size_t) m);
    if (f->len [i] >= sizeof f->text [i])
        f->len [i] = sizeof f->text [i] - 1;
}

//  The process behind the file: only while it claims to be working.
static void
s_check_process (const gc_status_t *st, const gc_check_limits_t *lim, s_findings_t *f)
{
    if (!lim->probe || st->pid <= 0)
        return;
    char state = lim->probe (st->pid);
    if (state == 0)
        s_find (f, GC_CHECK_CRITICAL, "process %ld is gone (killed or crashed)", st->pid);
    else
    if (state == 'T' || state == 't')
        s_find (f, GC_CHECK_CRITICAL, "process %ld is stopped (SIGSTOP or a debugger)", st->pid);
    else
    if (state == 'Z' || state == 'X')
        s_find (f, GC_CHECK_CRITICAL, "process %ld is dead (zombie)", st->pid);
}

static void
s_check_neighbours (const gc_status_t *st, double now, const gc_check_limits_t *lim, s_findings_t *f)
{
    //  a revoked neighbour is not connected on purpose
    long linked = st->neighbours - (st->revoked > 0 ? st->revoked : 0);
    if (linked > 0 && st->connected == 0)
        s_find (f, GC_CHECK_CRITICAL, "0 of %ld neighbours connected", linked);
    else
    if (st->connected >= 0 && st->connected < linked)
        s_find (f, GC_CHECK_WARNING, "%ld of %ld neighbours connected", st->connected, linked);
    //  Nothing is delivered before the first round ends: judge only a peer
    //  past its first rounds and older than the age limit.
    bool settled = st->round >= 2 && now - st->started > lim->max_age;
    if (settled && st->in_neighbours > 0 && st->no_state > 0) {
        gc_check_level_t level = st->no_state >= st->in_neighbours ? GC_CHECK_CRITICAL : GC_CHECK_WARNING;
        s_find (f, level, "%ld of %ld in-neighbours never delivered a usable state (peer(s) %s)%s",
                st->no_state, st->in_neighbours, st->no_state_peers,
                level == GC_CHECK_CRITICAL ? ": training alone" : "");
    }
    if (st->window_rejected > lim->warn_rejections)
        s_find (f, GC_CHECK_WARNING, "%llu rejections in the last %.0f s (more than %llu)",
                (unsigned long long) st->window_rejected, st->window_s,
                (unsigned long long) lim->warn_rejections);
    if (st->window_rounds > 0 && st->window_mix_skipped >= st->window_rounds)
        s_find (f, GC_CHECK_CRITICAL, "no mix in the last %llu rounds (too few fresh inputs): training alone",
                (unsigned long long) st->window_rounds);
    else
    if (st->window_mix_skipped > 0)
        s_find (f, GC_CHECK_WARNING, "%llu of the last %llu rounds did not mix",
                (unsigned long long) st->window_mix_skipped, (unsigned long long) st->window_rounds);
    if (st->window_mix_fallbacks > 0)
        s_find (f, GC_CHECK_WARNING, "%llu of the last %llu rounds mixed under a weaker rule (too few inputs)",
                (unsigned long long) st->window_mix_fallbacks, (unsigned long long) st->window_rounds);
}

gc_check_level_t
gc_status_check (const gc_status_t *st, double now, const gc_check_limits_t *lim, char *reason, size_t size)
{
    s_findings_t f = { 0 };
    bool working = !strcmp (st->state, "running") || !strcmp (st->state, "starting");
    double age = now - st->time;
    if (!strcmp (st->state, "done"))
        s_find (&f, GC_CHECK_WARNING, "the run is finished (state done)");
    else
    if (!working)
        s_find (&f, GC_CHECK_CRITICAL, "state %s", st->state);
    else {
        s_check_process (st, lim, &f);
        if (age > lim->max_age)
            s_find (&f, GC_CHECK_CRITICAL, "no update for %.1f s (--max-age %g)", age, lim->max_age);
        s_check_neighbours (st, now, lim, &f);
    }
    gc_check_level_t level = f.len [0] ? GC_CHECK_CRITICAL : f.len [1] ? GC_CHECK_WARNING : GC_CHECK_OK;
    if (size)
        snprintf (reason, size, "%s%s%s", f.text [0], f.len [0] && f.len [1] ? "; " : "", f.text [1]);
    return level;
}

char
gc_status_check_probe (long pid)
{
    //  the pid comes from a file: one that is no pid_t (a negative cast
    //  would probe a process group) is no process
    if (pid <= 0 || pid > INT_MAX || (kill ((pid_t) pid, 0) != 0 && errno == ESRCH))
        return 0;
    //  "PID (comm) S ...": comm may hold spaces and parentheses, so the
    //  state is the letter after the last ')'
    char path [64], *text = NULL;
    size_t len = 0;
    snprintf (path, sizeof path, "/proc/%ld/stat", pid);
    if (gc_fs_read_file (path, 4096, &text, &len, NULL))
        return 'R';                     /* no /proc: alive as far as kill tells */
    char state = 'R';
    for (size_t i = len; i > 0; i--)
        if (text [i - 1] == ')') {
            if (i + 1 < len)
                state = text [i + 1];
            break;
        }
    free (text);
    return state;
}

const char *
gc_status_check_name (gc_check_level_t level)
{
    static const char *names [] = { "OK", "WARNING", "CRITICAL", "UNKNOWN" };
    return level <= GC_CHECK_UNKNOWN ? names [level] : "UNKNOWN";
}
