/*
 * Internal: the one way cuBLAS calls are checked (the cuBLAS counterpart of
 * cuda_check.h).  MXR_CUBLAS_CALL, in a function returning an mxr status,
 * returns MXR_ECUDA after setting a last error that names the call, the
 * file, the line and cuBLAS's own description of the status.
 *
 * Include only from .cu files built with the CUDA toolkit.
 */
#ifndef MXR_DEVICE_CUBLAS_CHECK_H
#define MXR_DEVICE_CUBLAS_CHECK_H

#include <cublas_v2.h>

#include "device/cublas_api.h"
#include "mxref/error.h"

/* `call` is made through the loaded API (cublas_api.h), e.g.
 * MXR_CUBLAS_CALL(b->create(&h)), so a failure names it that way. */
static inline cublasStatus_t mxr__cublas_check(cublasStatus_t st, const char *call, const char *file,
                                               int line) {
  if (st != CUBLAS_STATUS_SUCCESS) {
    const MxrCublas *b = mxr__cublas(); /* loaded: st came from it */
    mxr_set_error(MXR_ECUDA, "cuBLAS call %s failed at %s:%d: %s (%s)", call, file, line,
                  b ? b->status_string(st) : "?", b ? b->status_name(st) : "?");
  }
  return st;
}

#define MXR_CUBLAS_CHECK(call) mxr__cublas_check((call), #call, __FILE__, __LINE__)

#define MXR_CUBLAS_CALL(call)                                                  \
  do {                                                                         \
    if (MXR_CUBLAS_CHECK(call) != CUBLAS_STATUS_SUCCESS) return MXR_ECUDA;     \
  } while (0)

#endif /* MXR_DEVICE_CUBLAS_CHECK_H */
