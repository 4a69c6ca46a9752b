/*
 * Convolution and its gradient without cuDNN (convolution_gemm.h): the CPU
 * kernel's method (op/convolution.c), step for step, with CUDA kernels for
 * its loops and cuBLAS for its products.  Used for cudnn_off=True and in
 * builds without cuDNN.
 *
 * Per image, as on the CPU: im2col lowers the image to its column matrix
 * (row (c, k0, k1, k2), column the output position, 0 for taps in the
 * padding) in a scratch buffer, unless the kernel is 1x1 with stride 1 and
 * no pad (then the image is its own column matrix); each group's output is
 * then one product of the group's weights with its rows of the column
 * matrix.  The data gradient is, per image and group, W^T dy into the
 * column buffer, which col2im adds onto the image's gradient; the weight
 * gradient accumulates dy col^T image after image (beta 1), after a zero
 * fill for write requests.  So the products, their operands and the order
 * in which the images' contributions are added are the CPU's; only the
 * summation order inside a product (cuBLAS's, not OpenBLAS's) differs.
 *
 * col2im gathers instead of scattering: one thread per image element adds
 * the column entries of its taps in the order (k0, k1, k2) in which the
 * CPU's loop reaches them, each add rounded to the dtype as the CPU rounds
 * it -- the same result, bit for bit, with no atomics.  The bias add is
 * elementwise, in the dtype, as on the CPU.  The bias gradient sums dy per
 * filter in double (one block per filter, a tree over its threads' partial
 * sums: the order differs from the CPU's sequential sum, which changes
 * float64 results in the last bits at most) and rounds once to the dtype.
 *
 * Everything is queued on the stream of the worker's cuBLAS handle (the
 * worker's main stream, which is run->stream; without a worker the legacy
 * default stream, waited for at the end).  The column buffer of one image,
 * c * k0 * k1 * k2 * out0 * out1 * out2 elements (the CPU's workspace), is
 * the worker's device scratch, asked for once per call and shared by the
 * data and weight gradients (stream order separates their uses).  No
 * allocation, copy or wait otherwise: CUDA graphs may capture the calls.
 */
#include "config.h"

#include <climits>
#include <cstdint>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "cuda/check.h"
#include "cuda/cublas.h"
#include "cuda/worker.h"
#include "op/cuda/convolution_gemm.h"
#include "op/cuda/kernel_util.cuh"

using namespace mxr_kernels;

namespace {

/* What the kernels need of a convolution (passed by value).  Spatial
 * arrays have 3 entries, lower ranks padded in front as convolution.h says. */
struct Geom {
  int64_t c;                                     /* input channels (all groups) */
  int64_t in[3], out[3], k[3], s[3], p[3], d[3]; /* extents, kernel, stride, pad, dilation */
  int64_t isz, osz, ksz;                         /* spatial element counts */
  bool direct; /* 1x1 kernel, stride 1, no pad: the image is its column matrix */
};

Geom geom_of(const struct mxr__gpu_conv *cv) {
  Geom g;
  g.c = cv->c;
  g.isz = g.osz = g.ksz = 1;
  g.direct = true;
  for (int i = 0; i < 3; i++) {
    g.in[i] = cv->in[i];
    g.out[i] = cv->out[i];
    g.k[i] = cv->k[i];
    g.s[i] = cv->s[i];
    g.p[i] = cv->p[i];
    g.d[i] = cv->d[i];
    g.isz *= g.in[i];
    g.osz *= g.out[i];
    g.ksz *= g.k[i];
    g.direct = g.direct && g.k[i] == 1 && g.s[i] == 1 && g.p[i] == 0;
  }
  return g;
}

/* ------------------------------------------------------------ kernels */

/* col[j] for j < c * ksz * osz: row j / osz = (c, a, b, e), column
 * j % osz = (o0, o1, o2), as convolution.c's im2col fills it. */
template <typename T>
__global__ void im2col_kernel(const T *img, T *col, Geom g, int64_t total) {
  for (int64_t j = first_index(); j < total; j += index_step()) {
    const int64_t o = j % g.osz, row = j / g.osz;
    const int64_t o2 = o % g.out[2], o1 = o / g.out[2] % g.out[1], o0 = o / (g.out[2] * g.out[1]);
    const int64_t e = row % g.k[2], b = row / g.k[2] % g.k[1], a = row / (g.k[2] * g.k[1]) % g.k[0];
    const int64_t ch = row / g.ksz;
    const int64_t i0 = o0 * g.s[0] - g.p[0] + a * g.d[0];
    const int64_t i1 = o1 * g.s[1] - g.p[1] + b * g.d[1];
    const int64_t i2 = o2 * g.s[2] - g.p[2] + e * g.d[2];
    const bool ok = i0 >= 0 && i0 < g.in[0] && i1 >= 0 && i1 < g.in[1] && i2 >= 0 && i2 < g.in[2];
    col[j] = ok ? img[((ch * g.in[0] + i0) * g.in[1] + i1) * g.in[2] + i2] : T(0);
  }
}

/* The output position along dimension `dim` whose tap `t` reads input
 * position `i`, if there is one (convolution.c: i = o * s - p + t * d). */
__device__ inline bool tap_output(const Geom &g, int dim, int64_t i, int64_t t, int64_t *o) {
  const int64_t u = i + g.p[dim] - t * g.d[dim];
  if (u < 0 || u % g.s[dim] != 0) return false;
  *o = u / g.s[dim];
  return *o < g.out[dim];
}

/* img[x] += every column entry that im2col would have read from x, in the
 * order convolution.c's col2im adds them (taps a, b, e in row-major order), each
 * add rounded to T.  x < c * isz. */
template <typename T>
__global__ void col2im_kernel(const T *col, T *img, Geom g, int64_t total) {
  for (int64_t x = first_index(); x < total; x += index_step()) {
    const int64_t i2 = x % g.in[2], i1 = x / g.in[2] % g.in[1];
    const int64_t i0 = x / (g.in[2] * g.in[1]) % g.in[0], ch = x / g.isz;
    T v = img[x];
    for (int64_t a = 0; a < g.k[0]; a++) {
      int64_t o0;
      if (!tap_output(g, 0, i0, a, &o0)) continue;
      for (int64_t b = 0; b < g.k[1]; b++) {
        int64_t o1;
        if (!tap_output(g, 1, i1, b, &o1)) continue;
        for (int64_t e = 0; e < g.k[2]; e++) {
          int64_t o2;
          if (!tap_output(g, 2, i2, e, &o2)) continue;
          const int64_t row = ((ch * g.k[0] + a) * g.k[1] + b) * g.k[2] + e;
          v += col[row * g.osz + (o0 * g.out[1] + o1) * g.out[2] + o2];
        }
      }
    }
    img[x] = v;
  }
}

/* y (n, f, osz) += bias[filter], in T. */
template <typename T>
__global__ void add_bias_kernel(T *y, const T *bias, int64_t f, int64_t osz, int64_t total) {
  for (int64_t i = first_index(); i < total; i += index_step()) y[i] += bias[i / osz % f];
}

/* db[m] = (or +=) the sum of dy (n, f, osz) over images and positions of
 * filter m: one block per filter (a block-stride loop over filters), the
 * sum kept in double and rounded once to T, as the CPU does.  Launched
 * with kThreads (a power of two) threads per block. */
template <typename T>
__global__ void bias_grad_kernel(const T *dy, T *db, int64_t n, int64_t f, int64_t osz, int req) {
  __shared__ double part[kThreads];
  const int64_t len = n * osz;
  for (int64_t m = blockIdx.x; m < f; m += gridDim.x) {
    double s = 0;
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x)
      s += static_cast<double>(dy[(i / osz * f + m) * osz + i % osz]);
    part[threadIdx.x] = s;
    __syncthreads();
    for (unsigned h = blockDim.x / 2; h > 0; h /= 2) {
      if (threadIdx.x < h) part[threadIdx.x] += part[threadIdx.x + h];
      __syncthreads();
    }
    if (threadIdx.x == 0) store_req(db, m, req, part[0]);
    __syncthreads(); /* part is refilled for the next filter */
  }
}

/* ------------------------------------------------------ cuBLAS, queues */

/* The gemm of a dtype, from the loaded API (as in linalg.cu). */
template <typename T>
struct Gemm;
template <>
struct Gemm<float> {
  static decltype(MxrCublas::sgemm) of(const MxrCublas *api) { return api->sgemm; }
};
template <>
struct Gemm<double> {
  static decltype(MxrCublas::dgemm) of(const MxrCublas *api) { return api->dgemm; }
};

/* The worker's cuBLAS handle (its math mode follows the TF32 policy) and
 * the stream it queues on, where everything else of the call goes too. */
struct Queue {
  const MxrCublas *api;
  cublasHandle_t h;
  cudaStream_t stream;
};

int queue_for(const struct mxr_run_ctx *run, Queue *q) {
  void *hv;
  int st = mxr__cuda_blas_handle(run, &hv);
  if (st) return st;
  q->api = mxr__cublas(); /* loaded: the handle exists */
  q->h = static_cast<cublasHandle_t>(hv);
  MXR_CUBLAS_CALL(q->api->get_stream(q->h, &q->stream));
  return 0;
}

/* convolution.c's gemm(): row-major C (m x n) = op(A) op(B) (+ C when add),
 * op(A) m x k, op(B) k x n, leading dimensions as stored.  cuBLAS is
 * column-major, where a row-major matrix reads as its transpose: so
 * C^T = op(B)^T op(A)^T, the operands swapped (linalg.cu).  Sizes fit int
 * (check_conv). */
template <typename T>
int gemm(const Queue &q, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T *a,
         const T *b, bool add, T *c) {
  if (m == 0 || n == 0) return 0;
  if (k == 0) { /* an empty sum: C = 0, or C unchanged */
    if (!add) MXR_CUDA_CALL(cudaMemsetAsync(c, 0, static_cast<size_t>(m * n) * sizeof(T), q.stream));
    return 0;
  }
  const T alpha = 1, beta = add ? 1 : 0;
  const int lda = static_cast<int>(ta ? m : k), ldb = static_cast<int>(tb ? k : n);
  MXR_CUBLAS_CALL(Gemm<T>::of(q.api)(q.h, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                     ta ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
                                     static_cast<int>(m), static_cast<int>(k), &alpha, b, ldb, a,
                                     lda, &beta, c, static_cast<int>(n)));
  return 0;
}

/* Queue col = im2col(img). */
template <typename T>
int im2col(const Queue &q, const Geom &g, const T *img, T *col) {
  const int64_t total = g.c * g.ksz * g.osz;
  if (total == 0) return 0;
  im2col_kernel<T><<<blocks_for(total), kThreads, 0, q.stream>>>(img, col, g, total);
  MXR_CUDA_CALL(cudaGetLastError());
  return 0;
}

/* Queue img += col2im(col). */
template <typename T>
int col2im(const Queue &q, const Geom &g, const T *col, T *img) {
  const int64_t total = g.c * g.isz;
  if (total == 0) return 0;
  col2im_kernel<T><<<blocks_for(total), kThreads, 0, q.stream>>>(col, img, g, total);
  MXR_CUDA_CALL(cudaGetLastError());
  return 0;
}

/* Zero n elements, as a write request wants before accumulating. */
template <typename T>
int zero(const Queue &q, T *p, int64_t n) {
  if (n > 0) MXR_CUDA_CALL(cudaMemsetAsync(p, 0, static_cast<size_t>(n) * sizeof(T), q.stream));
  return 0;
}

/* Scratch pieces start at multiples of this. */
constexpr size_t kScratchAlign = 256;

size_t align_up(size_t bytes) { return (bytes + kScratchAlign - 1) / kScratchAlign * kScratchAlign; }

/* The one piece of scratch a call carves: the column buffer of one image
 * (NULL when the image is its own column matrix, or the matrix is
 * empty). */
template <typename T>
int col_buffer(const struct mxr_run_ctx *run, const Geom &g, T **col) {
  *col = nullptr;
  const size_t bytes = g.direct ? 0 : static_cast<size_t>(g.c * g.ksz * g.osz) * sizeof(T);
  if (bytes == 0) return 0;
  void *base;
  int st = mxr__cuda_scratch(run, align_up(bytes), &base);
  if (st) return st;
  *col = static_cast<T *>(base);
  return 0;
}

/* What the launchers accept: the CPU kernel's limits (convolution.c's
 * conv_cpu_checks: BLAS sizes in int) and a sane description. */
int check_conv(const char *op, const struct mxr__gpu_conv *cv) {
  if (!is_float_dtype(cv->dtype)) return unsupported(op, cv->dtype, 0);
  if (cv->nsp < 1 || cv->nsp > 3 || cv->groups < 1 || cv->c % cv->groups || cv->f % cv->groups)
    return mxr_set_error(MXR_EINVAL,
                         "%s (GPU): %d-D convolution of %lld channels and %lld filters in %lld "
                         "groups is not supported",
                         op, cv->nsp, (long long)cv->c, (long long)cv->f, (long long)cv->groups);
  const int64_t kd = cv->c / cv->groups * cv->k[0] * cv->k[1] * cv->k[2];
  const int64_t osz = cv->out[0] * cv->out[1] * cv->out[2];
  if (cv->f > INT_MAX || osz > INT_MAX || kd > INT_MAX)
    return mxr_set_error(MXR_EINVAL, "%s (GPU): matrix sizes exceed the cuBLAS limit", op);
  return 0;
}

/* ---------------------------------------------------------- the passes */

template <typename T>
int forward(const struct mxr_run_ctx *run, const struct mxr__gpu_conv *cv, const T *x, const T *w,
            const T *bias, T *y, int req) {
  const Geom g = geom_of(cv);
  const int64_t fg = cv->f / cv->groups, kd = cv->c / cv->groups * g.ksz, P = g.osz;
  Queue q;
  int st = queue_for(run, &q);
  T *ws = nullptr;
  if (!st) st = col_buffer(run, g, &ws);
  if (st) return st;
  const bool add = req == kAdd;
  for (int64_t n = 0; n < cv->n; n++) {
    const T *img = x + n * cv->c * g.isz, *col = img;
    if (!g.direct) {
      st = im2col(q, g, img, ws);
      if (st) return st;
      col = ws;
    }
    for (int64_t grp = 0; grp < cv->groups; grp++) {
      st = gemm(q, false, false, fg, P, kd, w + grp * fg * kd, col + grp * kd * P, add,
                y + (n * cv->f + grp * fg) * P);
      if (st) return st;
    }
  }
  const int64_t total = cv->n * cv->f * P;
  if (bias && total > 0) {
    add_bias_kernel<T><<<blocks_for(total), kThreads, 0, q.stream>>>(y, bias, cv->f, P, total);
    MXR_CUDA_CALL(cudaGetLastError());
  }
  return finish_launch(q.stream);
}

template <typename T>
int backward(const struct mxr_run_ctx *run, const struct mxr__gpu_conv *cv, const T *dy,
             const T *x, const T *w, T *dx, int req_dx, T *dw, int req_dw, T *db, int req_db) {
  const Geom g = geom_of(cv);
  const int64_t fg = cv->f / cv->groups, kd = cv->c / cv->groups * g.ksz, P = g.osz;
  Queue q;
  int st = queue_for(run, &q);
  T *ws = nullptr;
  if (!st && (req_dx != kNull || req_dw != kNull)) st = col_buffer(run, g, &ws);
  if (st) return st;

  if (req_dx != kNull) { /* data: col = W^T dy per group, then col2im */
    if (req_dx != kAdd) st = zero(q, dx, cv->n * cv->c * g.isz);
    for (int64_t n = 0; !st && n < cv->n; n++) {
      T *dimg = dx + n * cv->c * g.isz;
      for (int64_t grp = 0; !st && grp < cv->groups; grp++)
        st = gemm(q, true, false, kd, P, fg, w + grp * fg * kd, dy + (n * cv->f + grp * fg) * P,
                  g.direct, (g.direct ? dimg : ws) + grp * kd * P);
      if (!st && !g.direct) st = col2im(q, g, ws, dimg);
    }
    if (st) return st;
  }
  if (req_dw != kNull) { /* weight: dW += dy col^T, summed over the batch */
    if (req_dw != kAdd) st = zero(q, dw, cv->f * kd);
    for (int64_t n = 0; !st && n < cv->n; n++) {
      const T *img = x + n * cv->c * g.isz, *col = img;
      if (!g.direct) {
        st = im2col(q, g, img, ws);
        col = ws;
      }
      for (int64_t grp = 0; !st && grp < cv->groups; grp++)
        st = gemm(q, false, true, fg, kd, P, dy + (n * cv->f + grp * fg) * P, col + grp * kd * P,
                  true, dw + grp * fg * kd);
    }
    if (st) return st;
  }
  if (db && req_db != kNull) { /* bias: dy summed over batch and positions */
    const int blocks = static_cast<int>(cv->f < kMaxBlocks ? cv->f : kMaxBlocks); /* f >= 1 */
    bias_grad_kernel<T><<<blocks, kThreads, 0, q.stream>>>(dy, db, cv->n, cv->f, P, req_db);
    MXR_CUDA_CALL(cudaGetLastError());
  }
  return finish_launch(q.stream);
}

}  // namespace

extern "C" int mxr__gpu_conv_gemm_forward(const struct mxr_run_ctx *run,
                                          const struct mxr__gpu_conv *cv, const void *x,
                                          const void *w, const void *b, void *y, int req) {
  if (req == kNull) return 0;
  int st = check_conv("Convolution", cv);
  if (st) return st;
  if (cv->n * cv->f * cv->out[0] * cv->out[1] * cv->out[2] == 0) return 0; /* y is empty */
  if (cv->dtype == MXR_FLOAT64)
    return forward(run, cv, static_cast<const double *>(x), static_cast<const double *>(w),
                   static_cast<const double *>(b), static_cast<double *>(y), req);
  return forward(run, cv, static_cast<const float *>(x), static_cast<const float *>(w),
                 static_cast<const float *>(b), static_cast<float *>(y), req);
}

extern "C" int mxr__gpu_conv_gemm_backward(const struct mxr_run_ctx *run,
                                           const struct mxr__gpu_conv *cv, const void *dy,
                                           const void *x, const void *w, void *dx, int req_dx,
                                           void *dw, int req_dw, void *db, int req_db) {
  if (!db) req_db = kNull;
  if (req_dx == kNull && req_dw == kNull && req_db == kNull) return 0;
  int st = check_conv("_backward_Convolution", cv);
  if (st) return st;
  if (cv->dtype == MXR_FLOAT64)
    return backward(run, cv, static_cast<const double *>(dy), static_cast<const double *>(x),
                    static_cast<const double *>(w), static_cast<double *>(dx), req_dx,
                    static_cast<double *>(dw), req_dw, static_cast<double *>(db), req_db);
  return backward(run, cv, static_cast<const float *>(dy), static_cast<const float *>(x),
                  static_cast<const float *>(w), static_cast<float *>(dx), req_dx,
                  static_cast<float *>(dw), req_dw, static_cast<float *>(db), req_db);
}
