/*
 * Internal: cuDNN, loaded when first needed (cudnn_api.cu); the cuDNN
 * counterpart of cublas_api.h.
 *
 * libcudnn and the engine libraries it loads are larger still than cuBLAS,
 * and most processes that load libmxref never run a convolution, pooling or
 * batch norm on a GPU.  So libmxref does not link cuDNN: the first op that
 * needs it dlopens the libcudnn of the major version it was built against
 * (libcudnn.so.<CUDNN_MAJOR>; cuDNN 9's libcudnn exports the legacy API
 * used here and loads its sub-libraries itself) and resolves the functions
 * below.  Types and prototypes still come from cudnn.h.
 *
 * Built only when configure found cuDNN (MXR_HAVE_CUDNN); include only from
 * .cu files, after config.h, under #ifdef MXR_HAVE_CUDNN.
 */
#ifndef MXR_DEVICE_CUDNN_API_H
#define MXR_DEVICE_CUDNN_API_H

#include <cudnn.h>

struct MxrCudnn {
  /* handles and errors */
  decltype(&cudnnGetVersion) get_version;
  decltype(&cudnnGetErrorString) error_string;
  decltype(&cudnnCreate) create;
  decltype(&cudnnDestroy) destroy;
  decltype(&cudnnSetStream) set_stream;
  /* descriptors */
  decltype(&cudnnCreateTensorDescriptor) create_tensor_desc;
  decltype(&cudnnDestroyTensorDescriptor) destroy_tensor_desc;
  decltype(&cudnnSetTensorNdDescriptor) set_tensor_nd;
  decltype(&cudnnCreateFilterDescriptor) create_filter_desc;
  decltype(&cudnnDestroyFilterDescriptor) destroy_filter_desc;
  decltype(&cudnnSetFilterNdDescriptor) set_filter_nd;
  decltype(&cudnnCreateConvolutionDescriptor) create_conv_desc;
  decltype(&cudnnDestroyConvolutionDescriptor) destroy_conv_desc;
  decltype(&cudnnSetConvolutionNdDescriptor) set_conv_nd;
  decltype(&cudnnSetConvolutionGroupCount) set_conv_groups;
  decltype(&cudnnSetConvolutionMathType) set_conv_math;
  decltype(&cudnnGetConvolutionNdForwardOutputDim) conv_output_dim;
  decltype(&cudnnCreatePoolingDescriptor) create_pool_desc;
  decltype(&cudnnDestroyPoolingDescriptor) destroy_pool_desc;
  decltype(&cudnnSetPoolingNdDescriptor) set_pool_nd;
  /* convolution: algorithm choice, workspace, compute */
  decltype(&cudnnGetConvolutionForwardAlgorithmMaxCount) fwd_algo_count;
  decltype(&cudnnGetConvolutionForwardAlgorithm_v7) fwd_algo_heuristic;
  decltype(&cudnnFindConvolutionForwardAlgorithm) fwd_algo_find;
  decltype(&cudnnGetConvolutionForwardWorkspaceSize) fwd_workspace;
  decltype(&cudnnConvolutionForward) conv_forward;
  decltype(&cudnnGetConvolutionBackwardDataAlgorithmMaxCount) bwd_data_algo_count;
  decltype(&cudnnGetConvolutionBackwardDataAlgorithm_v7) bwd_data_algo_heuristic;
  decltype(&cudnnFindConvolutionBackwardDataAlgorithm) bwd_data_algo_find;
  decltype(&cudnnGetConvolutionBackwardDataWorkspaceSize) bwd_data_workspace;
  decltype(&cudnnConvolutionBackwardData) conv_backward_data;
  decltype(&cudnnGetConvolutionBackwardFilterAlgorithmMaxCount) bwd_filter_algo_count;
  decltype(&cudnnGetConvolutionBackwardFilterAlgorithm_v7) bwd_filter_algo_heuristic;
  decltype(&cudnnFindConvolutionBackwardFilterAlgorithm) bwd_filter_algo_find;
  decltype(&cudnnGetConvolutionBackwardFilterWorkspaceSize) bwd_filter_workspace;
  decltype(&cudnnConvolutionBackwardFilter) conv_backward_filter;
  decltype(&cudnnConvolutionBackwardBias) conv_backward_bias;
  decltype(&cudnnAddTensor) add_tensor;
  /* pooling */
  decltype(&cudnnPoolingForward) pool_forward;
  decltype(&cudnnPoolingBackward) pool_backward;
  /* batch normalization */
  decltype(&cudnnBatchNormalizationForwardTraining) bn_forward_training;
  decltype(&cudnnBatchNormalizationForwardInference) bn_forward_inference;
  decltype(&cudnnBatchNormalizationBackward) bn_backward;
};

/* The functions, loaded once (thread-safe); NULL with the last error set,
 * naming the library and dlerror's text, when it cannot be loaded. */
const MxrCudnn *mxr__cudnn(void);

#endif /* MXR_DEVICE_CUDNN_API_H */
