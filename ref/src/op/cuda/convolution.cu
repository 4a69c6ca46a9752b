/*
 * Convolution and its gradient through cuDNN (convolution.h).
 *
 * Workspace.  cuDNN's convolution algorithms want device scratch memory
 * whose size is known only once an algorithm is chosen on a device, while
 * an op's workspace_bytes() sees only params and shapes (and Convolution's
 * already sizes the CPU's im2col buffer, in host memory).  So the GPU
 * convolution does not use ctx->workspace: it takes its cuDNN workspace from
 * its engine worker's device scratch buffer (mxr__cuda_scratch,
 * cuda/worker.h), as MXNet takes its temp space from a per-device
 * resource.  The buffer is kept from op to op and grows to the largest
 * request (at least doubling, in 1 MiB steps; outgrown buffers are kept
 * until the worker stops, as CUDA graphs may hold them), so once the
 * largest shape has run, calls allocate nothing.  The size asked for is
 * the chosen algorithm's, which the choice keeps within the op's
 * `workspace` parameter (MB) unless cudnn_tune is "fastest".  The executor
 * and the imperative layer size ctx->workspace with workspace_bytes(),
 * which has no context: on a GPU they must not allocate it (the GPU kernels
 * here never read it).
 *
 * Algorithm choice.  cudnn_tune (or, when it is None,
 * MXNET_CUDNN_AUTOTUNE_DEFAULT) picks how: 0 takes cuDNN's heuristic order
 * (cudnnGet*Algorithm_v7) and the first algorithm within the workspace
 * limit; 1 measures every algorithm (cudnnFind*Algorithm, which allocates
 * its own buffers and blocks the host once) and takes the fastest within
 * the limit; 2 the fastest measured, whatever its workspace.  float32 runs
 * with CUDNN_FMA_MATH (no TF32), and only algorithms reported with that math
 * type are taken, unless mxr__gpu_tf32_allowed(); then Tensor Core math is
 * allowed too.  The choice is made once per device, direction, dtype,
 * geometry, tuning mode, workspace limit and TF32 permission, and kept in
 * a mutex-protected table of at most kMaxChoices entries (emptied when
 * full).  When cuDNN offers no algorithm that may be used (none within the
 * workspace limit, or none without TF32), the op runs without cuDNN
 * (convolution_gemm.h, the cudnn_off path) instead of failing, as MXNet falls back
 * to its own convolution where cuDNN cannot do one; a backward missing
 * either gradient's algorithm runs whole that way.
 *
 * Layouts.  Tensors are described to cuDNN with explicit packed strides,
 * channel first (the CPU op refuses channel-last convolution layouts).
 * cuDNN wants at least 2 spatial dimensions, so 1-D runs as 2-D with a
 * unit height (kernel 1, stride 1, dilation 1, pad 0 there).  Groups are
 * cuDNN's group count: the filter is (f, c / groups, k...).
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

#ifdef MXR_HAVE_CUDNN
#include <array>
#include <map>
#include <mutex>
#include <vector>

#include <cudnn.h>

#include "cuda/cudnn.h"
#endif

using namespace mxr_kernels;

#ifdef MXR_HAVE_CUDNN

/* ===================================================== cuDNN: convolution */

namespace {

/* The descriptors of one convolution; x, w and conv only when x has
 * elements (cuDNN refuses zero extents). */
struct ConvDescs {
  const MxrCudnn *dnn = nullptr;
  cudnnHandle_t h = nullptr;
  int nb = 4; /* tensor rank: 4, or 5 for 3-D */
  TensorDesc x, y, b;
  FilterDesc w;
  ConvDesc conv;
};

bool tf32_ok(int dtype) { return dtype == MXR_FLOAT32 && mxr__gpu_tf32_allowed(); }

/* What a float32 convolution may use: plain FMA unless TF32 is allowed.
 * float64 has no reduced-precision math to fear. */
bool math_allowed(int dtype, cudnnMathType_t m) {
  return dtype == MXR_FLOAT64 || tf32_ok(dtype) || m == CUDNN_FMA_MATH;
}

bool input_empty(const struct mxr__gpu_conv *cv) {
  return cv->n == 0 || cv->c == 0 || prod3(cv->in) == 0;
}

int64_t weight_size(const struct mxr__gpu_conv *cv) {
  return cv->f * (cv->c / cv->groups) * prod3(cv->k);
}

/* cuDNN's legacy API counts elements, dimensions and strides in int. */
int check_conv(const char *op, const struct mxr__gpu_conv *cv) {
  if (cv->dtype != MXR_FLOAT32 && cv->dtype != MXR_FLOAT64) return unsupported(op, cv->dtype, 0);
  if (cv->nsp < 1 || cv->nsp > 3 || cv->groups < 1)
    return mxr_set_error(MXR_EINVAL, "%s (GPU): %d-D convolution with %lld groups is not supported",
                         op, cv->nsp, (long long)cv->groups);
  bool ok = fits_int(cv->n * cv->c * prod3(cv->in)) && fits_int(cv->n * cv->f * prod3(cv->out)) &&
            fits_int(weight_size(cv));
  for (int i = 0; i < 3; i++)
    ok = ok && fits_int(cv->in[i]) && fits_int(cv->k[i]) && fits_int(cv->s[i]) &&
         fits_int(cv->p[i]) && fits_int(cv->d[i]);
  if (!ok || !fits_int(cv->n) || !fits_int(cv->c) || !fits_int(cv->f))
    return mxr_set_error(MXR_EINVAL, "%s (GPU): tensors of more than %d elements (or dimensions "
                         "past it) are beyond cuDNN's API", op, INT_MAX);
  return 0;
}

/* y (n, f, out...) and the bias as (1, f, 1...), which cuDNN broadcasts. */
int describe_output(const struct mxr__gpu_conv *cv, ConvDescs *d) {
  const int ns = dnn_spatial(cv->nsp);
  static const int64_t units[3] = {1, 1, 1};
  int ydims[5], bdims[5];
  dims_of(cv->n, cv->f, cv->out, ns, ydims);
  dims_of(1, cv->f, units, ns, bdims);
  int st = describe_packed(d->dnn, &d->y, cv->dtype, d->nb, ydims);
  return st ? st : describe_packed(d->dnn, &d->b, cv->dtype, d->nb, bdims);
}

/* x, the filter and the convolution; checks that cuDNN's output shape is
 * ours. */
int describe_conv(const struct mxr__gpu_conv *cv, ConvDescs *d) {
  const MxrCudnn *dnn = d->dnn;
  const int ns = dnn_spatial(cv->nsp);
  int xdims[5], wdims[5], pad[3], stride[3], dilate[3];
  dims_of(cv->n, cv->c, cv->in, ns, xdims);
  dims_of(cv->f, cv->c / cv->groups, cv->k, ns, wdims);
  tail_of(cv->p, ns, pad);
  tail_of(cv->s, ns, stride);
  tail_of(cv->d, ns, dilate);
  int st = describe_packed(dnn, &d->x, cv->dtype, d->nb, xdims);
  if (st) return st;
  MXR_CUDNN_CALL(dnn->create_filter_desc(&d->w.d));
  MXR_CUDNN_CALL(dnn->set_filter_nd(d->w.d, dnn_type(cv->dtype), CUDNN_TENSOR_NCHW, d->nb, wdims));
  MXR_CUDNN_CALL(dnn->create_conv_desc(&d->conv.d));
  MXR_CUDNN_CALL(dnn->set_conv_nd(d->conv.d, ns, pad, stride, dilate, CUDNN_CROSS_CORRELATION,
                                  dnn_type(cv->dtype)));
  MXR_CUDNN_CALL(dnn->set_conv_groups(d->conv.d, static_cast<int>(cv->groups)));
  MXR_CUDNN_CALL(dnn->set_conv_math(d->conv.d, tf32_ok(cv->dtype) ? CUDNN_TENSOR_OP_MATH
                                                                   : CUDNN_FMA_MATH));
  int want[5], got[5];
  dims_of(cv->n, cv->f, cv->out, ns, want);
  MXR_CUDNN_CALL(dnn->conv_output_dim(d->conv.d, d->x.d, d->w.d, d->nb, got));
  for (int i = 0; i < d->nb; i++)
    if (got[i] != want[i])
      return mxr_set_error(MXR_EINVAL, "Convolution (GPU): cuDNN computes output extent %d in "
                           "dimension %d where the op computes %d", got[i], i, want[i]);
  return 0;
}

int begin_conv(const struct mxr_run_ctx *run, const struct mxr__gpu_conv *cv, ConvDescs *d) {
  d->nb = dnn_spatial(cv->nsp) + 2;
  int st = dnn_for(run, &d->dnn, &d->h);
  /* cuDNN refuses extents of 0: y has none when n is 0 (out >= 1 always) */
  if (!st && cv->n > 0) st = describe_output(cv, d);
  if (!st && !input_empty(cv)) st = describe_conv(cv, d);
  return st;
}

/* ------------------------------------------------- algorithm choice */

enum Direction { kForward, kBackwardData, kBackwardFilter };

struct Choice {
  int algo; /* kNoAlgorithm: cuDNN offers none that may be used */
  cudnnMathType_t math;
  size_t workspace;
};

constexpr int kNoAlgorithm = -1;

using ChoiceKey = std::array<int64_t, 32>;

constexpr size_t kMaxChoices = 1024;

/* The choices made so far.  Allocated once and never freed, so that a
 * worker still running at process exit finds it intact. */
class ChoiceTable {
 public:
  bool find(const ChoiceKey &key, Choice *out) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return false;
    *out = it->second;
    return true;
  }
  void put(const ChoiceKey &key, const Choice &c) {
    std::lock_guard<std::mutex> lock(mu_);
    if (map_.size() >= kMaxChoices) map_.clear();
    map_.emplace(key, c); /* a choice made meanwhile by another thread stays */
  }

 private:
  std::mutex mu_;
  std::map<ChoiceKey, Choice> map_;
};

ChoiceTable &choices() {
  static ChoiceTable *table = new ChoiceTable;
  return *table;
}

ChoiceKey choice_key(const struct mxr__gpu_conv *cv, int device, Direction dir) {
  ChoiceKey key{};
  size_t i = 0;
  auto put = [&](int64_t v) { key[i++] = v; };
  put(device);
  put(dir);
  put(cv->dtype);
  put(cv->tune);
  put(tf32_ok(cv->dtype));
  put(cv->tune == 2 ? -1 : static_cast<int64_t>(cv->workspace_limit));
  put(cv->nsp);
  put(cv->n);
  put(cv->c);
  put(cv->f);
  put(cv->groups);
  for (int j = 0; j < 3; j++) {
    put(cv->in[j]);
    put(cv->k[j]);
    put(cv->s[j]);
    put(cv->p[j]);
    put(cv->d[j]);
  }
  return key;
}

/* The queries of each direction, in one shape for choose(). */
struct ForwardAlgos {
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  static constexpr Direction dir = kForward;
  static int count(const ConvDescs &d, int *n) {
    MXR_CUDNN_CALL(d.dnn->fwd_algo_count(d.h, n));
    return 0;
  }
  static int query(const ConvDescs &d, bool measure, int want, int *got, Perf *perf) {
    if (measure)
      MXR_CUDNN_CALL(d.dnn->fwd_algo_find(d.h, d.x.d, d.w.d, d.conv.d, d.y.d, want, got, perf));
    else
      MXR_CUDNN_CALL(d.dnn->fwd_algo_heuristic(d.h, d.x.d, d.w.d, d.conv.d, d.y.d, want, got, perf));
    return 0;
  }
  static int workspace(const ConvDescs &d, int algo, size_t *bytes) {
    MXR_CUDNN_CALL(d.dnn->fwd_workspace(d.h, d.x.d, d.w.d, d.conv.d, d.y.d,
                                        static_cast<cudnnConvolutionFwdAlgo_t>(algo), bytes));
    return 0;
  }
};

struct BackwardDataAlgos {
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  static constexpr Direction dir = kBackwardData;
  static int count(const ConvDescs &d, int *n) {
    MXR_CUDNN_CALL(d.dnn->bwd_data_algo_count(d.h, n));
    return 0;
  }
  static int query(const ConvDescs &d, bool measure, int want, int *got, Perf *perf) {
    if (measure)
      MXR_CUDNN_CALL(
          d.dnn->bwd_data_algo_find(d.h, d.w.d, d.y.d, d.conv.d, d.x.d, want, got, perf));
    else
      MXR_CUDNN_CALL(
          d.dnn->bwd_data_algo_heuristic(d.h, d.w.d, d.y.d, d.conv.d, d.x.d, want, got, perf));
    return 0;
  }
  static int workspace(const ConvDescs &d, int algo, size_t *bytes) {
    MXR_CUDNN_CALL(d.dnn->bwd_data_workspace(d.h, d.w.d, d.y.d, d.conv.d, d.x.d,
                                             static_cast<cudnnConvolutionBwdDataAlgo_t>(algo),
                                             bytes));
    return 0;
  }
};

struct BackwardFilterAlgos {
  using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
  static constexpr Direction dir = kBackwardFilter;
  static int count(const ConvDescs &d, int *n) {
    MXR_CUDNN_CALL(d.dnn->bwd_filter_algo_count(d.h, n));
    return 0;
  }
  static int query(const ConvDescs &d, bool measure, int want, int *got, Perf *perf) {
    if (measure)
      MXR_CUDNN_CALL(
          d.dnn->bwd_filter_algo_find(d.h, d.x.d, d.y.d, d.conv.d, d.w.d, want, got, perf));
    else
      MXR_CUDNN_CALL(
          d.dnn->bwd_filter_algo_heuristic(d.h, d.x.d, d.y.d, d.conv.d, d.w.d, want, got, perf));
    return 0;
  }
  static int workspace(const ConvDescs &d, int algo, size_t *bytes) {
    MXR_CUDNN_CALL(d.dnn->bwd_filter_workspace(d.h, d.x.d, d.y.d, d.conv.d, d.w.d,
                                               static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo),
                                               bytes));
    return 0;
  }
};

/* The first usable result: cuDNN lists heuristic results best first and
 * measured ones fastest first. */
template <typename Perf>
bool first_usable(const Perf *perf, int got, const struct mxr__gpu_conv *cv, Choice *out) {
  for (int i = 0; i < got; i++) {
    const Perf &r = perf[i];
    if (r.status != CUDNN_STATUS_SUCCESS || !math_allowed(cv->dtype, r.mathType)) continue;
    if (cv->tune != 2 && r.memory > cv->workspace_limit) continue;
    *out = Choice{static_cast<int>(r.algo), r.mathType, r.memory};
    return true;
  }
  return false;
}

template <typename Algos>
int choose(const ConvDescs &d, const struct mxr__gpu_conv *cv, Choice *out) {
  int max = 0;
  int st = Algos::count(d, &max);
  if (st) return st;
  std::vector<typename Algos::Perf> perf(max > 0 ? max : 1);
  int got = 0;
  st = Algos::query(d, cv->tune != 0, static_cast<int>(perf.size()), &got, perf.data());
  if (st) return st;
  if (!first_usable(perf.data(), got, cv, out)) {
    *out = Choice{kNoAlgorithm, CUDNN_FMA_MATH, 0};
    return 0;
  }
  /* The exact size for the math type it runs with. */
  MXR_CUDNN_CALL(d.dnn->set_conv_math(d.conv.d, out->math));
  size_t bytes = 0;
  st = Algos::workspace(d, out->algo, &bytes);
  if (st) return st;
  if (bytes > out->workspace) out->workspace = bytes;
  return 0;
}

/* The algorithm of one direction for this geometry on the current device:
 * from the table, or chosen now (and remembered; kNoAlgorithm too).  Leaves
 * the descriptor's math type set for it. */
template <typename Algos>
int algorithm(const ConvDescs &d, const struct mxr__gpu_conv *cv, Choice *out) {
  int dev;
  MXR_CUDA_CALL(cudaGetDevice(&dev));
  const ChoiceKey key = choice_key(cv, dev, Algos::dir);
  if (!choices().find(key, out)) {
    /* Chosen without the lock: measuring takes long, and two threads that
     * choose at once both come to a valid choice. */
    int st = choose<Algos>(d, cv, out);
    if (st) return st;
    choices().put(key, *out);
  }
  if (out->algo != kNoAlgorithm) MXR_CUDNN_CALL(d.dnn->set_conv_math(d.conv.d, out->math));
  return 0;
}

/* Queue y = (or +=) conv(x, w) with algorithm fwd. */
int conv_products(const struct mxr_run_ctx *run, const struct mxr__gpu_conv *cv, ConvDescs &d,
                  const Choice &fwd, const void *x, const void *w, void *y, int req) {
  void *ws = nullptr;
  int st = mxr__cuda_scratch(run, fwd.workspace, &ws);
  if (st) return st;
  MXR_CUDNN_CALL(d.dnn->conv_forward(d.h, one(cv->dtype), d.x.d, x, d.w.d, w, d.conv.d,
                                     static_cast<cudnnConvolutionFwdAlgo_t>(fwd.algo), ws,
                                     fwd.workspace, blend(cv->dtype, req), d.y.d, y));
  return 0;
}

/* The algorithms of the gradients asked for (the others stay as given). */
int gradient_algorithms(const ConvDescs &d, const struct mxr__gpu_conv *cv, int req_dx,
                        int req_dw, Choice *data, Choice *filter) {
  int st = req_dx != kNull ? algorithm<BackwardDataAlgos>(d, cv, data) : 0;
  if (!st && req_dw != kNull) st = algorithm<BackwardFilterAlgos>(d, cv, filter);
  return st;
}

/* Queue the data and weight gradients that are asked for, with these
 * algorithms. */
int conv_gradients(const struct mxr_run_ctx *run, const struct mxr__gpu_conv *cv, ConvDescs &d,
                   const Choice &data, const Choice &filter, const void *dy, const void *x,
                   const void *w, void *dx, int req_dx, void *dw, int req_dw) {
  void *ws = nullptr;
  int st = mxr__cuda_scratch(run, data.workspace > filter.workspace ? data.workspace
                                                                    : filter.workspace, &ws);
  if (st) return st;
  const void *a = one(cv->dtype);
  if (req_dx != kNull) {
    MXR_CUDNN_CALL(d.dnn->set_conv_math(d.conv.d, data.math));
    MXR_CUDNN_CALL(d.dnn->conv_backward_data(
        d.h, a, d.w.d, w, d.y.d, dy, d.conv.d, static_cast<cudnnConvolutionBwdDataAlgo_t>(data.algo),
        ws, data.workspace, blend(cv->dtype, req_dx), d.x.d, dx));
  }
  if (req_dw != kNull) {
    MXR_CUDNN_CALL(d.dnn->set_conv_math(d.conv.d, filter.math));
    MXR_CUDNN_CALL(d.dnn->conv_backward_filter(
        d.h, a, d.x.d, x, d.y.d, dy, d.conv.d,
        static_cast<cudnnConvolutionBwdFilterAlgo_t>(filter.algo), ws, filter.workspace,
        blend(cv->dtype, req_dw), d.w.d, dw));
  }
  return 0;
}

/* An output with no contribution (its sum is empty): 0 for write, kept for
 * add. */
int zero_unless_add(void *stream, void *p, int64_t n, int dtype, int req) {
  if (req == kNull || req == kAdd || n == 0) return 0;
  MXR_CUDA_CALL(cudaMemsetAsync(p, 0, static_cast<size_t>(n) * mxr_dtype_size(dtype),
                                as_stream(stream)));
  return 0;
}

}  // namespace

extern "C" int mxr__gpu_conv_forward(const struct mxr_run_ctx *run, const struct mxr__gpu_conv *cv,
                                     const void *x, const void *w, const void *b, void *y,
                                     int req) {
  if (req == kNull) return 0;
  int st = check_conv("Convolution", cv);
  if (st) return st;
  void *stream = stream_of(run);
  const int64_t ysize = cv->n * cv->f * prod3(cv->out);
  if (ysize == 0) return 0;
  ConvDescs d;
  st = begin_conv(run, cv, &d);
  if (st) return st;
  if (input_empty(cv)) {
    /* x without elements (no channels, or an input of extent 0 made
     * non-empty by padding) contributes nothing: cuDNN refuses it */
    st = zero_unless_add(stream, y, ysize, cv->dtype, req);
  } else {
    Choice fwd;
    st = algorithm<ForwardAlgos>(d, cv, &fwd);
    if (!st && fwd.algo == kNoAlgorithm) return mxr__gpu_conv_gemm_forward(run, cv, x, w, b, y, req);
    if (!st) st = conv_products(run, cv, d, fwd, x, w, y, req);
  }
  if (st) return st;
  if (b)
    MXR_CUDNN_CALL(d.dnn->add_tensor(d.h, one(cv->dtype), d.b.d, b, one(cv->dtype), d.y.d, y));
  return finish_launch(stream);
}

extern "C" int mxr__gpu_conv_backward(const struct mxr_run_ctx *run,
                                      const struct mxr__gpu_conv *cv, const void *dy,
                                      const void *x, const void *w, void *dx, int req_dx,
                                      void *dw, int req_dw, void *db, int req_db) {
  if (!db) req_db = kNull;
  if (req_dx == kNull && req_dw == kNull && req_db == kNull) return 0;
  int st = check_conv("_backward_Convolution", cv);
  if (st) return st;
  void *stream = stream_of(run);
  ConvDescs d;
  st = begin_conv(run, cv, &d);
  if (st) return st;
  if (input_empty(cv)) { /* dx has no elements; dw gets no contribution */
    st = zero_unless_add(stream, dw, weight_size(cv), cv->dtype, req_dw);
  } else {
    Choice data{0, CUDNN_FMA_MATH, 0}, filter{0, CUDNN_FMA_MATH, 0};
    st = gradient_algorithms(d, cv, req_dx, req_dw, &data, &filter);
    if (!st && (data.algo == kNoAlgorithm || filter.algo == kNoAlgorithm))
      return mxr__gpu_conv_gemm_backward(run, cv, dy, x, w, dx, req_dx, dw, req_dw, db, req_db);
    if (!st) st = conv_gradients(run, cv, d, data, filter, dy, x, w, dx, req_dx, dw, req_dw);
  }
  if (st) return st;
  if (req_db != kNull) {
    if (cv->n == 0) { /* dy has no elements */
      st = zero_unless_add(stream, db, cv->f, cv->dtype, req_db);
      if (st) return st;
    } else {
      MXR_CUDNN_CALL(d.dnn->conv_backward_bias(d.h, one(cv->dtype), d.y.d, dy,
                                               blend(cv->dtype, req_db), d.b.d, db));
    }
  }
  return finish_launch(stream);
}
#endif /* MXR_HAVE_CUDNN */

/* ======================================================= pooling kernels */
