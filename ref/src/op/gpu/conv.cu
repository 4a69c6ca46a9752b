/*
 * Convolution through cuDNN, and Pooling through plain kernels or cuDNN,
 * with their gradients (conv.h).
 *
 * Workspace.  cuDNN's convolution algorithms want device scratch memory
 * whose size is known only once an algorithm is chosen on a device, while
 * an op's workspace_bytes() sees only params and shapes (and Convolution's
 * already sizes the CPU's im2col buffer, in host memory).  So the GPU
 * convolution does not use ctx->workspace: it takes its cuDNN workspace from
 * its engine worker's device scratch buffer (mxr__cuda_scratch,
 * device/cuda_worker.h), as MXNet takes its temp space from a per-device
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
 * (conv_gemm.h, the cudnn_off path) instead of failing, as MXNet falls back
 * to its own convolution where cuDNN cannot do one; a backward missing
 * either gradient's algorithm runs whole that way.
 *
 * Layouts.  Tensors are described to cuDNN with explicit packed strides,
 * channel first (the CPU op refuses channel-last convolution layouts).
 * cuDNN wants at least 2 spatial dimensions, so 1-D runs as 2-D with a
 * unit height (kernel 1, stride 1, dilation 1, pad 0 there).  Groups are
 * cuDNN's group count: the filter is (f, c / groups, k...).
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
#include "op/gpu/conv.h"
#include "op/gpu/conv_gemm.h"
#include "op/gpu/kernel_util.cuh"

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

inline void *stream_of(const struct mxr_run_ctx *run) { return run ? run->stream : nullptr; }

int64_t prod3(const int64_t *v) { return v[0] * v[1] * v[2]; }

}  // namespace

/* ====================================================== cuDNN: common */

#ifdef MXR_HAVE_CUDNN
namespace {

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

const float kOneF = 1, kZeroF = 0;
const double kOneD = 1, kZeroD = 0;

/* cuDNN's scaling factors are host values of the compute type: double for
 * float64 data, float otherwise. */
const void *one(int dtype) {
  return dtype == MXR_FLOAT64 ? static_cast<const void *>(&kOneD) : &kOneF;
}
/* The beta of an output: keep what is there (add) or not (write). */
const void *blend(int dtype, int req) {
  bool add = req == kAdd;
  if (dtype == MXR_FLOAT64) return add ? &kOneD : &kZeroD;
  return add ? &kOneF : &kZeroF;
}

cudnnDataType_t dnn_type(int dtype) {
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
int dnn_spatial(int nsp) { return nsp < 2 ? 2 : nsp; }

/* A packed tensor of `nb` dims (outermost first). */
int describe_packed(const MxrCudnn *dnn, TensorDesc *t, int dtype, int nb, const int *dims) {
  int strides[5];
  strides[nb - 1] = 1;
  for (int i = nb - 2; i >= 0; i--) strides[i] = strides[i + 1] * dims[i + 1];
  MXR_CUDNN_CALL(dnn->create_tensor_desc(&t->d));
  MXR_CUDNN_CALL(dnn->set_tensor_nd(t->d, dnn_type(dtype), nb, dims, strides));
  return 0;
}

/* (a, b, spatial...) from the last `ns` entries of a 3-entry array. */
void dims_of(int64_t a, int64_t b, const int64_t *sp, int ns, int *dims) {
  dims[0] = static_cast<int>(a);
  dims[1] = static_cast<int>(b);
  for (int i = 0; i < ns; i++) dims[2 + i] = static_cast<int>(sp[3 - ns + i]);
}

/* The last `ns` entries of a 3-entry array, as ints. */
void tail_of(const int64_t *v, int ns, int *out) {
  for (int i = 0; i < ns; i++) out[i] = static_cast<int>(v[3 - ns + i]);
}

/* The worker's cuDNN handle (cuDNN loaded) and the API. */
int dnn_for(const struct mxr_run_ctx *run, const MxrCudnn **dnn, cudnnHandle_t *h) {
  void *hv;
  int st = mxr__cuda_dnn_handle(run, &hv);
  if (st) return st;
  *dnn = mxr__cudnn(); /* loaded: the handle exists */
  *h = static_cast<cudnnHandle_t>(hv);
  return 0;
}

}  // namespace

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
