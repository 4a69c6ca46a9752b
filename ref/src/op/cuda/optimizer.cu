/*
 * CUDA kernels of the optimizer ops (op/cuda/optimizer.h): sgd_update,
 * sgd_mom_update, adam_update.  One thread per element, with the CPU
 * kernels' formulas (op/optimizer.c) in the arrays' type.
 */
#include "config.h"

#include <cstdint>

#include <cuda_runtime_api.h>

#include "cuda/check.h"
#include "mxref/base.h"
#include "op/cuda/kernel_util.cuh"
#include "op/cuda/optimizer.h"

using namespace mxr_kernels;

namespace {

/* The hyperparameters in the arrays' type T, through float as MXNet's
 * parameters are (the CPU kernels' (T)(float)p->lr). */
template <typename T>
T param(double v) {
  return static_cast<T>(static_cast<float>(v));
}

template <typename T>
struct Sgd {
  T lr, wd, rs, clip, mom;
};

template <typename T>
Sgd<T> sgd_in(const mxr__gpu_sgd_hyper &h) {
  return Sgd<T>{param<T>(h.lr), param<T>(h.wd), param<T>(h.rescale_grad),
                param<T>(h.clip_gradient), param<T>(h.momentum)};
}

template <typename T>
struct Adam {
  T lr, wd, rs, clip, b1, b2, eps;
};

template <typename T>
Adam<T> adam_in(const mxr__gpu_adam_hyper &h) {
  return Adam<T>{param<T>(h.lr), param<T>(h.wd), param<T>(h.rescale_grad),
                 param<T>(h.clip_gradient), param<T>(h.beta1), param<T>(h.beta2),
                 param<T>(h.epsilon)};
}

/* MXNet's mshadow_op::clip. */
template <typename T>
__device__ inline T clip(T x, T bound) {
  return x > bound ? bound : x < -bound ? -bound : x;
}

__device__ inline float root(float v) { return sqrtf(v); }
__device__ inline double root(double v) { return sqrt(v); }

/* MXR_ASSIGN: null leaves dst, add accumulates, write and in place store. */
template <typename T>
__device__ inline void store(T *dst, int req, T v) {
  if (req == kAdd)
    *dst += v;
  else if (req != kNull)
    *dst = v;
}

template <typename T>
__global__ void sgd_kernel(const T *w, const T *g, T *o, int64_t n, Sgd<T> p, int req) {
  for (int64_t i = first_index(); i < n; i += index_step()) {
    const T v = p.clip >= 0 ? (1 - p.lr * p.wd) * w[i] - p.lr * clip(p.rs * g[i], p.clip)
                            : (1 - p.lr * p.wd) * w[i] - (p.lr * p.rs) * g[i];
    store(o + i, req, v);
  }
}

template <typename T>
__global__ void sgd_mom_kernel(const T *w, const T *g, T *m, T *o, int64_t n, Sgd<T> p, int req) {
  for (int64_t i = first_index(); i < n; i += index_step()) {
    const T wi = w[i]; /* read before a write to an aliased output */
    m[i] = p.clip >= 0 ? p.mom * m[i] - p.lr * p.wd * wi - p.lr * clip(p.rs * g[i], p.clip)
                       : p.mom * m[i] - p.lr * p.wd * wi - p.lr * p.rs * g[i];
    store(o + i, req, wi + m[i]);
  }
}

template <typename T>
__global__ void adam_kernel(const T *w, const T *g, T *mean, T *var, T *o, int64_t n, Adam<T> p,
                            int req) {
  for (int64_t i = first_index(); i < n; i += index_step()) {
    const T wi = w[i];
    T gr = g[i] * p.rs + wi * p.wd;
    if (p.clip >= 0) gr = clip(gr, p.clip);
    mean[i] = p.b1 * mean[i] + (1 - p.b1) * gr;
    var[i] = p.b2 * var[i] + (1 - p.b2) * gr * gr;
    store(o + i, req, wi - p.lr * mean[i] / (root(var[i]) + p.eps));
  }
}

template <typename T>
void launch_sgd(void *stream, const void *w, const void *g, void *o, int64_t n,
                const mxr__gpu_sgd_hyper &h, int req) {
  sgd_kernel<T><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
      static_cast<const T *>(w), static_cast<const T *>(g), static_cast<T *>(o), n, sgd_in<T>(h),
      req);
}

template <typename T>
void launch_sgd_mom(void *stream, const void *w, const void *g, void *m, void *o, int64_t n,
                    const mxr__gpu_sgd_hyper &h, int req) {
  sgd_mom_kernel<T><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
      static_cast<const T *>(w), static_cast<const T *>(g), static_cast<T *>(m),
      static_cast<T *>(o), n, sgd_in<T>(h), req);
}

template <typename T>
void launch_adam(void *stream, const void *w, const void *g, void *mean, void *var, void *o,
                 int64_t n, const mxr__gpu_adam_hyper &h, int req) {
  adam_kernel<T><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
      static_cast<const T *>(w), static_cast<const T *>(g), static_cast<T *>(mean),
      static_cast<T *>(var), static_cast<T *>(o), n, adam_in<T>(h), req);
}

}  // namespace

extern "C" int mxr__gpu_sgd_update(void *stream, const void *weight, const void *grad, void *out,
                                   int dtype, int64_t n, struct mxr__gpu_sgd_hyper h, int req) {
  if (req == kNull || n == 0) return 0;
  if (dtype == MXR_FLOAT32)
    launch_sgd<float>(stream, weight, grad, out, n, h, req);
  else if (dtype == MXR_FLOAT64)
    launch_sgd<double>(stream, weight, grad, out, n, h, req);
  else
    return unsupported("sgd_update", dtype, req);
  return finish_launch(stream);
}

/* The momentum is updated whatever req is, so req null still launches. */
extern "C" int mxr__gpu_sgd_mom_update(void *stream, const void *weight, const void *grad,
                                       void *mom, void *out, int dtype, int64_t n,
                                       struct mxr__gpu_sgd_hyper h, int req) {
  if (n == 0) return 0;
  if (dtype == MXR_FLOAT32)
    launch_sgd_mom<float>(stream, weight, grad, mom, out, n, h, req);
  else if (dtype == MXR_FLOAT64)
    launch_sgd_mom<double>(stream, weight, grad, mom, out, n, h, req);
  else
    return unsupported("sgd_mom_update", dtype, req);
  return finish_launch(stream);
}

/* mean and var are updated whatever req is. */
extern "C" int mxr__gpu_adam_update(void *stream, const void *weight, const void *grad,
                                    void *mean, void *var, void *out, int dtype, int64_t n,
                                    struct mxr__gpu_adam_hyper h, int req) {
  if (n == 0) return 0;
  if (dtype == MXR_FLOAT32)
    launch_adam<float>(stream, weight, grad, mean, var, out, n, h, req);
  else if (dtype == MXR_FLOAT64)
    launch_adam<double>(stream, weight, grad, mean, var, out, n, h, req);
  else
    return unsupported("adam_update", dtype, req);
  return finish_launch(stream);
}
