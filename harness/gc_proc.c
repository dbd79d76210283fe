#include "gc_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gc_time.h"

#define S_OUTPUT_MAX (1u << 20)

//  What failed in the child, sent to the parent through the exec pipe.
typedef struct {
    int stage;                      /* index into s_stages */
    int error;                      /* errno */
} s_child_error_t;

static const char *s_stages [] = {
    "setpgid", "prctl", "open stdout", "open stderr", "chdir", "open the namespace",
    "setns", "exec"
};

//  Only async-signal-safe calls from here to exec: the parent has threads.
static void __attribute__ ((noreturn))
s_child_fail (int fd, int stage)
{
    s_child_error_t e = { stage, errno };
    ssize_t rc = write (fd, &e, sizeof e);
    (void) rc;
    _exit (127);
}

static void
s_child_reset_signals (void)
{
    struct sigaction dfl;
    memset (&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            sigaction (s, &dfl, NULL);
    sigset_t none;
    sigemptyset (&none);
    sigprocmask (SIG_SETMASK, &none, NULL);
}

static void __attribute__ ((noreturn))
s_child (const gc_proc_opts_t *opts, pid_t parent, int fd, bool group, int out_fd)
{
    s_child_reset_signals ();
    if (group && setpgid (0, 0))
        s_child_fail (fd, 0);
    if (prctl (PR_SET_PDEATHSIG, SIGKILL))
        s_child_fail (fd, 1);
    if (getppid () != parent)          /* the parent died before prctl */
        _exit (127);
    const char *paths [2] = { opts->stdout_path, opts->stderr_path };
    for (int i = 0; i < 2; i++) {
        if (out_fd >= 0) {
            if (dup2 (out_fd, 1 + i) < 0)
                s_child_fail (fd, 2 + i);
            continue;
        }
        int out = open (paths [i] ? paths [i] : "/dev/null", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (out < 0)
            s_child_fail (fd, 2 + i);
        if (dup2 (out, 1 + i) < 0)
            s_child_fail (fd, 2 + i);
        close (out);
    }
    int in = open ("/dev/null", O_RDONLY);
    if (in >= 0) {
        dup2 (in, 0);
        close (in);
    }
    if (opts->cwd && chdir (opts->cwd))
        s_child_fail (fd, 4);
    if (opts->netns) {
        int ns = open (opts->netns, O_RDONLY | O_CLOEXEC);
        if (ns < 0)
            s_child_fail (fd, 5);
        if (setns (ns, CLONE_NEWNET))
            s_child_fail (fd, 6);
        close (ns);
    }
    execv (opts->argv [0], (char *const *) opts->argv);
    s_child_fail (fd, 7);
}

//  Fork and exec; waits for the exec (or the child's failure) via a
//  close-on-exec pipe. out_fd >= 0: the child's stdout and stderr.
static pid_t
s_fork_exec (const gc_proc_opts_t *opts, bool group, int out_fd, gc_err_t *err)
{
    int pipefd [2];
    if (pipe2 (pipefd, O_CLOEXEC))
        return gc_err_set (err, GC_E_SYS, "pipe: %s", strerror (errno));
    pid_t parent = getpid ();
    pid_t pid = fork ();
    if (pid < 0) {
        close (pipefd [0]);
        close (pipefd [1]);
        return gc_err_set (err, GC_E_SYS, "fork: %s", strerror (errno));
    }
    if (pid == 0) {
        close (pipefd [0]);
        s_child (opts, parent, pipefd [1], group, out_fd);
    }
    close (pipefd [1]);
    //  The parent sets the group too, so that a signal sent right after
    //  spawn cannot miss it.
    if (group)
        setpgid (pid, pid);
    s_child_error_t e;
    ssize_t n;
    do
        n = read (pipefd [0], &e, sizeof e);
    while (n < 0 && errno == EINTR);
    close (pipefd [0]);
    if (n == (ssize_t) sizeof e) {
        waitpid (pid, NULL, 0);
        const char *stage = e.stage >= 0 && e.stage < (int) (sizeof s_stages / sizeof s_stages [0])
                          ? s_stages [e.stage] : "?";
        return gc_err_set (err, GC_E_SYS, "%s: %s failed: %s", opts->argv [0], stage, strerror (e.error));
    }
    return pid;
}

pid_t
gc_proc_spawn (const gc_proc_opts_t *opts, gc_err_t *err)
{
    if (!opts || !opts->argv || !opts->argv [0])
        return gc_err_set (err, GC_E_ARG, "spawn: no program");
    return s_fork_exec (opts, true, -1, err);
}

//  PATH lookup (execv does none).
static bool
s_resolve (const char *name, char *out, size_t size)
{
    if (strchr (name, '/')) {
        snprintf (out, size, "%s", name);
        return access (out, X_OK) == 0;
    }
    const char *path = getenv ("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";
    //  ip and tc live in /usr/sbin, which a plain user's PATH may lack.
    char all [4096];
    snprintf (all, sizeof all, "%s:/usr/sbin:/sbin", path);
    char *save = NULL;
    for (char *dir = strtok_r (all, ":", &save); dir; dir = strtok_r (NULL, ":", &save)) {
        snprintf (out, size, "%s/%s", *dir ? dir : ".", name);
        struct stat st;
        if (stat (out, &st) == 0 && S_ISREG (st.st_mode) && access (out, X_OK) == 0)
            return true;
    }
    return false;
}

bool
gc_proc_which (const char *name)
{
    char path [4096];
    return s_resolve (name, path, sizeof path);
}

int
gc_proc_run (const char *const *argv, double timeout_s, char **output, gc_err_t *err)
{
    if (output)
        *output = NULL;
    char path [4096];
    if (!argv || !argv [0] || !s_resolve (argv [0], path, sizeof path))
        return gc_err_set (err, GC_E_SYS, "%s: not found", argv && argv [0] ? argv [0] : "(null)");
    int outpipe [2];
    if (pipe2 (outpipe, O_CLOEXEC))
        return gc_err_set (err, GC_E_SYS, "pipe: %s", strerror (errno));
    const char *args [64];
    size_t n = 0;
    args [n++] = path;
    for (size_t i = 1; argv [i] && n < 63; i++)
        args [n++] = argv [i];
    args [n] = NULL;
    gc_proc_opts_t opts = { .argv = args };
    pid_t pid = s_fork_exec (&opts, false, outpipe [1], err);
    close (outpipe [1]);
    if (pid < 0) {
        close (outpipe [0]);
        return -1;
    }
    size_t cap = 4096, used = 0;
    char *buf = malloc (cap), chunk [4096];
    double deadline = gc_now_s () + timeout_s;
    bool timed_out = false;
    while (buf) {
        int left_ms = (int) ((deadline - gc_now_s ()) * 1000);
        if (left_ms <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd pfd = { .fd = outpipe [0], .events = POLLIN };
        int rc = poll (&pfd, 1, left_ms);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0) {
            timed_out = rc == 0;
            break;
        }
        ssize_t got = read (outpipe [0], chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        size_t keep = used + (size_t) got <= S_OUTPUT_MAX ? (size_t) got : S_OUTPUT_MAX - used;
        while (used + keep + 1 > cap) {
            char *grown = realloc (buf, cap * 2);
            if (!grown) {
                free (buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
        if (buf) {
            memcpy (buf + used, chunk, keep);   /* beyond the cap: read and drop */
            used += keep;
        }
    }
    close (outpipe [0]);
    if (timed_out)
        kill (pid, SIGKILL);
    int status = 0;
    while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (buf)
        buf [used] = '\0';
    if (output)
        *output = buf;
    else
        free (buf);
    if (timed_out)
        return gc_err_set (err, GC_E_TIMEOUT, "%s: no result after %.0f s (killed)", argv [0], timeout_s);
    if (WIFSIGNALED (status))
        return gc_err_set (err, GC_E_SYS, "%s: killed by signal %d", argv [0], WTERMSIG (status));
    return WEXITSTATUS (status);
}
