/*
 * Imperative invocation: infer the outputs, create them, push one engine op
 * that runs the op's kernel on the arrays, record it for autograd.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/random.h"
#include "common/recycle.h"
#include "imperative/imperative_internal.h"

#define MAX_ARRAYS 64

static int oom(void) { return mxr_set_error(MXR_ENOMEM, "imperative: out of memory"); }

static struct mxr_shape shape_of(mxr_ndarray *a) {
  struct mxr_shape s = {mxr_ndarray_ndim(a), {0}};
  for (int d = 0; d < s.ndim; d++) s.dim[d] = mxr_ndarray_shape(a)[d];
  return s;
}

/* What the pushed op owns. */
struct invoke_call {
  const mxr_op *op;
  mxr_op_params *params;
  int nin, nout, naux;
  bool is_train;
  uint64_t seed;
  mxr_ndarray **arrays;       /* in, out, aux: one reference each */
  struct mxr_tensor *tensors; /* same order */
  int *req;
  void *workspace;
  size_t workspace_size;
  bool recycled; /* the block came from `calls` */
};

/* Calls whose block fits this size reuse blocks the workers gave back,
 * without the allocator (common/recycle.h). */
#define CALL_BLOCK 512
static struct mxr__recycler calls = MXR_RECYCLER_INIT(CALL_BLOCK, 4096);

static void free_call(void *param) {
  struct invoke_call *c = param;
  for (int i = 0; i < c->nin + c->nout + c->naux; i++) mxr_ndarray_free(c->arrays[i]);
  mxr_op_params_free(c->params);
  free(c->workspace);
  /* arrays, tensors and req live in the same block */
  if (c->recycled)
    mxr__recycler_give(&calls, c);
  else
    free(c);
}

/* One block for the call and its three lists: one allocation per invoke. */
static struct invoke_call *new_call(int nin, int nout, int naux) {
  size_t n = (size_t)(nin + nout + naux);
  size_t tensors_at = sizeof(struct invoke_call) + n * sizeof(mxr_ndarray *);
  tensors_at = (tensors_at + _Alignof(struct mxr_tensor) - 1) / _Alignof(struct mxr_tensor) *
               _Alignof(struct mxr_tensor);
  size_t req_at = tensors_at + n * sizeof(struct mxr_tensor);
  size_t size = req_at + (size_t)nout * sizeof(int);
  bool small = size <= CALL_BLOCK;
  char *block = small ? mxr__recycler_take(&calls) : malloc(size);
  if (!block) return NULL;
  memset(block, 0, size);
  struct invoke_call *c = (struct invoke_call *)(void *)block;
  c->recycled = small;
  c->arrays = (mxr_ndarray **)(void *)(block + sizeof *c);
  c->tensors = (struct mxr_tensor *)(void *)(block + tensors_at);
  c->req = (int *)(void *)(block + req_at);
  c->nin = nin;
  c->nout = nout;
  c->naux = naux;
  return c;
}

static int run_call(const struct mxr_run_ctx *rctx, void *param) {
  struct invoke_call *c = param;
  struct mxr_op_ctx ctx = {.run = rctx, .is_train = c->is_train, .seed = c->seed,
                           .workspace = c->workspace, .workspace_size = c->workspace_size};
  struct mxr_tensor *in = c->tensors, *out = in + c->nin, *aux = out + c->nout;
  /* The push checked that the kernel for this context exists. */
  return mxr__op_kernel(c->op, rctx->ctx)(&ctx, mxr__op_params_struct(c->params), in, c->nin,
                                          c->req, out, c->nout, aux, c->naux);
}

static void fill_call(struct invoke_call *c, int nin, mxr_ndarray *const *in, int nout,
                      mxr_ndarray *const *out, const int *req, int naux, mxr_ndarray *const *aux) {
  mxr_ndarray *const *lists[3] = {in, out, aux};
  int counts[3] = {nin, nout, naux}, k = 0;
  for (int l = 0; l < 3; l++)
    for (int i = 0; i < counts[l]; i++, k++) {
      mxr_ndarray *a = lists[l][i];
      c->arrays[k] = mxr_ndarray_retain(a);
      c->tensors[k] = (struct mxr_tensor){mxr_ndarray_data(a), shape_of(a), mxr_ndarray_dtype(a)};
    }
  for (int i = 0; i < nout; i++) c->req[i] = req[i];
}

/* Var sets: reads = inputs; writes = outputs, aux, mutated inputs. */
static int call_vars(const struct invoke_call *c, mxr_var **reads, int *nr, mxr_var **writes, int *nw) {
  *nr = *nw = 0;
  for (int i = c->nin; i < c->nin + c->nout + c->naux; i++) {
    mxr_var *v = mxr_ndarray_var(c->arrays[i]);
    bool dup = false;
    for (int w = 0; w < *nw && !dup; w++) dup = writes[w] == v;
    if (!dup) writes[(*nw)++] = v;
  }
  for (int m = 0; m < c->op->num_mutate_inputs; m++) {
    mxr_var *v = mxr_ndarray_var(c->arrays[c->op->mutate_inputs[m]]);
    bool dup = false;
    for (int w = 0; w < *nw && !dup; w++) dup = writes[w] == v;
    if (!dup) writes[(*nw)++] = v;
  }
  for (int i = 0; i < c->nin; i++) {
    mxr_var *v = mxr_ndarray_var(c->arrays[i]);
    bool dup = false;
    for (int w = 0; w < *nw && !dup; w++) dup = writes[w] == v;
    for (int r = 0; r < *nr && !dup; r++) dup = reads[r] == v;
    if (!dup) reads[(*nr)++] = v;
  }
  return 0;
}

int mxr__imperative_push(const mxr_op *op, mxr_op_params *params, int nin, mxr_ndarray *const *in,
                         int nout, mxr_ndarray *const *out, const int *req, int naux,
                         mxr_ndarray *const *aux, bool is_train) {
  if (nin + nout + naux > MAX_ARRAYS) return mxr_set_error(MXR_EINVAL, "%s: too many arrays", op->name);
  struct mxr_context ctx = mxr_ndarray_context(nout ? out[0] : in[0]);
  int rc = mxr__op_check_kernel(op, ctx, op->name);
  if (rc) return rc;
  mxr_engine *eng;
  rc = mxr_engine_default(&eng);
  if (rc) return rc;
  struct invoke_call *c = new_call(nin, nout, naux);
  if (!c) return oom();
  c->op = op;
  c->params = mxr_op_params_retain(params);
  c->is_train = is_train;
  c->seed = mxr__random_next_call_seed();
  fill_call(c, nin, in, nout, out, req, naux, aux);
  rc = mxr__op_check_dtypes(op, c->tensors, nin + nout + naux, op->name);
  /* CPU scratch only: GPU kernels use their worker's device scratch. */
  if (!rc && op->workspace_bytes && mxr_context_is_cpu(ctx)) {
    struct mxr_shape shapes[MAX_ARRAYS];
    for (int i = 0; i < nin; i++) shapes[i] = c->tensors[i].shape;
    c->workspace_size = op->workspace_bytes(mxr__op_params_struct(params), shapes, nin);
    if (c->workspace_size && !(c->workspace = malloc(c->workspace_size))) rc = oom();
  }
  if (rc) {
    free_call(c);
    return rc;
  }
  mxr_var *reads[MAX_ARRAYS], *writes[MAX_ARRAYS];
  int nr, nw;
  call_vars(c, reads, &nr, writes, &nw);
  struct mxr_push p = {.sync_fn = run_call, .param = c, .param_free = free_call,
                       .ctx = ctx, .const_vars = reads,
                       .num_const = nr, .mutable_vars = writes, .num_mutable = nw,
                       .name = op->name, .profile = MXR_PROFILE_IMPERATIVE};
  return mxr_engine_push(eng, &p);
}

int mxr__imperative_make_outputs(const mxr_op *op, const mxr_op_params *params, int nin,
                                 mxr_ndarray *const *in, int naux, mxr_ndarray *const *aux,
                                 int nout, mxr_ndarray *const *given, mxr_ndarray **out) {
  struct mxr_shape in_s[MAX_ARRAYS], out_s[MAX_ARRAYS], aux_s[MAX_ARRAYS];
  int in_t[MAX_ARRAYS], out_t[MAX_ARRAYS], aux_t[MAX_ARRAYS];
  if (nin > MAX_ARRAYS || nout > MAX_ARRAYS || naux > MAX_ARRAYS)
    return mxr_set_error(MXR_EINVAL, "%s: too many arrays", op->name);
  for (int i = 0; i < nin; i++) {
    in_s[i] = shape_of(in[i]);
    in_t[i] = mxr_ndarray_dtype(in[i]);
  }
  for (int i = 0; i < naux; i++) {
    aux_s[i] = shape_of(aux[i]);
    aux_t[i] = mxr_ndarray_dtype(aux[i]);
  }
  for (int i = 0; i < nout; i++) {
    bool known = given && given[i] && !mxr_ndarray_is_none(given[i]);
    out_s[i] = known ? shape_of(given[i]) : (struct mxr_shape){.ndim = -1};
    out_t[i] = known ? mxr_ndarray_dtype(given[i]) : -1;
  }
  int rc = mxr__op_infer_shape(op, params, in_s, nin, out_s, nout, aux_s, naux);
  if (!rc) rc = mxr__op_infer_type(op, params, in_t, nin, out_t, nout, aux_t, naux);
  for (int i = 0; !rc && i < nin; i++) {
    struct mxr_shape in_given = shape_of(in[i]);
    if (!mxr_shape_equal(&in_given, &in_s[i]))
      rc = mxr_set_error(MXR_EINVAL, "%s: input %d has the wrong shape", op->name, i);
  }
  /* With no inputs (_zeros, random samplers) a 0 dimension of the shape
   * asked for is an unknown size, as in a graph. */
  for (int i = 0; !rc && i < nout; i++)
    if (out_s[i].ndim < 0 || out_t[i] < 0 || (nin == 0 && !mxr__shape_complete(&out_s[i])))
      rc = mxr_set_error(MXR_EINVAL, "%s: cannot infer output %d from the inputs", op->name, i);
  mxr_engine *eng;
  if (!rc) rc = mxr_engine_default(&eng);
  struct mxr_context ctx = nin ? mxr_ndarray_context(in[0]) : mxr_cpu(0);
  for (int i = 0; !rc && i < nout; i++) {
    out[i] = NULL;
    rc = mxr_ndarray_create(eng, out_s[i].dim, out_s[i].ndim, ctx, out_t[i], 0, &out[i]);
    if (rc)
      for (int k = 0; k < i; k++) mxr_ndarray_free(out[k]);
  }
  return rc;
}

static int check_inputs(const mxr_op *op, const mxr_op_params *params, int num_inputs,
                        mxr_ndarray *const *inputs, int *nin, int *naux) {
  *nin = mxr_op_num_inputs(op, params);
  *naux = mxr_op_num_aux(op, params);
  if (num_inputs != *nin + *naux)
    return mxr_set_error(MXR_EINVAL, "%s takes %d inputs (%d arguments, %d aux states), %d given",
                         op->name, *nin + *naux, *nin, *naux, num_inputs);
  for (int i = 0; i < num_inputs; i++)
    if (!inputs || !inputs[i] || mxr_ndarray_is_none(inputs[i]))
      return mxr_set_error(MXR_EINVAL, "%s: input %d is NULL or has no shape", op->name, i);
  return 0;
}

int mxr_imperative_invoke(const mxr_op *op, const mxr_op_params *cparams, int num_inputs,
                          mxr_ndarray *const *inputs, int *num_outputs, mxr_ndarray **outputs) {
  if (!op || !cparams || !num_outputs || !outputs)
    return mxr_set_error(MXR_EINVAL, "mxr_imperative_invoke: NULL argument");
  mxr_op_params *params = (mxr_op_params *)cparams; /* only retained, never changed */
  int nin, naux, rc = check_inputs(op, params, num_inputs, inputs, &nin, &naux);
  if (rc) return rc;
  int nout = mxr_op_num_outputs(op, params), nvis = mxr_op_num_visible_outputs(op, params);
  if (*num_outputs != 0 && *num_outputs != nvis)
    return mxr_set_error(MXR_EINVAL, "%s has %d outputs, %d arrays given", op->name, nvis, *num_outputs);
  mxr_ndarray *all[MAX_ARRAYS];
  if (nout > MAX_ARRAYS) return mxr_set_error(MXR_EINVAL, "%s: too many outputs", op->name);
  bool created = *num_outputs == 0;
  mxr_ndarray *given[MAX_ARRAYS] = {NULL}; /* the visible outputs the caller gave */
  for (int i = 0; i < nvis && !created; i++) given[i] = outputs[i];
  rc = mxr__imperative_make_outputs(op, params, nin, inputs, naux, inputs + nin, nout, given, all);
  if (rc) return rc;
  for (int i = 0; i < nvis && !created && !rc; i++) { /* written into the caller's arrays */
    if (!outputs[i]) {
      rc = mxr_set_error(MXR_EINVAL, "%s: output array %d is NULL", op->name, i);
      break;
    }
    struct mxr_shape want = shape_of(all[i]), got = shape_of(outputs[i]);
    if (!mxr_shape_equal(&want, &got) || mxr_ndarray_dtype(all[i]) != mxr_ndarray_dtype(outputs[i]))
      rc = mxr_set_error(MXR_EINVAL, "%s: output array %d has the wrong shape or dtype", op->name, i);
    if (!rc) {
      mxr_ndarray_free(all[i]);
      all[i] = mxr_ndarray_retain(outputs[i]);
    }
  }
  int req[MAX_ARRAYS];
  for (int i = 0; i < nout; i++) req[i] = MXR_REQ_WRITE;
  bool train = mxr_autograd_is_training();
  if (!rc) rc = mxr__imperative_push(op, params, nin, inputs, nout, all, req, naux, inputs + nin, train);
  if (!rc && mxr_autograd_is_recording() && mxr__autograd_any_tracked(nin, inputs))
    rc = mxr__autograd_record_op(op, params, nin, inputs, naux, inputs + nin, nvis, all, nout - nvis,
                                 all + nvis);
  for (int i = 0; i < nvis && !rc; i++)
    if (created) outputs[i] = mxr_ndarray_retain(all[i]);
  for (int i = 0; i < nout; i++) mxr_ndarray_free(all[i]);
  if (!rc && created) *num_outputs = nvis;
  return rc;
}
