/*
 * CUDA kernels of the elementwise ops (elemwise.h).  The element functions
 * are those of the CPU (op/elemwise_fn.h, compiled for both), so the two
 * devices differ only where CUDA's math library rounds differently from
 * the host's.  One thread per output element, grid-stride loops.
 */
#include "config.h"

#include <cstdint>

#include <cuda_runtime_api.h>

#include "mxref/base.h"
#include "op/elemwise_fn.h"
#include "op/cuda/elemwise.h"
#include "op/cuda/kernel_util.cuh"

using namespace mxr_kernels;

namespace {

template <typename T>
__device__ inline double operand(const mxr_gpu_operand &o, int64_t i) {
  return o.data ? static_cast<double>(static_cast<const T *>(o.data)[i]) : o.value;
}

/* ----------------------------------------------------------- elementwise */

template <typename T>
__global__ void emap_kernel(int fn, int64_t n, const T *a, mxr_gpu_operand b, mxr_gpu_operand c,
                            T *out, int req) {
  for (int64_t i = first_index(); i < n; i += index_step()) {
    double v = elemwise_eval(fn, static_cast<double>(a[i]), operand<T>(b, i), operand<T>(c, i));
    store_req(out, i, req, v);
  }
}

/* ---------------------------------------------------------- broadcasting */

/* Offsets into array k (1 lhs, 2 rhs) of element `o` of the iteration
 * shape, in row-major order. */
__device__ inline void offsets_of(const bcast &bc, int64_t o, int64_t *off1, int64_t *off2) {
  int64_t x = 0, y = 0;
  for (int d = bc.nd - 1; d >= 0; d--) {
    int64_t i = o % bc.dim[d];
    o /= bc.dim[d];
    x += i * bc.stride[1][d];
    y += i * bc.stride[2][d];
  }
  *off1 = x;
  *off2 = y;
}

template <typename T>
__global__ void bcast_map_kernel(int fn, bcast bc, int64_t n, const T *a, const T *b, T *out,
                                 int req) {
  for (int64_t i = first_index(); i < n; i += index_step()) {
    int64_t ia, ib;
    offsets_of(bc, i, &ia, &ib);
    store_req(out, i, req, elemwise_eval(fn, static_cast<double>(a[ia]), static_cast<double>(b[ib]), 0));
  }
}

/* The axes of the iteration shape split for one gradient: `kept` (the
 * operand's own, in order) and `summed` (where it was stretched). */
struct GradAxes {
  int nkept, nsum;
  int kept[MXR_MAX_NDIM], summed[MXR_MAX_NDIM];
  int64_t inner; /* elements summed into each gradient element */
};

GradAxes split_axes(const bcast &bc, int side) {
  GradAxes ax = {};
  ax.inner = 1;
  for (int d = 0; d < bc.nd; d++) {
    if (bc.sdim[1 + side][d] == bc.dim[d]) {
      ax.kept[ax.nkept++] = d;
    } else {
      ax.summed[ax.nsum++] = d;
      ax.inner *= bc.dim[d];
    }
  }
  return ax;
}

/* Add index i of axis d (of the iteration shape) to the three offsets. */
__device__ inline void advance(const bcast &bc, int d, int64_t i, int64_t off[3]) {
  for (int k = 0; k < 3; k++) off[k] += i * bc.stride[k][d];
}

/* Element e of the gradient: its kept-axis indices give base offsets; the
 * summed axes are walked in row-major order, as the CPU walks them. */
template <typename T>
__global__ void bcast_grad_kernel(int kind, int side, bcast bc, GradAxes ax, int64_t n, const T *g,
                                  const T *a, const T *b, T *out, int req) {
  for (int64_t e = first_index(); e < n; e += index_step()) {
    int64_t base[3] = {0, 0, 0}, rest = e;
    for (int j = ax.nkept - 1; j >= 0; j--) {
      int d = ax.kept[j];
      advance(bc, d, rest % bc.dim[d], base);
      rest /= bc.dim[d];
    }
    double acc = 0;
    for (int64_t s = 0; s < ax.inner; s++) {
      int64_t off[3] = {base[0], base[1], base[2]}, r = s;
      for (int j = ax.nsum - 1; j >= 0; j--) {
        int d = ax.summed[j];
        advance(bc, d, r % bc.dim[d], off);
        r /= bc.dim[d];
      }
      double av = a ? static_cast<double>(a[off[1]]) : 0.0;
      double bv = b ? static_cast<double>(b[off[2]]) : 0.0;
      acc += bcast_grad_term(kind, side, static_cast<double>(g[off[0]]), av, bv);
    }
    store_req(out, e, req, acc);
  }
}

/* --------------------------------------------------------------- rrelu */

template <typename T>
__global__ void rrelu_kernel(int64_t n, const T *x, T *out, int req_out, T *mask, int req_mask,
                             bool train, uint64_t seed, float lo, float hi) {
  for (int64_t i = first_index(); i < n; i += index_step()) {
    double v = static_cast<double>(x[i]);
    double slope = static_cast<double>((lo + hi) / 2.0f);
    if (train)
      slope = static_cast<double>(static_cast<T>(
          mxr__uniform_at(seed, static_cast<uint64_t>(i)) * static_cast<double>(hi - lo) +
          static_cast<double>(lo)));
    if (req_mask != kNull) store_req(mask, i, req_mask, slope);
    if (req_out != kNull) store_req(out, i, req_out, elemwise_eval(F_XELU, v, slope, 0));
  }
}

}  // namespace

extern "C" int mxr__gpu_emap(void *stream, int fn, int dtype, int64_t n, const void *a,
                             mxr_gpu_operand b, mxr_gpu_operand c, void *out, int req) {
  if (req == kNull || n == 0) return 0;
  if (dtype == MXR_FLOAT32)
    emap_kernel<float><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        fn, n, static_cast<const float *>(a), b, c, static_cast<float *>(out), req);
  else if (dtype == MXR_FLOAT64)
    emap_kernel<double><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        fn, n, static_cast<const double *>(a), b, c, static_cast<double *>(out), req);
  else
    return unsupported("elementwise op", dtype, req);
  return finish_launch(stream);
}

extern "C" int mxr__gpu_bcast_map(void *stream, int fn, int dtype, const bcast *bc, int64_t n,
                                  const void *a, const void *b, void *out, int req) {
  if (req == kNull || n == 0) return 0;
  if (dtype == MXR_FLOAT32)
    bcast_map_kernel<float><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        fn, *bc, n, static_cast<const float *>(a), static_cast<const float *>(b),
        static_cast<float *>(out), req);
  else if (dtype == MXR_FLOAT64)
    bcast_map_kernel<double><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        fn, *bc, n, static_cast<const double *>(a), static_cast<const double *>(b),
        static_cast<double *>(out), req);
  else
    return unsupported("broadcast op", dtype, req);
  return finish_launch(stream);
}

extern "C" int mxr__gpu_bcast_grad(void *stream, int kind, int side, int dtype, const bcast *bc,
                                   int64_t n, const void *g, const void *a, const void *b,
                                   void *out, int req) {
  if (req == kNull || n == 0) return 0;
  GradAxes ax = split_axes(*bc, side);
  if (dtype == MXR_FLOAT32)
    bcast_grad_kernel<float><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        kind, side, *bc, ax, n, static_cast<const float *>(g), static_cast<const float *>(a),
        static_cast<const float *>(b), static_cast<float *>(out), req);
  else if (dtype == MXR_FLOAT64)
    bcast_grad_kernel<double><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        kind, side, *bc, ax, n, static_cast<const double *>(g), static_cast<const double *>(a),
        static_cast<const double *>(b), static_cast<double *>(out), req);
  else
    return unsupported("broadcast gradient", dtype, req);
  return finish_launch(stream);
}

extern "C" int mxr__gpu_rrelu(void *stream, int dtype, int64_t n, const void *x, void *out,
                              int req_out, void *mask, int req_mask, bool train, uint64_t seed,
                              float lo, float hi) {
  if (n == 0 || (req_out == kNull && req_mask == kNull)) return 0;
  if (!is_float_dtype(dtype)) return unsupported("LeakyReLU (rrelu)", dtype, req_out);
  if (dtype == MXR_FLOAT32)
    rrelu_kernel<float><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        n, static_cast<const float *>(x), static_cast<float *>(out), req_out,
        static_cast<float *>(mask), req_mask, train, seed, lo, hi);
  else
    rrelu_kernel<double><<<blocks_for(n), kThreads, 0, as_stream(stream)>>>(
        n, static_cast<const double *>(x), static_cast<double *>(out), req_out,
        static_cast<double *>(mask), req_mask, train, seed, lo, hi);
  return finish_launch(stream);
}
