/* Loading cuBLAS on first use (cublas_api.h). */
#include "config.h"

#include <mutex>

#include "device/cublas_api.h"
#include "device/dl_library.h"
#include "mxref/error.h"

namespace {

mxr_dl::Library lib("cuBLAS", "libcublas.so." MXR_DL_STR(CUBLAS_VER_MAJOR));
MxrCublas api;
bool loaded;

void load() {
  /* The _v2 names are what cublas_v2.h's macros call. */
  loaded = lib.open() && lib.resolve("cublasCreate_v2", &api.create) &&
           lib.resolve("cublasDestroy_v2", &api.destroy) &&
           lib.resolve("cublasSetStream_v2", &api.set_stream) &&
           lib.resolve("cublasGetStream_v2", &api.get_stream) &&
           lib.resolve("cublasSetMathMode", &api.set_math_mode) &&
           lib.resolve("cublasSetWorkspace_v2", &api.set_workspace) &&
           lib.resolve("cublasSgemm_v2", &api.sgemm) && lib.resolve("cublasDgemm_v2", &api.dgemm) &&
           lib.resolve("cublasGetStatusName", &api.status_name) &&
           lib.resolve("cublasGetStatusString", &api.status_string);
}

std::once_flag once;

}  // namespace

const MxrCublas *mxr__cublas(void) {
  std::call_once(once, load);
  if (loaded) return &api;
  mxr_set_error(MXR_ECUDA, "%s", lib.failure);
  return nullptr;
}
