/*
 * Internal: cuDNN, loaded when first needed (cudnn.cu); the cuDNN
 * counterpart of cublas.h.
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
#ifndef MXR_CUDA_CUDNN_H
#define MXR_CUDA_CUDNN_H

#include <cudnn.h>

#include "cuda/dl_library.h"

/* The functions libmxref calls, each as X(member, symbol): the member of
 * struct MxrCudnn and the symbol it is resolved from (its type is the
 * symbol's, from cudnn.h).  The handle and error functions (with
 * cudnnGetVersion) are resolved before the library's version is checked,
 * the rest after. */
#define MXR_CUDNN_HANDLE_FUNCTIONS(X)   \
  X(get_version, cudnnGetVersion)       \
  X(error_string, cudnnGetErrorString)  \
  X(create, cudnnCreate)                \
  X(destroy, cudnnDestroy)              \
  X(set_stream, cudnnSetStream)

#define MXR_CUDNN_FUNCTIONS(X)                                                  \
  /* descriptors */                                                             \
  X(create_tensor_desc, cudnnCreateTensorDescriptor)                            \
  X(destroy_tensor_desc, cudnnDestroyTensorDescriptor)                          \
  X(set_tensor_nd, cudnnSetTensorNdDescriptor)                                  \
  X(create_filter_desc, cudnnCreateFilterDescriptor)                            \
  X(destroy_filter_desc, cudnnDestroyFilterDescriptor)                          \
  X(set_filter_nd, cudnnSetFilterNdDescriptor)                                  \
  X(create_conv_desc, cudnnCreateConvolutionDescriptor)                         \
  X(destroy_conv_desc, cudnnDestroyConvolutionDescriptor)                       \
  X(set_conv_nd, cudnnSetConvolutionNdDescriptor)                               \
  X(set_conv_groups, cudnnSetConvolutionGroupCount)                             \
  X(set_conv_math, cudnnSetConvolutionMathType)                                 \
  X(conv_output_dim, cudnnGetConvolutionNdForwardOutputDim)                     \
  X(create_pool_desc, cudnnCreatePoolingDescriptor)                             \
  X(destroy_pool_desc, cudnnDestroyPoolingDescriptor)                           \
  X(set_pool_nd, cudnnSetPoolingNdDescriptor)                                   \
  /* convolution: algorithm choice, workspace, compute */                       \
  X(fwd_algo_count, cudnnGetConvolutionForwardAlgorithmMaxCount)                \
  X(fwd_algo_heuristic, cudnnGetConvolutionForwardAlgorithm_v7)                 \
  X(fwd_algo_find, cudnnFindConvolutionForwardAlgorithm)                        \
  X(fwd_workspace, cudnnGetConvolutionForwardWorkspaceSize)                     \
  X(conv_forward, cudnnConvolutionForward)                                      \
  X(bwd_data_algo_count, cudnnGetConvolutionBackwardDataAlgorithmMaxCount)      \
  X(bwd_data_algo_heuristic, cudnnGetConvolutionBackwardDataAlgorithm_v7)       \
  X(bwd_data_algo_find, cudnnFindConvolutionBackwardDataAlgorithm)              \
  X(bwd_data_workspace, cudnnGetConvolutionBackwardDataWorkspaceSize)           \
  X(conv_backward_data, cudnnConvolutionBackwardData)                           \
  X(bwd_filter_algo_count, cudnnGetConvolutionBackwardFilterAlgorithmMaxCount)  \
  X(bwd_filter_algo_heuristic, cudnnGetConvolutionBackwardFilterAlgorithm_v7)   \
  X(bwd_filter_algo_find, cudnnFindConvolutionBackwardFilterAlgorithm)          \
  X(bwd_filter_workspace, cudnnGetConvolutionBackwardFilterWorkspaceSize)       \
  X(conv_backward_filter, cudnnConvolutionBackwardFilter)                       \
  X(conv_backward_bias, cudnnConvolutionBackwardBias)                           \
  X(add_tensor, cudnnAddTensor)                                                 \
  /* pooling */                                                                 \
  X(pool_forward, cudnnPoolingForward)                                          \
  X(pool_backward, cudnnPoolingBackward)                                        \
  /* batch normalization */                                                     \
  X(bn_forward_training, cudnnBatchNormalizationForwardTraining)                \
  X(bn_forward_inference, cudnnBatchNormalizationForwardInference)              \
  X(bn_backward, cudnnBatchNormalizationBackward)

struct MxrCudnn {
  MXR_CUDNN_HANDLE_FUNCTIONS(MXR_DL_MEMBER)
  MXR_CUDNN_FUNCTIONS(MXR_DL_MEMBER)
};

/* The functions, loaded once (thread-safe); NULL with the last error set,
 * naming the library and dlerror's text, when it cannot be loaded. */
const MxrCudnn *mxr__cudnn(void);

#endif /* MXR_CUDA_CUDNN_H */
