/*  gcnode.h — libgcnode: robust, signed, compressed gossip for a model that
    the caller trains (docs/EMBEDDING.md).

    The caller (the "embedder": a C program, or Python through the gcnode
    package) owns the model, its optimiser and its data, and keeps the
    model's parameters in one contiguous float buffer. A peer opened on that
    buffer is a full gcnode peer: the same configuration file and keys as
    `gcnode run` (docs/CONFIG.md), the same wire, compression with error
    compensation, Ed25519 signatures, robust aggregation, wait policies,
    checkpoints, metrics, status file, control channel, CURVE, discovery and
    Byzantine roles. Per round the embedder trains locally, then calls
    gcnode_peer_step, which publishes what changed in the buffer since the
    last step, waits as the wait policy says and writes the robust mix of
    its neighbours' models into the buffer in place.

        gcnode_config_t *c = gcnode_config_new ();
        gcnode_config_load (c, "peer0.zpl");
        gcnode_config_set (c, "gossip/aggregator", "guard");
        gcnode_peer_t *p = gcnode_peer_open (c, params, n, layers, n_layers, 0);
        while (!gcnode_peer_done (p)) {
            train_locally (params);             // the embedder's SGD steps
            if (gcnode_peer_step (p))
                fprintf (stderr, "%s\n", gcnode_last_error ());
        }
        gcnode_peer_close (&p);
        gcnode_config_destroy (&c);

    Errors. Every call that can fail returns 0 on success and -1 on failure
    (a constructor returns NULL); the failure's one-line message and its
    code, one of the project's error space (GC_E_* in common/gc_err.h, named
    by gcnode_error_name: "config", "io", "spec", ...), are then those of
    gcnode_last_error / gcnode_last_error_code on the calling thread until
    its next failing call.

    Threads. A peer belongs to one thread at a time (its "trainer"): open,
    step, close and the other peer calls. Inside the library a network
    thread per peer receives, verifies and decodes messages while the
    trainer trains; it never touches the parameter buffer, which the library
    reads and writes only inside gcnode_peer_open and gcnode_peer_step. So
    the embedder may change the buffer freely between steps, and must not
    during one. gcnode_peer_stop, gcnode_peer_stats and
    gcnode_peer_rejections may be called from any thread. Configurations are
    not shared between threads while being changed. Several peers may live
    in one process (each its own threads); the log tag is the last opened
    peer's. The library installs no signal handlers and keeps CZMQ from
    installing its own (ZSYS_SIGHANDLER=false unless already set).

    ABI: opaque handles; gcnode_stats_t is filled up to the size passed, so
    a program built against an older header keeps working. */
#ifndef GCNODE_H
#define GCNODE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*  The library exports only what this header declares. */
#if defined(__GNUC__)
#   define GCNODE_API __attribute__ ((visibility ("default")))
#else
#   define GCNODE_API
#endif

#define GCNODE_VERSION_MAJOR 0
#define GCNODE_VERSION_MINOR 1
#define GCNODE_VERSION_PATCH 0
/*  One number that compares: 10000 * major + 100 * minor + patch. */
#define GCNODE_VERSION \
    (GCNODE_VERSION_MAJOR * 10000 + GCNODE_VERSION_MINOR * 100 + GCNODE_VERSION_PATCH)

/*  The version of the library actually loaded ("0.1.0"), and its number. */
GCNODE_API const char *gcnode_version (void);
GCNODE_API int         gcnode_version_number (void);

/*  The last failure on this thread: message ("" if none) and code (0 if none). */
GCNODE_API const char *gcnode_last_error (void);
GCNODE_API int         gcnode_last_error_code (void);
/*  A short name for an error code ("config", "io", ...). */
GCNODE_API const char *gcnode_error_name (int code);

/*  ------------------------------------------------------------------------
    Configuration: the keys of `gcnode run --help-config` (docs/CONFIG.md). */
typedef struct gcnode_config_t gcnode_config_t;

GCNODE_API gcnode_config_t *gcnode_config_new (void);
GCNODE_API void             gcnode_config_destroy (gcnode_config_t **self_p);
/*  Load a ZPL file (replaces what was loaded before; keys set later win). */
GCNODE_API int              gcnode_config_load (gcnode_config_t *self, const char *path);
/*  One key, e.g. ("gossip/compress", "topk:0.01"); checked at once. */
GCNODE_API int              gcnode_config_set (gcnode_config_t *self, const char *key, const char *value);

/*  ------------------------------------------------------------------------
    A peer. */
typedef struct gcnode_peer_t gcnode_peer_t;

/*  One tensor of the parameter buffer: count = rows * cols floats from
    offset (a matrix rows x cols, row-major, as compressors such as PowerSGD
    see it; a vector: rows = count, cols = 1). Layers are packed in order. */
typedef struct {
    const char *name;           /* at most 31 characters are kept */
    size_t      offset;
    uint32_t    rows, cols;
    int         matrix;         /* 1: a matrix; 0: a vector */
} gcnode_layer_t;

/*  Flags of gcnode_peer_open. */
#define GCNODE_RESUME 1u        /* continue from the newest valid checkpoint
                                   of node/checkpoint_dir (written into params) */
#define GCNODE_ADOPT  2u        /* without a layer table: keep params as the
                                   initial model instead of writing the seeded one */

/*  Open a peer on params (n_params floats, the caller's, kept until close).
    The layer table is layers (n_layers of them), or, with layers NULL, that
    of the model the configuration's train/model names (e.g.
    "784-256-128-10", an MLP: the table native `gcnode run` peers of that
    model use, so both kinds of peer gossip together). With a table the
    buffer's contents are the initial model (every peer announces it by
    keyframe); without one the seeded initial model of train/model is
    written into params (the same on every peer), unless GCNODE_ADOPT.
    Sets up keys, transport, operations and checkpoints, waits (at most 10 s)
    for the neighbours and announces the peer. NULL on failure. */
GCNODE_API gcnode_peer_t *gcnode_peer_open (const gcnode_config_t *config, float *params, size_t n_params,
                                 const gcnode_layer_t *layers, size_t n_layers, unsigned flags);
/*  Final checkpoint and metrics, then teardown; *self_p becomes NULL. */
GCNODE_API int            gcnode_peer_close (gcnode_peer_t **self_p);

/*  One round: publish params - (params at the last step) as configured
    (compression, error compensation, signature), wait for the neighbours as
    the wait policy says (bounded by gossip/timeout_ms, or until
    gcnode_peer_stop), write the robust mix into params, then checkpoint and
    write metrics as configured. */
GCNODE_API int            gcnode_peer_step (gcnode_peer_t *self);
/*  1 once the configured train/rounds are done or the peer was stopped
    (gcnode_peer_stop, the control channel's `stop`); else 0. */
GCNODE_API int            gcnode_peer_done (const gcnode_peer_t *self);
/*  Any thread: end the current wait early; gcnode_peer_done becomes 1. */
GCNODE_API void           gcnode_peer_stop (gcnode_peer_t *self);

GCNODE_API uint64_t       gcnode_peer_round (const gcnode_peer_t *self);
GCNODE_API size_t         gcnode_peer_n_params (const gcnode_peer_t *self);
GCNODE_API int            gcnode_peer_index (const gcnode_peer_t *self);
/*  The canonical model spec peers and checkpoints compare. */
GCNODE_API const char    *gcnode_peer_model (const gcnode_peer_t *self);
/*  An accuracy the embedder measured: shown by status, metrics and the
    control channel's `status`. */
GCNODE_API int            gcnode_peer_report_accuracy (gcnode_peer_t *self, double accuracy);

typedef struct {
    uint64_t round;
    uint64_t msgs_sent, bytes_sent;         /* per destination, headers included */
    uint64_t msgs_recv, bytes_recv;
    uint64_t deltas_applied, keyframes_sent, keyframes_recv;
    uint64_t rejected;                      /* every rejection, all reasons */
    uint64_t dense_equiv_bytes;             /* what dense fp32 deltas would have cost */
    uint64_t mix_skipped;                   /* rounds too few inputs were usable */
    uint64_t mixed_inputs;                  /* inputs of the last aggregation */
    double   last_wait_s, total_wait_s;
    double   time_compress_s, time_sign_s, time_aggregate_s;    /* in step */
    double   time_verify_s, time_decode_s;                      /* network thread */
    /*  Equivocation (docs/PROTOCOL.md section 9), appended: a program built
        against the header without them passes a smaller size. */
    uint64_t equivocators;                  /* authors excluded on a proof */
    uint64_t evidence_found, evidence_recv, evidence_sent;
} gcnode_stats_t;

/*  Fill *out (size: sizeof *out as the caller compiled it). */
GCNODE_API int            gcnode_peer_stats (gcnode_peer_t *self, gcnode_stats_t *out, size_t size);
/*  Rejections of messages claiming to be from peer (its index; -1: senders
    that could not be attributed) for reason (a name of gcnode_reason_name,
    e.g. "bad_signature", "nonfinite", "muted"; NULL: every reason). */
GCNODE_API int            gcnode_peer_rejections (gcnode_peer_t *self, int peer, const char *reason,
                                       uint64_t *count);
/*  The rejection reasons, i = 0, 1, ... (NULL past the last). */
GCNODE_API const char    *gcnode_reason_name (size_t i);

#ifdef __cplusplus
}
#endif

#endif
