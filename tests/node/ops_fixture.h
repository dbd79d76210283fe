/*  ops_fixture — small networks of real `gcnode run` processes for the
    operations tests: keys made by `gcnode keygen`, one ZPL file per peer on
    free loopback ports (gc_ports: outside the ephemeral range), peers
    started in the background with their output in a log file, and waited
    for with a deadline (killed past it). Every peer trains on the synthetic
    task with a small model. */
#ifndef OPS_FIXTURE_H
#define OPS_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define OPS_MAX_PEERS 8

typedef struct {
    char   *dir;                    /* temporary directory, removed by ops_destroy */
    char   *gcnode;                 /* path of the binary */
    int     n;
    int     ports [OPS_MAX_PEERS];
    pid_t   pids [OPS_MAX_PEERS];
} ops_net_t;

/*  n peers with keys p0..p(n-1) in DIR/keys. */
ops_net_t *ops_new (const char *tag, int n);
void       ops_destroy (ops_net_t **self_p);
/*  Write DIR/pI.zpl: the common settings, the peer list (endpoint of peer j
    from endpoints[j] if given, else tcp://127.0.0.1:PORT), then `extra`
    (ZPL lines, may be NULL; later keys override earlier ones). */
void       ops_write_config (ops_net_t *self, int i, const char *topology, const char *const *endpoints,
                             const char *extra);
/*  DIR/name (malloc'd). */
char      *ops_path (const ops_net_t *self, const char *name);
/*  Start peer i: gcnode run --config DIR/pI.zpl ARGS, output to DIR/pI.log.
    env: NULL or "NAME=VALUE" strings, NULL-terminated. */
void       ops_start (ops_net_t *self, int i, const char *args, const char *const *env);
/*  Wait for peer i; its exit status (-1 if it had to be killed after
    timeout_s). */
int        ops_wait (ops_net_t *self, int i, double timeout_s);
void       ops_signal (ops_net_t *self, int i, int sig);
/*  Whole file (malloc'd, NUL-terminated) or NULL. */
char      *ops_read (const char *path);
/*  Poll until the status file of peer i (DIR/pI.status) shows round >=
    round, or timeout; true when it did. */
bool       ops_wait_round (ops_net_t *self, int i, unsigned long round, double timeout_s);
/*  GET http://host:port/path; returns the body (malloc'd) when the answer
    is 200, else NULL. */
char      *ops_http_get (const char *hostport, const char *path);
/*  Metrics files (node/metrics): the last line; the number after "key":
    in the line that starts at line (-1 if absent); how many rounds the
    file shows ended before unix time `until` (a line per round, and the
    line written at the end repeats the last round). */
const char *ops_last_line (const char *text);
double     ops_line_value (const char *line, const char *key);
int        ops_rounds_before (const char *text, double until);

#endif
