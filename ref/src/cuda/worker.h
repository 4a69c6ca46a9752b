/*
 * Internal: what the launcher of a GPU op may ask of the engine worker it
 * runs on.  Defined in cuda/driver.cu with C linkage (the worker's state is
 * the driver's); names are mxr__* and stay out of the exported symbols.
 */
#ifndef MXR_CUDA_WORKER_H
#define MXR_CUDA_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mxr_run_ctx;

/* The cuBLAS handle (a cublasHandle_t) for work queued from `run`: a GPU
 * worker's own, bound to its main stream and created on its first use; for
 * a run without driver state (an op run inline by NaiveEngine, or a direct
 * call with run NULL) one per thread and device, bound to the legacy
 * default stream, made current.  Its math mode follows
 * mxr__gpu_tf32_allowed().  Returns 0 or MXR_ECUDA with the last error set. */
int mxr__cuda_blas_handle(const struct mxr_run_ctx *run, void **handle);

/* The cuDNN handle (a cudnnHandle_t) for work queued from `run`, on the
 * same terms as mxr__cuda_blas_handle: a GPU worker's own, bound to its main
 * stream, created on its first use and destroyed when the worker stops;
 * otherwise one per thread and device on the legacy default stream, made
 * current.  cuDNN itself is loaded on the first call (cuda/cudnn.h).
 * Returns 0 or MXR_ECUDA with the last error set.  Defined only in builds
 * with cuDNN (MXR_HAVE_CUDNN). */
int mxr__cuda_dnn_handle(const struct mxr_run_ctx *run, void **handle);

/* Device scratch memory for the op running on `run` (MXNet's temp space:
 * cuDNN workspaces and small temporaries): at least `bytes` bytes on the
 * run's device, aligned as cudaMalloc aligns (the storage pool hands out
 * whole blocks).  A GPU worker owns one buffer, kept from op to op and
 * replaced by a larger one (at least twice as large, in 1 MiB steps) when
 * an op asks for more; outgrown buffers stay allocated until the worker
 * stops, because work queued earlier, and CUDA graphs captured earlier
 * (cuda/graph.h), may still use them.  Runs outside a worker get
 * the same per thread and device, freed at thread exit.  The memory comes
 * from the device's storage pool (mxref/storage.h).  Work queued on the
 * run's stream may use the buffer until the op ends; the next op on that
 * stream is ordered after it and may reuse it, so an op asks once, for
 * everything it needs, and carves it.  bytes 0 gives NULL or the current
 * buffer.  Returns 0, or MXR_ENOMEM / MXR_ECUDA with the last error set. */
int mxr__cuda_scratch(const struct mxr_run_ctx *run, size_t bytes, void **ptr);

/* Errors in the data that a kernel finds (a softmax length outside its
 * row) cannot fail the op from the device.  A kernel records the first one
 * in the run's error slot instead: it claims `code` with atomicCAS from 0,
 * then fills in the numbers.  Once the work is done -- in the engine
 * driver's op_finish, after the op's one stream wait, or in the launcher
 * for a direct call -- mxr__cuda_error_take() turns it into the op's error.
 * The slot is pinned host memory mapped into the device, so a captured CUDA
 * graph writes the same slot when replayed. */
enum mxr_device_error_code {
  MXR_DEVERR_NONE = 0,
  MXR_DEVERR_SOFTMAX_LENGTH = 1, /* value: the length, position: its row, limit: m */
};
struct mxr_device_error {
  int code;
  long long value, position, limit;
};

/* The error slot of `run` (NULL: the calling thread's, for direct calls) as
 * the device sees it; NULL when none could be made (kernels then only leave
 * the bad rows as NaN). */
struct mxr_device_error *mxr__cuda_error_slot(const struct mxr_run_ctx *run);

/* After the work that may have written run's slot has finished: 0, or the
 * recorded error as MXR_EINVAL with its message (the slot is cleared). */
int mxr__cuda_error_take(const struct mxr_run_ctx *run);

/* A number naming the GPU worker state of `run` for the life of the
 * process (never reused, unlike the state's address once a worker stops);
 * 0 for a run without one. */
uint64_t mxr__cuda_worker_serial(const struct mxr_run_ctx *run);

/* Whether float32 matrix products (cuBLAS) and convolutions (cuDNN) may run
 * as TF32 on Tensor Cores: only when
 * MXNET_CUDA_ALLOW_TENSOR_CORE and MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION
 * are both set.  The second is off by default, so float32 stays full FP32
 * unless the user asks. */
bool mxr__gpu_tf32_allowed(void);

#ifdef __cplusplus
}
#endif
#endif /* MXR_CUDA_WORKER_H */
