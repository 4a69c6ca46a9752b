/*
 * C API: MXExecutorSimpleBindEx, binding a symbol to arrays the library
 * makes: shapes and dtypes are inferred from the ones given, every
 * argument, gradient and aux state is a new zero-filled array, and the
 * bind itself is MXExecutorBindEX's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi/capi_internal.h"
#include "mxref/engine.h"

/* What one simple bind works with; freed by bind_free. */
struct simple_bind {
  int nargs, naux, nout;
  const char *const *arg_names, *const *aux_names;
  struct mxr_shape *shapes; /* args, outputs, aux */
  int *types;               /* args, outputs, aux */
  uint32_t *reqs;           /* per argument */
  NDArrayHandle *args, *grads, *aux;
};

static void bind_free(struct simple_bind *b, bool keep_handles) {
  for (int i = 0; !keep_handles && i < b->nargs; i++) {
    if (b->args && b->args[i]) MXNDArrayFree(b->args[i]);
    if (b->grads && b->grads[i]) MXNDArrayFree(b->grads[i]);
  }
  for (int i = 0; !keep_handles && b->aux && i < b->naux; i++)
    if (b->aux[i]) MXNDArrayFree(b->aux[i]);
  free(b->shapes);
  free(b->types);
  free(b->reqs);
  free(b->args);
  free(b->grads);
  free(b->aux);
}

static int arg_index(const struct simple_bind *b, const char *name) {
  for (int i = 0; i < b->nargs; i++)
    if (strcmp(b->arg_names[i], name) == 0) return i;
  return -1;
}

static int parse_req(const char *fn, const char *text, uint32_t *out) {
  static const char *const names[] = {"null", "write", "inplace", "add"};
  for (uint32_t i = 0; i < 4; i++)
    if (text && strcmp(text, names[i]) == 0) return *out = i, 0;
  return mxr_set_error(MXR_EINVAL, "%s: grad_req '%s' is not null, write, inplace or add", fn,
                       text ? text : "(NULL)");
}

/* grad_req: one for all (len 0), a list by position (names NULL), or by name. */
static int fill_reqs(const char *fn, struct simple_bind *b, uint32_t len, const char **names,
                     const char **types) {
  for (int i = 0; i < b->nargs; i++) b->reqs[i] = 1; /* write */
  if (!types) return 0;
  if (len == 0) {
    uint32_t r;
    int st = parse_req(fn, types[0], &r);
    for (int i = 0; !st && i < b->nargs; i++) b->reqs[i] = r;
    return st;
  }
  for (uint32_t k = 0; k < len; k++) {
    int i = names ? arg_index(b, names[k]) : (int)k;
    if (i < 0 || i >= b->nargs)
      return mxr_set_error(MXR_EINVAL, "%s: grad_req names %s, not an argument", fn,
                           names ? names[k] : "a position past the arguments");
    int st = parse_req(fn, types[k], &b->reqs[i]);
    if (st) return st;
  }
  return 0;
}

static int infer(const char *fn, const mxr_symbol *sym, struct simple_bind *b, uint32_t nshapes,
                 const char **shape_names, const int *shape_data, const uint32_t *shape_idx,
                 uint32_t ndtypes, const char **dtype_names, const int *dtypes) {
  struct mxr_shape *known = calloc((size_t)nshapes + 1, sizeof *known);
  if (!known) return mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn);
  int st = 0, complete = 0;
  for (uint32_t k = 0; !st && k < nshapes; k++) {
    uint32_t begin = shape_idx[k], end = shape_idx[k + 1];
    if (end < begin || end - begin > MXR_MAX_NDIM)
      st = mxr_set_error(MXR_EINVAL, "%s: shape of %s has more than %d dimensions", fn,
                         shape_names[k], MXR_MAX_NDIM);
    known[k].ndim = st ? 0 : (int)(end - begin);
    for (uint32_t d = begin; !st && d < end; d++) known[k].dim[d - begin] = shape_data[d];
  }
  struct mxr_shape *s = b->shapes;
  if (!st)
    st = mxr_symbol_infer_shape(sym, (int)nshapes, shape_names, known, s, s + b->nargs,
                                s + b->nargs + b->nout, &complete);
  free(known);
  if (!st && !complete)
    st = mxr_set_error(MXR_EINVAL, "%s: the shapes given do not determine every argument's shape", fn);
  int *t = b->types;
  if (!st)
    st = mxr_symbol_infer_type(sym, (int)ndtypes, dtype_names, dtypes, t, t + b->nargs,
                               t + b->nargs + b->nout, &complete);
  /* MXNet's default dtype where nothing decides one. */
  for (int i = 0; !st && i < b->nargs + b->nout + b->naux; i++)
    if (t[i] < 0) t[i] = MXR_FLOAT32;
  return st;
}

/* A new zero-filled array handle of shape s and dtype. */
static int zeros(const char *fn, struct mxr_context ctx, const struct mxr_shape *s, int dtype,
                 NDArrayHandle *out) {
  mxr_engine *eng;
  mxr_ndarray *arr = NULL;
  int st = mxr_engine_default(&eng);
  if (!st) st = mxr_ndarray_create(eng, s->dim, s->ndim, ctx, dtype, 0, &arr);
  int64_t n = st ? 0 : mxr_ndarray_size(arr);
  void *host = st ? NULL : calloc((size_t)n + 1, mxr_dtype_size(dtype));
  if (!st && !host) st = mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn);
  if (!st) st = mxr_ndarray_sync_copy_from_cpu(arr, host, (size_t)n);
  free(host);
  if (st) {
    mxr_ndarray_free(arr);
    return st;
  }
  return mxr__capi_wrap_ndarray(arr, out);
}

static int make_arrays(const char *fn, struct mxr_context ctx, struct simple_bind *b) {
  int st = 0;
  for (int i = 0; !st && i < b->nargs; i++) {
    st = zeros(fn, ctx, &b->shapes[i], b->types[i], &b->args[i]);
    if (!st && b->reqs[i] != 0) st = zeros(fn, ctx, &b->shapes[i], b->types[i], &b->grads[i]);
  }
  const struct mxr_shape *aux_shapes = b->shapes + b->nargs + b->nout;
  const int *aux_types = b->types + b->nargs + b->nout;
  for (int i = 0; !st && i < b->naux; i++) st = zeros(fn, ctx, &aux_shapes[i], aux_types[i], &b->aux[i]);
  return st;
}

/* Copy n handles into thread buffer `which` and point *out at it. */
static int hand_back(struct capi_tls *t, int which, NDArrayHandle *h, int n, NDArrayHandle **out) {
  if (mxr__capi_reserve(&t->bind[which], ((size_t)n + 1) * sizeof *h)) return -1;
  memcpy(t->bind[which].p, h, (size_t)n * sizeof *h);
  *out = t->bind[which].p;
  return 0;
}

/* The shared buffer is handed back as given (the plans here share no
 * memory), each array as a new handle the caller owns. */
static int share_buffer(struct capi_tls *t, int len, const char **names, NDArrayHandle *handles,
                        const char ***out_names, NDArrayHandle **out_handles) {
  if (len < 0) return 0;
  if (mxr__capi_reserve(&t->bind[3], ((size_t)len + 1) * sizeof(NDArrayHandle))) return -1;
  NDArrayHandle *copies = t->bind[3].p;
  for (int i = 0; i < len; i++)
    if (MXShallowCopyNDArray(handles[i], &copies[i])) {
      while (i-- > 0) MXNDArrayFree(copies[i]);
      return -1;
    }
  *out_names = names;
  *out_handles = copies;
  return 0;
}

int MXExecutorSimpleBindEx(
    SymbolHandle symbol_handle, int dev_type, int dev_id, const uint32_t num_g2c_keys,
    const char **g2c_keys, const int *g2c_dev_types, const int *g2c_dev_ids,
    const uint32_t provided_grad_req_list_len, const char **provided_grad_req_names,
    const char **provided_grad_req_types, const uint32_t num_provided_arg_shapes,
    const char **provided_arg_shape_names, const int *provided_arg_shape_data,
    const uint32_t *provided_arg_shape_idx, const uint32_t num_provided_arg_dtypes,
    const char **provided_arg_dtype_names, const int *provided_arg_dtypes,
    const uint32_t num_provided_arg_stypes, const char **provided_arg_stype_names,
    const int *provided_arg_stypes, const uint32_t num_shared_arg_names,
    const char **shared_arg_name_list, int *shared_buffer_len, const char **shared_buffer_name_list,
    NDArrayHandle *shared_buffer_handle_list, const char ***updated_shared_buffer_name_list,
    NDArrayHandle **updated_shared_buffer_handle_list, uint32_t *num_in_args,
    NDArrayHandle **in_args, NDArrayHandle **arg_grads, uint32_t *num_aux_states,
    NDArrayHandle **aux_states, ExecutorHandle shared_exec_handle, ExecutorHandle *out) {
  static const char fn[] = "MXExecutorSimpleBindEx";
  (void)num_shared_arg_names, (void)shared_arg_name_list; /* sharing is not needed: see docs */
  mxr_symbol *sym;
  if (mxr__capi_symbol(symbol_handle, fn, "symbol_handle", &sym)) return -1;
  if (!num_in_args || !in_args || !arg_grads || !num_aux_states || !aux_states || !out ||
      !shared_buffer_len || (num_provided_arg_shapes && (!provided_arg_shape_names || !provided_arg_shape_idx)))
    return capi_ret(mxr__capi_null(fn, "an out pointer or the provided shapes"));
  for (uint32_t i = 0; i < num_provided_arg_stypes; i++)
    if (provided_arg_stypes && provided_arg_stypes[i] > 0)
      return capi_ret(mxr_set_error(MXR_ENOTIMPL, "%s: storage type %d of %s is not implemented by libmxref (dense only)",
                                    fn, provided_arg_stypes[i], provided_arg_stype_names ? provided_arg_stype_names[i] : "?"));
  struct simple_bind b = {0};
  const char *const *out_names;
  int st = mxr_symbol_list_arguments(sym, &b.nargs, &b.arg_names);
  if (!st) st = mxr_symbol_list_auxiliary_states(sym, &b.naux, &b.aux_names);
  if (!st) st = mxr_symbol_list_outputs(sym, &b.nout, &out_names);
  if (st) return -1;
  size_t all = (size_t)(b.nargs + b.nout + b.naux) + 1;
  b.shapes = calloc(all, sizeof *b.shapes);
  b.types = calloc(all, sizeof *b.types);
  b.reqs = calloc((size_t)b.nargs + 1, sizeof *b.reqs);
  b.args = calloc((size_t)b.nargs + 1, sizeof *b.args);
  b.grads = calloc((size_t)b.nargs + 1, sizeof *b.grads);
  b.aux = calloc((size_t)b.naux + 1, sizeof *b.aux);
  struct capi_tls *t = mxr__capi_tls();
  if (!t || !b.shapes || !b.types || !b.reqs || !b.args || !b.grads || !b.aux)
    st = mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn);
  if (!st) st = fill_reqs(fn, &b, provided_grad_req_list_len, provided_grad_req_names, provided_grad_req_types);
  if (!st)
    st = infer(fn, sym, &b, num_provided_arg_shapes, provided_arg_shape_names, provided_arg_shape_data,
               provided_arg_shape_idx, num_provided_arg_dtypes, provided_arg_dtype_names,
               provided_arg_dtypes);
  struct mxr_context ctx = {dev_type, dev_id};
  if (!st) st = make_arrays(fn, ctx, &b);
  bool bound = false;
  if (!st) {
    st = MXExecutorBindEX(symbol_handle, dev_type, dev_id, num_g2c_keys, g2c_keys, g2c_dev_types,
                          g2c_dev_ids, (uint32_t)b.nargs, b.args, b.grads, b.reqs,
                          (uint32_t)b.naux, b.aux, shared_exec_handle, out) ? -1 : 0;
    bound = st == 0;
  }
  if (!st) st = hand_back(t, 0, b.args, b.nargs, in_args);
  if (!st) st = hand_back(t, 1, b.grads, b.nargs, arg_grads);
  if (!st) st = hand_back(t, 2, b.aux, b.naux, aux_states);
  if (!st)
    st = share_buffer(t, *shared_buffer_len, shared_buffer_name_list, shared_buffer_handle_list,
                      updated_shared_buffer_name_list, updated_shared_buffer_handle_list);
  if (st && bound) MXExecutorFree(*out);
  if (!st) {
    *num_in_args = (uint32_t)b.nargs;
    *num_aux_states = (uint32_t)b.naux;
  }
  bind_free(&b, st == 0);
  return capi_ret(st);
}
