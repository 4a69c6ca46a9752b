/* Loading cuDNN on first use (cudnn.h).  Empty without cuDNN. */
#include "config.h"

#ifdef MXR_HAVE_CUDNN

#include <cstddef>

#include "cuda/cudnn.h"
#include "cuda/dl_library.h"

namespace {

/* A library of another major version would have another soname; this
 * catches a wrongly named or replaced file. */
bool version_matches(mxr_dl::Library &lib, const MxrCudnn &api) {
  size_t v = api.get_version();
  size_t major = v >= 10000 ? v / 10000 : v / 1000; /* 9.x: 90000 + ...; 8.x: 8000 + ... */
  if (major == CUDNN_MAJOR) return true;
  lib.fail("cuDNN: %s reports version %zu, but libmxref was built against cuDNN %d", lib.soname(),
           v, CUDNN_MAJOR);
  return false;
}

bool load(mxr_dl::Library &lib, MxrCudnn &api) {
  return lib.open() && MXR_CUDNN_HANDLE_FUNCTIONS(MXR_DL_RESOLVE) version_matches(lib, api) &&
         MXR_CUDNN_FUNCTIONS(MXR_DL_RESOLVE) true;
}

mxr_dl::Loaded<MxrCudnn> cudnn("cuDNN", "libcudnn.so." MXR_DL_STR(CUDNN_MAJOR), load);

}  // namespace

const MxrCudnn *mxr__cudnn(void) { return cudnn.get(); }

#endif /* MXR_HAVE_CUDNN */
