/* Loading cuDNN on first use (cudnn_api.h).  Empty without cuDNN. */
#include "config.h"

#ifdef MXR_HAVE_CUDNN

#include <cstdio>
#include <mutex>

#include <dlfcn.h>

#include "device/cudnn_api.h"
#include "mxref/error.h"

namespace {

#define MXR_STR2(x) #x
#define MXR_STR(x) MXR_STR2(x)
/* The soname of the major version we were built against: looked up as the
 * dynamic linker does (LD_LIBRARY_PATH, the ld.so cache), then in the CUDA
 * toolkit's library directory that configure found. */
constexpr const char *kLibrary = "libcudnn.so." MXR_STR(CUDNN_MAJOR);
constexpr const char *kLibraryInToolkit = MXR_CUDA_LIBDIR "/libcudnn.so." MXR_STR(CUDNN_MAJOR);

MxrCudnn api;
bool loaded;
char failure[512];

template <typename F>
bool resolve(void *lib, const char *name, F *out) {
  void *sym = dlsym(lib, name);
  if (!sym) {
    std::snprintf(failure, sizeof failure, "cuDNN: %s has no %s", kLibrary, name);
    return false;
  }
  *out = reinterpret_cast<F>(sym);
  return true;
}

bool resolve_handles(void *lib) {
  return resolve(lib, "cudnnGetVersion", &api.get_version) &&
         resolve(lib, "cudnnGetErrorString", &api.error_string) &&
         resolve(lib, "cudnnCreate", &api.create) && resolve(lib, "cudnnDestroy", &api.destroy) &&
         resolve(lib, "cudnnSetStream", &api.set_stream);
}

bool resolve_descriptors(void *lib) {
  return resolve(lib, "cudnnCreateTensorDescriptor", &api.create_tensor_desc) &&
         resolve(lib, "cudnnDestroyTensorDescriptor", &api.destroy_tensor_desc) &&
         resolve(lib, "cudnnSetTensorNdDescriptor", &api.set_tensor_nd) &&
         resolve(lib, "cudnnCreateFilterDescriptor", &api.create_filter_desc) &&
         resolve(lib, "cudnnDestroyFilterDescriptor", &api.destroy_filter_desc) &&
         resolve(lib, "cudnnSetFilterNdDescriptor", &api.set_filter_nd) &&
         resolve(lib, "cudnnCreateConvolutionDescriptor", &api.create_conv_desc) &&
         resolve(lib, "cudnnDestroyConvolutionDescriptor", &api.destroy_conv_desc) &&
         resolve(lib, "cudnnSetConvolutionNdDescriptor", &api.set_conv_nd) &&
         resolve(lib, "cudnnSetConvolutionGroupCount", &api.set_conv_groups) &&
         resolve(lib, "cudnnSetConvolutionMathType", &api.set_conv_math) &&
         resolve(lib, "cudnnGetConvolutionNdForwardOutputDim", &api.conv_output_dim) &&
         resolve(lib, "cudnnCreatePoolingDescriptor", &api.create_pool_desc) &&
         resolve(lib, "cudnnDestroyPoolingDescriptor", &api.destroy_pool_desc) &&
         resolve(lib, "cudnnSetPoolingNdDescriptor", &api.set_pool_nd);
}

bool resolve_convolution(void *lib) {
  return resolve(lib, "cudnnGetConvolutionForwardAlgorithmMaxCount", &api.fwd_algo_count) &&
         resolve(lib, "cudnnGetConvolutionForwardAlgorithm_v7", &api.fwd_algo_heuristic) &&
         resolve(lib, "cudnnFindConvolutionForwardAlgorithm", &api.fwd_algo_find) &&
         resolve(lib, "cudnnGetConvolutionForwardWorkspaceSize", &api.fwd_workspace) &&
         resolve(lib, "cudnnConvolutionForward", &api.conv_forward) &&
         resolve(lib, "cudnnGetConvolutionBackwardDataAlgorithmMaxCount", &api.bwd_data_algo_count) &&
         resolve(lib, "cudnnGetConvolutionBackwardDataAlgorithm_v7", &api.bwd_data_algo_heuristic) &&
         resolve(lib, "cudnnFindConvolutionBackwardDataAlgorithm", &api.bwd_data_algo_find) &&
         resolve(lib, "cudnnGetConvolutionBackwardDataWorkspaceSize", &api.bwd_data_workspace) &&
         resolve(lib, "cudnnConvolutionBackwardData", &api.conv_backward_data) &&
         resolve(lib, "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount",
                 &api.bwd_filter_algo_count) &&
         resolve(lib, "cudnnGetConvolutionBackwardFilterAlgorithm_v7",
                 &api.bwd_filter_algo_heuristic) &&
         resolve(lib, "cudnnFindConvolutionBackwardFilterAlgorithm", &api.bwd_filter_algo_find) &&
         resolve(lib, "cudnnGetConvolutionBackwardFilterWorkspaceSize", &api.bwd_filter_workspace) &&
         resolve(lib, "cudnnConvolutionBackwardFilter", &api.conv_backward_filter) &&
         resolve(lib, "cudnnConvolutionBackwardBias", &api.conv_backward_bias) &&
         resolve(lib, "cudnnAddTensor", &api.add_tensor);
}

bool resolve_pooling_and_norm(void *lib) {
  return resolve(lib, "cudnnPoolingForward", &api.pool_forward) &&
         resolve(lib, "cudnnPoolingBackward", &api.pool_backward) &&
         resolve(lib, "cudnnBatchNormalizationForwardTraining", &api.bn_forward_training) &&
         resolve(lib, "cudnnBatchNormalizationForwardInference", &api.bn_forward_inference) &&
         resolve(lib, "cudnnBatchNormalizationBackward", &api.bn_backward);
}

/* A library of another major version would have another soname; this
 * catches a wrongly named or replaced file. */
bool version_matches() {
  size_t v = api.get_version();
  size_t major = v >= 10000 ? v / 10000 : v / 1000; /* 9.x: 90000 + ...; 8.x: 8000 + ... */
  if (major == CUDNN_MAJOR) return true;
  std::snprintf(failure, sizeof failure,
                "cuDNN: %s reports version %zu, but libmxref was built against cuDNN %d", kLibrary,
                v, CUDNN_MAJOR);
  return false;
}

void load() {
  void *lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen(kLibraryInToolkit, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    std::snprintf(failure, sizeof failure, "cuDNN could not be loaded (%s, nor %s): %s", kLibrary,
                  kLibraryInToolkit, why ? why : "unknown error");
    return;
  }
  loaded = resolve_handles(lib) && version_matches() && resolve_descriptors(lib) &&
           resolve_convolution(lib) && resolve_pooling_and_norm(lib);
  /* The library stays loaded for the life of the process. */
}

std::once_flag once;

}  // namespace

const MxrCudnn *mxr__cudnn(void) {
  std::call_once(once, load);
  if (loaded) return &api;
  mxr_set_error(MXR_ECUDA, "%s", failure);
  return nullptr;
}

#endif /* MXR_HAVE_CUDNN */
