/*
 * Internal: the profiler's pieces shared between its files.
 *
 *   recorder.c   the engine hooks (hot path), per-thread record buffers, the
 *                registry of recording threads, per-thread aggregate tables
 *   aggregate.c  the aggregate-statistics table (name -> count/total/min/max)
 *                and its printing (MXNet's table and JSON layouts)
 *   trace.c      device numbering (MXNet's pids) and the Chrome trace writer
 *   profiler.c   the public API: configuration, state, dumps, the periodic
 *                dump timer, autostart and the dump at exit
 *
 * Lock order: profiler.c's control mutex -> the registry mutex
 * (recorder.c) -> one thread buffer's mutex.  The hot path takes only the
 * calling thread's own buffer mutex (uncontended except while a dump or a
 * statistics print drains that buffer).
 */
#ifndef MXR_PROFILER_PROFILER_INTERNAL_H
#define MXR_PROFILER_PROFILER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mxref/base.h"
#include "mxref/engine.h"

/* ---- recorded ops ---------------------------------------------------------- */

/* One profiled op, complete: written by op_end into the ending thread's
 * buffer.  `tid` is the trace thread number of the thread that began it. */
struct prof_rec {
  uint64_t begin_ns; /* nanoseconds since the profiler's time origin */
  uint64_t end_ns;
  uint32_t tid;
  int32_t pid;       /* MXNet's device index (trace.c) */
  uint32_t name_len;
  uint32_t size;     /* bytes taken by this record, name included; multiple of 8 */
  char name[];       /* NUL-terminated copy of the op name */
};

/* Records are packed into chunks; a list of chunks is what a dump drains. */
struct prof_chunk {
  struct prof_chunk *next;
  size_t used, cap;
  uint64_t data[]; /* records, 8-byte aligned */
};

struct prof_chunk_list {
  struct prof_chunk *head, *tail;
  size_t nrecs;
};

static inline const struct prof_rec *mxr__prof_chunk_rec(const struct prof_chunk *c, size_t off) {
  return (const struct prof_rec *)((const unsigned char *)c->data + off);
}

void mxr__prof_chunks_free(struct prof_chunk_list *l);

/* ---- aggregate statistics (aggregate.c) ------------------------------------ */

struct agg_entry {
  char *name; /* owned; NULL marks an empty slot */
  uint64_t hash;
  uint64_t count, total_us, min_us, max_us;
};

struct agg_table {
  struct agg_entry *slots;
  size_t cap, n; /* cap is 0 or a power of two */
};

/* Add one duration under `name` (len bytes).  0, or MXR_ENOMEM (the sample
 * is dropped; the table stays valid). */
int mxr__agg_add(struct agg_table *t, const char *name, size_t len, uint64_t dur_us);
/* Add every entry of `src` into `dst`.  0 or MXR_ENOMEM. */
int mxr__agg_merge(struct agg_table *dst, const struct agg_table *src);
/* Empty the table and free its memory. */
void mxr__agg_clear(struct agg_table *t);

/* Print `t` as MXNet's AggregateStats::DumpTable (format 0) or DumpJson
 * (format 1), entries of each category sorted as MXNet sorts them.  Returns
 * a malloc'd string, or NULL when out of memory. */
char *mxr__agg_format(const struct agg_table *t, int format, int sort_by, int ascending);

/* The trace category of an op name: "Custom Operator" for the sub-operators
 * of a custom op (names containing "::"), else "operator" (as MXNet). */
const char *mxr__prof_category(const char *name);

/* ---- the recorder (recorder.c) -------------------------------------------- */

uint64_t mxr__prof_op_begin(void *user, const struct mxr_op_event *ev);
void mxr__prof_op_end(void *user, const struct mxr_op_event *ev, uint64_t begin_cookie);

/* What the hot path reads: the mode bits that record (0 while stopped or
 * paused), and whether aggregate statistics are kept. */
void mxr__prof_set_active(unsigned mode_bits);
void mxr__prof_set_aggregate(bool on);

/* Fix the time origin, if none is set yet. */
void mxr__prof_start_clock(void);
/* The wall clock (CLOCK_REALTIME, ns since the epoch) at the origin: a
 * record's time plus this is its time since the epoch. */
uint64_t mxr__prof_epoch_origin_ns(void);

/* Move every record of every thread into *out (appended). */
void mxr__prof_collect(struct prof_chunk_list *out);
/* Give records back (taken by mxr__prof_collect and not written). */
void mxr__prof_putback(struct prof_chunk_list *recs);

/* Merge every thread's aggregate table into *out; with reset, empty them. */
int mxr__prof_aggregate_snapshot(struct agg_table *out, bool reset);

/* Drop every aggregate. */
void mxr__prof_aggregate_clear(void);

/* Drop all records and aggregates, forget the time origin, and make cookies
 * handed out so far stale (their op_end records nothing). */
void mxr__prof_recorder_reset(void);

/* ---- devices and the trace file (trace.c) ----------------------------------- */

/* MXNet's device numbering: cpu/0..cpu/(C-1), gpu/0..gpu/(G-1), "cpu pinned/",
 * "cpu shared/", C = processors available to the process, G = 32 in a CUDA
 * build and 0 otherwise.  -1 for a context outside that table. */
int mxr__prof_pid(struct mxr_context ctx);
int mxr__prof_device_count(void);
/* The process name of pid i ("cpu/0"); writes into buf. */
void mxr__prof_device_name(int pid, char *buf, size_t n);

/* Write the opening of a trace file: `{"traceEvents": [` and the
 * process_name metadata events of every device.  0, or MXR_ENOMEM/MXR_ESYS
 * with the last error set (`what` names the file). */
int mxr__trace_write_head(FILE *f, const char *what);

/* Write the records of `recs` as B/E events, each preceded by ",\n" (the
 * head always holds at least one event).  Per (pid, tid), events come out in
 * timestamp order and properly nested; an op that would overlap another
 * without nesting (an async op whose thread went on to run a longer op) moves
 * to an extra lane of that thread, tid + k * MXR__TRACE_LANE_STRIDE. */
int mxr__trace_write_events(FILE *f, const struct prof_chunk_list *recs, const char *what);

/* The closing: `], "displayTimeUnit": "ms"}`. */
int mxr__trace_write_tail(FILE *f, const char *what);

#define MXR__TRACE_LANE_STRIDE (1u << 24)
#define MXR__PROF_MAX_TID ((1u << 24) - 1)

#endif /* MXR_PROFILER_PROFILER_INTERNAL_H */
