#include "gc_procstat.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int
gc_procstat_read (gc_procstat_t *out)
{
    memset (out, 0, sizeof *out);
    FILE *f = fopen ("/proc/self/stat", "r");
    if (!f)
        return -1;
    char line [1024];
    size_t n = fread (line, 1, sizeof line - 1, f);
    fclose (f);
    line [n] = 0;
    //  fields after "(comm)": state is 3, utime 14, stime 15, rss 24 (pages)
    char *p = strrchr (line, ')');
    unsigned long long utime = 0, stime = 0;
    long long rss = 0;
    if (!p || sscanf (p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d"
                      " %*u %*u %lld", &utime, &stime, &rss) != 3)
        return -1;
    long ticks = sysconf (_SC_CLK_TCK), page = sysconf (_SC_PAGESIZE);
    out->cpu_seconds = (double) (utime + stime) / (double) (ticks > 0 ? ticks : 100);
    out->rss_bytes = rss > 0 ? (uint64_t) rss * (uint64_t) (page > 0 ? page : 4096) : 0;
    DIR *d = opendir ("/proc/self/fd");
    if (d) {
        for (struct dirent *e; (e = readdir (d));)
            if (e->d_name [0] != '.')
                out->open_fds++;
        closedir (d);
        out->open_fds--;                /* the directory's own descriptor */
    }
    struct rlimit rl;
    if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        out->max_fds = (uint64_t) rl.rlim_cur;
    out->valid = true;
    return 0;
}
