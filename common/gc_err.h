/*  gc_err — the one way errors travel in gcnode.

    Functions that can fail on hostile input return 0 on success and -1 on
    failure, and write the reason into a caller-provided gc_err_t (which may be
    NULL when the caller does not care). The message names the file, field or
    peer and says what was wrong, so the top level can print it as one line.

    err->code is one of the GC_E_* codes below, the same space in every
    module, so a code read far from where it was set still means one thing.
    It says what kind of failure it was, never what the process should exit
    with: the commands decide that (gc_cli_exit_code). */
#ifndef GC_ERR_H
#define GC_ERR_H

#include <stddef.h>

#define GC_ERR_MSG_MAX 512

/*  X (NAME, number, "name", "description"). The numbers are stable: the
    payload codes keep the values compress/ has always used (counters and
    fuzzers know them); a new code takes a new number. 1 and 2 are what the
    literal codes not yet converted mean (1 anything, 2 a usage error in
    harness/gc_run.c and sim/), so those call sites keep their exit codes
    until they name their codes; then GC_E_FAIL should have no users. */
#define GC_ERR_CODES(X) \
    X (FAIL,      1, "fail",      "failed (not classified)") \
    X (USAGE,     2, "usage",     "asks for what this program or machine does not offer") \
    X (CONFIG,    3, "config",    "configuration key missing, inconsistent or out of range") \
    X (SPEC,      4, "spec",      "malformed method, rule or attack spec") \
    X (PARSE,     5, "parse",     "text that does not parse") \
    X (RANGE,     6, "range",     "value out of range") \
    X (FORMAT,    7, "format",    "file or data not of the expected format") \
    X (PERMS,     8, "perms",     "secret file accessible by group or others") \
    X (IO,        9, "io",        "file cannot be opened, read, written or synced") \
    X (SYS,      10, "sys",       "system call failed (socket, thread, process)") \
    X (NOMEM,    11, "nomem",     "out of memory") \
    X (CRYPTO,   12, "crypto",    "crypto library failed") \
    X (PROTOCOL, 13, "protocol",  "peer, process or endpoint broke the protocol") \
    X (TIMEOUT,  14, "timeout",   "did not happen within its time bound") \
    X (ARG,      15, "arg",       "argument the function does not take (NULL, wrong kind of key)") \
    X (PAYLOAD_TRUNCATED,   16, "payload_truncated",   "payload ends inside a header, section or body") \
    X (PAYLOAD_TRAILING,    17, "payload_trailing",    "payload has bytes after the last section") \
    X (PAYLOAD_MAGIC,       18, "payload_magic",       "payload magic is not GCZ") \
    X (PAYLOAD_VERSION,     19, "payload_version",     "payload version unknown") \
    X (PAYLOAD_METHOD,      20, "payload_method",      "payload method id unknown") \
    X (PAYLOAD_FLAGS,       21, "payload_flags",       "payload flag unknown or reserved field set") \
    X (PAYLOAD_LAYOUT,      22, "payload_layout",      "payload layout differs from the model's") \
    X (PAYLOAD_LAYER_ID,    23, "payload_layer_id",    "payload layer id out of range or out of order") \
    X (PAYLOAD_ENCODING,    24, "payload_encoding",    "payload encoding unknown or not allowed") \
    X (PAYLOAD_LENGTH,      25, "payload_length",      "payload body length differs from its fields") \
    X (PAYLOAD_COUNT,       26, "payload_count",       "payload count out of range") \
    X (PAYLOAD_VARINT,      27, "payload_varint",      "payload varint overlong or past its block") \
    X (PAYLOAD_INDEX_RANGE, 28, "payload_index_range", "payload index beyond the layer") \
    X (PAYLOAD_INDEX_ORDER, 29, "payload_index_order", "payload index not strictly increasing") \
    X (PAYLOAD_PARAM,       30, "payload_param",       "payload parameter out of range") \
    X (PAYLOAD_NONFINITE,   31, "payload_nonfinite",   "payload holds NaN or Inf") \
    X (PAYLOAD_RANGE,       32, "payload_range",       "payload value out of range") \
    X (INPUT,    33, "input",     "inputs a kernel cannot take (count, dimension, index)") \
    X (NONFINITE, 34, "nonfinite", "input holds NaN or Inf") \
    X (WEIGHTS,  35, "weights",   "weights negative, non-finite or all zero") \
    X (COLLISION, 36, "collision", "two keys share a peer id") \
    X (STOPPED,   37, "stopped",   "stopped by a signal or a stop request") \
    X (CODEC,     38, "codec",     "payload names an LGC codec the receiver does not hold")

#define GC_ERR_ENUM_(id, n, name, what) GC_E_##id = n,
typedef enum {
    GC_E_OK = 0,
    GC_ERR_CODES (GC_ERR_ENUM_)
} gc_err_code_t;
#undef GC_ERR_ENUM_

//  The payload codes, for "is this a malformed payload" checks.
#define GC_E_PAYLOAD_FIRST GC_E_PAYLOAD_TRUNCATED
#define GC_E_PAYLOAD_LAST  GC_E_PAYLOAD_RANGE

typedef struct {
    int  code;                   /* a GC_E_* code, 0 = none */
    char msg[GC_ERR_MSG_MAX];    /* human-readable, one line */
} gc_err_t;

/*  Record an error and return -1, so callers can write
    `return gc_err_set (err, GC_E_IO, "...", ...);`. err may be NULL. */
int  gc_err_set (gc_err_t *err, int code, const char *fmt, ...)
        __attribute__ ((format (printf, 3, 4)));

/*  Prepend context ("train-images-idx3-ubyte.gz: ") to an existing message.
    Returns -1 like gc_err_set. */
int  gc_err_prefix (gc_err_t *err, const char *fmt, ...)
        __attribute__ ((format (printf, 2, 3)));

void gc_err_clear (gc_err_t *err);

/*  "io", "payload_truncated": a short constant name for a code ("ok" for 0,
    "unknown" for a number no code has), usable as a metric label. */
const char *gc_err_name (int code);
/*  A short description ("file cannot be opened, read, written or synced"). */
const char *gc_strerror (int code);

#endif
