/*
 * Internal: the one way CUDA runtime calls are checked.
 *
 * Every CUDA runtime call in libmxref goes through MXR_CUDA_CHECK (when the
 * caller needs the cudaError_t, e.g. to tell "no GPU" from a fault) or
 * MXR_CUDA_CALL (in functions returning an mxr status).  A failure stores a
 * last-error message that names the call, the file and the line, so a bug
 * report points at the statement that failed.
 *
 * Include only from code built with the CUDA toolkit (.cu files, or C files
 * under #ifdef MXR_HAVE_CUDA); cuda_runtime_api.h is valid C and C++.
 */
#ifndef MXR_DEVICE_CUDA_CHECK_H
#define MXR_DEVICE_CUDA_CHECK_H

#include <cuda_runtime_api.h>

#include "mxref/error.h"

static inline cudaError_t mxr__cuda_check(cudaError_t err, const char *call, const char *file,
                                          int line) {
  if (err != cudaSuccess) {
    mxr_set_error(MXR_ECUDA, "CUDA call %s failed at %s:%d: %s (%s)", call, file, line,
                  cudaGetErrorString(err), cudaGetErrorName(err));
    /* The runtime also keeps a non-sticky error as its per-thread "last
     * error"; reset it, so that a later cudaGetLastError() after a kernel
     * launch reports that launch rather than this call.  Its return value
     * is the error just reported. */
    (void)cudaGetLastError();
  }
  return err;
}

/* Evaluates to the call's cudaError_t; on failure the last error is set. */
#define MXR_CUDA_CHECK(call) mxr__cuda_check((call), #call, __FILE__, __LINE__)

/* In a function returning an mxr status: return MXR_ECUDA on failure. */
#define MXR_CUDA_CALL(call)                                             \
  do {                                                                  \
    if (MXR_CUDA_CHECK(call) != cudaSuccess) return MXR_ECUDA;          \
  } while (0)

#endif /* MXR_DEVICE_CUDA_CHECK_H */
