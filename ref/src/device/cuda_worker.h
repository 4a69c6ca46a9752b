/*
 * Internal: what the launcher of a GPU op may ask of the engine worker it
 * runs on.  Defined in cuda_driver.cu with C linkage (the worker's state is
 * the driver's); names are mxr__* and stay out of the exported symbols.
 */
#ifndef MXR_DEVICE_CUDA_WORKER_H
#define MXR_DEVICE_CUDA_WORKER_H

#include <stdbool.h>

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

/* Whether float32 matrix products may run as TF32 on Tensor Cores: only when
 * MXNET_CUDA_ALLOW_TENSOR_CORE and MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION
 * are both set.  The second is off by default, so float32 stays full FP32
 * unless the user asks. */
bool mxr__gpu_tf32_allowed(void);

#ifdef __cplusplus
}
#endif
#endif /* MXR_DEVICE_CUDA_WORKER_H */
