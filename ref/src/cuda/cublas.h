/*
 * Internal: cuBLAS, loaded when first needed (cublas.cu).
 *
 * libcublas is large (loading it takes 70-140 ms), and most processes that
 * load libmxref never run a matrix product on a GPU: the conformance
 * suites start hundreds of them, CPU users all of them.  So libmxref does
 * not link cuBLAS; the first GPU product dlopens the libcublas of the
 * toolkit it was built with and resolves the few functions it calls.  The
 * types and prototypes still come from cublas_v2.h.  Include only from .cu
 * files.
 */
#ifndef MXR_CUDA_CUBLAS_H
#define MXR_CUDA_CUBLAS_H

#include <cublas_v2.h>

#include "cuda/dl_library.h"

/* The functions libmxref calls, each as X(member, symbol): the member of
 * struct MxrCublas and the symbol it is resolved from (its type is the
 * symbol's, from cublas_v2.h).  The _v2 names are what cublas_v2.h's
 * macros call. */
#define MXR_CUBLAS_FUNCTIONS(X)                \
  X(create, cublasCreate_v2)                   \
  X(destroy, cublasDestroy_v2)                 \
  X(set_stream, cublasSetStream_v2)            \
  X(get_stream, cublasGetStream_v2)            \
  X(set_math_mode, cublasSetMathMode)          \
  X(set_workspace, cublasSetWorkspace_v2)      \
  X(sgemm, cublasSgemm_v2)                     \
  X(dgemm, cublasDgemm_v2)                     \
  X(status_name, cublasGetStatusName)          \
  X(status_string, cublasGetStatusString)

struct MxrCublas {
  MXR_CUBLAS_FUNCTIONS(MXR_DL_MEMBER)
};

/* The functions, loaded once (thread-safe); NULL with the last error set,
 * naming the library and dlerror's text, when it cannot be loaded. */
const MxrCublas *mxr__cublas(void);

#endif /* MXR_CUDA_CUBLAS_H */
