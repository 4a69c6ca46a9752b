/*
 * Internal: the one way cuDNN calls are checked (the cuDNN counterpart of
 * cuda_check.h and cublas_check.h).  MXR_CUDNN_CALL, in a function
 * returning an mxr status, returns MXR_ECUDA after setting a last error
 * that names the call, the file, the line and cuDNN's description of the
 * status; MXR_CUDNN_CHECK evaluates to the status (for cleanup paths that
 * report and go on).
 *
 * Include only from .cu files, after config.h, under #ifdef MXR_HAVE_CUDNN.
 */
#ifndef MXR_DEVICE_CUDNN_CHECK_H
#define MXR_DEVICE_CUDNN_CHECK_H

#include <cudnn.h>

#include "device/cudnn_api.h"
#include "mxref/error.h"

/* `call` is made through the loaded API (cudnn_api.h), e.g.
 * MXR_CUDNN_CALL(dnn->create(&h)), so a failure names it that way. */
static inline cudnnStatus_t mxr__cudnn_check(cudnnStatus_t st, const char *call, const char *file,
                                             int line) {
  if (st != CUDNN_STATUS_SUCCESS) {
    const MxrCudnn *dnn = mxr__cudnn(); /* loaded: st came from it */
    mxr_set_error(MXR_ECUDA, "cuDNN call %s failed at %s:%d: %s (status %d)", call, file, line,
                  dnn ? dnn->error_string(st) : "?", (int)st);
  }
  return st;
}

#define MXR_CUDNN_CHECK(call) mxr__cudnn_check((call), #call, __FILE__, __LINE__)

#define MXR_CUDNN_CALL(call)                                                  \
  do {                                                                        \
    if (MXR_CUDNN_CHECK(call) != CUDNN_STATUS_SUCCESS) return MXR_ECUDA;      \
  } while (0)

#endif /* MXR_DEVICE_CUDNN_CHECK_H */
