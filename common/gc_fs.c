#include "gc_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gc_mem.h"

static int
s_mkdir (const char *dir, mode_t mode, gc_err_t *err)
{
    if (mkdir (dir, mode) == 0)
        return 0;
    int e = errno;
    struct stat st;
    if (e == EEXIST && stat (dir, &st) == 0 && S_ISDIR (st.st_mode))
        return 0;
    return gc_err_set (err, GC_E_IO, "cannot create %s: %s", dir,
                       e == EEXIST ? "exists and is not a directory" : strerror (e));
}

int
gc_fs_mkdirs (const char *path, mode_t mode, gc_err_t *err)
{
    char buf [PATH_MAX];
    if (!*path)
        return gc_err_set (err, GC_E_IO, "cannot create a directory with an empty name");
    if (snprintf (buf, sizeof buf, "%s", path) >= (int) sizeof buf)
        return gc_err_set (err, GC_E_IO, "%.200s...: path too long", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/' && p [-1] != '/') {
            *p = '\0';
            if (s_mkdir (buf, 0755, err))
                return -1;
            *p = '/';
        }
    return s_mkdir (buf, mode, err);
}

int
gc_fs_read_file (const char *path, size_t max_bytes, char **buf, size_t *len, gc_err_t *err)
{
    *buf = NULL;
    *len = 0;
    if (max_bytes >= SIZE_MAX - 1)
        return gc_err_set (err, GC_E_ARG, "%s: read bound too large", path);
    //  O_NONBLOCK: opening a FIFO must not wait for a writer (the regular-file
    //  check below then refuses it).
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return gc_err_set (err, GC_E_IO, "%s: %s", path, strerror (errno));
    struct stat st;
    if (fstat (fd, &st) != 0) {
        int e = errno;
        close (fd);
        return gc_err_set (err, GC_E_IO, "%s: %s", path, strerror (e));
    }
    if (!S_ISREG (st.st_mode)) {
        close (fd);
        return gc_err_set (err, GC_E_IO, "%s: not a regular file", path);
    }
    //  The size stat reports is a hint (the file may grow): read until the
    //  bound plus one byte, which tells "too large" without reading the rest.
    size_t cap = (size_t) st.st_size < max_bytes ? (size_t) st.st_size + 1 : max_bytes + 1;
    char *data = malloc (cap + 1);
    size_t used = 0;
    int rc = data ? 0 : gc_err_set (err, GC_E_NOMEM, "%s: out of memory", path);
    while (rc == 0 && used <= max_bytes) {
        if (used == cap) {
            //  Not realloc: the old block may hold a secret and must be
            //  wiped, not left in the heap.
            size_t grown = cap > (max_bytes + 1) / 2 ? max_bytes + 1 : cap * 2;
            char *bigger = malloc (grown + 1);
            if (!bigger) {
                rc = gc_err_set (err, GC_E_NOMEM, "%s: out of memory", path);
                break;
            }
            memcpy (bigger, data, used);
            gc_wipe (data, used);
            free (data);
            data = bigger;
            cap = grown;
        }
        ssize_t n = read (fd, data + used, cap - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            rc = gc_err_set (err, GC_E_IO, "%s: %s", path, strerror (errno));
        if (n <= 0)
            break;
        used += (size_t) n;
    }
    close (fd);
    if (rc == 0 && used > max_bytes)
        rc = gc_err_set (err, GC_E_FORMAT, "%s: larger than %zu bytes", path, max_bytes);
    if (rc) {
        if (data)
            gc_wipe (data, used);
        free (data);
        return -1;
    }
    data [used] = '\0';
    *buf = data;
    *len = used;
    return 0;
}

static int
s_write_all (int fd, const uint8_t *p, size_t len)
{
    while (len) {
        ssize_t n = write (fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0) {
            errno = EIO;
            return -1;
        }
        p += n;
        len -= (size_t) n;
    }
    return 0;
}

/*  The temporary file gc_fs_write_atomic writes first, opened (0600): its
    name in tmp, and path's directory as given in dirbuf ("." for a bare
    name, "/" for "/x": what gets synced). The descriptor, or -1. */
static int
s_open_tmp (const char *path, char *tmp, char *dirbuf, gc_err_t *err)
{
    const char *slash = strrchr (path, '/'), *name = slash ? slash + 1 : path;
    int dir_len = slash ? (int) (slash - path) : 0;
    if (!*name)
        return gc_err_set (err, GC_E_IO, "%s: not a file name", path);
    if (snprintf (tmp, PATH_MAX, "%.*s%s.%s.tmp.XXXXXX", dir_len, path, slash ? "/" : "", name)
            >= PATH_MAX
    ||  snprintf (dirbuf, PATH_MAX, "%.*s", dir_len, path) >= PATH_MAX)
        return gc_err_set (err, GC_E_IO, "%.200s...: path too long", path);
    if (!dirbuf [0])
        snprintf (dirbuf, PATH_MAX, "%s", slash ? "/" : ".");
    int fd = mkstemp (tmp);
    if (fd < 0)
        return gc_err_set (err, GC_E_IO, "%s: cannot create a file next to it (%s)", path, strerror (errno));
    return fd;
}

int
gc_fs_check_writable (const char *path, gc_err_t *err)
{
    struct stat st;
    if (stat (path, &st) == 0 && S_ISDIR (st.st_mode))
        return gc_err_set (err, GC_E_IO, "%s: is a directory", path);
    char tmp [PATH_MAX], dirbuf [PATH_MAX];
    int fd = s_open_tmp (path, tmp, dirbuf, err);
    if (fd < 0)
        return -1;
    close (fd);
    unlink (tmp);
    return 0;
}

int
gc_fs_write_atomic (const char *path, const void *data, size_t len, mode_t mode, gc_err_t *err)
{
    char tmp [PATH_MAX], dirbuf [PATH_MAX];
    int fd = s_open_tmp (path, tmp, dirbuf, err);
    if (fd < 0)
        return -1;
    const char *step = "cannot write";
    int rc = s_write_all (fd, data, len);
    if (rc == 0 && (rc = fchmod (fd, mode)) != 0)
        step = "cannot set the mode";
    if (rc == 0 && (rc = fsync (fd)) != 0)
        step = "cannot sync";
    int saved = errno;
    if (close (fd) != 0 && rc == 0)
        rc = -1, saved = errno, step = "cannot close";
    if (rc == 0 && rename (tmp, path) != 0)
        rc = -1, saved = errno, step = "cannot rename into place";
    if (rc != 0) {
        unlink (tmp);
        return gc_err_set (err, GC_E_IO, "%s: %s (%s)", path, step, strerror (saved));
    }
    int dfd = open (dirbuf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || fsync (dfd) != 0) {
        saved = errno;
        if (dfd >= 0)
            close (dfd);
        return gc_err_set (err, GC_E_IO, "%s: cannot sync the directory %s (%s)", path, dirbuf,
                           strerror (saved));
    }
    close (dfd);
    return 0;
}
