/* CUDA graphs for bulked segments (cuda/graph.h). */
#include "config.h"

#include <atomic>

#include <cuda_runtime_api.h>

#include "cuda/check.h"
#include "cuda/graph.h"
#include "cuda/worker.h"
#include "mxref/engine.h"
#include "mxref/error.h"

namespace {

std::atomic<uint64_t> captures{0}, replays{0}, failures{0};

void destroy_slots(mxr_cuda_graph *g) {
  for (mxr_cuda_graph_slot &s : g->slot) {
    if (s.exec) (void)MXR_CUDA_CHECK(cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(s.exec)));
    s = mxr_cuda_graph_slot{};
  }
}

/* The slot of `worker` (a serial, not the worker state's address: a new
 * worker may get a stopped one's address, and must not replay its graph),
 * taking a free one; NULL when all are taken. */
mxr_cuda_graph_slot *slot_of(mxr_cuda_graph *g, uint64_t worker) {
  for (mxr_cuda_graph_slot &s : g->slot)
    if (s.worker == worker) return &s;
  for (mxr_cuda_graph_slot &s : g->slot)
    if (!s.worker) {
      s.worker = worker;
      return &s;
    }
  return nullptr;
}

/* Record body's launches on `stream` and instantiate them.  On failure
 * nothing ran: the caller runs body plainly.  Returns 0, body's status, or
 * MXR_ECUDA (capture refused). */
int capture(mxr_cuda_graph_slot *g, cudaStream_t stream, const mxr_run_ctx *rctx, mxr_graph_body body,
            void *arg) {
  MXR_CUDA_CALL(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  int st = body(rctx, arg);
  cudaGraph_t graph = nullptr;
  /* End the capture whatever happened, so the stream is usable again. */
  cudaError_t end = cudaStreamEndCapture(stream, &graph);
  if (end != cudaSuccess) {
    (void)MXR_CUDA_CHECK(end);
    if (st == 0) st = MXR_ECUDA;
  }
  if (st == 0) {
    cudaGraphExec_t exec = nullptr;
    if (MXR_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0)) == cudaSuccess)
      g->exec = exec;
    else
      st = MXR_ECUDA;
  }
  if (graph) (void)MXR_CUDA_CHECK(cudaGraphDestroy(graph));
  /* A refused capture leaves its error as the runtime's last error (it is
   * not sticky); clear it so that the next launch check does not see it. */
  (void)cudaGetLastError();
  return st;
}

}  // namespace

extern "C" int mxr__cuda_graph_run(mxr_cuda_graph *g, uint64_t epoch, const mxr_run_ctx *rctx,
                                   mxr_graph_body body, void *arg, mxr_cuda_graph_path *path) {
  cudaStream_t stream = static_cast<cudaStream_t>(rctx->stream);
  *path = MXR_CUDA_GRAPH_PLAIN;
  if (g->epoch != epoch) {
    destroy_slots(g);
    g->epoch = epoch;
  }
  uint64_t worker = mxr__cuda_worker_serial(rctx);
  mxr_cuda_graph_slot *s = g->unusable || !stream || !worker ? nullptr : slot_of(g, worker);
  if (!s) return body(rctx, arg);
  if (s->exec) {
    MXR_CUDA_CALL(cudaGraphLaunch(static_cast<cudaGraphExec_t>(s->exec), stream));
    replays.fetch_add(1, std::memory_order_relaxed);
    *path = MXR_CUDA_GRAPH_REPLAYED;
    return 0;
  }
  if (s->plain_runs < 1) { /* warm-up: handles, algorithms, scratch */
    s->plain_runs++;
    return body(rctx, arg);
  }
  if (capture(s, stream, rctx, body, arg) != 0) {
    /* Either capture is not possible for these ops or an op failed while
     * recording: mark the segment and run it for real, which reports the
     * op's own error if it has one. */
    g->unusable = true;
    failures.fetch_add(1, std::memory_order_relaxed);
    return body(rctx, arg);
  }
  captures.fetch_add(1, std::memory_order_relaxed);
  MXR_CUDA_CALL(cudaGraphLaunch(static_cast<cudaGraphExec_t>(s->exec), stream));
  *path = MXR_CUDA_GRAPH_CAPTURED;
  return 0;
}

extern "C" void mxr__cuda_graph_release(mxr_cuda_graph *g) {
  destroy_slots(g);
  *g = mxr_cuda_graph{};
}

extern "C" void mxr__cuda_graph_stats(mxr_cuda_graph_stats *out) {
  out->captures = captures.load(std::memory_order_relaxed);
  out->replays = replays.load(std::memory_order_relaxed);
  out->failures = failures.load(std::memory_order_relaxed);
}
