/*
 * The engine's GPU driver over the CUDA runtime (struct mxr_device_driver in
 * mxref/engine.h; mxr_gpu_driver() in device.c hands it out).  Host code
 * only.
 *
 * Each GPU worker thread owns its streams: one, or two with
 * MXNET_GPU_WORKER_NSTREAMS=2 (compute workers only; copy workers need
 * one).  The streams do not synchronise with the legacy default stream, so
 * workers of one device overlap.  An op's function only queues work on its
 * worker's stream; op_finish is the op's one completion point: it joins the
 * auxiliary stream into the main one through an event (no host wait for
 * it), then waits for the main stream.  A bulked segment is one engine op,
 * so its kernels run back to back with a single wait at the end; the
 * engine's dependency tracking orders ops across streams and workers, as in
 * MXNet 1.x (docs/architecture.md, "GPU").
 */
#include "config.h"

#include <cstdlib>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "device/cublas_check.h"
#include "device/cuda_check.h"
#include "device/cuda_worker.h"
#include "device/device_internal.h"
#include "mxref/config.h"
#include "mxref/device.h"
#include "mxref/engine.h"

namespace {

/* What a worker owns: rctx->stream and aux_stream are its streams (ops use
 * them as cudaStream_t), rctx->driver_data the whole struct. */
struct WorkerStreams {
  cudaStream_t main;
  cudaStream_t aux;
  cudaEvent_t aux_done; /* recorded on aux, waited for on main */
  cublasHandle_t blas;  /* on main; created by the first op that needs it */
};

int device_count(void *) { return mxr_gpu_count(); }

void destroy_streams(WorkerStreams *w) {
  /* Everything queued has finished: the engine stops a pool only after its
   * ops completed, and each op waited for its streams in op_finish. */
  if (w->blas) (void)MXR_CUBLAS_CHECK(mxr__cublas()->destroy(w->blas));
  if (w->aux_done) (void)MXR_CUDA_CHECK(cudaEventDestroy(w->aux_done));
  if (w->aux) (void)MXR_CUDA_CHECK(cudaStreamDestroy(w->aux));
  if (w->main) (void)MXR_CUDA_CHECK(cudaStreamDestroy(w->main));
  std::free(w);
}

int create_streams(int nstreams, WorkerStreams *w) {
  MXR_CUDA_CALL(cudaStreamCreateWithFlags(&w->main, cudaStreamNonBlocking));
  if (nstreams < 2) return 0;
  MXR_CUDA_CALL(cudaStreamCreateWithFlags(&w->aux, cudaStreamNonBlocking));
  MXR_CUDA_CALL(cudaEventCreateWithFlags(&w->aux_done, cudaEventDisableTiming));
  return 0;
}

int worker_start(void *, struct mxr_context ctx, enum mxr_pool_kind kind, int nstreams,
                 struct mxr_run_ctx *rctx) {
  MXR_CUDA_CALL(cudaSetDevice(ctx.dev_id));
  /* calloc: the members are plain handles, and zero is "none". */
  WorkerStreams *w = static_cast<WorkerStreams *>(std::calloc(1, sizeof(WorkerStreams)));
  if (!w) return mxr_set_error(MXR_ENOMEM, "GPU worker for gpu(%d): out of host memory", ctx.dev_id);
  int st = create_streams(kind == MXR_POOL_GPU_COPY ? 1 : nstreams, w);
  if (st) {
    destroy_streams(w);
    return st;
  }
  rctx->stream = w->main;
  rctx->aux_stream = w->aux;
  rctx->driver_data = w;
  return 0;
}

void worker_stop(void *, struct mxr_run_ctx *rctx) {
  WorkerStreams *w = static_cast<WorkerStreams *>(rctx->driver_data);
  if (!w) return;
  destroy_streams(w);
  rctx->stream = rctx->aux_stream = rctx->driver_data = nullptr;
}

int op_finish(void *, struct mxr_run_ctx *rctx) {
  WorkerStreams *w = static_cast<WorkerStreams *>(rctx->driver_data);
  if (!w) return 0;
  if (w->aux) {
    MXR_CUDA_CALL(cudaEventRecord(w->aux_done, w->aux));
    MXR_CUDA_CALL(cudaStreamWaitEvent(w->main, w->aux_done, 0));
  }
  /* Also surfaces a fault of any kernel the op launched. */
  MXR_CUDA_CALL(cudaStreamSynchronize(w->main));
  return 0;
}

const struct mxr_device_driver cuda_driver = {
    nullptr, device_count, worker_start, worker_stop, op_finish,
};

/* A cuBLAS handle on `stream` (NULL: the legacy default stream) with the
 * math mode of mxr__gpu_tf32_allowed(), for the current device. */
int create_blas(cudaStream_t stream, cublasHandle_t *out) {
  const MxrCublas *b = mxr__cublas();
  if (!b) return MXR_ECUDA;
  cublasHandle_t h;
  MXR_CUBLAS_CALL(b->create(&h));
  cublasMath_t mode = mxr__gpu_tf32_allowed() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
  if (MXR_CUBLAS_CHECK(b->set_stream(h, stream)) != CUBLAS_STATUS_SUCCESS ||
      MXR_CUBLAS_CHECK(b->set_math_mode(h, mode)) != CUBLAS_STATUS_SUCCESS) {
    (void)b->destroy(h);
    return MXR_ECUDA;
  }
  *out = h;
  return 0;
}

/* Handles of ops run outside a GPU worker, per thread and device.  Destroyed
 * when the thread ends; a failure then has no one to report to. */
struct InlineHandles {
  cublasHandle_t h[MXR_MAX_DEVICES] = {};
  ~InlineHandles() {
    for (cublasHandle_t x : h)
      if (x) (void)mxr__cublas()->destroy(x); /* x exists: cuBLAS was loaded */
  }
};

thread_local InlineHandles inline_handles;

int inline_blas(int dev_id, void **handle) {
  if (dev_id < 0 || dev_id >= MXR_MAX_DEVICES)
    return mxr_set_error(MXR_EINVAL, "cuBLAS: no such device gpu(%d)", dev_id);
  MXR_CUDA_CALL(cudaSetDevice(dev_id));
  cublasHandle_t &h = inline_handles.h[dev_id];
  if (!h) {
    int st = create_blas(nullptr, &h);
    if (st) return st;
  }
  *handle = h;
  return 0;
}

}  // namespace

extern "C" const struct mxr_device_driver *mxr__cuda_driver(void) { return &cuda_driver; }

extern "C" bool mxr__gpu_tf32_allowed(void) {
  const struct mxr_config *c = mxr_config_get();
  return c->cuda_allow_tensor_core && c->cuda_tensor_op_math_allow_conversion;
}

extern "C" int mxr__cuda_blas_handle(const struct mxr_run_ctx *run, void **handle) {
  WorkerStreams *w = run ? static_cast<WorkerStreams *>(run->driver_data) : nullptr;
  if (!w) {
    int dev = 0;
    if (run) {
      dev = run->ctx.dev_id;
    } else {
      MXR_CUDA_CALL(cudaGetDevice(&dev));
    }
    return inline_blas(dev, handle);
  }
  if (!w->blas) {
    int st = create_blas(w->main, &w->blas);
    if (st) return st;
  }
  *handle = w->blas;
  return 0;
}
