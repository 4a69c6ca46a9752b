/*
 * Pooling through plain kernels or cuDNN, with its gradient (pooling.h).
 *
 * Pooling.  The kernels compute the CPU op's definition (pooling.c) element
 * for element, arithmetic included: every mode (max, avg with or without
 * the padding counted, sum, Lp), every convention (valid, full, same),
 * global pooling, channel-last layouts; max's gradient goes to the first
 * maximum of each window.  cuDNN runs the max and avg forwards and the avg
 * gradient where its definition is the CPU op's: channel first, every
 * output extent cuDNN's floor((in + 2 pad - kernel) / stride) + 1 (the
 * valid convention, or a full/same one that coincides), and pad < kernel,
 * so that no window lies wholly in the padding.  (cuDNN's average sums and
 * then divides where the CPU divides each element first: the results agree
 * to rounding.)  cudnn_off, and builds without cuDNN, use the kernels.
 */
#include "config.h"

#include <cfloat>
#include <climits>
#include <cstdint>

#include <cuda_runtime_api.h>
#include <math_constants.h>

#include "cuda/check.h"
#include "cuda/worker.h"
#include "mxref/engine.h"
#include "op/cuda/convolution.h"
#include "op/cuda/convolution_gemm.h"
#include "op/cuda/cudnn_util.cuh"
#include "op/cuda/kernel_util.cuh"
#include "op/cuda/pooling.h"

#ifdef MXR_HAVE_CUDNN
#include <array>
#include <map>
#include <mutex>
#include <vector>

#include <cudnn.h>

#include "cuda/cudnn.h"
#endif

using namespace mxr_kernels;

namespace {

/* The pooling and the sizes the kernels derive from it (passed by value). */
struct PoolArgs {
  struct mxr__gpu_pool g;
  int64_t isz, osz; /* spatial element counts */
};

/* The element index of plane (n, c), spatial position j of `size`. */
__device__ inline int64_t pool_at(const PoolArgs &a, int64_t n, int64_t c, int64_t j,
                                  int64_t size) {
  return a.g.channel_last ? (n * size + j) * a.g.c + c : (n * a.g.c + c) * size + j;
}

/* The result of one arithmetic operation in T, as the CPU rounds it. */
template <typename T>
__device__ inline double rnd(double v) {
  return static_cast<double>(static_cast<T>(v));
}

template <typename T>
__device__ inline double lowest();
template <>
__device__ inline double lowest<float>() {
  return -FLT_MAX;
}
template <>
__device__ inline double lowest<double>() {
  return -DBL_MAX;
}

/* The window of output position o, exactly as pooling.c's pool_window: bounds
 * [lo, hi) clipped to the input, and the divisor (1 unless averaging). */
struct Window {
  int64_t lo[3], hi[3];
  int64_t size;
};

__device__ void pool_window(const PoolArgs &a, const int64_t o[3], Window *w) {
  const struct mxr__gpu_pool &g = a.g;
  const bool max_style = g.type == MXR__GPU_POOL_MAX, avg = g.type == MXR__GPU_POOL_AVG;
  int64_t full = 1, clipped = 1;
  for (int i = 0; i < 3; i++) {
    int64_t lo = o[i] * g.s[i] - g.p[i];
    int64_t hi = lo + g.k[i];
    if (max_style) {
      if (hi > g.in[i]) hi = g.in[i];
    } else {
      if (hi > g.in[i] + g.p[i]) hi = g.in[i] + g.p[i];
      full *= hi - lo;
      if (hi > g.in[i]) hi = g.in[i];
    }
    if (lo < 0) lo = 0;
    clipped *= hi - lo;
    w->lo[i] = lo;
    w->hi[i] = hi;
  }
  w->size = !avg ? 1 : g.include_pad ? full : clipped;
}

template <typename T>
__device__ double pow_p(double v, int pv) {
  if (pv == 2) return rnd<T>(v * v);
  if (pv == 3) return rnd<T>(rnd<T>(v * v) * v);
  return v;
}
template <typename T>
__device__ double root_p(double v, int pv) {
  if (pv == 2) return rnd<T>(sqrt(v));
  if (pv == 3) return rnd<T>(cbrt(v));
  return v;
}
/* d out / d in times the incoming gradient (pool_utils.h's lp_grad). */
template <typename T>
__device__ double lp_grad(double dy, double x, double y, int pv) {
  if (pv == 1) return dy;
  if (y == 0) return 0;
  double r = rnd<T>(x / y);
  return pv == 2 ? rnd<T>(dy * r) : rnd<T>(rnd<T>(dy * r) * r);
}

__device__ inline void split3(int64_t j, const int64_t *ext, int64_t *pos) {
  pos[2] = j % ext[2];
  pos[1] = (j / ext[2]) % ext[1];
  pos[0] = j / (ext[1] * ext[2]);
}

__device__ inline int64_t join3(const int64_t *pos, const int64_t *ext) {
  return (pos[0] * ext[1] + pos[1]) * ext[2] + pos[2];
}

/* One thread per output element, summing its window in the CPU's order. */
template <typename T>
__global__ void pool_forward_kernel(PoolArgs a, const T *x, T *y, bool add) {
  const struct mxr__gpu_pool &g = a.g;
  const bool is_max = g.type == MXR__GPU_POOL_MAX;
  const int64_t total = g.n * g.c * a.osz;
  for (int64_t t = first_index(); t < total; t += index_step()) {
    const int64_t oj = t % a.osz, plane = t / a.osz, c = plane % g.c, n = plane / g.c;
    int64_t o[3];
    split3(oj, g.out, o);
    Window w;
    pool_window(a, o, &w);
    double v = is_max ? lowest<T>() : 0.0;
    int64_t pos[3];
    for (pos[0] = w.lo[0]; pos[0] < w.hi[0]; pos[0]++)
      for (pos[1] = w.lo[1]; pos[1] < w.hi[1]; pos[1]++)
        for (pos[2] = w.lo[2]; pos[2] < w.hi[2]; pos[2]++) {
          double xv = static_cast<double>(x[pool_at(a, n, c, join3(pos, g.in), a.isz)]);
          if (is_max) {
            if (xv > v) v = xv;
          } else {
            v = rnd<T>(v + rnd<T>(pow_p<T>(xv, g.p_value) / static_cast<double>(w.size)));
          }
        }
    if (!is_max) v = (g.nsp == 3 && w.size == 0) ? CUDART_NAN : root_p<T>(v, g.p_value);
    const int64_t yi = pool_at(a, n, c, oj, a.osz);
    y[yi] = static_cast<T>(add ? static_cast<double>(y[yi]) + v : v);
  }
}

/* Whether position i holds the first element of window w (row-major) that
 * equals yv: the one max pooling's gradient goes to. */
template <typename T>
__device__ bool first_max_at(const PoolArgs &a, const Window &w, int64_t n, int64_t c, double yv,
                             const int64_t i[3], const T *x) {
  int64_t pos[3];
  for (pos[0] = w.lo[0]; pos[0] < w.hi[0]; pos[0]++)
    for (pos[1] = w.lo[1]; pos[1] < w.hi[1]; pos[1]++)
      for (pos[2] = w.lo[2]; pos[2] < w.hi[2]; pos[2]++)
        if (static_cast<double>(x[pool_at(a, n, c, join3(pos, a.g.in), a.isz)]) == yv)
          return pos[0] == i[0] && pos[1] == i[1] && pos[2] == i[2];
  return false;
}

/* The outputs whose (unclipped) windows [o s - p, o s - p + k) hold input
 * position i, per dimension: [lo, hi]. */
__device__ void covering_outputs(const struct mxr__gpu_pool &g, const int64_t i[3], int64_t lo[3],
                                 int64_t hi[3]) {
  for (int d = 0; d < 3; d++) {
    const int64_t first = i[d] + g.p[d] - g.k[d] + 1; /* o s >= first */
    lo[d] = first <= 0 ? 0 : (first + g.s[d] - 1) / g.s[d];
    hi[d] = (i[d] + g.p[d]) / g.s[d];
    if (hi[d] > g.out[d] - 1) hi[d] = g.out[d] - 1;
  }
}

/* One thread per input element, gathering the gradient of every window
 * that holds it, in the order of the outputs, so the sum is rounded as the
 * CPU rounds it. */
template <typename T>
__global__ void pool_backward_gather(PoolArgs a, const T *dy, const T *x, const T *y, T *dx,
                                     bool add) {
  const struct mxr__gpu_pool &g = a.g;
  const bool is_max = g.type == MXR__GPU_POOL_MAX;
  const int64_t total = g.n * g.c * a.isz;
  for (int64_t t = first_index(); t < total; t += index_step()) {
    const int64_t ij = t % a.isz, plane = t / a.isz, c = plane % g.c, n = plane / g.c;
    int64_t i[3], olo[3], ohi[3], o[3];
    split3(ij, g.in, i);
    covering_outputs(g, i, olo, ohi);
    const int64_t xi = pool_at(a, n, c, ij, a.isz);
    const double xv = static_cast<double>(x[xi]);
    T acc = add ? dx[xi] : static_cast<T>(0);
    for (o[0] = olo[0]; o[0] <= ohi[0]; o[0]++)
      for (o[1] = olo[1]; o[1] <= ohi[1]; o[1]++)
        for (o[2] = olo[2]; o[2] <= ohi[2]; o[2]++) {
          Window w;
          pool_window(a, o, &w);
          bool inside = true;
          for (int d = 0; d < 3; d++) inside = inside && i[d] >= w.lo[d] && i[d] < w.hi[d];
          if (!inside) continue;
          const int64_t yi = pool_at(a, n, c, join3(o, g.out), a.osz);
          const double yv = static_cast<double>(y[yi]), dyv = static_cast<double>(dy[yi]);
          double gv;
          if (is_max) {
            if (xv != yv || !first_max_at(a, w, n, c, yv, i, x)) continue;
            gv = dyv;
          } else {
            gv = rnd<T>(lp_grad<T>(dyv, xv, yv, g.p_value) / static_cast<double>(w.size));
          }
          acc = static_cast<T>(static_cast<double>(acc) + gv);
        }
    dx[xi] = acc;
  }
}

/* Max pooling's gradient where windows do not overlap: one thread per
 * output finds its window's first maximum and adds the gradient there (no
 * element is in two windows, so no two threads write one).  This spares
 * global pooling the gather's rescans of the whole plane. */
template <typename T>
__global__ void pool_max_backward_scatter(PoolArgs a, const T *dy, const T *x, const T *y, T *dx) {
  const struct mxr__gpu_pool &g = a.g;
  const int64_t total = g.n * g.c * a.osz;
  for (int64_t t = first_index(); t < total; t += index_step()) {
    const int64_t oj = t % a.osz, plane = t / a.osz, c = plane % g.c, n = plane / g.c;
    int64_t o[3], pos[3];
    split3(oj, g.out, o);
    Window w;
    pool_window(a, o, &w);
    const int64_t yi = pool_at(a, n, c, oj, a.osz);
    const double yv = static_cast<double>(y[yi]);
    bool found = false;
    for (pos[0] = w.lo[0]; pos[0] < w.hi[0] && !found; pos[0]++)
      for (pos[1] = w.lo[1]; pos[1] < w.hi[1] && !found; pos[1]++)
        for (pos[2] = w.lo[2]; pos[2] < w.hi[2] && !found; pos[2]++) {
          const int64_t xi = pool_at(a, n, c, join3(pos, g.in), a.isz);
          if (static_cast<double>(x[xi]) != yv) continue;
          found = true;
          dx[xi] = static_cast<T>(static_cast<double>(dx[xi]) + static_cast<double>(dy[yi]));
        }
  }
}

PoolArgs pool_args(const struct mxr__gpu_pool *pl) {
  PoolArgs a;
  a.g = *pl;
  if (a.g.type != MXR__GPU_POOL_LP) a.g.p_value = 1;
  a.isz = prod3(pl->in);
  a.osz = prod3(pl->out);
  return a;
}

bool windows_overlap(const struct mxr__gpu_pool *pl) {
  for (int i = 0; i < 3; i++)
    if (pl->out[i] > 1 && pl->k[i] > pl->s[i]) return true;
  return false;
}

int check_pool(const char *op, const struct mxr__gpu_pool *pl, int req) {
  if (pl->dtype != MXR_FLOAT32 && pl->dtype != MXR_FLOAT64) return unsupported(op, pl->dtype, req);
  if (pl->type < MXR__GPU_POOL_MAX || pl->type > MXR__GPU_POOL_LP)
    return mxr_set_error(MXR_EINVAL, "%s (GPU): pool type %d is not supported", op, pl->type);
  return 0;
}

template <typename T>
int pool_forward_kernels(void *stream, const PoolArgs &a, const void *x, void *y, int req) {
  const int64_t total = a.g.n * a.g.c * a.osz;
  pool_forward_kernel<T><<<blocks_for(total), kThreads, 0, as_stream(stream)>>>(
      a, static_cast<const T *>(x), static_cast<T *>(y), req == kAdd);
  return finish_launch(stream);
}

template <typename T>
int pool_backward_kernels(void *stream, const PoolArgs &a, const void *dy, const void *x,
                          const void *y, void *dx, int req) {
  const T *dyt = static_cast<const T *>(dy), *xt = static_cast<const T *>(x),
          *yt = static_cast<const T *>(y);
  T *dxt = static_cast<T *>(dx);
  const int64_t isize = a.g.n * a.g.c * a.isz, osize = a.g.n * a.g.c * a.osz;
  if (a.g.type == MXR__GPU_POOL_MAX && !windows_overlap(&a.g)) {
    if (req != kAdd)
      MXR_CUDA_CALL(cudaMemsetAsync(dx, 0, static_cast<size_t>(isize) * sizeof(T),
                                    as_stream(stream)));
    if (osize > 0)
      pool_max_backward_scatter<T><<<blocks_for(osize), kThreads, 0, as_stream(stream)>>>(
          a, dyt, xt, yt, dxt);
  } else {
    pool_backward_gather<T><<<blocks_for(isize), kThreads, 0, as_stream(stream)>>>(
        a, dyt, xt, yt, dxt, req == kAdd);
  }
  return finish_launch(stream);
}

}  // namespace

/* ========================================================= cuDNN pooling */

#ifdef MXR_HAVE_CUDNN
namespace {

/* Whether cuDNN computes this pooling as the CPU op defines it (see the
 * top of this file). */
bool cudnn_pools(const struct mxr__gpu_pool *pl) {
  if (!pl->allow_cudnn || pl->channel_last) return false;
  if (pl->type != MXR__GPU_POOL_MAX && pl->type != MXR__GPU_POOL_AVG) return false;
  if (pl->n < 1 || pl->c < 1 || !fits_int(pl->n * pl->c * prod3(pl->in))) return false;
  for (int i = 0; i < 3; i++) {
    if (pl->in[i] < 1 || pl->p[i] >= pl->k[i] || !fits_int(pl->k[i]) || !fits_int(pl->s[i]))
      return false;
    if (pl->out[i] != (pl->in[i] + 2 * pl->p[i] - pl->k[i]) / pl->s[i] + 1) return false;
  }
  return true;
}

struct PoolDescs {
  const MxrCudnn *dnn = nullptr;
  cudnnHandle_t h = nullptr;
  TensorDesc x, y;
  PoolDesc pool;
};

int describe_pool(const struct mxr_run_ctx *run, const struct mxr__gpu_pool *pl, PoolDescs *d) {
  int st = dnn_for(run, &d->dnn, &d->h);
  if (st) return st;
  const int ns = dnn_spatial(pl->nsp), nb = ns + 2;
  int xdims[5], ydims[5], window[3], pad[3], stride[3];
  dims_of(pl->n, pl->c, pl->in, ns, xdims);
  dims_of(pl->n, pl->c, pl->out, ns, ydims);
  tail_of(pl->k, ns, window);
  tail_of(pl->p, ns, pad);
  tail_of(pl->s, ns, stride);
  st = describe_packed(d->dnn, &d->x, pl->dtype, nb, xdims);
  if (!st) st = describe_packed(d->dnn, &d->y, pl->dtype, nb, ydims);
  if (st) return st;
  const cudnnPoolingMode_t mode = pl->type == MXR__GPU_POOL_MAX ? CUDNN_POOLING_MAX
                                  : pl->include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                    : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  MXR_CUDNN_CALL(d->dnn->create_pool_desc(&d->pool.d));
  /* The CPU's max skips NaN (a comparison with NaN is false). */
  MXR_CUDNN_CALL(d->dnn->set_pool_nd(d->pool.d, mode, CUDNN_NOT_PROPAGATE_NAN, ns, window, pad,
                                     stride));
  return 0;
}

int cudnn_pool_forward(const struct mxr_run_ctx *run, const struct mxr__gpu_pool *pl,
                       const void *x, void *y, int req) {
  PoolDescs d;
  int st = describe_pool(run, pl, &d);
  if (st) return st;
  MXR_CUDNN_CALL(d.dnn->pool_forward(d.h, d.pool.d, one(pl->dtype), d.x.d, x,
                                     blend(pl->dtype, req), d.y.d, y));
  return finish_launch(stream_of(run));
}

int cudnn_pool_backward(const struct mxr_run_ctx *run, const struct mxr__gpu_pool *pl,
                        const void *dy, const void *x, const void *y, void *dx, int req) {
  PoolDescs d;
  int st = describe_pool(run, pl, &d);
  if (st) return st;
  MXR_CUDNN_CALL(d.dnn->pool_backward(d.h, d.pool.d, one(pl->dtype), d.y.d, y, d.y.d, dy, d.x.d,
                                      x, blend(pl->dtype, req), d.x.d, dx));
  return finish_launch(stream_of(run));
}

}  // namespace
#endif /* MXR_HAVE_CUDNN */

extern "C" int mxr__gpu_pool_forward(const struct mxr_run_ctx *run, const struct mxr__gpu_pool *pl,
                                     const void *x, void *y, int req) {
  if (req == kNull) return 0;
  int st = check_pool("Pooling", pl, req);
  if (st) return st;
  const PoolArgs a = pool_args(pl);
  if (pl->n * pl->c * a.osz == 0) return 0;
#ifdef MXR_HAVE_CUDNN
  if (cudnn_pools(pl)) return cudnn_pool_forward(run, pl, x, y, req);
#endif
  void *stream = stream_of(run);
  return pl->dtype == MXR_FLOAT64 ? pool_forward_kernels<double>(stream, a, x, y, req)
                                  : pool_forward_kernels<float>(stream, a, x, y, req);
}

extern "C" int mxr__gpu_pool_backward(const struct mxr_run_ctx *run,
                                      const struct mxr__gpu_pool *pl, const void *dy,
                                      const void *x, const void *y, void *dx, int req) {
  if (req == kNull) return 0;
  int st = check_pool("_backward_Pooling", pl, req);
  if (st) return st;
  const PoolArgs a = pool_args(pl);
  if (pl->n * pl->c * a.isz == 0) return 0;
#ifdef MXR_HAVE_CUDNN
  /* cuDNN's max gradient may pick another of tied maxima than the CPU's
   * first one: max goes to the kernels. */
  if (pl->type == MXR__GPU_POOL_AVG && cudnn_pools(pl))
    return cudnn_pool_backward(run, pl, dy, x, y, dx, req);
#endif
  void *stream = stream_of(run);
  return pl->dtype == MXR_FLOAT64 ? pool_backward_kernels<double>(stream, a, dy, x, y, dx, req)
                                  : pool_backward_kernels<float>(stream, a, dy, x, y, dx, req);
}
