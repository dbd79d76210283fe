/*  gc_checkpoint — crash-safe snapshots of a peer's learning state.

    File layout (little-endian), docs/OPERATIONS.md:
        0   8   magic "GCCKPT01"
        8   4   format version (1)
        12  4   flags (0)
        16  8   round
        24  8   seq (last sequence number used)
        32  8   n (parameters)
        40  64  model spec, NUL-padded
        104 4n  x (the model)
        ..  4n  v (the optimizer's momentum buffer, true scale)
        ..  32  SHA-256 of every byte before it
    Written to a temporary file in the same directory, fsync'ed, renamed over
    ckpt-<round>.gcc, and the directory fsync'ed: a crash at any moment leaves
    either the old or the new checkpoint, never a torn one. The newest few are
    kept. A checkpoint that fails any check (size, magic, version, spec,
    digest) is reported with the reason and the next older one is tried.

    The error-compensation residual is not stored: a resumed peer announces
    its model exactly by keyframe, which makes the residual zero. Replicas are
    not stored either: they are resynchronised by keyframes. */
#ifndef GC_CHECKPOINT_H
#define GC_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "gc_err.h"

#define GC_CHECKPOINT_VERSION 1
#define GC_CHECKPOINT_KEEP    3

typedef struct {
    uint64_t    round;
    uint64_t    seq;
    size_t      n;
    char        spec [64];
    float      *x;          /* n floats */
    float      *v;          /* n floats */
} gc_checkpoint_t;

/*  Write ckpt-<round>.gcc into dir atomically and prune old ones. */
int  gc_checkpoint_save (const char *dir, const gc_checkpoint_t *ckpt, gc_err_t *err);
/*  Load and verify one file into ckpt (x and v must hold n floats; spec and n
    must match what is expected). */
int  gc_checkpoint_load_file (const char *path, gc_checkpoint_t *ckpt, gc_err_t *err);
/*  The newest valid checkpoint in dir. Every refused file is reported through
    report(ctx, message). Returns 0 and fills ckpt, 1 when there is none, -1
    on a directory error. */
int  gc_checkpoint_load_newest (const char *dir, gc_checkpoint_t *ckpt,
                                void (*report) (void *ctx, const char *msg), void *ctx,
                                char *loaded_path, size_t path_size, gc_err_t *err);

#endif
