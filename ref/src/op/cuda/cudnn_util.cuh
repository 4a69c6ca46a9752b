/*
 * Internal: helpers of the cuDNN-using kernels of Convolution
 * (convolution.cu) and Pooling (pooling.cu): the stream of a run context,
 * and (builds with cuDNN) cuDNN's scaling factors, data types, scoped
 * descriptors, packed tensor descriptions and the worker's cuDNN handle.
 */
#ifndef MXR_OP_CUDA_CUDNN_UTIL_CUH
#define MXR_OP_CUDA_CUDNN_UTIL_CUH

#include <climits>
#include <cstdint>

#include "cuda/worker.h"
#include "mxref/engine.h"
#include "op/cuda/kernel_util.cuh"

#ifdef MXR_HAVE_CUDNN
#include <cudnn.h>

#include "cuda/cudnn.h"
#include "cuda/check.h"
#endif

using namespace mxr_kernels;

namespace {

inline void *stream_of(const struct mxr_run_ctx *run) { return run ? run->stream : nullptr; }

inline int64_t prod3(const int64_t *v) { return v[0] * v[1] * v[2]; }

}  // namespace

/* ====================================================== cuDNN: common */

#ifdef MXR_HAVE_CUDNN
namespace {

inline bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

const float kOneF = 1, kZeroF = 0;
const double kOneD = 1, kZeroD = 0;

/* cuDNN's scaling factors are host values of the compute type: double for
 * float64 data, float otherwise. */
inline const void *one(int dtype) {
  return dtype == MXR_FLOAT64 ? static_cast<const void *>(&kOneD) : &kOneF;
}
/* The beta of an output: keep what is there (add) or not (write). */
inline const void *blend(int dtype, int req) {
  bool add = req == kAdd;
  if (dtype == MXR_FLOAT64) return add ? &kOneD : &kZeroD;
  return add ? &kOneF : &kZeroF;
}

inline cudnnDataType_t dnn_type(int dtype) {
  return dtype == MXR_FLOAT64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
}

/* A descriptor, destroyed with its scope. */
template <typename D, cudnnStatus_t (*MxrCudnn::*Destroy)(D)>
struct Desc {
  D d = nullptr;
  Desc() = default;
  Desc(const Desc &) = delete;
  Desc &operator=(const Desc &) = delete;
  ~Desc() {
    if (d) (void)MXR_CUDNN_CHECK((mxr__cudnn()->*Destroy)(d)); /* d exists: cuDNN is loaded */
  }
};
using TensorDesc = Desc<cudnnTensorDescriptor_t, &MxrCudnn::destroy_tensor_desc>;
using FilterDesc = Desc<cudnnFilterDescriptor_t, &MxrCudnn::destroy_filter_desc>;
using ConvDesc = Desc<cudnnConvolutionDescriptor_t, &MxrCudnn::destroy_conv_desc>;
using PoolDesc = Desc<cudnnPoolingDescriptor_t, &MxrCudnn::destroy_pool_desc>;

/* cuDNN's spatial rank for ours: 1-D runs as 2-D with a unit height. */
inline int dnn_spatial(int nsp) { return nsp < 2 ? 2 : nsp; }

/* A packed tensor of `nb` dims (outermost first). */
inline int describe_packed(const MxrCudnn *dnn, TensorDesc *t, int dtype, int nb, const int *dims) {
  int strides[5];
  strides[nb - 1] = 1;
  for (int i = nb - 2; i >= 0; i--) strides[i] = strides[i + 1] * dims[i + 1];
  MXR_CUDNN_CALL(dnn->create_tensor_desc(&t->d));
  MXR_CUDNN_CALL(dnn->set_tensor_nd(t->d, dnn_type(dtype), nb, dims, strides));
  return 0;
}

/* (a, b, spatial...) from the last `ns` entries of a 3-entry array. */
inline void dims_of(int64_t a, int64_t b, const int64_t *sp, int ns, int *dims) {
  dims[0] = static_cast<int>(a);
  dims[1] = static_cast<int>(b);
  for (int i = 0; i < ns; i++) dims[2 + i] = static_cast<int>(sp[3 - ns + i]);
}

/* The last `ns` entries of a 3-entry array, as ints. */
inline void tail_of(const int64_t *v, int ns, int *out) {
  for (int i = 0; i < ns; i++) out[i] = static_cast<int>(v[3 - ns + i]);
}

/* The worker's cuDNN handle (cuDNN loaded) and the API. */
inline int dnn_for(const struct mxr_run_ctx *run, const MxrCudnn **dnn, cudnnHandle_t *h) {
  void *hv;
  int st = mxr__cuda_dnn_handle(run, &hv);
  if (st) return st;
  *dnn = mxr__cudnn(); /* loaded: the handle exists */
  *h = static_cast<cudnnHandle_t>(hv);
  return 0;
}

}  // namespace
#endif /* MXR_HAVE_CUDNN */

#endif /* MXR_OP_CUDA_CUDNN_UTIL_CUH */
