/*  gc_checkpoint — crash-safe snapshots of a peer's learning state.

    File layout (little-endian), docs/OPERATIONS.md:
        0   8   magic "GCCKPT01"
        8   4   format version (2; version 1 files are refused with a reason)
        12  4   flags (0)
        16  8   round
        24  8   seq (last sequence number used)
        32  8   n (parameters)
        40  64  model spec, NUL-padded
        104 16  network id (gc_wire_network_id of gossip/network)
        120 8   peer id of the peer that wrote it
        128 16  run id: random at a fresh start, kept across --resume
        144 4n  x (the model)
        ..  4n  v (the optimizer's momentum buffer, true scale)
        ..  32  SHA-256 of every byte before it
    Written to a temporary file in the same directory, fsync'ed, renamed over
    ckpt-<round>.gcc, and the directory fsync'ed: a crash at any moment leaves
    either the old or the new checkpoint, never a torn one. After a save the
    same run's older files beyond the newest GC_CHECKPOINT_KEEP are removed;
    files of another run, peer, network or model are never touched. A
    checkpoint that fails any check (size, magic, version, network, peer,
    spec, digest) is reported with the reason and the next older one is tried.

    The error-compensation residual is not stored: a resumed peer announces
    its model exactly by keyframe, which makes the residual zero. Replicas are
    not stored either: they are resynchronised by keyframes. Nor is the ratio
    policy's history: each starts on the side that sends more (docs/
    ALGORITHMS.md, "Ratio policies"). */
#ifndef GC_CHECKPOINT_H
#define GC_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"

#define GC_CHECKPOINT_VERSION 2
#define GC_CHECKPOINT_RUN_SIZE 16
#define GC_CHECKPOINT_KEEP    3

typedef struct {
    uint64_t    round;
    uint64_t    seq;
    size_t      n;
    char        spec [64];
    float      *x;          /* n floats */
    float      *v;          /* n floats */
    //  What binds a checkpoint to its writer: network and peer must match
    //  to load; run is written by save, filled by load, and says which
    //  files a save may prune.
    uint8_t     network [16];
    uint8_t     peer [8];
    uint8_t     run [GC_CHECKPOINT_RUN_SIZE];
} gc_checkpoint_t;

/*  At start: create dir (0700) and prove a checkpoint can be written there
    (an unusable directory is an error, not a run without crash safety).
    With resume false, a directory already holding checkpoints of this
    network and peer (of another run: loadable by a later --resume, or by
    mistake) is refused with the newest one named; with resume true they
    are what --resume continues. */
int  gc_checkpoint_open (const char *dir, const gc_checkpoint_t *ckpt, bool resume, gc_err_t *err);
/*  A fresh random run id (from /dev/urandom). */
int  gc_checkpoint_new_run (uint8_t run [GC_CHECKPOINT_RUN_SIZE], gc_err_t *err);
/*  The sequence lease (file seq.lease in dir, docs/PROTOCOL.md section 6):
    the end of the last stored lease, every seq up to which may have been
    used. read: 0 and *end, 1 when there is none, -1 for a damaged file. */
int  gc_checkpoint_lease_read (const char *dir, uint64_t *end, gc_err_t *err);
int  gc_checkpoint_lease_write (const char *dir, uint64_t end, gc_err_t *err);
/*  Write ckpt-<round>.gcc into dir atomically and prune this run's old ones
    (never the one just written). */
int  gc_checkpoint_save (const char *dir, const gc_checkpoint_t *ckpt, gc_err_t *err);
/*  Load and verify one file into ckpt (x and v must hold n floats; spec, n,
    network and peer must match what is expected); fills round, seq, run. */
int  gc_checkpoint_load_file (const char *path, gc_checkpoint_t *ckpt, gc_err_t *err);
/*  The newest valid checkpoint in dir. Every refused file is reported through
    report(ctx, message). Returns 0 and fills ckpt, 1 when there is none, -1
    on a directory error. */
int  gc_checkpoint_load_newest (const char *dir, gc_checkpoint_t *ckpt,
                                void (*report) (void *ctx, const char *msg), void *ctx,
                                char *loaded_path, size_t path_size, gc_err_t *err);

#endif
