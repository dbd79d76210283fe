/*  gcnode status — is a peer alive, connected, mixing? A check in the
    manner of a monitoring plugin, for scripts, docker HEALTHCHECK and
    Nagios-like monitoring.

    Reads the status object (gc_status.h) from the peer's status file or
    its HTTP endpoint's /status, judges it (gc_status_check.h), prints one
    line (or JSON) and exits 0 OK, 1 WARNING, 2 CRITICAL (also: no file,
    unreachable), 3 UNKNOWN (bad usage, unreadable object). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "gc_cli.h"
#include "gc_config.h"
#include "gc_fs.h"
#include "gc_json.h"
#include "gc_parse.h"
#include "gc_status.h"
#include "gc_status_check.h"

#define S_CMD        "status"
#define S_TIMEOUT_MS 3000

static void
s_help (void)
{
    printf (
        "usage: gcnode status (--file FILE | --config FILE | --url URL) [--json] [--max-age S]\n"
        "                     [--warn-rejections N]\n\n"
        "Print a peer's state from its status file (node/status_file) or its HTTP\n"
        "endpoint (node/metrics_http, GET /status), and judge it like a monitoring\n"
        "plugin: exit 0 OK, 1 WARNING (a neighbour down or silent, rising rejections,\n"
        "some rounds without a mix, run finished), 2 CRITICAL (process gone or\n"
        "stopped, no update within --max-age, 0 neighbours connected, no neighbour\n"
        "delivering, no mix at all, no file, unreachable), 3 UNKNOWN (bad usage,\n"
        "unreadable status). From a file, the process (its pid) is checked too.\n\n"
        "  -f, --file FILE     the peer's status file\n"
        "  -c, --config FILE   the peer's configuration: its node/status_file, else\n"
        "                      its node/metrics_http\n"
        "  -u, --url URL       http://HOST:PORT of the peer's endpoint\n"
        "      --json          print {\"healthy\":..,\"level\":..,\"code\":..,\"age_s\":..,\n"
        "                      \"reason\":..,\"status\":{..}}\n"
        "      --max-age S     seconds without an update that still count as alive\n"
        "                      (default 30; a round is bounded by gossip/timeout_ms)\n"
        "      --warn-rejections N  rejections in the last minute that still count\n"
        "                      as OK (default 10)\n"
        "  -h, --help          this text\n");
}

//  ---------------------------------------------------------------------------
//  a minimal HTTP/1.0 GET (no dependency for a health check)

static int
s_connect (const char *host, const char *port, gc_err_t *err)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
    int gai = getaddrinfo (host, port, &hints, &res);
    if (gai)
        return gc_err_set (err, GC_E_SYS, "cannot resolve %s (%s)", host, gai_strerror (gai));
    int fd = -1;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket (ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        if (connect (fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
            close (fd);
            fd = -1;
            continue;
        }
        struct pollfd pfd = { fd, POLLOUT, 0 };
        int so = 0;
        socklen_t len = sizeof so;
        if (poll (&pfd, 1, S_TIMEOUT_MS) != 1 || getsockopt (fd, SOL_SOCKET, SO_ERROR, &so, &len) || so) {
            close (fd);
            fd = -1;
        }
    }
    freeaddrinfo (res);
    if (fd < 0)
        return gc_err_set (err, GC_E_SYS, "cannot connect to %s:%s", host, port);
    return fd;
}

//  GET http://HOST:PORT/status -> body (malloc'd, NUL-terminated).
static char *
s_http_status (const char *url, size_t *len, gc_err_t *err)
{
    char host [256], port [8] = "80";
    if (strncmp (url, "http://", 7)) {
        gc_err_set (err, GC_E_USAGE, "--url '%s': expected http://HOST:PORT", url);
        return NULL;
    }
    const char *h = url + 7, *end = h + strcspn (h, "/");
    const char *colon = NULL;
    for (const char *p = end; p > h && p [-1] != ']'; p--)
        if (p [-1] == ':') {
            colon = p - 1;
            break;
        }
    const char *hend = colon ? colon : end;
    if (*h == '[' && hend > h + 1 && hend [-1] == ']') {
        h++;
        hend--;
    }
    if (hend <= h || (size_t) (hend - h) >= sizeof host || (colon && (end - colon - 1 < 1 || end - colon - 1 > 5))) {
        gc_err_set (err, GC_E_USAGE, "--url '%s': expected http://HOST:PORT", url);
        return NULL;
    }
    memcpy (host, h, (size_t) (hend - h));
    host [hend - h] = 0;
    if (colon)
        snprintf (port, sizeof port, "%.*s", (int) (end - colon - 1), colon + 1);
    int fd = s_connect (host, port, err);
    if (fd < 0)
        return NULL;
    char request [512];
    int rlen = snprintf (request, sizeof request, "GET /status HTTP/1.0\r\nHost: %s\r\n"
                         "Connection: close\r\n\r\n", host);
    char *buf = malloc (GC_STATUS_FILE_MAX + 4096 + 1);
    size_t got = 0;
    bool ok = buf && send (fd, request, (size_t) rlen, MSG_NOSIGNAL) == rlen;
    while (ok) {
        struct pollfd pfd = { fd, POLLIN, 0 };
        if (poll (&pfd, 1, S_TIMEOUT_MS) != 1) {
            ok = false;
            break;
        }
        ssize_t n = recv (fd, buf + got, GC_STATUS_FILE_MAX + 4096 - got, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            break;
        got += (size_t) n;
        if (got == GC_STATUS_FILE_MAX + 4096)
            ok = false;
    }
    close (fd);
    if (!ok) {
        free (buf);
        gc_err_set (err, GC_E_TIMEOUT, "%s: no complete answer within %d ms", url, S_TIMEOUT_MS);
        return NULL;
    }
    buf [got] = 0;
    char *body = strstr (buf, "\r\n\r\n");
    if (strncmp (buf, "HTTP/1.", 7) || !body || strncmp (buf + 8, " 200", 4)) {
        gc_err_set (err, GC_E_PROTOCOL, "%s/status: not a 200 answer: %.40s", url, buf);
        free (buf);
        return NULL;
    }
    body += 4;
    *len = got - (size_t) (body - buf);
    memmove (buf, body, *len + 1);
    return buf;
}

static char *
s_read_file (const char *path, size_t *len, gc_err_t *err)
{
    char *text;
    return gc_fs_read_file (path, GC_STATUS_FILE_MAX, &text, len, err) ? NULL : text;
}

//  ---------------------------------------------------------------------------

static void
s_print_line (const gc_status_t *st, double age, gc_check_level_t level, const char *reason)
{
    printf ("%s: peer %ld %s %s round %llu/%llu loss %.4f", gc_status_check_name (level), st->peer,
            st->peer_id, st->state, (unsigned long long) st->round, (unsigned long long) st->rounds, st->loss);
    if (st->has_accuracy)
        printf (" accuracy %.4f (round %llu)", st->accuracy, (unsigned long long) st->accuracy_round);
    if (st->connected >= 0)
        printf (" neighbours %ld/%ld", st->connected, st->neighbours);
    else
        printf (" neighbours %ld", st->neighbours);
    printf (" max_staleness %ld rejected %llu updated %.1f s ago%s%s%s\n", st->max_staleness,
            (unsigned long long) st->rejected, age, *reason ? " (" : "", reason, *reason ? ")" : "");
}

//  Monitoring plugins answer UNKNOWN for a check that could not run.
static int
s_unknown (const char *fmt, const char *msg)
{
    gc_cli_usage_error (S_CMD, fmt, msg);
    return GC_CHECK_UNKNOWN;
}

int
gc_cmd_status (int argc, char **argv)
{
    static const struct option longopts [] = {
        { "file", required_argument, NULL, 'f' },
        { "config", required_argument, NULL, 'c' },
        { "url", required_argument, NULL, 'u' },
        { "json", no_argument, NULL, 'j' },
        { "max-age", required_argument, NULL, 'a' },
        { "warn-rejections", required_argument, NULL, 'r' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    const char *file = NULL, *config = NULL, *url = NULL;
    bool json = false;
    gc_check_limits_t lim = { .max_age = 30, .warn_rejections = 10 };
    gc_err_t err = { 0 };
    int c, sources = 0;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long (argc, argv, ":f:c:u:h", longopts, NULL)) != -1) {
        switch (c) {
            case 'f': file = optarg; sources++; break;
            case 'c': config = optarg; sources++; break;
            case 'u': url = optarg; sources++; break;
            case 'j': json = true; break;
            case 'a':
                if (gc_parse_double (optarg, 0, 1e9, &lim.max_age, "--max-age", &err))
                    return s_unknown ("%s", err.msg);
                break;
            case 'r': {
                long n;
                if (gc_parse_long (optarg, 0, 1000000000L, &n, "--warn-rejections", &err))
                    return s_unknown ("%s", err.msg);
                lim.warn_rejections = (uint64_t) n;
                break;
            }
            case 'h': s_help (); return GC_EXIT_OK;
            default: gc_cli_bad_option (S_CMD, c, argv); return GC_CHECK_UNKNOWN;
        }
    }
    if (optind < argc)
        return s_unknown ("unexpected argument '%s'", argv [optind]);
    if (sources != 1)
        return s_unknown ("%s", "give exactly one of --file, --config, --url (see --help)");

    char derived_url [300];
    if (config) {
        gc_config_t *cfg = gc_config_new ();
        if (!cfg || gc_config_load (cfg, config, &err)) {
            gc_config_destroy (&cfg);
            return s_unknown ("%s", err.msg);
        }
        static char path [4096];
        if (*cfg->status_file) {
            snprintf (path, sizeof path, "%s", cfg->status_file);
            file = path;
        }
        else
        if (*cfg->metrics_http) {
            //  A wildcard bind is reached on the loopback address.
            const char *hp = cfg->metrics_http;
            bool any4 = !strncmp (hp, "0.0.0.0:", 8), any6 = !strncmp (hp, "[::]:", 5);
            snprintf (derived_url, sizeof derived_url, "http://%s%s", any4 ? "127.0.0.1" : any6 ? "[::1]" : "",
                      any4 ? hp + 7 : any6 ? hp + 4 : hp);
            url = derived_url;
        }
        gc_config_destroy (&cfg);
        if (!file && !url)
            return s_unknown ("%s sets neither node/status_file nor node/metrics_http", config);
    }
    //  The pid in a file is one of this machine's; over HTTP the answer
    //  itself shows the process runs (a stopped one does not answer).
    lim.probe = file ? gc_status_check_probe : NULL;

    size_t len = 0;
    char *text = file ? s_read_file (file, &len, &err) : s_http_status (url, &len, &err);
    gc_status_t st;
    gc_check_level_t level;
    double age = 0;
    char reason [1100] = "";
    bool parsed = false;
    if (!text) {
        //  no file or no answer: the peer is not there (or never started)
        level = err.code == GC_E_USAGE ? GC_CHECK_UNKNOWN : GC_CHECK_CRITICAL;
        snprintf (reason, sizeof reason, "%s", err.msg);
    }
    else
    if (gc_status_parse (text, len, &st, &err)) {
        level = GC_CHECK_UNKNOWN;
        snprintf (reason, sizeof reason, "%s", err.msg);
    }
    else {
        parsed = true;
        struct timespec now;
        clock_gettime (CLOCK_REALTIME, &now);
        double t = (double) now.tv_sec + 1e-9 * (double) now.tv_nsec;
        age = t - st.time;
        level = gc_status_check (&st, t, &lim, reason, sizeof reason);
    }
    if (json) {
        printf ("{\"healthy\":%s,\"level\":\"%s\",\"code\":%d,\"age_s\":%.3f,\"reason\":",
                level == GC_CHECK_OK ? "true" : "false", gc_status_check_name (level), (int) level, age);
        gc_json_write_string (stdout, reason);
        if (parsed) {
            //  The object parsed with the strict reader above: valid JSON.
            while (len && (text [len - 1] == '\n' || text [len - 1] == ' ' || text [len - 1] == '\r'))
                len--;
            printf (",\"status\":%.*s", (int) len, text);
        }
        printf ("}\n");
    }
    else
    if (parsed)
        s_print_line (&st, age, level, reason);
    else
        printf ("%s: %s\n", gc_status_check_name (level), reason);
    free (text);
    return (int) level;
}
