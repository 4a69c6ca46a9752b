/* Loading cuBLAS on first use (cublas.h). */
#include "config.h"

#include <mutex>

#include "cuda/cublas.h"
#include "cuda/dl_library.h"
#include "mxref/error.h"

namespace {

mxr_dl::Library lib("cuBLAS", "libcublas.so." MXR_DL_STR(CUBLAS_VER_MAJOR));
MxrCublas api;
bool loaded;

void load() { loaded = lib.open() && MXR_CUBLAS_FUNCTIONS(MXR_DL_RESOLVE) true; }

std::once_flag once;

}  // namespace

const MxrCublas *mxr__cublas(void) {
  std::call_once(once, load);
  if (loaded) return &api;
  mxr_set_error(MXR_ECUDA, "%s", lib.failure);
  return nullptr;
}
