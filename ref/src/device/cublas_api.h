/*
 * Internal: cuBLAS, loaded when first needed (cublas_api.cu).
 *
 * libcublas is large (loading it takes 70-140 ms), and most processes that
 * load libmxref never run a matrix product on a GPU: the conformance
 * suites start hundreds of them, CPU users all of them.  So libmxref does
 * not link cuBLAS; the first GPU product dlopens the libcublas of the
 * toolkit it was built with and resolves the few functions it calls.  The
 * types and prototypes still come from cublas_v2.h.  Include only from .cu
 * files.
 */
#ifndef MXR_DEVICE_CUBLAS_API_H
#define MXR_DEVICE_CUBLAS_API_H

#include <cublas_v2.h>

struct MxrCublas {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasDestroy_v2) destroy;
  decltype(&cublasSetStream_v2) set_stream;
  decltype(&cublasGetStream_v2) get_stream;
  decltype(&cublasSetMathMode) set_math_mode;
  decltype(&cublasSetWorkspace_v2) set_workspace;
  decltype(&cublasSgemm_v2) sgemm;
  decltype(&cublasDgemm_v2) dgemm;
  decltype(&cublasGetStatusName) status_name;
  decltype(&cublasGetStatusString) status_string;
};

/* The functions, loaded once (thread-safe); NULL with the last error set,
 * naming the library and dlerror's text, when it cannot be loaded. */
const MxrCublas *mxr__cublas(void);

#endif /* MXR_DEVICE_CUBLAS_API_H */
