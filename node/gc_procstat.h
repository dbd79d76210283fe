/*  gc_procstat — this process as Prometheus's process_* metrics describe
    it: resident memory, CPU seconds, open file descriptors (Linux /proc;
    elsewhere the read fails and no process metric is exported). */
#ifndef GC_PROCSTAT_H
#define GC_PROCSTAT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    bool     valid;
    uint64_t rss_bytes;
    double   cpu_seconds;           /* user + system */
    uint64_t open_fds;
    uint64_t max_fds;               /* the soft RLIMIT_NOFILE */
} gc_procstat_t;

/*  Read the calling process; 0, or -1 (out->valid false) without /proc. */
int gc_procstat_read (gc_procstat_t *out);

#endif
