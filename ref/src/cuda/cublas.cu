/* Loading cuBLAS on first use (cublas.h). */
#include "config.h"

#include "cuda/cublas.h"
#include "cuda/dl_library.h"

namespace {

bool load(mxr_dl::Library &lib, MxrCublas &api) {
  return lib.open() && MXR_CUBLAS_FUNCTIONS(MXR_DL_RESOLVE) true;
}

mxr_dl::Loaded<MxrCublas> cublas("cuBLAS", "libcublas.so." MXR_DL_STR(CUBLAS_VER_MAJOR), load);

}  // namespace

const MxrCublas *mxr__cublas(void) { return cublas.get(); }
