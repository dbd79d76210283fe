#include "ops_fixture.h"

#include "gc_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gc_ports.h"
#include "gc_status.h"

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

char *
ops_path (const ops_net_t *self, const char *name)
{
    size_t len = strlen (self->dir) + strlen (name) + 2;
    char *path = malloc (len);
    assert_non_null (path);
    snprintf (path, len, "%s/%s", self->dir, name);
    return path;
}

ops_net_t *
ops_new (const char *tag, int n)
{
    assert_true (n >= 1 && n <= OPS_MAX_PEERS);
    ops_net_t *self = calloc (1, sizeof *self);
    assert_non_null (self);
    self->dir = gc_test_tmpdir (tag);
    self->gcnode = gc_test_build_path ("gcnode");
    self->n = n;
    int base;
    gc_err_t err;
    if (gc_ports_free ((uint32_t) n, &base, &err))
        fail_msg ("%s", err.msg);
    for (int i = 0; i < n; i++) {
        self->ports [i] = base + i;
        char cmd [1024], *out = NULL;
        snprintf (cmd, sizeof cmd, "%s keygen --out %s/keys --name p%d", self->gcnode, self->dir, i);
        if (gc_test_run (cmd, &out) != 0)
            fail_msg ("%s: %s", cmd, out);
        free (out);
    }
    return self;
}

void
ops_destroy (ops_net_t **self_p)
{
    ops_net_t *self = *self_p;
    if (!self)
        return;
    for (int i = 0; i < self->n; i++)
        if (self->pids [i] > 0) {
            kill (self->pids [i], SIGKILL);
            waitpid (self->pids [i], NULL, 0);
        }
    if (!getenv ("GC_KEEP_TMP"))
        gc_test_rmtree (self->dir);
    free (self->dir);
    free (self->gcnode);
    free (self);
    *self_p = NULL;
}

void
ops_write_config (ops_net_t *self, int i, const char *topology, const char *const *endpoints,
                  const char *extra)
{
    char name [32];
    snprintf (name, sizeof name, "p%d.zpl", i);
    char *path = ops_path (self, name);
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    fprintf (f, "node\n    index = %d\n    network = \"ops-test\"\n    key = \"%s/keys/p%d.key\"\n"
                "    metrics = \"%s/p%d.jsonl\"\n    status_file = \"%s/p%d.status\"\n"
                "    eval_every = 5\n    progress = \"off\"\npeers\n",
             i, self->dir, i, self->dir, i, self->dir, i);
    for (int j = 0; j < self->n; j++) {
        if (endpoints && endpoints [j])
            fprintf (f, "    %d\n        endpoint = \"%s\"\n", j, endpoints [j]);
        else
            fprintf (f, "    %d\n        endpoint = \"tcp://127.0.0.1:%d\"\n", j, self->ports [j]);
        fprintf (f, "        key = \"%s/keys/p%d.pub\"\n", self->dir, j);
    }
    fprintf (f, "topology\n    kind = \"%s\"\ntrain\n    data = \"synthetic\"\n    rounds = 20\n"
                "    train_samples = 2000\n    test_samples = 300\n    model = \"784-16-10\"\n"
                "gossip\n    timeout_ms = 300\n", topology);
    if (extra)
        fputs (extra, f);
    assert_int_equal (fclose (f), 0);
    free (path);
}

void
ops_start (ops_net_t *self, int i, const char *args, const char *const *env)
{
    char cmd [4096];
    snprintf (cmd, sizeof cmd, "exec %s run --config %s/p%d.zpl %s >%s/p%d.log 2>&1", self->gcnode,
              self->dir, i, args ? args : "", self->dir, i);
    pid_t pid = fork ();
    assert_true (pid >= 0);
    if (pid == 0) {
        for (const char *const *e = env; e && *e; e++)
            putenv ((char *) *e);
        execl ("/bin/sh", "sh", "-c", cmd, (char *) NULL);
        _exit (127);
    }
    self->pids [i] = pid;
}

int
ops_wait (ops_net_t *self, int i, double timeout_s)
{
    double deadline = s_now () + timeout_s;
    int status = 0;
    while (true) {
        pid_t r = waitpid (self->pids [i], &status, WNOHANG);
        if (r == self->pids [i])
            break;
        if (s_now () > deadline) {
            kill (self->pids [i], SIGKILL);
            waitpid (self->pids [i], NULL, 0);
            self->pids [i] = 0;
            return -1;
        }
        usleep (20000);
    }
    self->pids [i] = 0;
    return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

void
ops_signal (ops_net_t *self, int i, int sig)
{
    if (self->pids [i] > 0)
        kill (self->pids [i], sig);
}

char *
ops_read (const char *path)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc (cap);
    size_t n;
    while (buf && (n = fread (buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len - 1 == 0) {
            char *bigger = realloc (buf, cap * 2);
            if (!bigger) {
                free (buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    fclose (f);
    if (buf)
        buf [len] = 0;
    return buf;
}

bool
ops_wait_round (ops_net_t *self, int i, unsigned long round, double timeout_s)
{
    char name [32];
    snprintf (name, sizeof name, "p%d.status", i);
    char *path = ops_path (self, name);
    double deadline = s_now () + timeout_s;
    bool reached = false;
    while (!reached && s_now () < deadline) {
        gc_status_t st;
        reached = gc_status_load (path, &st, NULL) == 0 && st.round >= round;
        if (!reached)
            usleep (20000);
    }
    free (path);
    return reached;
}

char *
ops_http_get (const char *hostport, const char *path)
{
    char host [64];
    const char *colon = strrchr (hostport, ':');
    if (!colon || (size_t) (colon - hostport) >= sizeof host)
        return NULL;
    memcpy (host, hostport, (size_t) (colon - hostport));
    host [colon - hostport] = 0;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) atoi (colon + 1)) };
    if (inet_pton (AF_INET, host, &a.sin_addr) != 1)
        return NULL;
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect (fd, (struct sockaddr *) &a, sizeof a) != 0) {
        if (fd >= 0)
            close (fd);
        return NULL;
    }
    struct timeval tv = { 5, 0 };
    setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char req [256];
    int rlen = snprintf (req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", path, hostport);
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc (cap);
    if (!buf || send (fd, req, (size_t) rlen, MSG_NOSIGNAL) != rlen) {
        free (buf);
        close (fd);
        return NULL;
    }
    ssize_t n;
    while (len + 1 < cap && (n = recv (fd, buf + len, cap - len - 1, 0)) > 0)
        len += (size_t) n;
    close (fd);
    buf [len] = 0;
    char *body = strstr (buf, "\r\n\r\n");
    if (strncmp (buf, "HTTP/1.1 200", 12) && strncmp (buf, "HTTP/1.0 200", 12))
        body = NULL;
    char *copy = body ? strdup (body + 4) : NULL;
    free (buf);
    return copy;
}

const char *
ops_last_line (const char *text)
{
    const char *last = text, *p;
    while ((p = strchr (last, '\n')) && p [1])
        last = p + 1;
    return last;
}

double
ops_line_value (const char *line, const char *key)
{
    char needle [128];
    snprintf (needle, sizeof needle, "\"%s\":", key);
    const char *end = strchr (line, '\n'), *at = strstr (line, needle);
    return at && (!end || at < end) ? strtod (at + strlen (needle), NULL) : -1;
}

int
ops_rounds_before (const char *text, double until)
{
    int rounds = 0;
    double previous = -1;
    for (const char *line = text; line && *line; ) {
        double round = ops_line_value (line, "round");
        if (ops_line_value (line, "unix_s") < until && round != previous)
            rounds++;
        previous = round;
        line = strchr (line, '\n');
        line = line ? line + 1 : NULL;
    }
    return rounds;
}
