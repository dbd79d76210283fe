/*  gc_prom — a peer's counters and gauges in the Prometheus text exposition
    format (version 0.0.4): a # HELP and a # TYPE line per family, then its
    samples. Every sample carries the peer's own index and id as labels
    peer="0",peer_id="0f3823bc2476b05a"; per-neighbour samples add
    neighbour="3" (the neighbour's index; "unknown" for rejections that
    could not be attributed to a neighbour). Counters end in _total.

    The endpoint that serves it is gc_http; the numbers come from a
    gc_snapshot, so rendering never touches the engine. */
#ifndef GC_PROM_H
#define GC_PROM_H

#include "gc_buf.h"
#include "gc_err.h"
#include "gc_snapshot.h"

#define GC_PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/*  Append the exposition of snap to out. version: gcnode's version string. */
int gc_prom_render (const gc_snapshot_t *snap, const char *version, gc_buf_t *out, gc_err_t *err);

#endif
