/* C API: imperative invoke, autograd and cached ops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi/capi_internal.h"
#include "imperative/imperative_internal.h"

#define CAPI_MAX_IO 64 /* inputs or outputs of one call (the native limit) */

/* Check a caller's output list: `n` live NDArray handles.  Placeholders
 * (MXNDArrayCreateNone) are reported in *placeholders. */
static int check_outputs(const char *fn, NDArrayHandle *list, int n, mxr_ndarray **arrays,
                         int *placeholders) {
  int st = mxr__capi_ndarrays(list, n, fn, "outputs", arrays);
  *placeholders = 0;
  for (int i = 0; !st && i < n; i++) *placeholders += mxr_ndarray_is_none(arrays[i]) != 0;
  return st;
}

/* Point a placeholder handle at a real array (taking over a reference). */
static void fill_placeholder(NDArrayHandle handle, mxr_ndarray *arr) {
  struct capi_ndarray *h = handle;
  mxr_ndarray *old = h->arr;
  h->arr = arr;
  mxr_ndarray_free(old);
}

/* Hand a call's outputs to the caller: created ones as new handles (the
 * caller owns them) with *num_outputs; for given arrays only the storage
 * types (all dense), in this thread's buffer. */
static int return_outputs(bool create, mxr_ndarray **out, int nout, int *num_outputs,
                          NDArrayHandle **outputs, const int **out_stypes) {
  if (create) {
    int st = mxr__capi_return_arrays(out, nout, outputs, out_stypes);
    if (!st) *num_outputs = nout;
    return st;
  }
  if (!out_stypes) return 0;
  struct capi_tls *t = mxr__capi_tls();
  if (!t) return MXR_ENOMEM;
  int st = mxr__capi_reserve(&t->stypes, ((size_t)nout + 1) * sizeof(int));
  if (!st) {
    for (int i = 0; i <= nout; i++) ((int *)t->stypes.p)[i] = 0;
    *out_stypes = t->stypes.p;
  }
  return st;
}

/* Parse an imperative call's params.  As in MXNet, a variadic op's count
 * parameter (key_var_num_args: Concat's and add_n's num_args) defaults to
 * the number of inputs given. */
static int parse_call_params(const mxr_op *op, int num_inputs, int num_params, const char **keys,
                             const char **vals, mxr_op_params **out) {
  const struct mxr_op_info *info;
  int st = mxr_op_info(op, &info);
  if (st) return st;
  bool add = info->key_var_num_args[0] != '\0';
  for (int i = 0; add && i < num_params; i++) add = strcmp(keys[i], info->key_var_num_args) != 0;
  if (!add) return mxr_op_params_parse(op, num_params, keys, vals, out);
  const char **k = malloc(((size_t)num_params + 1) * sizeof *k);
  const char **v = malloc(((size_t)num_params + 1) * sizeof *v);
  char count[16];
  st = k && v ? 0 : mxr_set_error(MXR_ENOMEM, "MXImperativeInvokeEx: out of memory");
  if (!st) {
    for (int i = 0; i < num_params; i++) k[i] = keys[i], v[i] = vals[i];
    snprintf(count, sizeof count, "%d", num_inputs);
    k[num_params] = info->key_var_num_args;
    v[num_params] = count;
    st = mxr_op_params_parse(op, num_params + 1, k, v, out);
  }
  free(k);
  free(v);
  return st;
}

int MXImperativeInvokeEx(AtomicSymbolCreator creator, int num_inputs, NDArrayHandle *inputs,
                         int *num_outputs, NDArrayHandle **outputs, int num_params,
                         const char **param_keys, const char **param_vals,
                         const int **out_stypes) {
  static const char fn[] = "MXImperativeInvokeEx";
  const mxr_op *op;
  int st = mxr__capi_op(creator, fn, &op);
  if (st) return -1;
  if (!num_outputs || !outputs) return capi_ret(mxr__capi_null(fn, "num_outputs or outputs"));
  if (num_params < 0)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: negative number of parameters (%d)", fn, num_params));
  if (num_params > 0 && (!param_keys || !param_vals))
    return capi_ret(mxr__capi_null(fn, "param_keys or param_vals"));
  for (int i = 0; i < num_params; i++)
    if (!param_keys[i] || !param_vals[i])
      return capi_ret(mxr_set_error(MXR_EINVAL, "%s: parameter %d has a NULL %s", fn, i,
                                    param_keys[i] ? "value" : "key"));
  if (num_inputs > CAPI_MAX_IO)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: %d inputs is more than %d", fn, num_inputs, CAPI_MAX_IO));
  mxr_ndarray *in[CAPI_MAX_IO];
  st = mxr__capi_ndarrays(inputs, num_inputs, fn, "inputs", in);
  if (st) return -1;

  mxr_op_params *params = NULL;
  st = parse_call_params(op, num_inputs, num_params, param_keys, param_vals, &params);
  if (st) return -1;
  int nvis = mxr_op_num_visible_outputs(op, params), nall = mxr_op_num_outputs(op, params);
  int nin = mxr_op_num_inputs(op, params), naux = mxr_op_num_aux(op, params);
  mxr_ndarray *out[CAPI_MAX_IO];
  bool create = *outputs == NULL;
  int nout = 0, placeholders = 0;
  if (!create) {
    if (*num_outputs != nvis && *num_outputs != nall)
      st = mxr_set_error(MXR_EINVAL, "%s: %s expects %d (all) or %d (visible) outputs, %d given", fn,
                         mxr_op_name(op), nall, nvis, *num_outputs);
    else if (*num_outputs != nvis)
      st = mxr_set_error(MXR_EINVAL,
                         "%s: %s: writing its %d hidden outputs into given arrays is not supported; "
                         "pass the %d visible ones",
                         fn, mxr_op_name(op), nall - nvis, nvis);
    if (!st) st = check_outputs(fn, *outputs, nvis, out, &placeholders);
    nout = nvis;
  }
  if (!st && placeholders) {
    /* MXNet gives placeholders the inferred shape: create every output
     * the op would, and hand the placeholders theirs. */
    mxr_ndarray *made[CAPI_MAX_IO];
    if (num_inputs != nin + naux)
      st = mxr_set_error(MXR_EINVAL, "%s takes %d inputs (%d arguments, %d aux states), %d given",
                         mxr_op_name(op), nin + naux, nin, naux, num_inputs);
    for (int i = 0; !st && i < num_inputs; i++)
      if (mxr_ndarray_is_none(in[i]))
        st = mxr_set_error(MXR_EINVAL, "%s: inputs[%d] is a placeholder with no shape", fn, i);
    if (!st && nall > CAPI_MAX_IO) st = mxr_set_error(MXR_EINVAL, "%s: too many outputs", fn);
    if (!st) st = mxr__imperative_make_outputs(op, params, nin, in, naux, in + nin, nall, NULL, made);
    for (int i = 0; !st && i < nall; i++) {
      if (i < nvis && mxr_ndarray_is_none(out[i])) {
        fill_placeholder((*outputs)[i], made[i]);
        out[i] = made[i];
      } else {
        mxr_ndarray_free(made[i]);
      }
    }
  }
  if (!st) st = mxr_imperative_invoke(op, params, num_inputs, in, &nout, out);
  mxr_op_params_free(params);
  if (st) return -1;
  return capi_ret(return_outputs(create, out, nout, num_outputs, outputs, out_stypes));
}

/* --------------------------------------------------------------- autograd */

int MXAutogradSetIsRecording(int is_recording, int *prev) {
  return capi_ret(mxr_autograd_set_recording(is_recording != 0, prev));
}

int MXAutogradSetIsTraining(int is_training, int *prev) {
  return capi_ret(mxr_autograd_set_training(is_training != 0, prev));
}

int MXAutogradIsRecording(bool *curr) {
  if (!curr) return capi_ret(mxr__capi_null("MXAutogradIsRecording", "curr"));
  *curr = mxr_autograd_is_recording() != 0;
  return 0;
}

int MXAutogradIsTraining(bool *curr) {
  if (!curr) return capi_ret(mxr__capi_null("MXAutogradIsTraining", "curr"));
  *curr = mxr_autograd_is_training() != 0;
  return 0;
}

int MXAutogradMarkVariables(uint32_t num_var, NDArrayHandle *var_handles, uint32_t *reqs_array,
                            NDArrayHandle *grad_handles) {
  static const char fn[] = "MXAutogradMarkVariables";
  if (num_var > 65536)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: %u variables is too many", fn, (unsigned)num_var));
  if (num_var > 0 && !reqs_array) return capi_ret(mxr__capi_null(fn, "reqs_array"));
  mxr_ndarray **vars = calloc((size_t)num_var + 1, sizeof *vars);
  mxr_ndarray **grads = calloc((size_t)num_var + 1, sizeof *grads);
  int *reqs = calloc((size_t)num_var + 1, sizeof *reqs);
  int st = vars && grads && reqs ? 0 : mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn);
  if (!st) st = mxr__capi_ndarrays(var_handles, (int)num_var, fn, "var_handles", vars);
  if (!st) st = mxr__capi_ndarrays(grad_handles, (int)num_var, fn, "grad_handles", grads);
  for (uint32_t i = 0; !st && i < num_var; i++) {
    switch (reqs_array[i]) {
      case 0: reqs[i] = MXR_GRAD_NULL; break;
      case 1:
      case 2: reqs[i] = MXR_GRAD_WRITE; break; /* in place writes the whole gradient too */
      case 3: reqs[i] = MXR_GRAD_ADD; break;
      default:
        st = mxr_set_error(MXR_EINVAL, "%s: reqs_array[%u] is %u (0 null, 1 write, 2 inplace, 3 add)", fn,
                           (unsigned)i, (unsigned)reqs_array[i]);
    }
  }
  if (!st) st = mxr_autograd_mark_variables((int)num_var, vars, reqs, grads);
  free(vars);
  free(grads);
  free(reqs);
  return capi_ret(st);
}

int MXAutogradBackwardEx(uint32_t num_output, NDArrayHandle *output_handles,
                         NDArrayHandle *ograd_handles, uint32_t num_variables,
                         NDArrayHandle *var_handles, int retain_graph, int create_graph,
                         int is_train, NDArrayHandle **grad_handles, int **grad_stypes) {
  static const char fn[] = "MXAutogradBackwardEx";
  (void)var_handles;
  (void)grad_handles;
  (void)grad_stypes;
  if (num_variables > 0)
    return capi_ret(mxr_set_error(MXR_ENOTIMPL,
                                  "%s: autograd.grad (gradients with respect to %u given variables) "
                                  "is not implemented by libmxref; mark the variables and read "
                                  "their gradient arrays",
                                  fn, (unsigned)num_variables));
  if (create_graph)
    return capi_ret(mxr_set_error(MXR_ENOTIMPL,
                                  "%s: create_graph (higher-order gradients) is not implemented by libmxref", fn));
  if (num_output == 0) return capi_ret(mxr_set_error(MXR_EINVAL, "%s: no outputs given", fn));
  if (num_output > 65536)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: %u outputs is too many", fn, (unsigned)num_output));
  mxr_ndarray **heads = calloc((size_t)num_output + 1, sizeof *heads);
  mxr_ndarray **ograds = calloc((size_t)num_output + 1, sizeof *ograds);
  int st = heads && ograds ? 0 : mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn);
  if (!st) st = mxr__capi_ndarrays(output_handles, (int)num_output, fn, "output_handles", heads);
  for (uint32_t i = 0; !st && ograd_handles && i < num_output; i++) {
    if (!ograd_handles[i]) continue; /* ones */
    char what[48];
    snprintf(what, sizeof what, "ograd_handles[%u]", (unsigned)i);
    st = mxr__capi_ndarray(ograd_handles[i], fn, what, &ograds[i]);
  }
  if (!st) st = mxr_autograd_backward((int)num_output, heads, ograds, retain_graph != 0, is_train != 0);
  free(heads);
  free(ograds);
  return capi_ret(st);
}

/* ------------------------------------------------------------- cached ops */

int MXCreateCachedOpEx(SymbolHandle handle, int num_flags, const char **keys, const char **vals,
                       CachedOpHandle *out) {
  static const char fn[] = "MXCreateCachedOpEx";
  mxr_symbol *sym;
  int st = mxr__capi_symbol(handle, fn, "handle", &sym);
  if (st) return -1;
  if (!out) return capi_ret(mxr__capi_null(fn, "out"));
  if (num_flags < 0) return capi_ret(mxr_set_error(MXR_EINVAL, "%s: negative number of flags", fn));
  if (num_flags > 0 && (!keys || !vals)) return capi_ret(mxr__capi_null(fn, "keys or vals"));
  for (int i = 0; i < num_flags; i++)
    if (!keys[i] || !vals[i])
      return capi_ret(mxr_set_error(MXR_EINVAL, "%s: flag %d has a NULL %s", fn, i, keys[i] ? "value" : "key"));
  mxr_cached_op *cop = NULL;
  st = mxr_cached_op_create(sym, num_flags, keys, vals, &cop);
  if (st) return -1;
  struct capi_cached_op *h = mxr__capi_handle_new(CAPI_CACHED_OP);
  if (!h) {
    mxr_cached_op_free(cop);
    return -1;
  }
  h->cop = cop;
  *out = h;
  return 0;
}

int MXInvokeCachedOpEx(CachedOpHandle handle, int num_inputs, NDArrayHandle *inputs,
                       int *num_outputs, NDArrayHandle **outputs, const int **out_stypes) {
  static const char fn[] = "MXInvokeCachedOpEx";
  int st = mxr__capi_check(handle, CAPI_CACHED_OP, fn, "handle");
  if (st) return -1;
  mxr_cached_op *cop = ((struct capi_cached_op *)handle)->cop;
  if (!num_outputs || !outputs) return capi_ret(mxr__capi_null(fn, "num_outputs or outputs"));
  if (num_inputs > 65536)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: %d inputs is too many", fn, num_inputs));
  mxr_ndarray **in = calloc(num_inputs > 0 ? (size_t)num_inputs + 1 : 1, sizeof *in);
  if (!in) return capi_ret(mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn));
  st = mxr__capi_ndarrays(inputs, num_inputs, fn, "inputs", in);
  mxr_ndarray *out[CAPI_MAX_IO];
  int nout = 0, placeholders = 0;
  bool create = *outputs == NULL;
  if (!st && !create) {
    nout = *num_outputs;
    if (nout < 1 || nout > CAPI_MAX_IO)
      st = mxr_set_error(MXR_EINVAL, "%s: %d outputs given (1..%d)", fn, nout, CAPI_MAX_IO);
    if (!st) st = check_outputs(fn, *outputs, nout, out, &placeholders);
    if (!st && placeholders && placeholders != nout)
      st = mxr_set_error(MXR_EINVAL,
                         "%s: the given outputs mix placeholders and allocated arrays; pass all of one "
                         "kind, or none",
                         fn);
  }
  if (!st && placeholders) {
    /* Run with created outputs and give them to the placeholders. */
    int made = 0;
    st = mxr_cached_op_invoke(cop, num_inputs, in, &made, out);
    if (!st && made != nout) {
      st = mxr_set_error(MXR_EINVAL, "%s: the cached op has %d outputs, %d given", fn, made, nout);
      for (int i = 0; i < made; i++) mxr_ndarray_free(out[i]);
    }
    for (int i = 0; !st && i < nout; i++) fill_placeholder((*outputs)[i], out[i]);
  } else if (!st) {
    st = mxr_cached_op_invoke(cop, num_inputs, in, &nout, out);
  }
  free(in);
  if (st) return -1;
  return capi_ret(return_outputs(create, out, nout, num_outputs, outputs, out_stypes));
}

int MXFreeCachedOp(CachedOpHandle handle) {
  int st = mxr__capi_check(handle, CAPI_CACHED_OP, "MXFreeCachedOp", "handle");
  if (st) return -1;
  struct capi_cached_op *h = handle;
  mxr_cached_op *cop = h->cop;
  mxr__capi_handle_release(h);
  mxr_cached_op_free(cop);
  return 0;
}
