/*  gc_fs — the file-system steps gcnode repeats: make a directory path,
    read a whole (bounded) file, replace a file atomically and durably. */
#ifndef GC_FS_H
#define GC_FS_H

#include <stddef.h>
#include <sys/types.h>

#include "gc_err.h"

/*  mkdir -p: every missing directory of path; the last one gets mode, the
    ones above it 0755. An existing directory is fine; an existing
    non-directory, or a component under a regular file, is GC_E_IO. */
int gc_fs_mkdirs (const char *path, mode_t mode, gc_err_t *err);

/*  The whole regular file in *buf (malloc'd, NUL-terminated after *len
    bytes, so text can be read as a string). A file larger than max_bytes is
    GC_E_FORMAT, read no further: the file may be hostile. *buf is NULL on
    failure (what was read is wiped first: key files come this way); a
    caller holding secrets wipes the buffer before freeing it. */
int gc_fs_read_file (const char *path, size_t max_bytes, char **buf, size_t *len, gc_err_t *err);

/*  Replace path with data: a fresh temporary file in the same directory
    (hidden, .NAME.tmp.XXXXXX, created 0600 so no one else reads it before
    its final mode), written, given mode, fsync'd, renamed over path, then the
    directory fsync'd, so after a crash path is the old file or the whole
    new one and the rename has reached the disk. The temporary file is gone
    whatever happens. */
int gc_fs_write_atomic (const char *path, const void *data, size_t len, mode_t mode, gc_err_t *err);

/*  Whether gc_fs_write_atomic could write path, tried by creating and
    removing its temporary file: checked before a long run whose result
    goes there (path a directory, or a directory that is missing or not
    writable, is GC_E_IO with the reason). */
int gc_fs_check_writable (const char *path, gc_err_t *err);

#endif
