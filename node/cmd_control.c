/*  gcnode control ENDPOINT COMMAND... — send one command to a running peer's
    control channel (node/control) and print the reply. */
#include <czmq.h>
#include <getopt.h>

#include "gc_cli.h"
#include "gc_parse.h"

#define S_CMD "control"

static void
s_help (void)
{
    printf ("usage: gcnode control [--timeout MS] ENDPOINT COMMAND [ARGS...]\n\n"
            "Send one command to a running peer's control channel (node/control) and\n"
            "print its reply. Exit 0 when the reply starts with \"ok\".\n\n"
            "commands: drop P | delay MS [JITTER_MS] | rate BYTES_PER_S | slow F |\n"
            "          partition I,J,... | heal | status | stop\n");
}

int
gc_cmd_control (int argc, char **argv)
{
    static const struct option longopts [] = {
        { "timeout", required_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    long timeout = 2000;
    gc_err_t err = { 0 };
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long (argc, argv, "+:h", longopts, NULL)) != -1) {
        if (c == 'h') {
            s_help ();
            return GC_EXIT_OK;
        }
        if (c == 't') {
            if (gc_parse_long (optarg, 1, 3600000, &timeout, "--timeout", &err))
                return gc_cli_usage_error (S_CMD, "%s", err.msg);
        }
        else
            return gc_cli_bad_option (S_CMD, c, argv);
    }
    if (argc - optind < 2)
        return gc_cli_usage_error (S_CMD, "expected ENDPOINT COMMAND (see gcnode control --help)");
    char request [4096] = "";
    size_t used = 0;
    for (int i = optind + 1; i < argc; i++) {
        int n = snprintf (request + used, sizeof request - used, "%s%s", used ? " " : "", argv [i]);
        if (n < 0 || (size_t) n >= sizeof request - used)
            return gc_cli_usage_error (S_CMD, "command too long");
        used += (size_t) n;
    }
    zsys_init ();
    zsock_t *req = zsock_new (ZMQ_REQ);
    if (!req || zsock_connect (req, "%s", argv [optind]) != 0) {
        zsock_destroy (&req);
        return gc_cli_usage_error (S_CMD, "'%s' is not a valid endpoint", argv [optind]);
    }
    zsock_set_rcvtimeo (req, (int) timeout);
    zsock_set_sndtimeo (req, (int) timeout);
    int rc = GC_EXIT_FAILURE;
    char *reply = NULL;
    if (zstr_send (req, request) == 0 && (reply = zstr_recv (req))) {
        printf ("%s\n", reply);
        rc = strncmp (reply, "ok", 2) ? GC_EXIT_FAILURE : GC_EXIT_OK;
        zstr_free (&reply);
    }
    else
        fprintf (stderr, "gcnode control: no reply from %s within %ld ms\n", argv [optind], timeout);
    zsock_destroy (&req);
    return rc;
}
