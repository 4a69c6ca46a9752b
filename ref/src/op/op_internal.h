/*
 * Internal: how an operator is defined.  Every op is one `struct mxr_op`
 * (a row of the registry), written in its family's file under ref/src/op/
 * and listed in that file's NULL-terminated group array (op/families.h
 * lists the families; ref/src/op/registry.c collects their groups).
 *
 * The contract a kernel file follows:
 *  - Parameters: a C struct per op plus a table of `struct mxr_param_field`
 *    describing its fields; the generic parser (params.c) fills the struct
 *    from MXNet-style strings, applying defaults.  `check` (optional) then
 *    validates combinations.  Backward ops reuse the forward op's fields.
 *  - Counts: fixed counts in nin/nout/naux, or the get_* functions when they
 *    depend on params (Concat's num_args).  With get_nin and input_names,
 *    nin is the largest count: the inputs frontends list as the op's
 *    arguments (FullyConnected's data, weight, bias).
 *  - Shape inference fills unknown outputs, and unknown inputs where they
 *    follow (FullyConnected's weight from data and num_hidden).  Shapes may
 *    be partial (below: a 0 dimension is an unknown size), and what is
 *    known of them is passed on dimension by dimension; a size computed
 *    from an unknown one stays 0.  A contradiction returns MXR_EINVAL with a
 *    message that names the shapes; the graph layer prefixes the node name.
 *  - Type inference: NULL means every input, output and aux state has one
 *    dtype (the first known one).
 *  - Forward: `forward_cpu` (and `forward_gpu`, on device memory, queued
 *    on the run context's stream) computes outputs from inputs, honouring req[i]
 *    per output (MXR_REQ_NULL: leave it; WRITE or INPLACE: overwrite; ADD:
 *    accumulate).  It never allocates: a CPU kernel's scratch memory is
 *    requested through `workspace_bytes` and handed in as ctx->workspace; a
 *    GPU kernel takes device scratch from its worker (mxr__cuda_scratch,
 *    cuda/worker.h), grown only until the largest shape has run.  It returns 0 or a
 *    negative status after mxr_set_error().  Kernels support float32;
 *    float64 is optional (advertise it in `dtypes`).
 *  - Gradient: `backward` names the backward op ("_backward_reverse"),
 *    itself a registered op whose forward computes input gradients.  Its
 *    inputs, in this order: the gradient of each visible output; then, if
 *    grad_flags has MXR_GRAD_USE_INPUTS, every forward input; then, if
 *    MXR_GRAD_USE_OUTPUTS, every forward output (hidden ones included, e.g.
 *    BatchNorm's saved mean and variance).  Its outputs: the gradient of
 *    each forward input, in order.  Its aux states: the forward op's (naux
 *    of them, same order).  `backward` NULL means the op passes no
 *    gradient (its inputs get none).  Loss ops (SoftmaxOutput,
 *    LinearRegressionOutput) ignore the incoming gradient, as MXNet's do.
 *  - In-place hints: pairs (input i, output o) whose memory the executor
 *    may share.
 */
#ifndef MXR_OP_INTERNAL_H
#define MXR_OP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mxref/base.h"
#include "mxref/engine.h"
#include "mxref/error.h"
#include "mxref/op.h"

/* ------------------------------------------------------------ tensors */

/* A view of memory as an array: what kernels read and write. */
struct mxr_tensor {
  void *data;
  struct mxr_shape shape;
  int dtype;
};

static inline int64_t mxr_tensor_size(const struct mxr_tensor *t) {
  return mxr_shape_size(&t->shape);
}

/* Write requests, with MXNet's numbering (OpReqType). */
enum mxr_req {
  MXR_REQ_NULL = 0,
  MXR_REQ_WRITE = 1,
  MXR_REQ_INPLACE = 2,
  MXR_REQ_ADD = 3,
};

/* Before a loop whose iterations are independent (an element-wise kernel,
 * in place or not): vectorize it (configure's -fopenmp-simd check). */
#ifdef MXR_HAVE_OPENMP_SIMD
#define MXR_SIMD _Pragma("omp simd")
#else
#define MXR_SIMD
#endif

/* Store `v` into `*dst` as `req` asks. */
#define MXR_ASSIGN(req, dst, v)                 \
  do {                                          \
    if ((req) == MXR_REQ_ADD)                   \
      *(dst) += (v);                            \
    else if ((req) != MXR_REQ_NULL)             \
      *(dst) = (v);                             \
  } while (0)

/* What a kernel is told about the call. */
struct mxr_op_ctx {
  const struct mxr_run_ctx *run; /* device and stream; NULL in direct calls */
  bool is_train;                 /* training mode (Dropout, BatchNorm) */
  uint64_t seed;                 /* per call; ops that draw random numbers use it */
  void *workspace;               /* workspace_bytes() bytes, or NULL */
  size_t workspace_size;
};

/* The stream a GPU forward queues on: its worker's, or NULL (the legacy
 * default stream, waited for by the launcher) in a direct call. */
static inline void *mxr__op_stream(const struct mxr_op_ctx *ctx) {
  return ctx->run ? ctx->run->stream : NULL;
}

/* The parameter list of an op kernel, for the op files that define many:
 * static int fn(MXR_FCOMPUTE_PARAMS) { MXR_FCOMPUTE_UNUSED; ... } (the
 * second for a kernel that reads only some of them); MXR_SHAPE_FN_PARAMS
 * and MXR_SHAPE_FN_UNUSED are the same for infer_shape. */
#define MXR_FCOMPUTE_PARAMS                                                                  \
  const struct mxr_op_ctx *ctx, const void *params, const struct mxr_tensor *in, int nin,    \
      const int *req, struct mxr_tensor *out, int nout, struct mxr_tensor *aux, int naux
#define MXR_FCOMPUTE_UNUSED \
  ((void)ctx, (void)params, (void)in, (void)nin, (void)req, (void)out, (void)nout, (void)aux, (void)naux)
#define MXR_SHAPE_FN_PARAMS                                                          \
  const void *params, struct mxr_shape *in, int nin, struct mxr_shape *out, int nout, \
      struct mxr_shape *aux, int naux
#define MXR_SHAPE_FN_UNUSED ((void)params, (void)in, (void)nin, (void)out, (void)nout, (void)aux, (void)naux)

typedef int (*mxr_fcompute)(MXR_FCOMPUTE_PARAMS);

/* ------------------------------------------------------------ params */

enum mxr_param_type {
  MXR_PARAM_INT,       /* int */
  MXR_PARAM_FLOAT,     /* double */
  MXR_PARAM_BOOL,      /* bool: True/False/true/false/1/0 */
  MXR_PARAM_ENUM,      /* int: index into choices */
  MXR_PARAM_TUPLE,     /* struct mxr_tuple: "(2,2)", "[2,2]", "2", "(2,)", "()" */
  MXR_PARAM_OPT_INT,   /* struct mxr_opt_int: "None" or an int */
  MXR_PARAM_OPT_TUPLE, /* struct mxr_opt_tuple: "None", an int, or a tuple */
  MXR_PARAM_OPT_FLOAT, /* struct mxr_opt_float: "None" or a float */
  MXR_PARAM_STRING,    /* struct mxr_param_str: any text (e.g. ctx="cpu(0)") */
};

#define MXR_PARAM_STRING_MAX 64
struct mxr_param_str {
  char s[MXR_PARAM_STRING_MAX];
};

/* MXNet's dtype parameter: index = dtype code (float32 = 0, ...). */
extern const char *const mxr__dtype_choices[];

struct mxr_tuple {
  int n;
  int64_t v[MXR_MAX_NDIM];
};

struct mxr_opt_int {
  bool has;
  int value;
};

struct mxr_opt_tuple {
  bool has;
  struct mxr_tuple t;
};

struct mxr_opt_float {
  bool has;
  double value;
};

struct mxr_param_field {
  const char *name;
  enum mxr_param_type type;
  size_t offset;              /* in the op's params struct */
  const char *def;            /* default as text; NULL: required */
  const char *const *choices; /* MXR_PARAM_ENUM: NULL-terminated names */
};

/* ------------------------------------------------------------ ops */

enum mxr_grad_flags {
  MXR_GRAD_USE_INPUTS = 1,
  MXR_GRAD_USE_OUTPUTS = 2,
};

enum mxr_exec_type {
  MXR_EXEC_SYNC = 0, /* runs to completion in its function: bulkable */
  MXR_EXEC_ASYNC = 1,
};

struct mxr_inplace {
  int in, out;
};

struct mxr_op {
  const char *name;
  const char *aliases[6]; /* NULL-terminated */

  const struct mxr_param_field *fields; /* NULL when the op has no params */
  int num_fields;
  size_t params_size;                   /* sizeof the params struct */
  int (*check)(const char *opname, void *params); /* optional */

  int nin, nout, naux;         /* fixed counts */
  int (*get_nin)(const void *params);  /* optional: variadic inputs */
  int (*get_nout)(const void *params);
  int (*get_nvisible)(const void *params); /* optional: default all outputs */
  const char *const *input_names;      /* names of the inputs (the first get_nin()
                                          of them when variadic); NULL: "arg0", ... */
  const char *const *aux_names;        /* naux names */

  int (*infer_shape)(MXR_SHAPE_FN_PARAMS);
  int (*infer_type)(const void *params, int *in, int nin, int *out, int nout, int *aux,
                    int naux);
  unsigned dtypes; /* bit (1u << dtype) per supported dtype; 0: float32 only */

  mxr_fcompute forward_cpu;
  mxr_fcompute forward_gpu; /* MXR_GPU_FORWARD(fn) (op/cuda/launch.h); NULL:
                               the op has no GPU kernel (or no CUDA build) */
  size_t (*workspace_bytes)(const void *params, const struct mxr_shape *in, int nin);

  const char *backward; /* backward op's name, or NULL: no gradient */
  unsigned grad_flags;  /* enum mxr_grad_flags */
  bool ignores_out_grad; /* loss ops: head gradient is not used */
  bool grad_passthrough; /* each input's gradient is the output's gradient
                            itself, with no backward node (add_n) */

  struct mxr_inplace inplace[4];
  int num_inplace;

  /* Inputs the op also writes (MXNet's FMutateInputs: an optimizer's
   * momentum and Adam's mean and variance).  The kernel
   * writes them through in[i].data; the executor orders them as writes. */
  int mutate_inputs[4];
  int num_mutate_inputs;

  int exec_type; /* enum mxr_exec_type */

  /* The kernel draws random numbers from ctx->seed, which changes on every
   * run (Dropout, LeakyReLU's rrelu): a segment holding it is never
   * captured into a CUDA graph, whose launches replay fixed arguments. */
  bool draws_random;

  /* A name MXNet registers that libmxref lists without implementing it
   * (mxnet_op_names.h): parsing its params fails with MXR_ENOTIMPL, so
   * every use of the op fails. */
  bool not_implemented;
  /* Its arguments as MXNet lists them (mxnet_op_names.h), so that the
   * frontend's function for it takes the same arguments and reaches the
   * library, which then refuses it. */
  const char *mxnet_signature;
};

/* Each op family's NULL-terminated group (families.h lists the families). */
#define MXR_OP_FAMILY(name) extern const struct mxr_op *const mxr__ops_##name[];
#include "op/families.h"

/* The parsed params struct inside a params object (what kernels get). */
const void *mxr__op_params_struct(const mxr_op_params *p);

/* Parse `def`-style text into a field (params.c); for ops that keep extra
 * parsing rules.  Returns 0 or MXR_EINVAL naming op, key and value. */
int mxr__param_parse_value(const char *opname, const struct mxr_param_field *f,
                           const char *text, void *params);

/* The name of input i of an op with nin inputs (mxr_op_input_name
 * without params). */
const char *mxr__op_input_name_at(const mxr_op *op, int nin, int i);

/* Shape inference across one op with the op's own function (or the default:
 * all inputs and outputs share one shape). */
int mxr__op_infer_shape(const mxr_op *op, const mxr_op_params *p, struct mxr_shape *in,
                        int nin, struct mxr_shape *out, int nout, struct mxr_shape *aux,
                        int naux);
int mxr__op_infer_type(const mxr_op *op, const mxr_op_params *p, int *in, int nin, int *out,
                       int nout, int *aux, int naux);

/* Run the op's CPU forward directly on tensors (tests, imperative on CPU). */
int mxr__op_forward_cpu(const mxr_op *op, const mxr_op_params *p,
                        const struct mxr_op_ctx *ctx, const struct mxr_tensor *in, int nin,
                        const int *req, struct mxr_tensor *out, int nout,
                        struct mxr_tensor *aux, int naux);

/* The forward that runs the op on `ctx`: forward_gpu on a GPU, else
 * forward_cpu (either may be NULL). */
mxr_fcompute mxr__op_kernel(const mxr_op *op, struct mxr_context ctx);

/* 0 when the op's kernels take the dtypes of t[0..n) (the arrays of a
 * call: inputs, outputs, aux states), else MXR_ENOTIMPL "<who>: <op>: dtype
 * X is not implemented by libmxref".  Callers that run kernels directly
 * (executor, imperative calls) check at bind or push time, since a kernel
 * reads other dtypes as float32. */
int mxr__op_check_dtypes(const mxr_op *op, const struct mxr_tensor *t, int n, const char *who);

/* 0 when the op has a kernel for `ctx`, else MXR_ENOTFOUND "<who>: operator
 * X has no GPU kernel" (or CPU). */
int mxr__op_check_kernel(const mxr_op *op, struct mxr_context ctx, const char *who);


/* Shape helpers for kernels. */
static inline struct mxr_shape mxr__shape1(int64_t a) {
  struct mxr_shape s = {1, {a}};
  return s;
}
static inline struct mxr_shape mxr__shape2(int64_t a, int64_t b) {
  struct mxr_shape s = {2, {a, b}};
  return s;
}
static inline bool mxr__shape_known(const struct mxr_shape *s) { return s->ndim >= 0; }

/* Partial shapes (MXNet's legacy form): ndim -1 is an unknown shape; in a
 * known rank a dimension of 0 is an unknown size.  Inference fills them
 * dimension by dimension.
 *
 * mxr__shape_fill: copy `from` into `slot` where `slot` is unknown (the
 * whole shape, or single dimensions when the ranks match); true when
 * anything was filled.  Known dimensions are never changed. */
bool mxr__shape_fill(struct mxr_shape *slot, const struct mxr_shape *from);

/* Two known shapes agree when their ranks match and no dimension is known
 * in both with different sizes. */
bool mxr__shapes_agree(const struct mxr_shape *a, const struct mxr_shape *b);

/* Known rank and every dimension known (above 0). */
bool mxr__shape_complete(const struct mxr_shape *s);

/* Unify `want` with a shape slot: fill what the slot lacks, or fail when a
 * rank or a dimension known in both differs.  Returns 0 or MXR_EINVAL:
 * "<what>: expected (2,3), got (2,4)". */
int mxr__shape_assign(struct mxr_shape *slot, const struct mxr_shape *want, const char *what);

#endif /* MXR_OP_INTERNAL_H */
