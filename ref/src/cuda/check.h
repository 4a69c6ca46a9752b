/*
 * Internal: the one way calls into CUDA, cuBLAS and cuDNN are checked.
 *
 * MXR_GPU_CHECK_GEN is the check: it evaluates a library call once and,
 * when its status is not the library's success value, sets a last error
 * (MXR_ECUDA) that names the library, the call, the file and the line and
 * gives the library's own description of the status, so a bug report
 * points at the statement that failed.  It evaluates to the status.
 * MXR_GPU_CALL_GEN, in a function returning an mxr status, returns
 * MXR_ECUDA when the check fails.  Each library specialises both in one
 * line, with the function that describes its status:
 *
 *   MXR_CUDA_CHECK(call)    MXR_CUDA_CALL(call)     CUDA runtime
 *   MXR_CUBLAS_CHECK(call)  MXR_CUBLAS_CALL(call)   cuBLAS (cuda/cublas.h)
 *   MXR_CUDNN_CHECK(call)   MXR_CUDNN_CALL(call)    cuDNN (cuda/cudnn.h)
 *
 * The _CHECK form is for callers that need the status (to tell "no GPU"
 * from a fault, or a cleanup path that reports and goes on).  cuBLAS and
 * cuDNN calls are made through the loaded API, e.g.
 * MXR_CUBLAS_CALL(b->create(&h)), so a failure names them that way.
 *
 * Include only from .cu files, after config.h (the cuDNN checks exist only
 * with MXR_HAVE_CUDNN).
 */
#ifndef MXR_CUDA_CHECK_H
#define MXR_CUDA_CHECK_H

#include <cstddef>
#include <cstdio>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "cuda/cublas.h"
#include "mxref/error.h"
#ifdef MXR_HAVE_CUDNN
#include <cudnn.h>

#include "cuda/cudnn.h"
#endif

/* The generic check: `st` is the status of `call` (its text) made at
 * file:line; `describe` writes the library's description of a failed
 * status into buf[0..len).  Returns st. */
template <typename Status>
inline Status mxr__gpu_check(Status st, Status success, const char *lib, const char *call,
                             const char *file, int line,
                             void (*describe)(Status, char *, size_t)) {
  if (st != success) {
    char what[256];
    describe(st, what, sizeof what);
    mxr_set_error(MXR_ECUDA, "%s call %s failed at %s:%d: %s", lib, call, file, line, what);
  }
  return st;
}

/* `text` is the call as written (#call in the library's macro, so that a
 * macro inside the call is named as the caller wrote it). */
#define MXR_GPU_CHECK_GEN(call, text, success, lib, describe) \
  mxr__gpu_check((call), (success), lib, text, __FILE__, __LINE__, describe)

#define MXR_GPU_CALL_GEN(call, text, success, lib, describe)                                \
  do {                                                                                     \
    if (MXR_GPU_CHECK_GEN(call, text, success, lib, describe) != (success)) return MXR_ECUDA; \
  } while (0)

/* CUDA: the error's text and name.  The runtime also keeps a non-sticky
 * error as its per-thread "last error"; it is reset here, so that a later
 * cudaGetLastError() after a kernel launch reports that launch rather than
 * this call (its return value is the error being described). */
inline void mxr__cuda_describe(cudaError_t err, char *buf, size_t len) {
  std::snprintf(buf, len, "%s (%s)", cudaGetErrorString(err), cudaGetErrorName(err));
  (void)cudaGetLastError();
}

/* cuBLAS: the status's text and name, from the loaded library (a failed
 * status came from it). */
inline void mxr__cublas_describe(cublasStatus_t st, char *buf, size_t len) {
  const MxrCublas *b = mxr__cublas();
  std::snprintf(buf, len, "%s (%s)", b ? b->status_string(st) : "?", b ? b->status_name(st) : "?");
}

#define MXR_CUDA_CHECK(call) MXR_GPU_CHECK_GEN(call, #call, cudaSuccess, "CUDA", mxr__cuda_describe)
#define MXR_CUDA_CALL(call) MXR_GPU_CALL_GEN(call, #call, cudaSuccess, "CUDA", mxr__cuda_describe)

#define MXR_CUBLAS_CHECK(call) \
  MXR_GPU_CHECK_GEN(call, #call, CUBLAS_STATUS_SUCCESS, "cuBLAS", mxr__cublas_describe)
#define MXR_CUBLAS_CALL(call) \
  MXR_GPU_CALL_GEN(call, #call, CUBLAS_STATUS_SUCCESS, "cuBLAS", mxr__cublas_describe)

#ifdef MXR_HAVE_CUDNN
/* cuDNN: the status's text, from the loaded library, and its number. */
inline void mxr__cudnn_describe(cudnnStatus_t st, char *buf, size_t len) {
  const MxrCudnn *dnn = mxr__cudnn();
  std::snprintf(buf, len, "%s (status %d)", dnn ? dnn->error_string(st) : "?", (int)st);
}

#define MXR_CUDNN_CHECK(call) \
  MXR_GPU_CHECK_GEN(call, #call, CUDNN_STATUS_SUCCESS, "cuDNN", mxr__cudnn_describe)
#define MXR_CUDNN_CALL(call) \
  MXR_GPU_CALL_GEN(call, #call, CUDNN_STATUS_SUCCESS, "cuDNN", mxr__cudnn_describe)
#endif

#endif /* MXR_CUDA_CHECK_H */
