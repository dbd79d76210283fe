#include "gc_netns.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gc_proc.h"

#define S_PREFIX "gcnet"
#define S_TIMEOUT_S 60.0

struct gc_netns_t {
    uint32_t        n;
    const gc_topology_t *topology;
    char          (*names) [32];
    char          (*files) [64];
    char          (*addrs) [20];
    unsigned        a, b;           /* the /24: 10.a.b.0 */
    bool           *created;
};

bool
gc_netns_available (char *why, size_t size)
{
    if (geteuid () != 0) {
        snprintf (why, size, "--netns needs root (network namespaces, veth links and tc); "
                  "run gcnet as root or leave --netns out");
        return false;
    }
    if (!gc_proc_which ("ip") || !gc_proc_which ("tc")) {
        snprintf (why, size, "--netns needs the ip and tc commands (Debian package iproute2)");
        return false;
    }
    return true;
}

//  Run ip/tc with a batch of commands on stdin: one process for many lines.
static int
s_batch (const char *tool, const char *netns, const char *script, gc_err_t *err)
{
    char path [] = "/tmp/gcnet-batch-XXXXXX";
    int fd = mkstemp (path);
    if (fd < 0)
        return gc_err_set (err, GC_E_IO, "%s batch: %s", tool, strerror (errno));
    size_t len = strlen (script);
    bool ok = write (fd, script, len) == (ssize_t) len;
    close (fd);
    if (!ok) {
        unlink (path);
        return gc_err_set (err, GC_E_IO, "%s batch: cannot write %s", tool, path);
    }
    const char *argv_ns [] = { tool, "-n", netns, "-batch", path, NULL };
    const char *argv_root [] = { tool, "-batch", path, NULL };
    char *output = NULL;
    int rc = gc_proc_run (netns ? argv_ns : argv_root, S_TIMEOUT_S, &output, err);
    unlink (path);
    if (rc > 0) {
        //  The first line of the output says which command failed.
        char *nl = output ? strchr (output, '\n') : NULL;
        if (nl)
            *nl = '\0';
        gc_err_set (err, GC_E_SYS, "%s%s%s: %s", tool, netns ? " -n " : "", netns ? netns : "",
                    output && *output ? output : "failed");
    }
    free (output);
    return rc == 0 ? 0 : -1;
}

static int
s_delete (const char *name)
{
    const char *argv [] = { "ip", "netns", "delete", name, NULL };
    return gc_proc_run (argv, S_TIMEOUT_S, NULL, NULL);
}

int
gc_netns_sweep (void)
{
    DIR *dir = opendir ("/run/netns");
    if (!dir)
        return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir (dir))) {
        long pid;
        int used = 0;
        if (sscanf (e->d_name, S_PREFIX "%ld-p%*u%n", &pid, &used) != 1 || used == 0
        ||  e->d_name [used] != '\0' || pid <= 0)
            continue;
        if (kill ((pid_t) pid, 0) == 0 || errno != ESRCH)
            continue;                   /* its gcnet still runs */
        if (s_delete (e->d_name) == 0)
            removed++;
    }
    closedir (dir);
    return removed;
}

//  A growing text buffer for batch scripts.
typedef struct {
    char  *text;
    size_t len, cap;
    bool   failed;
} s_script_t;

static void s_add (s_script_t *s, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
static void
s_add (s_script_t *s, const char *fmt, ...)
{
    if (s->failed)
        return;
    va_list args;
    while (true) {
        va_start (args, fmt);
        int n = vsnprintf (s->text ? s->text + s->len : NULL, s->text ? s->cap - s->len : 0, fmt, args);
        va_end (args);
        if (n < 0) {
            s->failed = true;
            return;
        }
        if (s->text && s->len + (size_t) n < s->cap) {
            s->len += (size_t) n;
            return;
        }
        size_t cap = s->cap ? s->cap * 2 : 4096;
        while (cap < s->len + (size_t) n + 1)
            cap *= 2;
        char *grown = realloc (s->text, cap);
        if (!grown) {
            s->failed = true;
            return;
        }
        s->text = grown;
        s->cap = cap;
    }
}

gc_netns_t *
gc_netns_new (const gc_topology_t *topology, gc_err_t *err)
{
    uint32_t n = gc_topology_size (topology);
    if (n > 254) {
        gc_err_set (err, GC_E_USAGE, "--netns: at most 254 peers (one /24), not %u", n);
        return NULL;
    }
    gc_netns_t *self = calloc (1, sizeof *self);
    if (!self) {
        gc_err_set (err, GC_E_NOMEM, "out of memory");
        return NULL;
    }
    self->n = n;
    self->topology = topology;
    self->names = calloc (n, sizeof *self->names);
    self->files = calloc (n, sizeof *self->files);
    self->addrs = calloc (n, sizeof *self->addrs);
    self->created = calloc (n, sizeof *self->created);
    if (!self->names || !self->files || !self->addrs || !self->created) {
        gc_netns_destroy (&self);
        gc_err_set (err, GC_E_NOMEM, "out of memory");
        return NULL;
    }
    //  The /24 differs between concurrent gcnets only for readability: the
    //  addresses exist inside each run's own namespaces.
    pid_t pid = getpid ();
    self->a = 100 + (unsigned) pid % 100;
    self->b = ((unsigned) pid / 100) % 256;
    for (uint32_t i = 0; i < n; i++) {
        snprintf (self->names [i], sizeof self->names [i], S_PREFIX "%d-p%u", (int) pid, i);
        snprintf (self->files [i], sizeof self->files [i], "/run/netns/%s", self->names [i]);
        snprintf (self->addrs [i], sizeof self->addrs [i], "10.%u.%u.%u", self->a, self->b, i + 1);
    }
    //  Namespaces and links from the root namespace, then each namespace's
    //  addresses and routes in its own batch.
    s_script_t root = { 0 };
    for (uint32_t i = 0; i < n; i++)
        s_add (&root, "netns add %s\n", self->names [i]);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = i + 1; j < n; j++)
            if (gc_topology_has_edge (topology, i, j) || gc_topology_has_edge (topology, j, i))
                s_add (&root, "link add v%u netns %s type veth peer name v%u netns %s\n",
                       j, self->names [i], i, self->names [j]);
    int rc = root.failed ? gc_err_set (err, GC_E_NOMEM, "out of memory") : s_batch ("ip", NULL, root.text, err);
    free (root.text);
    //  Mark all as created even on failure: destroy deletes what exists.
    for (uint32_t i = 0; i < n; i++)
        self->created [i] = true;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        s_script_t ns = { 0 };
        s_add (&ns, "link set lo up\naddr add %s/32 dev lo\n", self->addrs [i]);
        for (uint32_t j = 0; j < n; j++)
            if (j != i && (gc_topology_has_edge (topology, i, j) || gc_topology_has_edge (topology, j, i)))
                s_add (&ns, "link set v%u up\nroute add %s/32 dev v%u src %s\n", j, self->addrs [j], j,
                       self->addrs [i]);
        rc = ns.failed ? gc_err_set (err, GC_E_NOMEM, "out of memory") : s_batch ("ip", self->names [i], ns.text, err);
        free (ns.text);
    }
    if (rc) {
        gc_err_prefix (err, "--netns: ");
        gc_netns_destroy (&self);
    }
    return self;
}

void
gc_netns_destroy (gc_netns_t **self_p)
{
    gc_netns_t *self = *self_p;
    if (!self)
        return;
    if (self->created && self->names)
        for (uint32_t i = 0; i < self->n; i++)
            if (self->created [i])
                s_delete (self->names [i]);
    free (self->names);
    free (self->files);
    free (self->addrs);
    free (self->created);
    free (self);
    *self_p = NULL;
}

const char *
gc_netns_file (const gc_netns_t *self, uint32_t peer)
{
    return peer < self->n ? self->files [peer] : NULL;
}

const char *
gc_netns_address (const gc_netns_t *self, uint32_t peer)
{
    return peer < self->n ? self->addrs [peer] : NULL;
}

int
gc_netns_rate (gc_netns_t *self, uint32_t peer, double bytes_per_s, gc_err_t *err)
{
    if (peer >= self->n)
        return gc_err_set (err, GC_E_ARG, "--netns: no peer %u", peer);
    s_script_t s = { 0 };
    //  tbf needs a burst of at least one MTU-sized packet plus what the rate
    //  sends in a timer tick; 1/50 s of traffic (32 kB at least) holds a TCP
    //  stream close to the rate (docs/SCENARIOS.md).
    double bits = bytes_per_s * 8;
    long burst = (long) (bytes_per_s / 50);
    if (burst < 32 * 1024)
        burst = 32 * 1024;
    for (uint32_t j = 0; j < self->n; j++) {
        if (j == peer || !(gc_topology_has_edge (self->topology, peer, j)
                        || gc_topology_has_edge (self->topology, j, peer)))
            continue;
        if (bytes_per_s > 0)
            s_add (&s, "qdisc replace dev v%u root tbf rate %.0fbit burst %ld latency 50ms\n",
                   j, bits, burst);
        else
            s_add (&s, "qdisc replace dev v%u root pfifo_fast\n", j);
    }
    int rc = 0;
    if (s.failed)
        rc = gc_err_set (err, GC_E_NOMEM, "out of memory");
    else
    if (s.text)
        rc = s_batch ("tc", self->names [peer], s.text, err);
    free (s.text);
    return rc;
}
