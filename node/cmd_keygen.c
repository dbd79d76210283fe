/*  gcnode keygen / gcnode id — make a peer identity and name one.

    keygen writes DIR/NAME.key (PKCS#8 PEM, mode 0600) and DIR/NAME.pub
    (SubjectPublicKeyInfo PEM): the .pub file is what other peers put in
    their trust directory. Alongside, the optional transport encryption key:
    DIR/NAME.curve (ZeroMQ CURVE certificate with the secret key, mode 0600)
    and DIR/NAME.curve.pub (its public key, for the neighbours' config).
    id prints the peer id of either Ed25519 file. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "gc_cli.h"
#include "gc_curve.h"
#include "gc_hex.h"
#include "gc_key.h"

#define S_NAME_MAX 64

static void
s_keygen_help (void)
{
    printf (
        "usage: gcnode keygen --out DIR [--name NAME] [--force]\n\n"
        "Generate an Ed25519 peer identity: DIR/NAME.key (private, PEM PKCS#8, mode 0600)\n"
        "and DIR/NAME.pub (public, PEM SubjectPublicKeyInfo, for other peers' trust\n"
        "directories). Both are readable by `openssl pkey`. Also a CURVE key pair for\n"
        "optional link encryption (node/curve): DIR/NAME.curve (secret, mode 0600) and\n"
        "DIR/NAME.curve.pub (ZeroMQ certificate format). DIR is created (mode 0700)\n"
        "if it does not exist. Prints private_key=, public_key=, peer_id=, curve_secret=\n"
        "and curve_public= lines.\n\n"
        "  --out DIR      directory for the key files (required)\n"
        "  --name NAME    file name stem: letters, digits, '.', '_', '-' (default node)\n"
        "  --force        replace existing NAME.key, NAME.pub, NAME.curve, NAME.curve.pub\n"
        "  -h, --help     this text\n");
}

static void
s_id_help (void)
{
    printf (
        "usage: gcnode id [--public] KEYFILE\n\n"
        "Print the peer id (16 hex digits: the first 8 bytes of SHA-256 of the raw\n"
        "Ed25519 public key) of a private (.key) or public (.pub) key file.\n\n"
        "  --public       also print the raw 32-byte public key in hex (for trust lists)\n"
        "  -h, --help     this text\n");
}

static bool
s_name_ok (const char *name)
{
    size_t len = strlen (name);
    if (len < 1 || len > S_NAME_MAX || name [0] == '.')
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = name [i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '.' || c == '_' || c == '-';
        if (!ok)
            return false;
    }
    return true;
}

static int
s_prepare_dir (const char *dir)
{
    struct stat st;
    if (stat (dir, &st) == 0) {
        if (!S_ISDIR (st.st_mode))
            return gc_cli_usage_error ("keygen", "--out %s is not a directory", dir);
        return 0;
    }
    if (errno != ENOENT || mkdir (dir, 0700) != 0)
        return gc_cli_usage_error ("keygen", "--out %s: %s", dir, strerror (errno));
    return 0;
}

int
gc_cmd_keygen (int argc, char **argv)
{
    static const struct option longopts [] = {
        { "out", required_argument, NULL, 'o' },
        { "name", required_argument, NULL, 'n' },
        { "force", no_argument, NULL, 'f' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    const char *dir = NULL, *name = "node";
    bool force = false;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long (argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
            case 'o': dir = optarg; break;
            case 'n': name = optarg; break;
            case 'f': force = true; break;
            case 'h': s_keygen_help (); return GC_EXIT_OK;
            default: return gc_cli_bad_option ("keygen", c, argv);
        }
    }
    if (optind < argc)
        return gc_cli_usage_error ("keygen", "unexpected argument '%s'", argv [optind]);
    if (!dir || !*dir)
        return gc_cli_usage_error ("keygen", "--out DIR is required");
    if (!s_name_ok (name))
        return gc_cli_usage_error ("keygen", "--name '%s': use 1 to %d letters, digits, '.', "
                                   "'_' or '-', not starting with '.'", name, S_NAME_MAX);
    char key_path [4096], pub_path [4096], curve_path [4096], curve_pub [4096 + 4];
    if ((size_t) snprintf (key_path, sizeof key_path, "%s/%s.key", dir, name) >= sizeof key_path
    ||  (size_t) snprintf (pub_path, sizeof pub_path, "%s/%s.pub", dir, name) >= sizeof pub_path
    ||  (size_t) snprintf (curve_path, sizeof curve_path, "%s/%s.curve", dir, name) >= sizeof curve_path)
        return gc_cli_usage_error ("keygen", "--out %s: path too long", dir);
    snprintf (curve_pub, sizeof curve_pub, "%s.pub", curve_path);
    int rc = s_prepare_dir (dir);
    if (rc)
        return rc;
    struct stat st;
    const char *paths [4] = { key_path, pub_path, curve_path, curve_pub };
    for (int i = 0; i < 4 && !force; i++)
        if (lstat (paths [i], &st) == 0)
            return gc_cli_usage_error ("keygen", "%s exists; use --force to replace it", paths [i]);

    gc_err_t err = { 0 };
    gc_key_t *key = gc_key_generate (&err);
    if (!key)
        return gc_cli_failure ("keygen", "%s", err.msg);
    //  Private first: a .pub without its .key would be an identity nobody has.
    if (gc_key_save_private (key, key_path, &err) || gc_key_save_public (key, pub_path, &err))
        rc = gc_cli_failure ("keygen", "%s", err.msg);
    else
        printf ("private_key=%s\npublic_key=%s\npeer_id=%s\n", key_path, pub_path,
                gc_key_peer_id_hex (key));
    if (rc == 0 && !gc_curve_available ())
        fprintf (stderr, "gcnode keygen: no CURVE key written (this libzmq has no CURVE support)\n");
    else
    if (rc == 0 && gc_curve_keygen (curve_path, gc_key_peer_id_hex (key), &err))
        rc = gc_cli_failure ("keygen", "%s", err.msg);
    else
    if (rc == 0)
        printf ("curve_secret=%s\ncurve_public=%s\n", curve_path, curve_pub);
    gc_key_destroy (&key);
    return rc;
}

int
gc_cmd_id (int argc, char **argv)
{
    static const struct option longopts [] = {
        { "public", no_argument, NULL, 'p' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    bool show_public = false;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long (argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
            case 'p': show_public = true; break;
            case 'h': s_id_help (); return GC_EXIT_OK;
            default: return gc_cli_bad_option ("id", c, argv);
        }
    }
    if (optind >= argc)
        return gc_cli_usage_error ("id", "give a key file (see gcnode id --help)");
    if (optind + 1 < argc)
        return gc_cli_usage_error ("id", "unexpected argument '%s'", argv [optind + 1]);
    gc_err_t err = { 0 };
    gc_key_t *key = gc_key_load (argv [optind], &err);
    if (!key)
        return gc_cli_usage_error ("id", "%s", err.msg);
    if (show_public) {
        char hex [2 * GC_KEY_PUBLIC_SIZE + 1];
        gc_hex_encode (gc_key_public_raw (key), GC_KEY_PUBLIC_SIZE, hex);
        printf ("%s %s\n", gc_key_peer_id_hex (key), hex);
    }
    else
        printf ("%s\n", gc_key_peer_id_hex (key));
    gc_key_destroy (&key);
    return GC_EXIT_OK;
}
