/* Loading cuDNN on first use (cudnn_api.h).  Empty without cuDNN. */
#include "config.h"

#ifdef MXR_HAVE_CUDNN

#include <mutex>

#include "device/cudnn_api.h"
#include "device/dl_library.h"
#include "mxref/error.h"

namespace {

mxr_dl::Library lib("cuDNN", "libcudnn.so." MXR_DL_STR(CUDNN_MAJOR));
MxrCudnn api;
bool loaded;

bool resolve_handles() {
  return lib.resolve("cudnnGetVersion", &api.get_version) &&
         lib.resolve("cudnnGetErrorString", &api.error_string) &&
         lib.resolve("cudnnCreate", &api.create) && lib.resolve("cudnnDestroy", &api.destroy) &&
         lib.resolve("cudnnSetStream", &api.set_stream);
}

bool resolve_descriptors() {
  return lib.resolve("cudnnCreateTensorDescriptor", &api.create_tensor_desc) &&
         lib.resolve("cudnnDestroyTensorDescriptor", &api.destroy_tensor_desc) &&
         lib.resolve("cudnnSetTensorNdDescriptor", &api.set_tensor_nd) &&
         lib.resolve("cudnnCreateFilterDescriptor", &api.create_filter_desc) &&
         lib.resolve("cudnnDestroyFilterDescriptor", &api.destroy_filter_desc) &&
         lib.resolve("cudnnSetFilterNdDescriptor", &api.set_filter_nd) &&
         lib.resolve("cudnnCreateConvolutionDescriptor", &api.create_conv_desc) &&
         lib.resolve("cudnnDestroyConvolutionDescriptor", &api.destroy_conv_desc) &&
         lib.resolve("cudnnSetConvolutionNdDescriptor", &api.set_conv_nd) &&
         lib.resolve("cudnnSetConvolutionGroupCount", &api.set_conv_groups) &&
         lib.resolve("cudnnSetConvolutionMathType", &api.set_conv_math) &&
         lib.resolve("cudnnGetConvolutionNdForwardOutputDim", &api.conv_output_dim) &&
         lib.resolve("cudnnCreatePoolingDescriptor", &api.create_pool_desc) &&
         lib.resolve("cudnnDestroyPoolingDescriptor", &api.destroy_pool_desc) &&
         lib.resolve("cudnnSetPoolingNdDescriptor", &api.set_pool_nd);
}

bool resolve_convolution() {
  return lib.resolve("cudnnGetConvolutionForwardAlgorithmMaxCount", &api.fwd_algo_count) &&
         lib.resolve("cudnnGetConvolutionForwardAlgorithm_v7", &api.fwd_algo_heuristic) &&
         lib.resolve("cudnnFindConvolutionForwardAlgorithm", &api.fwd_algo_find) &&
         lib.resolve("cudnnGetConvolutionForwardWorkspaceSize", &api.fwd_workspace) &&
         lib.resolve("cudnnConvolutionForward", &api.conv_forward) &&
         lib.resolve("cudnnGetConvolutionBackwardDataAlgorithmMaxCount", &api.bwd_data_algo_count) &&
         lib.resolve("cudnnGetConvolutionBackwardDataAlgorithm_v7", &api.bwd_data_algo_heuristic) &&
         lib.resolve("cudnnFindConvolutionBackwardDataAlgorithm", &api.bwd_data_algo_find) &&
         lib.resolve("cudnnGetConvolutionBackwardDataWorkspaceSize", &api.bwd_data_workspace) &&
         lib.resolve("cudnnConvolutionBackwardData", &api.conv_backward_data) &&
         lib.resolve("cudnnGetConvolutionBackwardFilterAlgorithmMaxCount",
                 &api.bwd_filter_algo_count) &&
         lib.resolve("cudnnGetConvolutionBackwardFilterAlgorithm_v7",
                 &api.bwd_filter_algo_heuristic) &&
         lib.resolve("cudnnFindConvolutionBackwardFilterAlgorithm", &api.bwd_filter_algo_find) &&
         lib.resolve("cudnnGetConvolutionBackwardFilterWorkspaceSize", &api.bwd_filter_workspace) &&
         lib.resolve("cudnnConvolutionBackwardFilter", &api.conv_backward_filter) &&
         lib.resolve("cudnnConvolutionBackwardBias", &api.conv_backward_bias) &&
         lib.resolve("cudnnAddTensor", &api.add_tensor);
}

bool resolve_pooling_and_norm() {
  return lib.resolve("cudnnPoolingForward", &api.pool_forward) &&
         lib.resolve("cudnnPoolingBackward", &api.pool_backward) &&
         lib.resolve("cudnnBatchNormalizationForwardTraining", &api.bn_forward_training) &&
         lib.resolve("cudnnBatchNormalizationForwardInference", &api.bn_forward_inference) &&
         lib.resolve("cudnnBatchNormalizationBackward", &api.bn_backward);
}

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
  loaded = lib.open() && resolve_handles() && version_matches() && resolve_descriptors() &&
           resolve_convolution() && resolve_pooling_and_norm();
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
