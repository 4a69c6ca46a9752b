/*
 * Internal: the GPU Convolution without cuDNN (op/cuda/convolution_gemm.cu; C
 * linkage): im2col and col2im kernels around cuBLAS products, the CPU
 * kernel's method (op/convolution.c) step for step.  Called by the GPU
 * forwards in op/convolution.c, after they validated exactly as the CPU
 * forwards do, when the op has cudnn_off=True or the build has no cuDNN
 * (otherwise they call convolution.h's cuDNN launchers).  The terms of launch.h
 * hold: device pointers; work queued on the stream of `run`'s worker (its
 * cuBLAS handle's stream; run NULL or without a worker: the legacy default
 * stream, waited for before returning); req is enum mxr_req; 0 or a
 * negative status with the last error set.  The column buffers come from
 * the worker's device scratch (mxr__cuda_scratch), asked for once per call;
 * nothing else is allocated and nothing waits, so a CUDA graph may capture
 * the calls.
 *
 * The convolution is convolution.h's struct mxr__gpu_conv (its tune and
 * workspace_limit, cuDNN's, are not used).  float32 and float64; float32
 * products are full FP32 unless TF32 is allowed (mxr__gpu_tf32_allowed),
 * as for every cuBLAS product.
 */
#ifndef MXR_OP_CUDA_CONVOLUTION_GEMM_H
#define MXR_OP_CUDA_CONVOLUTION_GEMM_H

#include "op/cuda/convolution.h"

#ifdef __cplusplus
extern "C" {
#endif

/* y = conv(x, w) (+ b when b is not NULL), as req says: x (n, c, in...),
 * w (f, c/groups, k...), b (f), y (n, f, out...). */
int mxr__gpu_conv_gemm_forward(const struct mxr_run_ctx *run, const struct mxr__gpu_conv *cv,
                               const void *x, const void *w, const void *b, void *y, int req);

/* The gradients of x, w and b (db NULL: no bias) from dy, each as its req
 * says. */
int mxr__gpu_conv_gemm_backward(const struct mxr_run_ctx *run, const struct mxr__gpu_conv *cv,
                                const void *dy, const void *x, const void *w, void *dx,
                                int req_dx, void *dw, int req_dw, void *db, int req_db);

#ifdef __cplusplus
}
#endif
#endif /* MXR_OP_CUDA_CONVOLUTION_GEMM_H */
