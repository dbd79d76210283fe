/*  gcnet compose — a docker compose network of gcnode peers from a scenario.

    The scenario gives the peers, the gcnode keys for all of them and per
    group, and the Byzantine roles; this command adds what depends on docker:
    one service per peer on one user-defined network (peer N answers as
    tcp://peerN:PORT), per-peer identities, the trust store, volumes and
    restart policies. The timeline and the assertions are gcnet run's
    business: they are reported as left out, not silently dropped.

    Output directory (docker/README.md shows it in use):
        compose.yml             the services (compose v2 and docker-compose v1)
        .env                    COMPOSE_PROJECT_NAME, read by both compose versions
        scenario.zpl            the scenario as given
        trust/peerN.pub         every public key: the trust store, mounted
        trust/peerN.curve.pub   read-only into every container (Ed25519 and
                                CURVE)
        keys/peerN/peerN.key    peer N's private keys (Ed25519 and CURVE),
        keys/peerN/peerN.curve  mounted read-only into peer N's container only
                                (made once, kept on later runs so identities
                                survive regeneration)
        peerN/gcnode.zpl        peer N's configuration (read-only in the container)
        peerN/metrics/          JSON lines, one per round (read-write)
        peerN/checkpoints/      crash-safe checkpoints: a restarted container
                                resumes from them (read-write)

    Ownership: the image runs as uid/gid 10001 (docker/Dockerfile). As root,
    keys and writable directories are given to that user; otherwise compose
    runs each container as the caller (user: "UID:GID"), who owns them. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gc_fs.h"
#include "gc_parse.h"
#include "gc_command.h"
#include "gc_run.h"
#include "gc_scenario.h"
#include "gcnet.h"

#define S_CMD "compose"
#define S_PATH_MAX 4096
#define S_IMAGE_UID 10001L      /* the gcnode user of docker/Dockerfile (uid = gid) */

typedef struct {
    const char *scenario;
    const char *out;
    const char *image;
    const char *project;
    const char *restart;
    const char *gcnode;
    const char *profile;
    const char *subnet;
    uint32_t    net, prefix;        /* the subnet parsed: network address, prefix length */
    long        port;
    long        metrics_port;       /* node/metrics_http inside each container; 0: off */
    long        uid, gid;           /* -1: chosen from who runs gcnet */
} s_opts_t;

static void
s_help (void)
{
    printf (
        "usage: gcnet compose --scenario FILE --out DIR [options]\n\n"
        "Write a docker compose network of the scenario's peers: DIR/compose.yml with one\n"
        "service per peer on one user-defined network, per-peer keys, the trust store\n"
        "(read-only), per-peer metrics and checkpoint directories, restart policies,\n"
        "and the Byzantine peers in a compose profile. Works with `docker compose` (v2)\n"
        "and `docker-compose` (v1.28+). Build the image first (docker/README.md).\n\n"
        "  -s, --scenario FILE   the scenario (docs/SCENARIOS.md); its timeline and\n"
        "                        assertions are not part of a compose network\n"
        "  -o, --out DIR         output directory (created; existing keys are kept)\n"
        "      --image NAME      image of every peer (default gcnode:latest)\n"
        "      --project NAME    compose project name (default: the scenario's name)\n"
        "      --port N          port every peer listens on in its container (default 7100)\n"
        "      --metrics-port N  each peer's HTTP endpoint (Prometheus /metrics, /status) on\n"
        "                        0.0.0.0:N in its container, on the compose network only\n"
        "                        (default 9100; 0: off; a scenario's node/metrics_http wins)\n"
        "      --restart POLICY  no, on-failure, always or unless-stopped (default on-failure:\n"
        "                        a crashed peer restarts and resumes from its checkpoint,\n"
        "                        a peer that finished its rounds stays down)\n"
        "      --profile NAME    compose profile of the Byzantine peers (default byzantine)\n"
        "      --subnet CIDR     the network's IPv4 subnet; peer N gets host address N+2\n"
        "                        (default 172.30.77.0/24; choose another if it overlaps)\n"
        "      --uid UID[:GID]   user the containers run as and who owns keys and volumes\n"
        "                        (default: the image's 10001 when run as root, else the caller)\n"
        "      --gcnode PATH     gcnode binary for keygen (default: next to gcnet)\n"
        "  -h, --help            this text\n\n"
        "Then: cd DIR && docker compose --profile byzantine up -d   (docker/README.md)\n");
}

//  Names that go into YAML unquoted-safe and into DNS: we quote anyway, but
//  refuse anything that would need escaping or that compose would mangle.
static bool
s_plain (const char *s, const char *extra)
{
    if (!*s)
        return false;
    for (const char *p = s; *p; p++)
        if (!isalnum ((unsigned char) *p) && !strchr (extra, *p))
            return false;
    return true;
}

//  Compose normalises project names to [a-z0-9_-], starting alphanumeric.
static void
s_project_name (const char *from, char *out, size_t size)
{
    size_t n = 0;
    for (const char *p = from; *p && n + 1 < size; p++) {
        int c = tolower ((unsigned char) *p);
        if (isalnum (c) || ((c == '-' || c == '_') && n > 0))
            out [n++] = (char) c;
        else
        if (n > 0 && out [n - 1] != '-')
            out [n++] = '-';
    }
    while (n > 0 && out [n - 1] == '-')
        n--;
    out [n] = '\0';
    if (n == 0)
        snprintf (out, size, "gcnode");
}

//  buf has S_PATH_MAX bytes; -1 when the path does not fit.
static int
s_path (char *buf, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static int
s_path (char *buf, const char *fmt, ...)
{
    va_list args;
    va_start (args, fmt);
    int n = vsnprintf (buf, S_PATH_MAX, fmt, args);
    va_end (args);
    return n < 0 || n >= S_PATH_MAX ? -1 : 0;
}

static bool
s_exists (const char *path)
{
    struct stat st;
    return stat (path, &st) == 0;
}

//  keys/peerN/peerN.key (private) and trust/peerN.pub, made once.
//  A public key keygen wrote next to its secret goes to the trust store.
static int
s_publish_key (const char *made, const char *pub, gc_err_t *err)
{
    if (rename (made, pub))
        return gc_err_set (err, GC_E_IO, "cannot move %s to %s: %s", made, pub, strerror (errno));
    return 0;
}

static int
s_identity (const s_opts_t *o, const char *gcnode, uint32_t peer, gc_err_t *err)
{
    char dir [S_PATH_MAX], key [S_PATH_MAX], pub [S_PATH_MAX], made [S_PATH_MAX], name [32];
    char curve [S_PATH_MAX], curve_pub [S_PATH_MAX], curve_made [S_PATH_MAX];
    snprintf (name, sizeof name, "peer%u", peer);
    if (s_path (dir, "%s/keys/%s", o->out, name) || s_path (key, "%s/%s.key", dir, name)
    ||  s_path (made, "%s/%s.pub", dir, name) || s_path (pub, "%s/trust/%s.pub", o->out, name)
    ||  s_path (curve, "%s/%s.curve", dir, name) || s_path (curve_made, "%s/%s.curve.pub", dir, name)
    ||  s_path (curve_pub, "%s/trust/%s.curve.pub", o->out, name))
        return gc_err_set (err, GC_E_USAGE, "--out %s: path too long", o->out);
    if (s_exists (key)) {
        const char *missing = !s_exists (pub) ? pub : !s_exists (curve) ? curve
                            : !s_exists (curve_pub) && !s_exists (curve_made) ? curve_pub : NULL;
        if (missing)
            return gc_err_set (err, GC_E_CONFIG, "%s exists but %s does not: remove the key to make a new "
                               "identity for %s", key, missing, name);
        //  A directory made before the CURVE keys were published
        return s_exists (curve_pub) ? 0 : s_publish_key (curve_made, curve_pub, err);
    }
    if (gc_fs_mkdirs (dir, 0700, err))
        return -1;
    const char *argv [] = { gcnode, "keygen", "--out", dir, "--name", name, NULL };
    char *output = NULL;
    int code = gc_command_run (argv, 30, &output, err);
    if (code > 0)
        gc_err_set (err, GC_E_SYS, "gcnode keygen for %s: %s", name, output && *output ? output : "failed");
    free (output);
    if (code != 0)
        return -1;
    if (!s_exists (curve))
        return gc_err_set (err, GC_E_CONFIG, "gcnode keygen for %s wrote no CURVE key (%s): this libzmq "
                           "has no CURVE, which compose networks need", name, curve);
    if (s_publish_key (made, pub, err) || s_publish_key (curve_made, curve_pub, err))
        return -1;
    return 0;
}

static int
s_write_config (const gc_scenario_t *sc, const s_opts_t *o, uint32_t peer, gc_err_t *err)
{
    uint32_t n = sc->n_peers;
    char **endpoints = calloc (n, sizeof *endpoints), **pubs = calloc (n, sizeof *pubs);
    int rc = endpoints && pubs ? 0 : gc_err_set (err, GC_E_NOMEM, "out of memory");
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        endpoints [i] = malloc (64);
        pubs [i] = malloc (64);
        if (!endpoints [i] || !pubs [i])
            rc = gc_err_set (err, GC_E_NOMEM, "out of memory");
        else {
            snprintf (endpoints [i], 64, "tcp://peer%u:%ld", i, o->port);
            snprintf (pubs [i], 64, "/etc/gcnode/trust/peer%u.pub", i);
        }
    }
    char key [64], metrics [96], path [S_PATH_MAX], bind [64];
    snprintf (key, sizeof key, "/etc/gcnode/keys/peer%u.key", peer);
    //  Every interface of the container (its own network only), with CURVE:
    //  each peer reads its own secret (keys/peerN, owned by the container's
    //  user) and every neighbour's public key from the trust store.
    snprintf (bind, sizeof bind, "tcp://*:%ld", o->port);
    snprintf (metrics, sizeof metrics, "/var/lib/gcnode/metrics/peer%u.jsonl", peer);
    snprintf (path, sizeof path, "%s/peer%u/gcnode.zpl", o->out, peer);
    gc_peer_env_t env = {
        .endpoints = (const char *const *) endpoints, .public_keys = (const char *const *) pubs,
        .private_key = key, .metrics = metrics, .checkpoint_dir = "/var/lib/gcnode/checkpoints",
        .bind = bind, .curve = "1"
    };
    FILE *f = rc == 0 ? fopen (path, "w") : NULL;
    if (rc == 0 && !f)
        rc = gc_err_set (err, GC_E_IO, "cannot write %s: %s", path, strerror (errno));
    if (rc == 0)
        rc = gc_scenario_write_config (sc, peer, &env, f, err);
    if (f && fclose (f) && rc == 0)
        rc = gc_err_set (err, GC_E_IO, "cannot write %s: %s", path, strerror (errno));
    for (uint32_t i = 0; i < n; i++) {
        if (endpoints)
            free (endpoints [i]);
        if (pubs)
            free (pubs [i]);
    }
    free (endpoints);
    free (pubs);
    return rc;
}

//  As root: the private key and the writable directories go to the image's
//  user, so that a non-root container can read the key (mode 0600) and write.
static int
s_chown (const s_opts_t *o, uint32_t peer, gc_err_t *err)
{
    const char *fmt [] = { "%s/keys/peer%u", "%s/keys/peer%u/peer%u.key", "%s/keys/peer%u/peer%u.curve",
                           "%s/peer%u/metrics", "%s/peer%u/checkpoints" };
    for (size_t i = 0; i < sizeof fmt / sizeof fmt [0]; i++) {
        char path [S_PATH_MAX];
        snprintf (path, sizeof path, fmt [i], o->out, peer, peer);
        if (chown (path, (uid_t) o->uid, (gid_t) o->gid))
            return gc_err_set (err, GC_E_SYS, "chown %ld:%ld %s: %s", o->uid, o->gid, path, strerror (errno));
    }
    return 0;
}

static int
s_copy (const char *from, const char *to, gc_err_t *err)
{
    FILE *in = fopen (from, "rb");
    if (!in)
        return gc_err_set (err, GC_E_IO, "cannot read %s: %s", from, strerror (errno));
    FILE *out = fopen (to, "wb");
    if (!out) {
        fclose (in);
        return gc_err_set (err, GC_E_IO, "cannot write %s: %s", to, strerror (errno));
    }
    char buf [8192];
    size_t n;
    while ((n = fread (buf, 1, sizeof buf, in)) > 0)
        if (fwrite (buf, 1, n, out) != n)
            break;
    bool bad = ferror (in) || ferror (out);
    fclose (in);
    if (fclose (out) || bad)
        return gc_err_set (err, GC_E_IO, "cannot copy %s to %s", from, to);
    return 0;
}

//  Peer N's address: host number N + 2 in the subnet (1 is the gateway).
static const char *
s_address (const s_opts_t *o, uint32_t peer, char *buf)
{
    uint32_t a = o->net + 2 + peer;
    snprintf (buf, 16, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
    return buf;
}

//  "a.b.c.d/len" with the host part zero and room for n peers.
static int
s_parse_subnet (s_opts_t *o, uint32_t n, gc_err_t *err)
{
    unsigned b [4], len;
    char tail;
    if (sscanf (o->subnet, "%u.%u.%u.%u/%u%c", &b [0], &b [1], &b [2], &b [3], &len, &tail) != 5
    ||  b [0] > 255 || b [1] > 255 || b [2] > 255 || b [3] > 255 || len < 8 || len > 30)
        return gc_err_set (err, GC_E_USAGE, "--subnet '%s': expected an IPv4 CIDR such as 172.30.77.0/24 "
                           "(prefix 8 to 30)", o->subnet);
    o->net = b [0] << 24 | b [1] << 16 | b [2] << 8 | b [3];
    o->prefix = len;
    uint32_t hosts = 1u << (32 - len);
    if (o->net & (hosts - 1))
        return gc_err_set (err, GC_E_USAGE, "--subnet '%s': the host part is not zero", o->subnet);
    if ((uint64_t) n + 3 > hosts)
        return gc_err_set (err, GC_E_USAGE, "--subnet '%s': room for %u peers, the scenario has %u",
                           o->subnet, hosts - 3, n);
    return 0;
}

static void
s_write_service (FILE *f, const gc_scenario_t *sc, const s_opts_t *o, uint32_t peer, bool set_user)
{
    char addr [16];
    bool byz = gc_scenario_is_byzantine (sc, peer);
    const char *attack = gc_scenario_attack (sc, peer);
    fprintf (f, "  peer%u:\n", peer);
    fprintf (f, "    image: \"%s\"\n", o->image);
    //  --resume: a restarted container continues from its newest checkpoint
    //  (a fresh start when there is none).
    fprintf (f, "    command: [\"run\", \"--resume\"]\n");
    fprintf (f, "    hostname: peer%u\n", peer);
    fprintf (f, "    restart: \"%s\"\n", o->restart);
    if (set_user)
        fprintf (f, "    user: \"%ld:%ld\"\n", o->uid, o->gid);
    if (byz)
        fprintf (f, "    profiles: [\"%s\"]\n", o->profile);
    fprintf (f, "    labels:\n"
                "      org.gcnode.peer: \"%u\"\n"
                "      org.gcnode.role: \"%s\"\n", peer, byz ? "byzantine" : "honest");
    if (byz && *attack)
        fprintf (f, "      org.gcnode.attack: \"%s\"\n", attack);
    if (o->metrics_port && !gc_scenario_value (sc, peer, "node/metrics_http"))
        fprintf (f, "    environment:\n"
                    "      GCNODE__NODE__METRICS_HTTP: \"0.0.0.0:%ld\"\n"
                    "    expose: [\"%ld\"]\n", o->metrics_port, o->metrics_port);
    fprintf (f, "    volumes:\n"
                "      - \"./peer%u/gcnode.zpl:/etc/gcnode/gcnode.zpl:ro\"\n"
                "      - \"./keys/peer%u:/etc/gcnode/keys:ro\"\n"
                "      - \"./trust:/etc/gcnode/trust:ro\"\n"
                "      - \"./peer%u/metrics:/var/lib/gcnode/metrics\"\n"
                "      - \"./peer%u/checkpoints:/var/lib/gcnode/checkpoints\"\n",
             peer, peer, peer, peer);
    fprintf (f, "    networks:\n"
                "      gcnet:\n"
                "        ipv4_address: \"%s\"\n", s_address (o, peer, addr));
    fprintf (f, "    extra_hosts:\n");
    for (uint32_t i = 0; i < sc->n_peers; i++)
        fprintf (f, "      - \"peer%u:%s\"\n", i, s_address (o, i, addr));
    fprintf (f, "    stop_grace_period: 10s\n");
}

static int
s_write_compose (const gc_scenario_t *sc, const s_opts_t *o, bool set_user, gc_err_t *err)
{
    char path [S_PATH_MAX];
    snprintf (path, sizeof path, "%s/compose.yml", o->out);
    FILE *f = fopen (path, "w");
    if (!f)
        return gc_err_set (err, GC_E_IO, "cannot write %s: %s", path, strerror (errno));
    size_t n_byz = gc_peerset_count (&sc->byzantine);
    fprintf (f, "# Generated by gcnet compose from %s: %u peers",
             sc->path, sc->n_peers);
    if (n_byz)
        fprintf (f, ", %zu Byzantine in profile '%s'", n_byz, o->profile);
    fprintf (f, ".\n"
                "# Honest peers only:  docker compose up -d\n"
                "# With the Byzantine: docker compose --profile %s up -d\n"
                "# (docker-compose v1.28+ takes the same commands.) docker/README.md\n"
                "# No top-level version or name: v2 ignores version, v1 has no name;\n"
                "# the project name comes from .env (COMPOSE_PROJECT_NAME).\n"
                "# Fixed addresses, and every peer's name in every /etc/hosts: a name then\n"
                "# resolves at once even while its container is down. (Docker's DNS forwards\n"
                "# an unknown name upstream, which takes 10-20 s without a reachable DNS\n"
                "# server, and libzmq resolves on every reconnect in its I/O thread.)\n"
                "services:\n", o->profile);
    for (uint32_t i = 0; i < sc->n_peers; i++)
        s_write_service (f, sc, o, i, set_user);
    fprintf (f, "networks:\n"
                "  gcnet:\n"
                "    driver: bridge\n"
                "    ipam:\n"
                "      config:\n"
                "        - subnet: \"%s\"\n", o->subnet);
    if (fclose (f))
        return gc_err_set (err, GC_E_IO, "cannot write %s: %s", path, strerror (errno));

    snprintf (path, sizeof path, "%s/.env", o->out);
    f = fopen (path, "w");
    if (!f)
        return gc_err_set (err, GC_E_IO, "cannot write %s: %s", path, strerror (errno));
    char project [128];
    s_project_name (o->project ? o->project : sc->name, project, sizeof project);
    fprintf (f, "COMPOSE_PROJECT_NAME=%s\n", project);
    if (fclose (f))
        return gc_err_set (err, GC_E_IO, "cannot write %s: %s", path, strerror (errno));
    return 0;
}

static int
s_parse (int argc, char **argv, s_opts_t *o)
{
    static const struct option longopts [] = {
        { "scenario", required_argument, NULL, 's' }, { "out", required_argument, NULL, 'o' },
        { "image", required_argument, NULL, 'I' }, { "project", required_argument, NULL, 'P' },
        { "port", required_argument, NULL, 'p' }, { "restart", required_argument, NULL, 'r' },
        { "profile", required_argument, NULL, 'f' }, { "uid", required_argument, NULL, 'u' },
        { "gcnode", required_argument, NULL, 'g' }, { "help", no_argument, NULL, 'h' },
        { "subnet", required_argument, NULL, 'N' }, { "metrics-port", required_argument, NULL, 'M' },
        { NULL, 0, NULL, 0 }
    };
    *o = (s_opts_t) { .image = "gcnode:latest", .restart = "on-failure", .profile = "byzantine",
                      .subnet = "172.30.77.0/24", .port = 7100, .metrics_port = 9100, .uid = -1, .gid = -1 };
    gc_err_t err = { 0 };
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long (argc, argv, ":s:o:h", longopts, NULL)) != -1) {
        switch (c) {
            case 's': o->scenario = optarg; break;
            case 'o': o->out = optarg; break;
            case 'I': o->image = optarg; break;
            case 'P': o->project = optarg; break;
            case 'r': o->restart = optarg; break;
            case 'f': o->profile = optarg; break;
            case 'g': o->gcnode = optarg; break;
            case 'N': o->subnet = optarg; break;
            case 'p':
                if (gc_parse_long (optarg, 1, 65535, &o->port, "--port", &err))
                    return gcnet_error (S_CMD, GCNET_EXIT_USAGE, "%s", err.msg);
                break;
            case 'M':
                if (gc_parse_long (optarg, 0, 65535, &o->metrics_port, "--metrics-port", &err))
                    return gcnet_error (S_CMD, GCNET_EXIT_USAGE, "%s", err.msg);
                break;
            case 'u': {
                char uid [32] = "", *colon;
                snprintf (uid, sizeof uid, "%s", optarg);
                colon = strchr (uid, ':');
                if (colon)
                    *colon++ = '\0';
                if (gc_parse_long (uid, 0, 2147483647L, &o->uid, "--uid", &err)
                ||  gc_parse_long (colon ? colon : uid, 0, 2147483647L, &o->gid, "--uid GID", &err))
                    return gcnet_error (S_CMD, GCNET_EXIT_USAGE, "%s", err.msg);
                break;
            }
            case 'h': s_help (); return -1;
            case ':':
                return gcnet_error (S_CMD, GCNET_EXIT_USAGE, "%s needs a value (see gcnet compose --help)",
                                    argv [optind - 1]);
            default:
                return gcnet_error (S_CMD, GCNET_EXIT_USAGE, "unknown option '%s' (see gcnet compose --help)",
                                    argv [optind - 1]);
        }
    }
    if (optind < argc)
        return gcnet_error (S_CMD, GCNET_EXIT_USAGE, "unexpected argument '%s'", argv [optind]);
    if (!o->scenario || !o->out)
        return gcnet_error (S_CMD, GCNET_EXIT_USAGE, "--scenario FILE and --out DIR are required "
                            "(see gcnet compose --help)");
    if (strlen (o->out) > S_PATH_MAX / 2)     /* so that every path below it fits */
        return gcnet_error (S_CMD, GCNET_EXIT_USAGE, "--out: path too long");
    if (!s_plain (o->image, "._-/:@"))
        return gcnet_error (S_CMD, GCNET_EXIT_USAGE, "--image '%s': not an image name", o->image);
    if (!s_plain (o->profile, "_-"))
        return gcnet_error (S_CMD, GCNET_EXIT_USAGE, "--profile '%s': letters, digits, - and _ only",
                            o->profile);
    if (o->project && !s_plain (o->project, "_-"))
        return gcnet_error (S_CMD, GCNET_EXIT_USAGE, "--project '%s': letters, digits, - and _ only",
                            o->project);
    static const char *policies [] = { "no", "on-failure", "always", "unless-stopped" };
    bool known = false;
    for (size_t i = 0; i < sizeof policies / sizeof policies [0]; i++)
        known |= !strcmp (o->restart, policies [i]);
    if (!known)
        return gcnet_error (S_CMD, GCNET_EXIT_USAGE, "--restart '%s': expected no, on-failure, always "
                            "or unless-stopped", o->restart);
    return 0;
}

int
gcnet_cmd_compose (int argc, char **argv)
{
    s_opts_t o;
    int rc = s_parse (argc, argv, &o);
    if (rc)
        return rc < 0 ? GCNET_EXIT_OK : rc;
    gc_err_t err = { 0 };
    gc_scenario_t *sc = gc_scenario_load (o.scenario, &err);
    if (!sc)
        return gcnet_error (S_CMD, GCNET_EXIT_USAGE, "%s", err.msg);
    int violations = s_parse_subnet (&o, sc->n_peers, &err) ? -1 : gc_scenario_lint (sc, NULL, &err);
    if (violations < 0) {
        gc_scenario_destroy (&sc);
        return gcnet_error (S_CMD, GCNET_EXIT_USAGE, "%s", err.msg);
    }
    if (violations > 0) {
        fprintf (stderr, "gcnet compose: warning: %d honest peers have more Byzantine neighbours than "
                 "their rule tolerates:\n", violations);
        gc_scenario_lint (sc, stderr, NULL);
    }
    if (sc->n_events || sc->n_checks)
        fprintf (stderr, "gcnet compose: note: the scenario's timeline (%zu events) and assertions "
                 "(%zu) are left out: a compose network runs the peers only (gcnet run plays them)\n",
                 sc->n_events, sc->n_checks);
    //  Who owns what the containers read and write (see the top of the file).
    bool root = geteuid () == 0;
    if (o.uid < 0) {
        o.uid = root ? S_IMAGE_UID : (long) getuid ();
        o.gid = root ? S_IMAGE_UID : (long) getgid ();
    }
    bool set_user = o.uid != S_IMAGE_UID || o.gid != S_IMAGE_UID;
    char *gcnode = o.gcnode ? strdup (o.gcnode) : gc_run_find_gcnode ();
    if (!gcnode || access (gcnode, X_OK)) {
        free (gcnode);
        gc_scenario_destroy (&sc);
        return gcnet_error (S_CMD, GCNET_EXIT_USAGE, "no gcnode binary next to gcnet (build it, or give "
                            "--gcnode PATH): it makes the keys");
    }
    char path [S_PATH_MAX];
    snprintf (path, sizeof path, "%s/trust", o.out);
    rc = gc_fs_mkdirs (path, 0755, &err);
    snprintf (path, sizeof path, "%s/scenario.zpl", o.out);
    if (rc == 0)
        rc = s_copy (o.scenario, path, &err);
    for (uint32_t i = 0; i < sc->n_peers && rc == 0; i++) {
        const char *dirs [] = { "%s/peer%u/metrics", "%s/peer%u/checkpoints" };
        for (size_t d = 0; d < 2 && rc == 0; d++) {
            snprintf (path, sizeof path, dirs [d], o.out, i);
            rc = gc_fs_mkdirs (path, 0755, &err);
        }
        if (rc == 0)
            rc = s_identity (&o, gcnode, i, &err);
        if (rc == 0)
            rc = s_write_config (sc, &o, i, &err);
        if (rc == 0 && root)
            rc = s_chown (&o, i, &err);
    }
    if (rc == 0)
        rc = s_write_compose (sc, &o, set_user, &err);
    free (gcnode);
    if (rc) {
        gc_scenario_destroy (&sc);
        return gcnet_error (S_CMD, GCNET_EXIT_FAIL, "%s", err.msg);
    }
    size_t n_byz = gc_peerset_count (&sc->byzantine);
    printf ("%s/compose.yml: %u peers (%zu Byzantine, profile '%s'), image %s, restart %s, subnet %s\n",
            o.out, sc->n_peers, n_byz, o.profile, o.image, o.restart, o.subnet);
    printf ("up:   cd %s && docker compose%s%s up -d     (or docker-compose)\n", o.out,
            n_byz ? " --profile " : "", n_byz ? o.profile : "");
    printf ("down: cd %s && docker compose%s%s down\n", o.out, n_byz ? " --profile " : "",
            n_byz ? o.profile : "");
    gc_scenario_destroy (&sc);
    return GCNET_EXIT_OK;
}
