/*
 * BatchNorm and its gradient on GPUs (batchnorm.h).
 *
 * cuDNN's spatial batch norm (cudnnBatchNormalizationForwardTraining,
 * ...ForwardInference, ...Backward) runs when it computes the CPU op's
 * definition: the data is viewed as an NCHW tensor (outer, c, inner, 1),
 * which puts any channel axis where cuDNN wants it; cuDNN's saved inverse
 * variance is 1 / sqrt(biased variance + eps), the CPU's "var" output.
 * What cuDNN does otherwise than the CPU op, and how it is bridged:
 *  - cuDNN updates running statistics in its forward pass, with the
 *    unbiased variance; the CPU op updates them in the backward pass, with
 *    the biased one.  So cuDNN gets no running statistics, and a small
 *    kernel updates them in the backward pass as the CPU does.
 *  - fix_gamma: cuDNN gets a gamma of ones (in device scratch) and the
 *    gamma gradient is written as 0.
 *  - Outputs whose req is not a plain write (the saved statistics, and the
 *    gamma/beta gradients, which cuDNN blends with one factor for both) go
 *    through scratch and a kernel that applies each req.
 *  - The statistics outputs in inference mode (the moving mean and
 *    1 / sqrt(moving var + eps)) come from a kernel.
 *  - cuDNN's backward assumes batch statistics; the gradient with global
 *    statistics (dx = dy * invstd * gamma) runs on the kernels.
 * The kernels (one block per channel, sums in double, as the CPU) run
 * everything else: eps of 0 (the CPU makes invstd 0 for a zero variance
 * then; cuDNN would give inf) or below CUDNN_BN_MIN_EPSILON, channels of
 * fewer than 2 elements, tensors past cuDNN's int sizes, a data output or
 * gradient that is not asked for, cudnn_off, and builds without cuDNN.
 */
#include "config.h"

#include <climits>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "cuda/check.h"
#include "cuda/worker.h"
#include "mxref/engine.h"
#include "op/cuda/kernel_util.cuh"
#include "op/cuda/launch.h"
#include "op/cuda/batchnorm.h"

#ifdef MXR_HAVE_CUDNN
#include <cudnn.h>

#include "cuda/cudnn.h"
#endif

using namespace mxr_kernels;

namespace {

inline void *stream_of(const struct mxr_run_ctx *run) { return run ? run->stream : nullptr; }

__host__ __device__ inline bool writes(int req) { return req == kWrite || req == kInplace; }

/* *p as req asks, rounded as the CPU's put() rounds: the value is cast to T
 * first, and an add is done in T. */
template <typename T>
__device__ inline void assign(T *p, int req, double v) {
  if (req == kAdd)
    *p = *p + static_cast<T>(v);
  else if (req != kNull)
    *p = static_cast<T>(v);
}

/* ------------------------------------------------------- the kernels */

constexpr int kBnThreads = 256; /* a power of two, for block_sum */
constexpr int64_t kMaxChannelBlocks = 65535;

int channel_blocks(int64_t c) {
  return static_cast<int>(c < 1 ? 1 : (c > kMaxChannelBlocks ? kMaxChannelBlocks : c));
}

/* The sum of every thread's v, returned to all threads of the block. */
__device__ double block_sum(double v, double *shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shared[threadIdx.x] += shared[threadIdx.x + s];
    __syncthreads();
  }
  double r = shared[0];
  __syncthreads(); /* before shared is reused */
  return r;
}

/* Element t of channel c's outer * inner elements. */
__device__ inline int64_t channel_at(const struct mxr__gpu_bn &bn, int64_t c, int64_t t) {
  return ((t / bn.inner) * bn.c + c) * bn.inner + t % bn.inner;
}

/* The statistics of channel c: the batch's (two passes, as the CPU) or the
 * moving ones. */
template <typename T>
__device__ void channel_stats(const struct mxr__gpu_bn &bn, int64_t c, const T *x, const T *mm,
                              const T *mv, double *shared, double *mean, double *invstd) {
  if (!bn.batch_stats) {
    *mean = static_cast<double>(mm[c]);
    *invstd = 1.0 / sqrt(static_cast<double>(mv[c]) + bn.eps);
    return;
  }
  const int64_t count = bn.outer * bn.inner;
  double sum = 0;
  for (int64_t t = threadIdx.x; t < count; t += blockDim.x)
    sum += static_cast<double>(x[channel_at(bn, c, t)]);
  sum = block_sum(sum, shared);
  const double m = count ? sum / static_cast<double>(count) : 0;
  double sq = 0;
  for (int64_t t = threadIdx.x; t < count; t += blockDim.x) {
    const double d = static_cast<double>(x[channel_at(bn, c, t)]) - m;
    sq += d * d;
  }
  sq = block_sum(sq, shared);
  *mean = m;
  *invstd = sq == 0 && bn.eps_param == 0
                ? 0
                : 1.0 / sqrt((count ? sq / static_cast<double>(count) : 0) + bn.eps);
}

/* One block per channel: statistics, then the normalised data. */
template <typename T>
__global__ void bn_forward_kernel(struct mxr__gpu_bn bn, const T *x, const T *gamma, const T *beta,
                                  const T *mm, const T *mv, T *y, T *mean_out, T *invstd_out,
                                  int req_y, int req_mean, int req_invstd) {
  __shared__ double shared[kBnThreads];
  const int64_t count = bn.outer * bn.inner;
  for (int64_t c = blockIdx.x; c < bn.c; c += gridDim.x) {
    double mean, invstd;
    channel_stats(bn, c, x, mm, mv, shared, &mean, &invstd);
    if (threadIdx.x == 0) {
      assign(mean_out + c, req_mean, mean);
      assign(invstd_out + c, req_invstd, invstd);
    }
    if (req_y == kNull) continue;
    const double w = bn.fix_gamma ? 1.0 : static_cast<double>(gamma[c]);
    const double b = static_cast<double>(beta[c]);
    for (int64_t t = threadIdx.x; t < count; t += blockDim.x) {
      const int64_t j = channel_at(bn, c, t);
      assign(y + j, req_y, (static_cast<double>(x[j]) - mean) * invstd * w + b);
    }
  }
}

/* The moving statistics after a training step, as the CPU's backward pass
 * makes them: the biased variance is recovered from the saved invstd. */
template <typename T>
__device__ inline void update_moving(const struct mxr__gpu_bn &bn, int64_t c, double mean,
                                     double invstd, T *mm, T *mv) {
  const double var = 1.0 / (invstd * invstd) - bn.eps_param;
  mm[c] = static_cast<T>(static_cast<double>(mm[c]) * bn.momentum + mean * (1 - bn.momentum));
  mv[c] = static_cast<T>(static_cast<double>(mv[c]) * bn.momentum + var * (1 - bn.momentum));
}

struct BnGradOut {
  void *dx, *dgamma, *dbeta;
  int req_dx, req_dgamma, req_dbeta;
};

/* One block per channel: the whole CPU backward pass of that channel. */
template <typename T>
__global__ void bn_backward_kernel(struct mxr__gpu_bn bn, const T *dy, const T *x, const T *gamma,
                                   const T *smean, const T *sinv, T *mm, T *mv, BnGradOut g) {
  __shared__ double shared[kBnThreads];
  const int64_t count = bn.outer * bn.inner;
  T *dx = static_cast<T *>(g.dx);
  for (int64_t c = blockIdx.x; c < bn.c; c += gridDim.x) {
    const double w = bn.fix_gamma ? 1.0 : static_cast<double>(gamma[c]);
    double mean, invstd;
    if (bn.batch_stats) {
      mean = static_cast<double>(smean[c]);
      invstd = static_cast<double>(sinv[c]);
      if (threadIdx.x == 0) update_moving(bn, c, mean, invstd, mm, mv);
    } else { /* nothing writes the moving statistics in this mode */
      mean = static_cast<double>(mm[c]);
      invstd = 1.0 / sqrt(static_cast<double>(mv[c]) + bn.eps);
    }
    double sum_dy = 0, dot = 0;
    for (int64_t t = threadIdx.x; t < count; t += blockDim.x) {
      const int64_t j = channel_at(bn, c, t);
      const double d = static_cast<double>(dy[j]);
      sum_dy += d;
      dot += (static_cast<double>(x[j]) - mean) * d;
    }
    sum_dy = block_sum(sum_dy, shared);
    dot = block_sum(dot, shared);
    if (g.req_dx != kNull) {
      const double iw = invstd * w, n = static_cast<double>(count);
      const double k = bn.batch_stats && count ? dot * invstd * invstd / n : 0;
      const double gmean = bn.batch_stats && count ? sum_dy / n : 0;
      for (int64_t t = threadIdx.x; t < count; t += blockDim.x) {
        const int64_t j = channel_at(bn, c, t);
        const double d = static_cast<double>(dy[j]);
        const double v = bn.batch_stats ? (d - gmean - (static_cast<double>(x[j]) - mean) * k) * iw
                                        : d * iw;
        assign(dx + j, g.req_dx, v);
      }
    }
    if (threadIdx.x == 0) {
      if (!bn.fix_gamma)
        assign(static_cast<T *>(g.dgamma) + c, g.req_dgamma, dot * invstd);
      else if (writes(g.req_dgamma))
        assign(static_cast<T *>(g.dgamma) + c, g.req_dgamma, 0.0);
      assign(static_cast<T *>(g.dbeta) + c, g.req_dbeta, sum_dy);
    }
  }
}

/* out[i] as req asks, from src[i] (NULL: 0), i < n. */
template <typename T>
__global__ void channel_assign_kernel(T *out, const T *src, int64_t n, int req) {
  for (int64_t i = first_index(); i < n; i += index_step())
    assign(out + i, req, src ? static_cast<double>(src[i]) : 0.0);
}

/* The statistics outputs of an inference-mode forward. */
template <typename T>
__global__ void inference_stats_kernel(struct mxr__gpu_bn bn, const T *mm, const T *mv, T *mean,
                                       T *invstd, int req_mean, int req_invstd) {
  for (int64_t c = first_index(); c < bn.c; c += index_step()) {
    assign(mean + c, req_mean, static_cast<double>(mm[c]));
    assign(invstd + c, req_invstd, 1.0 / sqrt(static_cast<double>(mv[c]) + bn.eps));
  }
}

template <typename T>
__global__ void moving_update_kernel(struct mxr__gpu_bn bn, const T *smean, const T *sinv, T *mm,
                                     T *mv) {
  for (int64_t c = first_index(); c < bn.c; c += index_step())
    update_moving(bn, c, static_cast<double>(smean[c]), static_cast<double>(sinv[c]), mm, mv);
}

/* ---------------------------------------------------- kernel launches */

template <typename T>
void launch_forward(void *stream, const struct mxr__gpu_bn &bn, const void *x, const void *gamma,
                    const void *beta, const void *mm, const void *mv, void *y, void *mean,
                    void *invstd, const int *req) {
  bn_forward_kernel<T><<<channel_blocks(bn.c), kBnThreads, 0, as_stream(stream)>>>(
      bn, static_cast<const T *>(x), static_cast<const T *>(gamma), static_cast<const T *>(beta),
      static_cast<const T *>(mm), static_cast<const T *>(mv), static_cast<T *>(y),
      static_cast<T *>(mean), static_cast<T *>(invstd), req[0], req[1], req[2]);
}

template <typename T>
void launch_backward(void *stream, const struct mxr__gpu_bn &bn, const void *dy, const void *x,
                     const void *gamma, const void *smean, const void *sinv, void *mm, void *mv,
                     const BnGradOut &g) {
  bn_backward_kernel<T><<<channel_blocks(bn.c), kBnThreads, 0, as_stream(stream)>>>(
      bn, static_cast<const T *>(dy), static_cast<const T *>(x), static_cast<const T *>(gamma),
      static_cast<const T *>(smean), static_cast<const T *>(sinv), static_cast<T *>(mm),
      static_cast<T *>(mv), g);
}

int check_bn(const char *op, const struct mxr__gpu_bn *bn) {
  if (bn->dtype != MXR_FLOAT32 && bn->dtype != MXR_FLOAT64) return unsupported(op, bn->dtype, 0);
  return 0;
}

}  // namespace

/* ================================================================ cuDNN */

#ifdef MXR_HAVE_CUDNN
namespace {

const float kOneF = 1, kZeroF = 0;
const double kOneD = 1, kZeroD = 0;

const void *one(int dtype) {
  return dtype == MXR_FLOAT64 ? static_cast<const void *>(&kOneD) : &kOneF;
}
const void *zero(int dtype) {
  return dtype == MXR_FLOAT64 ? static_cast<const void *>(&kZeroD) : &kZeroF;
}
const void *blend(int dtype, int req) { return req == kAdd ? one(dtype) : zero(dtype); }

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

/* out = (as req says) src, or 0 with src NULL; c elements. */
void channel_assign(void *stream, int dtype, void *out, const void *src, int64_t c, int req) {
  if (req == kNull || c == 0) return;
  if (dtype == MXR_FLOAT64)
    channel_assign_kernel<double><<<blocks_for(c), kThreads, 0, as_stream(stream)>>>(
        static_cast<double *>(out), static_cast<const double *>(src), c, req);
  else
    channel_assign_kernel<float><<<blocks_for(c), kThreads, 0, as_stream(stream)>>>(
        static_cast<float *>(out), static_cast<const float *>(src), c, req);
}

/* Whether cuDNN computes this batch norm as the CPU op defines it (see the
 * top of this file); `data_req` is the req of y (forward) or dx (backward). */
bool cudnn_normalises(const struct mxr__gpu_bn *bn, int data_req) {
  const int64_t count = bn->outer * bn->inner;
  return bn->allow_cudnn && data_req != kNull && bn->eps_param > 0 && bn->eps > 0 &&
         bn->eps >= CUDNN_BN_MIN_EPSILON && count >= 2 && bn->c >= 1 && fits_int(bn->outer) &&
         fits_int(bn->c) && fits_int(bn->inner) && fits_int(count * bn->c);
}

/* Descriptors, destroyed with their scope: the data as (outer, c, inner, 1)
 * and the per-channel tensors as (1, c, 1, 1). */
struct BnDescs {
  const MxrCudnn *dnn = nullptr;
  cudnnHandle_t h = nullptr;
  cudnnTensorDescriptor_t data = nullptr, channel = nullptr;
  BnDescs() = default;
  BnDescs(const BnDescs &) = delete;
  BnDescs &operator=(const BnDescs &) = delete;
  ~BnDescs() {
    if (data) (void)MXR_CUDNN_CHECK(dnn->destroy_tensor_desc(data));
    if (channel) (void)MXR_CUDNN_CHECK(dnn->destroy_tensor_desc(channel));
  }
};

int describe(const struct mxr_run_ctx *run, const struct mxr__gpu_bn *bn, BnDescs *d) {
  void *hv;
  int st = mxr__cuda_dnn_handle(run, &hv);
  if (st) return st;
  d->dnn = mxr__cudnn(); /* loaded: the handle exists */
  d->h = static_cast<cudnnHandle_t>(hv);
  const cudnnDataType_t type = bn->dtype == MXR_FLOAT64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  const int c = static_cast<int>(bn->c), inner = static_cast<int>(bn->inner);
  const int ddims[4] = {static_cast<int>(bn->outer), c, inner, 1};
  const int dstrides[4] = {c * inner, inner, 1, 1};
  const int cdims[4] = {1, c, 1, 1}, cstrides[4] = {c, 1, 1, 1};
  MXR_CUDNN_CALL(d->dnn->create_tensor_desc(&d->data));
  MXR_CUDNN_CALL(d->dnn->set_tensor_nd(d->data, type, 4, ddims, dstrides));
  MXR_CUDNN_CALL(d->dnn->create_tensor_desc(&d->channel));
  MXR_CUDNN_CALL(d->dnn->set_tensor_nd(d->channel, type, 4, cdims, cstrides));
  return 0;
}

/* Device scratch of `slots` per-channel arrays; with fix_gamma the first
 * one is filled with ones (cuDNN's gamma).  Each slot starts on a 256-byte
 * boundary, as a separate cudaMalloc would: cuDNN may load its parameter
 * arrays vectorised, and c * 4 bytes alone would misalign the second slot. */
int channel_scratch(const struct mxr_run_ctx *run, const struct mxr__gpu_bn *bn, int slots,
                    char **base, size_t *slot_bytes) {
  constexpr size_t kSlotAlign = 256;
  *slot_bytes = (static_cast<size_t>(bn->c) * mxr_dtype_size(bn->dtype) + kSlotAlign - 1) /
                kSlotAlign * kSlotAlign;
  void *p;
  int st = mxr__cuda_scratch(run, *slot_bytes * static_cast<size_t>(slots), &p);
  if (st) return st;
  *base = static_cast<char *>(p);
  if (!bn->fix_gamma) return 0;
  return mxr__gpu_fill(stream_of(run), p, bn->dtype, bn->c, kWrite, 1.0);
}

int cudnn_forward(const struct mxr_run_ctx *run, const struct mxr__gpu_bn *bn, const void *x,
                  const void *gamma, const void *beta, const void *mm, const void *mv, void *y,
                  void *mean, void *invstd, const int *req) {
  BnDescs d;
  char *scratch;
  size_t slot;
  int st = describe(run, bn, &d);
  if (!st) st = channel_scratch(run, bn, 3, &scratch, &slot);
  if (st) return st;
  void *stream = stream_of(run);
  const void *scale = bn->fix_gamma ? scratch : gamma;
  const int dt = bn->dtype;
  if (!bn->batch_stats) {
    MXR_CUDNN_CALL(d.dnn->bn_forward_inference(d.h, CUDNN_BATCHNORM_SPATIAL, one(dt),
                                               blend(dt, req[0]), d.data, x, d.data, y, d.channel,
                                               scale, beta, mm, mv, bn->eps));
    if (req[1] != kNull || req[2] != kNull) {
      if (dt == MXR_FLOAT64)
        inference_stats_kernel<double><<<blocks_for(bn->c), kThreads, 0, as_stream(stream)>>>(
            *bn, static_cast<const double *>(mm), static_cast<const double *>(mv),
            static_cast<double *>(mean), static_cast<double *>(invstd), req[1], req[2]);
      else
        inference_stats_kernel<float><<<blocks_for(bn->c), kThreads, 0, as_stream(stream)>>>(
            *bn, static_cast<const float *>(mm), static_cast<const float *>(mv),
            static_cast<float *>(mean), static_cast<float *>(invstd), req[1], req[2]);
    }
    return finish_launch(stream);
  }
  /* The saved statistics straight into the outputs where they are plain
   * writes; through scratch otherwise.  No running statistics: see top. */
  void *save_mean = writes(req[1]) ? mean : scratch + slot;
  void *save_invstd = writes(req[2]) ? invstd : scratch + 2 * slot;
  MXR_CUDNN_CALL(d.dnn->bn_forward_training(d.h, CUDNN_BATCHNORM_SPATIAL, one(dt),
                                            blend(dt, req[0]), d.data, x, d.data, y, d.channel,
                                            scale, beta, 0.0, nullptr, nullptr, bn->eps, save_mean,
                                            save_invstd));
  if (!writes(req[1])) channel_assign(stream, dt, mean, save_mean, bn->c, req[1]);
  if (!writes(req[2])) channel_assign(stream, dt, invstd, save_invstd, bn->c, req[2]);
  return finish_launch(stream);
}

int cudnn_backward(const struct mxr_run_ctx *run, const struct mxr__gpu_bn *bn, const void *dy,
                   const void *x, const void *gamma, const void *smean, const void *sinv,
                   void *mm, void *mv, const BnGradOut &g) {
  BnDescs d;
  char *scratch;
  size_t slot;
  int st = describe(run, bn, &d);
  if (!st) st = channel_scratch(run, bn, 3, &scratch, &slot);
  if (st) return st;
  void *stream = stream_of(run);
  const int dt = bn->dtype;
  const void *scale = bn->fix_gamma ? scratch : gamma;
  /* One blend factor serves both parameter gradients: straight into them
   * when both are plain writes or both adds, and gamma's is real. */
  const bool direct = !bn->fix_gamma && ((writes(g.req_dgamma) && writes(g.req_dbeta)) ||
                                         (g.req_dgamma == kAdd && g.req_dbeta == kAdd));
  void *dgamma = direct ? g.dgamma : scratch + slot;
  void *dbeta = direct ? g.dbeta : scratch + 2 * slot;
  MXR_CUDNN_CALL(d.dnn->bn_backward(d.h, CUDNN_BATCHNORM_SPATIAL, one(dt), blend(dt, g.req_dx),
                                    one(dt), direct ? blend(dt, g.req_dgamma) : zero(dt), d.data,
                                    x, d.data, dy, d.data, g.dx, d.channel, scale, dgamma, dbeta,
                                    bn->eps, smean, sinv));
  if (!direct) {
    /* with fix_gamma, gamma's gradient is 0 (written) or nothing (added) */
    channel_assign(stream, dt, g.dgamma, bn->fix_gamma ? nullptr : dgamma, bn->c,
                   bn->fix_gamma && !writes(g.req_dgamma) ? kNull : g.req_dgamma);
    channel_assign(stream, dt, g.dbeta, dbeta, bn->c, g.req_dbeta);
  }
  if (dt == MXR_FLOAT64)
    moving_update_kernel<double><<<blocks_for(bn->c), kThreads, 0, as_stream(stream)>>>(
        *bn, static_cast<const double *>(smean), static_cast<const double *>(sinv),
        static_cast<double *>(mm), static_cast<double *>(mv));
  else
    moving_update_kernel<float><<<blocks_for(bn->c), kThreads, 0, as_stream(stream)>>>(
        *bn, static_cast<const float *>(smean), static_cast<const float *>(sinv),
        static_cast<float *>(mm), static_cast<float *>(mv));
  return finish_launch(stream);
}

}  // namespace
#endif /* MXR_HAVE_CUDNN */

/* ============================================================ launchers */

extern "C" int mxr__gpu_bn_forward(const struct mxr_run_ctx *run, const struct mxr__gpu_bn *bn,
                                   const void *x, const void *gamma, const void *beta,
                                   const void *moving_mean, const void *moving_var, void *y,
                                   void *mean, void *invstd, const int *req) {
  int st = check_bn("BatchNorm", bn);
  if (st || bn->c == 0) return st;
#ifdef MXR_HAVE_CUDNN
  if (cudnn_normalises(bn, req[0]))
    return cudnn_forward(run, bn, x, gamma, beta, moving_mean, moving_var, y, mean, invstd, req);
#endif
  void *stream = stream_of(run);
  if (bn->dtype == MXR_FLOAT64)
    launch_forward<double>(stream, *bn, x, gamma, beta, moving_mean, moving_var, y, mean, invstd,
                           req);
  else
    launch_forward<float>(stream, *bn, x, gamma, beta, moving_mean, moving_var, y, mean, invstd,
                          req);
  return finish_launch(stream);
}

extern "C" int mxr__gpu_bn_backward(const struct mxr_run_ctx *run, const struct mxr__gpu_bn *bn,
                                    const void *dy, const void *x, const void *gamma,
                                    const void *saved_mean, const void *saved_invstd,
                                    void *moving_mean, void *moving_var, void *dx, void *dgamma,
                                    void *dbeta, const int *req) {
  int st = check_bn("_backward_BatchNorm", bn);
  if (st || bn->c == 0) return st;
  const BnGradOut g = {dx, dgamma, dbeta, req[0], req[1], req[2]};
#ifdef MXR_HAVE_CUDNN
  if (bn->batch_stats && cudnn_normalises(bn, req[0]))
    return cudnn_backward(run, bn, dy, x, gamma, saved_mean, saved_invstd, moving_mean,
                          moving_var, g);
#endif
  void *stream = stream_of(run);
  if (bn->dtype == MXR_FLOAT64)
    launch_backward<double>(stream, *bn, dy, x, gamma, saved_mean, saved_invstd, moving_mean,
                            moving_var, g);
  else
    launch_backward<float>(stream, *bn, dy, x, gamma, saved_mean, saved_invstd, moving_mean,
                           moving_var, g);
  return finish_launch(stream);
}
