/* Loading cuBLAS on first use (cublas_api.h). */
#include "config.h"

#include <cstdio>
#include <mutex>

#include <dlfcn.h>

#include "device/cublas_api.h"
#include "mxref/error.h"

namespace {

#define MXR_STR2(x) #x
#define MXR_STR(x) MXR_STR2(x)
/* The soname of the toolkit we were built with: looked up as the dynamic
 * linker does (LD_LIBRARY_PATH, the ld.so cache), then in the toolkit's
 * library directory that configure found. */
constexpr const char *kLibrary = "libcublas.so." MXR_STR(CUBLAS_VER_MAJOR);
constexpr const char *kLibraryInToolkit = MXR_CUDA_LIBDIR "/libcublas.so." MXR_STR(CUBLAS_VER_MAJOR);

MxrCublas api;
bool loaded;
char failure[512];

template <typename F>
bool resolve(void *lib, const char *name, F *out) {
  void *sym = dlsym(lib, name);
  if (!sym) {
    std::snprintf(failure, sizeof failure, "cuBLAS: %s has no %s", kLibrary, name);
    return false;
  }
  *out = reinterpret_cast<F>(sym);
  return true;
}

void load() {
  void *lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen(kLibraryInToolkit, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    std::snprintf(failure, sizeof failure, "cuBLAS could not be loaded (%s, nor %s): %s", kLibrary,
                  kLibraryInToolkit, why ? why : "unknown error");
    return;
  }
  /* The _v2 names are what cublas_v2.h's macros call. */
  loaded = resolve(lib, "cublasCreate_v2", &api.create) &&
           resolve(lib, "cublasDestroy_v2", &api.destroy) &&
           resolve(lib, "cublasSetStream_v2", &api.set_stream) &&
           resolve(lib, "cublasGetStream_v2", &api.get_stream) &&
           resolve(lib, "cublasSetMathMode", &api.set_math_mode) &&
           resolve(lib, "cublasSgemm_v2", &api.sgemm) &&
           resolve(lib, "cublasDgemm_v2", &api.dgemm) &&
           resolve(lib, "cublasGetStatusName", &api.status_name) &&
           resolve(lib, "cublasGetStatusString", &api.status_string);
  /* The library stays loaded for the life of the process. */
}

std::once_flag once;

}  // namespace

const MxrCublas *mxr__cublas(void) {
  std::call_once(once, load);
  if (loaded) return &api;
  mxr_set_error(MXR_ECUDA, "%s", failure);
  return nullptr;
}
