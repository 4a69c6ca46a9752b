/*
 * The engine's GPU driver over the CUDA runtime (struct mxr_device_driver in
 * mxref/engine.h; mxr_gpu_driver() in device/device.c hands it out).  Host
 * code only.
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
 *
 * A worker also owns what its ops' launchers ask for through cuda/worker.h,
 * each made on first use and released when the worker stops: a cuBLAS
 * handle and a cuDNN handle bound to its main stream, and a device scratch
 * buffer (cuDNN workspaces) that grows to the largest request.  Ops run
 * outside a worker get the same per thread and device.
 */
#include "config.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#ifdef MXR_HAVE_CUDNN
#include <cudnn.h>
#endif

#include "cuda/check.h"
#include "cuda/device.h"
#include "cuda/worker.h"
#include "mxref/config.h"
#include "mxref/device.h"
#include "mxref/engine.h"
#include "mxref/storage.h"

namespace {

/* Scratch buffers grow in steps of this at least, and at least double, so
 * that slowly growing requests do not reallocate every time. */
constexpr size_t kScratchStep = size_t{1} << 20;
constexpr int kMaxOutgrown = 16; /* 1 MiB doubled 16 times: 64 GiB */

/* A device scratch buffer (mxr__cuda_scratch).  An outgrown buffer is kept,
 * not freed, while its owner lives: a CUDA graph captured from a segment
 * (cuda/graph.h) replays the pointers its ops were given, so they
 * must stay valid; and work queued earlier may still use it, so keeping it
 * also spares growth a wait.  As growth at least doubles, what is kept is
 * smaller than the current buffer.  Zero is an empty scratch. */
struct Scratch {
  struct mxr_storage cur;
  struct mxr_storage outgrown[kMaxOutgrown];
  int noutgrown;
};

void free_scratch(Scratch *s) {
  mxr_storage_free(&s->cur);
  for (int i = 0; i < s->noutgrown; i++) mxr_storage_free(&s->outgrown[i]);
  s->noutgrown = 0;
}

/* A device error slot (mxr__cuda_error_slot): mapped pinned host memory,
 * portable across devices; both null when there is none. */
struct ErrorSlot {
  mxr_device_error *host;
  mxr_device_error *dev;
};

int make_error_slot(ErrorSlot *e) {
  void *host = nullptr, *dev = nullptr;
  MXR_CUDA_CALL(cudaHostAlloc(&host, sizeof(mxr_device_error),
                              cudaHostAllocMapped | cudaHostAllocPortable));
  std::memset(host, 0, sizeof(mxr_device_error));
  if (MXR_CUDA_CHECK(cudaHostGetDevicePointer(&dev, host, 0)) != cudaSuccess) {
    (void)MXR_CUDA_CHECK(cudaFreeHost(host));
    return MXR_ECUDA;
  }
  e->host = static_cast<mxr_device_error *>(host);
  e->dev = static_cast<mxr_device_error *>(dev);
  return 0;
}

void free_error_slot(ErrorSlot *e) {
  if (e->host) (void)MXR_CUDA_CHECK(cudaFreeHost(e->host));
  *e = ErrorSlot{};
}

/* The slot's error, if any, as the op's; cleared.  The work that wrote it
 * has finished (the caller waited), so plain reads see its writes. */
int take_error(ErrorSlot *e) {
  volatile mxr_device_error *h = e->host;
  if (!h || h->code == MXR_DEVERR_NONE) return 0;
  const int code = h->code;
  const long long value = h->value, position = h->position, limit = h->limit;
  h->code = MXR_DEVERR_NONE;
  if (code == MXR_DEVERR_SOFTMAX_LENGTH)
    return mxr_set_error(MXR_EINVAL, "softmax: length %lld at position %lld is outside [0, %lld]",
                         value, position, limit);
  return mxr_set_error(MXR_EINVAL, "a GPU kernel reported error code %d", code);
}

/* What a worker owns: rctx->stream and aux_stream are its streams (ops use
 * them as cudaStream_t), rctx->driver_data the whole struct. */
struct WorkerStreams {
  cudaStream_t main;
  cudaStream_t aux;
  cudaEvent_t aux_done; /* recorded on aux, waited for on main */
  cublasHandle_t blas;  /* on main; created by the first op that needs it */
  struct mxr_storage blas_ws; /* blas's workspace (blas_workspace) */
#ifdef MXR_HAVE_CUDNN
  cudnnHandle_t dnn;    /* likewise */
#endif
  Scratch scratch;      /* mxr__cuda_scratch's; empty until asked */
  uint64_t serial;      /* mxr__cuda_worker_serial's */
  ErrorSlot err;        /* mxr__cuda_error_slot's */
};

std::atomic<uint64_t> last_worker_serial{0};

int device_count(void *) { return mxr_gpu_count(); }

void destroy_streams(WorkerStreams *w) {
  /* Everything queued has finished: the engine stops a pool only after its
   * ops completed, and each op waited for its streams in op_finish. */
  if (w->blas) (void)MXR_CUBLAS_CHECK(mxr__cublas()->destroy(w->blas));
  mxr_storage_free(&w->blas_ws);
#ifdef MXR_HAVE_CUDNN
  if (w->dnn) (void)MXR_CUDNN_CHECK(mxr__cudnn()->destroy(w->dnn));
#endif
  free_scratch(&w->scratch);
  free_error_slot(&w->err);
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
  /* calloc: the members are plain handles and empty storage handles, and
   * zero is "none". */
  WorkerStreams *w = static_cast<WorkerStreams *>(std::calloc(1, sizeof(WorkerStreams)));
  if (!w) return mxr_set_error(MXR_ENOMEM, "GPU worker for gpu(%d): out of host memory", ctx.dev_id);
  int st = create_streams(kind == MXR_POOL_GPU_COPY ? 1 : nstreams, w);
  if (!st) st = make_error_slot(&w->err);
  if (st) {
    destroy_streams(w);
    return st;
  }
  w->serial = last_worker_serial.fetch_add(1, std::memory_order_relaxed) + 1;
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
  return take_error(&w->err);
}

/* A naive-engine op runs on whichever thread pushed it: make its device
 * current there (a worker set its device once, at start). */
int op_start(void *, struct mxr_run_ctx *rctx) {
  MXR_CUDA_CALL(cudaSetDevice(rctx->ctx.dev_id));
  return 0;
}

const struct mxr_device_driver cuda_driver = {
    nullptr, device_count, worker_start, worker_stop, op_finish, op_start,
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

/* Give a worker's cuBLAS handle a workspace of its own, as cuBLAS asks of
 * work that CUDA graphs may capture: without one, cuBLAS takes its default
 * workspace from a pool it may grow with cudaMalloc, which a capture
 * forbids.  The size is cuBLAS's recommendation: 32 MiB on Hopper and
 * later, 4 MiB before. */
int blas_workspace(int dev, cublasHandle_t h, struct mxr_storage *ws) {
  int major = 0;
  MXR_CUDA_CALL(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  const size_t bytes = (major >= 9 ? 32 : 4) * (size_t{1} << 20);
  int st = mxr_storage_alloc(mxr_gpu(dev), bytes, ws);
  if (st) return st;
  MXR_CUBLAS_CALL(mxr__cublas()->set_workspace(h, ws->dptr, bytes));
  return 0;
}

/* Handles of ops run outside a GPU worker, per thread and device.  Destroyed
 * when the thread ends; a failure then has no one to report to. */
struct InlineHandles {
  cublasHandle_t h[MXR_MAX_DEVICES] = {};
#ifdef MXR_HAVE_CUDNN
  cudnnHandle_t dnn[MXR_MAX_DEVICES] = {};
#endif
  Scratch scratch[MXR_MAX_DEVICES] = {};
  ErrorSlot err = {}; /* portable: one for every device */
  ~InlineHandles() {
    for (cublasHandle_t x : h)
      if (x) (void)mxr__cublas()->destroy(x); /* x exists: cuBLAS was loaded */
#ifdef MXR_HAVE_CUDNN
    for (cudnnHandle_t x : dnn)
      if (x) (void)mxr__cudnn()->destroy(x); /* likewise */
#endif
    for (Scratch &s : scratch) free_scratch(&s);
    free_error_slot(&err);
  }
};

thread_local InlineHandles inline_handles;

/* The worker state of `run`; NULL for a run without a worker (an op run
 * inline by NaiveEngine, or a direct call with run NULL). */
WorkerStreams *worker_of(const struct mxr_run_ctx *run) {
  return run ? static_cast<WorkerStreams *>(run->driver_data) : nullptr;
}

/* Checks dev_id and makes it current for the inline handles. */
int inline_device(const char *what, int dev_id) {
  if (dev_id < 0 || dev_id >= MXR_MAX_DEVICES)
    return mxr_set_error(MXR_EINVAL, "%s: no such device gpu(%d)", what, dev_id);
  MXR_CUDA_CALL(cudaSetDevice(dev_id));
  return 0;
}

/* The device of a run without a worker (the run's, or the current one),
 * checked and made current for the inline handles. */
int inline_device_of(const char *what, const struct mxr_run_ctx *run, int *dev) {
  *dev = 0;
  if (run) {
    *dev = run->ctx.dev_id;
  } else {
    MXR_CUDA_CALL(cudaGetDevice(dev));
  }
  return inline_device(what, *dev);
}

#ifdef MXR_HAVE_CUDNN
/* A cuDNN handle on `stream` (NULL: the legacy default stream) for the
 * current device.  Convolutions choose their math type per descriptor
 * (op/cuda/convolution.cu), so the handle has no mode. */
int create_dnn(cudaStream_t stream, cudnnHandle_t *out) {
  const MxrCudnn *dnn = mxr__cudnn();
  if (!dnn) return MXR_ECUDA;
  cudnnHandle_t h;
  MXR_CUDNN_CALL(dnn->create(&h));
  if (MXR_CUDNN_CHECK(dnn->set_stream(h, stream)) != CUDNN_STATUS_SUCCESS) {
    (void)dnn->destroy(h);
    return MXR_ECUDA;
  }
  *out = h;
  return 0;
}
#endif

/* Make `s` (on gpu(dev), used by work queued on `stream`) at least `bytes`
 * long; see Scratch. */
int grow_scratch(int dev, cudaStream_t stream, size_t bytes, Scratch *s) {
  const size_t have = s->cur.size;
  if (bytes <= have) return 0;
  size_t want = (bytes + kScratchStep - 1) / kScratchStep * kScratchStep;
  if (want < bytes) want = bytes; /* rounding overflowed */
  if (have <= SIZE_MAX / 2 && want < 2 * have) want = 2 * have;
  if (s->noutgrown == kMaxOutgrown) {
    /* Unreachable short of 64 GiB of growth: give the outgrown buffers back
     * once the work queued on them is done (a graph captured with them
     * would then be stale, which is why they are kept otherwise). */
    MXR_CUDA_CALL(cudaStreamSynchronize(stream));
    for (int i = 0; i < s->noutgrown; i++) mxr_storage_free(&s->outgrown[i]);
    s->noutgrown = 0;
  }
  struct mxr_storage next;
  int st = mxr_storage_alloc(mxr_gpu(dev), want, &next);
  if (st) return st;
  if (s->cur.dptr) s->outgrown[s->noutgrown++] = s->cur;
  s->cur = next;
  return 0;
}

/* A GPU worker's new cuBLAS handle gets a workspace of its own; without
 * one the handle is destroyed, and the next op tries again. */
int finish_worker_blas(WorkerStreams *w, int dev) {
  int st = blas_workspace(dev, w->blas, &w->blas_ws);
  if (st) {
    (void)MXR_CUBLAS_CHECK(mxr__cublas()->destroy(w->blas));
    w->blas = nullptr;
    mxr_storage_free(&w->blas_ws);
  }
  return st;
}

/* The handle of library `lib` for work queued from `run`.  A GPU worker's
 * is its `member`, made by `create` on its main stream on first use, then
 * completed by `finish` (when not NULL; a failure there leaves no handle).
 * A run without a worker gets the calling thread's for the run's device:
 * one of `inline_set` (per device), made on the legacy default stream. */
template <typename Handle>
int run_handle(const char *lib, const struct mxr_run_ctx *run, Handle WorkerStreams::*member,
               Handle *inline_set, int (*create)(cudaStream_t, Handle *),
               int (*finish)(WorkerStreams *, int), void **handle) {
  WorkerStreams *w = worker_of(run);
  cudaStream_t stream = nullptr;
  Handle *h;
  if (w) {
    h = &(w->*member);
    stream = w->main;
  } else {
    int dev;
    int st = inline_device_of(lib, run, &dev);
    if (st) return st;
    h = &inline_set[dev];
    finish = nullptr;
  }
  if (!*h) {
    int st = create(stream, h);
    if (!st && finish) st = finish(w, run->ctx.dev_id);
    if (st) return st;
  }
  *handle = *h;
  return 0;
}

}  // namespace

extern "C" const struct mxr_device_driver *mxr__cuda_driver(void) { return &cuda_driver; }

extern "C" struct mxr_device_error *mxr__cuda_error_slot(const struct mxr_run_ctx *run) {
  WorkerStreams *w = worker_of(run);
  if (w) return w->err.dev;
  ErrorSlot &e = inline_handles.err;
  if (!e.host && make_error_slot(&e) != 0) return nullptr; /* reported as NaN only */
  return e.dev;
}

extern "C" int mxr__cuda_error_take(const struct mxr_run_ctx *run) {
  WorkerStreams *w = worker_of(run);
  return take_error(w ? &w->err : &inline_handles.err);
}

extern "C" uint64_t mxr__cuda_worker_serial(const struct mxr_run_ctx *run) {
  const WorkerStreams *w = worker_of(run);
  return w ? w->serial : 0;
}

extern "C" bool mxr__gpu_tf32_allowed(void) {
  const struct mxr_config *c = mxr_config_get();
  return c->cuda_allow_tensor_core && c->cuda_tensor_op_math_allow_conversion;
}

extern "C" int mxr__cuda_blas_handle(const struct mxr_run_ctx *run, void **handle) {
  return run_handle("cuBLAS", run, &WorkerStreams::blas, inline_handles.h, create_blas,
                    finish_worker_blas, handle);
}

#ifdef MXR_HAVE_CUDNN
extern "C" int mxr__cuda_dnn_handle(const struct mxr_run_ctx *run, void **handle) {
  return run_handle("cuDNN", run, &WorkerStreams::dnn, inline_handles.dnn, create_dnn,
                    nullptr, handle);
}
#endif

extern "C" int mxr__cuda_scratch(const struct mxr_run_ctx *run, size_t bytes, void **ptr) {
  *ptr = nullptr;
  WorkerStreams *w = worker_of(run);
  Scratch *buf;
  cudaStream_t stream = nullptr;
  int dev;
  if (w) {
    buf = &w->scratch;
    stream = w->main;
    dev = run->ctx.dev_id;
  } else {
    int st = inline_device_of("device scratch", run, &dev);
    if (st) return st;
    buf = &inline_handles.scratch[dev];
  }
  int st = grow_scratch(dev, stream, bytes, buf);
  if (st) return st;
  *ptr = buf->cur.dptr;
  return 0;
}
