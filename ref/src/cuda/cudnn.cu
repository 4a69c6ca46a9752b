/* Loading cuDNN on first use (cudnn.h).  Empty without cuDNN. */
#include "config.h"

#ifdef MXR_HAVE_CUDNN

#include <mutex>

#include "cuda/cudnn.h"
#include "cuda/dl_library.h"
#include "mxref/error.h"

namespace {

mxr_dl::Library lib("cuDNN", "libcudnn.so." MXR_DL_STR(CUDNN_MAJOR));
MxrCudnn api;
bool loaded;

/* A library of another major version would have another soname; this
 * catches a wrongly named or replaced file. */
bool version_matches() {
  size_t v = api.get_version();
  size_t major = v >= 10000 ? v / 10000 : v / 1000; /* 9.x: 90000 + ...; 8.x: 8000 + ... */
  if (major == CUDNN_MAJOR) return true;
  lib.fail("cuDNN: %s reports version %zu, but libmxref was built against cuDNN %d", lib.soname(),
           v, CUDNN_MAJOR);
  return false;
}

void load() {
  loaded = lib.open() && MXR_CUDNN_HANDLE_FUNCTIONS(MXR_DL_RESOLVE) version_matches() &&
           MXR_CUDNN_FUNCTIONS(MXR_DL_RESOLVE) true;
}

std::once_flag once;

}  // namespace

const MxrCudnn *mxr__cudnn(void) {
  std::call_once(once, load);
  if (loaded) return &api;
  mxr_set_error(MXR_ECUDA, "%s", lib.failure);
  return nullptr;
}

#endif /* MXR_HAVE_CUDNN */
