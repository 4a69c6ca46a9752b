/*
 * Internal: CUDA graphs for bulked segments (MXNET_ENABLE_CUDA_GRAPHS).
 * Defined in cuda/graph.cu with C linkage; the executor uses it (C).
 *
 * A segment whose kernels see the same arrays and parameters on every run
 * (static shapes, no random draws) is run plainly once on a worker -- that first run
 * creates library handles, picks cuDNN algorithms and grows scratch
 * buffers, none of which may happen inside a capture -- then captured once
 * on its worker's stream (a capture records the launches without running
 * them; the captured graph is then launched for the run itself), and from
 * then on replayed with one cudaGraphLaunch.  The graph is dropped and the
 * cycle starts again when the owner's `epoch` changes (the executor bumps
 * it whenever an array is rebound).  When a capture fails (an op called
 * something that capture forbids), the run falls back to a plain run and
 * the segment is never captured again.
 */
#ifndef MXR_CUDA_GRAPH_H
#define MXR_CUDA_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mxr_run_ctx;

/* A graph is replayed only by the worker that captured it: it holds that
 * worker's device scratch and library-handle workspaces, which another
 * worker may be using at the same time.  A segment keeps one slot per
 * worker that ran it, up to this many; other workers run it plainly. */
#define MXR_CUDA_GRAPH_WORKERS 4

struct mxr_cuda_graph_slot {
  uint64_t worker;    /* the worker's serial (mxr__cuda_worker_serial); 0: free */
  void *exec;         /* cudaGraphExec_t, once captured */
  int plain_runs;     /* runs made without a graph in this epoch */
};

/* One segment's graph state; zero-initialised means "not run yet".  Owned
 * by the segment; release with mxr__cuda_graph_release. */
struct mxr_cuda_graph {
  struct mxr_cuda_graph_slot slot[MXR_CUDA_GRAPH_WORKERS];
  uint64_t epoch;  /* the owner's epoch when the slots were made */
  bool unusable;   /* a capture failed: always run plainly */
};

/* The work of a segment: queues its kernels on rctx's stream. */
typedef int (*mxr_graph_body)(const struct mxr_run_ctx *rctx, void *arg);

/* How a run went (for the profiler's spans). */
enum mxr_cuda_graph_path {
  MXR_CUDA_GRAPH_PLAIN,    /* body ran without a graph */
  MXR_CUDA_GRAPH_CAPTURED, /* body was captured, the new graph launched */
  MXR_CUDA_GRAPH_REPLAYED, /* a graph captured earlier was launched */
};

/* Run `body` through the segment's graph state `g` on the worker stream of
 * `rctx` (which must have one): plainly, captured, or replayed, as above;
 * *path says which.  Returns body's status, or MXR_ECUDA with the last error
 * set.  Calls for one `g` must not overlap (the engine orders a segment's
 * runs). */
int mxr__cuda_graph_run(struct mxr_cuda_graph *g, uint64_t epoch, const struct mxr_run_ctx *rctx,
                        mxr_graph_body body, void *arg, enum mxr_cuda_graph_path *path);

/* Destroy the captured graph, if any, and reset `g`. */
void mxr__cuda_graph_release(struct mxr_cuda_graph *g);

/* Process-wide counts since load, for tests and the benchmark. */
struct mxr_cuda_graph_stats {
  uint64_t captures;  /* graphs captured and instantiated */
  uint64_t replays;   /* runs served by launching a captured graph */
  uint64_t failures;  /* captures that failed (segment marked unusable) */
};
void mxr__cuda_graph_stats(struct mxr_cuda_graph_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* MXR_CUDA_GRAPH_H */
