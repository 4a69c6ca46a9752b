/* C API: operator lookup, symbols, shape inference. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi/capi_internal.h"
#include "common/threads.h"

/* ------------------------------------------------------------ operators */

/* Every name, aliases included, built once; the registry's names are
 * static, so the array never changes. */
static const char **all_names;
static uint32_t num_all_names;
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void build_names(void) {
  size_t n = mxr_op_name_count();
  const char **names = malloc((n + 1) * sizeof *names);
  if (!names) return;
  for (size_t i = 0; i < n; i++) names[i] = mxr_op_name_at(i);
  all_names = names;
  num_all_names = (uint32_t)n;
}

int MXListAllOpNames(uint32_t *out_size, const char ***out_array) {
  if (!out_size || !out_array) return capi_ret(mxr__capi_null("MXListAllOpNames", "an out pointer"));
  MXR_PTHREAD_CHECK(pthread_once(&names_once, build_names));
  if (!all_names) return capi_ret(mxr_set_error(MXR_ENOMEM, "MXListAllOpNames: out of memory"));
  *out_size = num_all_names;
  *out_array = all_names;
  return 0;
}

int NNGetOpHandle(const char *op_name, OpHandle *op_out) {
  static const char fn[] = "NNGetOpHandle";
  if (!op_name) return capi_ret(mxr__capi_null(fn, "op_name"));
  if (!op_out) return capi_ret(mxr__capi_null(fn, "op_out"));
  const mxr_op *op = NULL;
  int st = mxr_op_find(op_name, &op); /* "unknown operator 'name'" */
  if (st) return -1;
  *op_out = (OpHandle)(uintptr_t)op; /* static; the C API's handles are not const */
  return 0;
}

int MXSymbolGetAtomicSymbolName(AtomicSymbolCreator creator, const char **name) {
  static const char fn[] = "MXSymbolGetAtomicSymbolName";
  if (!name) return capi_ret(mxr__capi_null(fn, "name"));
  const mxr_op *op;
  int st = mxr__capi_op(creator, fn, &op);
  if (st) return -1;
  *name = mxr_op_name(op);
  return 0;
}

/* --------------------------------------------------------------- symbols */

static int wrap_symbol(mxr_symbol *sym, SymbolHandle *out) {
  struct capi_symbol *h = mxr__capi_handle_new(CAPI_SYMBOL);
  if (!h) {
    mxr_symbol_free(sym);
    return MXR_ENOMEM;
  }
  h->sym = sym;
  *out = h;
  return 0;
}

int MXSymbolCreateVariable(const char *name, SymbolHandle *out) {
  static const char fn[] = "MXSymbolCreateVariable";
  if (!name) return capi_ret(mxr__capi_null(fn, "name"));
  if (!out) return capi_ret(mxr__capi_null(fn, "out"));
  mxr_symbol *s = NULL;
  int st = mxr_symbol_variable(name, &s);
  if (!st) st = wrap_symbol(s, out);
  return capi_ret(st);
}

/* Attributes MXNet's frontends pass as plain keys and the graph stores as
 * "__key__" (kHiddenKeys in MXNet's c_api_symbolic.cc). */
static const char *const hidden_keys[] = {"ctx_group", "lr_mult", "wd_mult", "force_mirroring",
                                          "mirror_stage"};

int MXSymbolCreateAtomicSymbol(AtomicSymbolCreator creator, uint32_t num_param, const char **keys,
                               const char **vals, SymbolHandle *out) {
  static const char fn[] = "MXSymbolCreateAtomicSymbol";
  const mxr_op *op;
  int st = mxr__capi_op(creator, fn, &op);
  if (st) return -1;
  if (!out) return capi_ret(mxr__capi_null(fn, "out"));
  if (num_param > 0 && (!keys || !vals)) return capi_ret(mxr__capi_null(fn, "keys or vals"));
  if (num_param > 4096)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: %u parameters is too many", fn, (unsigned)num_param));
  const char **k = calloc((size_t)num_param + 1, sizeof *k);
  char **renamed = calloc((size_t)num_param + 1, sizeof *renamed);
  if (!k || !renamed) st = mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn);
  for (uint32_t i = 0; !st && i < num_param; i++) {
    if (!keys[i] || !vals[i]) {
      st = mxr_set_error(MXR_EINVAL, "%s: parameter %u has a NULL %s", fn, (unsigned)i,
                         keys[i] ? "value" : "key");
      break;
    }
    k[i] = keys[i];
    size_t len = strlen(keys[i]);
    for (size_t h = 0; h < sizeof hidden_keys / sizeof hidden_keys[0]; h++) {
      size_t hl = strlen(hidden_keys[h]);
      if (strcmp(keys[i], hidden_keys[h]) == 0) {
        renamed[i] = malloc(hl + 5);
        if (!renamed[i]) {
          st = mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn);
          break;
        }
        snprintf(renamed[i], hl + 5, "__%s__", hidden_keys[h]);
        k[i] = renamed[i];
        break;
      }
      if (len > hl && strcmp(keys[i] + len - hl, hidden_keys[h]) == 0) {
        /* MXNet refuses "<input>_lr_mult": such attributes belong on the
         * input's variable. */
        st = mxr_set_error(MXR_EINVAL,
                           "%s: setting variable attributes with %s is deprecated; create the "
                           "variable with %s=%s and pass it as the input instead",
                           fn, keys[i], hidden_keys[h], vals[i]);
        break;
      }
    }
  }
  mxr_op_params *params = NULL;
  mxr_symbol *s = NULL;
  if (!st) st = mxr_op_params_parse(op, (int)num_param, k, vals, &params);
  if (!st) st = mxr_symbol_atomic(op, params, &s);
  if (!st) st = wrap_symbol(s, out);
  mxr_op_params_free(params);
  for (uint32_t i = 0; renamed && i < num_param; i++) free(renamed[i]);
  free(renamed);
  free(k);
  return capi_ret(st);
}

int MXSymbolCompose(SymbolHandle sym, const char *name, uint32_t num_args, const char **keys,
                    SymbolHandle *args) {
  static const char fn[] = "MXSymbolCompose";
  mxr_symbol *s;
  int st = mxr__capi_symbol(sym, fn, "sym", &s);
  if (st) return -1;
  if (num_args > 0 && !args) return capi_ret(mxr__capi_null(fn, "args"));
  if (num_args > 4096)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: %u arguments is too many", fn, (unsigned)num_args));
  mxr_symbol **a = calloc((size_t)num_args + 1, sizeof *a);
  if (!a) return capi_ret(mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn));
  for (uint32_t i = 0; !st && i < num_args; i++) {
    char what[32];
    snprintf(what, sizeof what, "args[%u]", (unsigned)i);
    st = mxr__capi_symbol(args[i], fn, what, &a[i]);
    if (!st && keys && !keys[i]) st = mxr_set_error(MXR_EINVAL, "%s: keys[%u] is NULL", fn, (unsigned)i);
  }
  if (!st) st = mxr_symbol_compose(s, name, (int)num_args, keys, a);
  free(a);
  return capi_ret(st);
}

int MXSymbolCreateGroup(uint32_t num_symbols, SymbolHandle *symbols, SymbolHandle *out) {
  static const char fn[] = "MXSymbolCreateGroup";
  if (!out) return capi_ret(mxr__capi_null(fn, "out"));
  if (num_symbols > 0 && !symbols) return capi_ret(mxr__capi_null(fn, "symbols"));
  mxr_symbol **s = calloc((size_t)num_symbols + 1, sizeof *s);
  if (!s) return capi_ret(mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn));
  int st = 0;
  for (uint32_t i = 0; !st && i < num_symbols; i++) {
    char what[32];
    snprintf(what, sizeof what, "symbols[%u]", (unsigned)i);
    st = mxr__capi_symbol(symbols[i], fn, what, &s[i]);
  }
  mxr_symbol *g = NULL;
  if (!st) st = mxr_symbol_group((int)num_symbols, s, &g);
  if (!st) st = wrap_symbol(g, out);
  free(s);
  return capi_ret(st);
}

int MXSymbolCopy(SymbolHandle symbol, SymbolHandle *out) {
  static const char fn[] = "MXSymbolCopy";
  mxr_symbol *s, *c = NULL;
  int st = mxr__capi_symbol(symbol, fn, "symbol", &s);
  if (!st && !out) st = mxr__capi_null(fn, "out");
  if (!st) st = mxr_symbol_deep_copy(s, &c);
  if (!st) st = wrap_symbol(c, out);
  return capi_ret(st);
}

int MXSymbolFree(SymbolHandle symbol) {
  int st = mxr__capi_check(symbol, CAPI_SYMBOL, "MXSymbolFree", "symbol");
  if (st) return -1;
  struct capi_symbol *h = symbol;
  mxr_symbol *s = h->sym;
  mxr__capi_handle_release(h);
  mxr_symbol_free(s);
  return 0;
}

int MXSymbolCreateFromJSON(const char *json, SymbolHandle *out) {
  static const char fn[] = "MXSymbolCreateFromJSON";
  if (!json) return capi_ret(mxr__capi_null(fn, "json"));
  if (!out) return capi_ret(mxr__capi_null(fn, "out"));
  mxr_symbol *s = NULL;
  int st = mxr_symbol_from_json(json, &s);
  if (!st) st = wrap_symbol(s, out);
  return capi_ret(st);
}

int MXSymbolSaveToJSON(SymbolHandle symbol, const char **out_json) {
  static const char fn[] = "MXSymbolSaveToJSON";
  mxr_symbol *s;
  int st = mxr__capi_symbol(symbol, fn, "symbol", &s);
  if (!st && !out_json) st = mxr__capi_null(fn, "out_json");
  struct capi_tls *t = st ? NULL : mxr__capi_tls();
  if (!st && !t) st = MXR_ENOMEM;
  char *json = NULL;
  if (!st) st = mxr_symbol_to_json(s, &json);
  if (st) return -1;
  free(t->json);
  t->json = json;
  *out_json = json;
  return 0;
}

int mxr__capi_return_names(int n, const char *const *names, uint32_t *out_size,
                        const char ***out_array) {
  struct capi_tls *t = mxr__capi_tls();
  if (!t) return MXR_ENOMEM;
  size_t chars = 0;
  for (int i = 0; i < n; i++) chars += strlen(names[i]) + 1;
  int st = mxr__capi_reserve(&t->name_ptrs, ((size_t)n + 1) * sizeof(char *));
  if (!st) st = mxr__capi_reserve(&t->name_chars, chars + 1);
  if (st) return st;
  const char **ptrs = t->name_ptrs.p;
  char *p = t->name_chars.p;
  for (int i = 0; i < n; i++) {
    size_t len = strlen(names[i]) + 1;
    memcpy(p, names[i], len);
    ptrs[i] = p;
    p += len;
  }
  ptrs[n] = NULL;
  *out_size = (uint32_t)n;
  *out_array = ptrs;
  return 0;
}

typedef int (*list_fn)(const mxr_symbol *, int *, const char *const **);

static int list_names(const char *fn, list_fn list, SymbolHandle symbol, uint32_t *out_size,
                      const char ***out_str_array) {
  mxr_symbol *s;
  int st = mxr__capi_symbol(symbol, fn, "symbol", &s);
  if (!st && (!out_size || !out_str_array)) st = mxr__capi_null(fn, "an out pointer");
  int n = 0;
  const char *const *names = NULL;
  if (!st) st = list(s, &n, &names);
  if (!st) st = mxr__capi_return_names(n, names, out_size, out_str_array);
  return capi_ret(st);
}

int MXSymbolListArguments(SymbolHandle symbol, uint32_t *out_size, const char ***out_str_array) {
  return list_names("MXSymbolListArguments", mxr_symbol_list_arguments, symbol, out_size,
                    out_str_array);
}

int MXSymbolListOutputs(SymbolHandle symbol, uint32_t *out_size, const char ***out_str_array) {
  return list_names("MXSymbolListOutputs", mxr_symbol_list_outputs, symbol, out_size,
                    out_str_array);
}

int MXSymbolListAuxiliaryStates(SymbolHandle symbol, uint32_t *out_size,
                                const char ***out_str_array) {
  return list_names("MXSymbolListAuxiliaryStates", mxr_symbol_list_auxiliary_states, symbol,
                    out_size, out_str_array);
}

/* nnvm's input lists: 0 every variable in graph order, 1 the arguments
 * (read-only inputs), 2 the aux states (mutable ones). */
int NNSymbolListInputNames(SymbolHandle symbol, int option, nn_uint *out_size,
                           const char ***out_str_array) {
  static int (*const lists[3])(const mxr_symbol *, int *, const char *const **) = {
      mxr_symbol_list_inputs, mxr_symbol_list_arguments, mxr_symbol_list_auxiliary_states};
  if (option < 0 || option > 2)
    return capi_ret(mxr_set_error(MXR_EINVAL, "NNSymbolListInputNames: option %d is not 0, 1 or 2", option));
  return list_names("NNSymbolListInputNames", lists[option], symbol, out_size, out_str_array);
}

/* ------------------------------------------------------- shape inference */

/* Hand one list of inferred shapes back in MXNet's legacy form (unknown
 * shape: ndim 0; unknown dimension: 0). */
static int return_shapes(struct capi_tls *t, int which, const struct mxr_shape *shapes, int n,
                         const int **ndim_out, const int ***data_out) {
  size_t dims = 0;
  for (int i = 0; i < n; i++)
    if (shapes[i].ndim > 0) dims += (size_t)shapes[i].ndim;
  int st = mxr__capi_reserve(&t->infer_ndim[which], ((size_t)n + 1) * sizeof(int));
  if (!st) st = mxr__capi_reserve(&t->infer_ptrs[which], ((size_t)n + 1) * sizeof(int *));
  if (!st) st = mxr__capi_reserve(&t->infer_dims[which], (dims + 1) * sizeof(int));
  if (st) return st;
  int *ndim = t->infer_ndim[which].p, *d = t->infer_dims[which].p;
  const int **ptrs = t->infer_ptrs[which].p;
  for (int i = 0; i < n; i++) {
    int nd = shapes[i].ndim > 0 ? shapes[i].ndim : 0;
    ndim[i] = nd;
    ptrs[i] = d;
    for (int k = 0; k < nd; k++) {
      int64_t v = shapes[i].dim[k];
      *d++ = v > 0 && v <= INT32_MAX ? (int)v : 0;
    }
  }
  *ndim_out = ndim;
  *data_out = ptrs;
  return 0;
}

/* A shape with a dimension above 2^31 - 1 cannot be returned in this
 * call's int dimensions (MXNet returns it cut to 32 bits): it fails,
 * naming the input or output. */
static int check_int_dims(const char *fn, const char *what, const struct mxr_shape *shapes, int n,
                          const char *const *names) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < shapes[i].ndim; k++)
      if (shapes[i].dim[k] > INT32_MAX) {
        char buf[160];
        return mxr_set_error(MXR_EINVAL,
                             "%s: the %s %s has shape %s: a dimension above 2^31 - 1 does not fit this "
                             "call's int dimensions",
                             fn, what, names[i], mxr_shape_str(&shapes[i], buf, sizeof buf));
      }
  return 0;
}

static int name_index(const char *const *names, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0) return i;
  return -1;
}

int MXSymbolInferShapeEx(SymbolHandle sym, uint32_t num_args, const char **keys,
                         const uint32_t *arg_ind_ptr, const int *arg_shape_data,
                         uint32_t *in_shape_size, const int **in_shape_ndim,
                         const int ***in_shape_data, uint32_t *out_shape_size,
                         const int **out_shape_ndim, const int ***out_shape_data,
                         uint32_t *aux_shape_size, const int **aux_shape_ndim,
                         const int ***aux_shape_data, int *complete) {
  static const char fn[] = "MXSymbolInferShapeEx";
  mxr_symbol *s;
  int st = mxr__capi_symbol(sym, fn, "sym", &s);
  if (st) return -1;
  if (!in_shape_size || !in_shape_ndim || !in_shape_data || !out_shape_size || !out_shape_ndim ||
      !out_shape_data || !aux_shape_size || !aux_shape_ndim || !aux_shape_data || !complete)
    return capi_ret(mxr__capi_null(fn, "an out pointer"));
  if (num_args > 0 && !arg_ind_ptr) return capi_ret(mxr__capi_null(fn, "arg_ind_ptr"));
  int nargs = 0, naux = 0, nout = 0;
  const char *const *arg_names = NULL, *const *aux_names = NULL, *const *out_names = NULL;
  st = mxr_symbol_list_arguments(s, &nargs, &arg_names);
  if (!st) st = mxr_symbol_list_auxiliary_states(s, &naux, &aux_names);
  if (!st) st = mxr_symbol_list_outputs(s, &nout, &out_names);
  if (st) return -1;
  if (!keys && num_args > (uint32_t)nargs)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: %u positional shapes for %d arguments", fn,
                                  (unsigned)num_args, nargs));
  if (num_args > (uint32_t)(nargs + naux))
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: %u shapes for %d inputs", fn, (unsigned)num_args,
                                  nargs + naux));

  struct capi_tls *t = mxr__capi_tls();
  if (!t) return -1;
  const char **names = calloc((size_t)num_args + 1, sizeof *names);
  struct mxr_shape *known = calloc((size_t)num_args + 1, sizeof *known);
  struct mxr_shape *shapes = calloc((size_t)(nargs + nout + naux) + 1, sizeof *shapes);
  if (!names || !known || !shapes) st = mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn);
  for (uint32_t i = 0; !st && i < num_args; i++) {
    const char *name = keys ? keys[i] : arg_names[i];
    if (!name) {
      st = mxr_set_error(MXR_EINVAL, "%s: keys[%u] is NULL", fn, (unsigned)i);
      break;
    }
    if (keys && name_index(arg_names, nargs, name) < 0 && name_index(aux_names, naux, name) < 0) {
      st = mxr_set_error(MXR_EINVAL, "%s: keyword argument name %s not found (not an argument or aux state)",
                         fn, name);
      break;
    }
    uint32_t begin = arg_ind_ptr[i], end = arg_ind_ptr[i + 1];
    if (end < begin || end - begin > MXR_MAX_NDIM) {
      st = mxr_set_error(MXR_EINVAL, "%s: shape %u (%s) has arg_ind_ptr %u..%u: more than %d dimensions or decreasing",
                         fn, (unsigned)i, name, (unsigned)begin, (unsigned)end, MXR_MAX_NDIM);
      break;
    }
    if (end > begin && !arg_shape_data) {
      st = mxr__capi_null(fn, "arg_shape_data");
      break;
    }
    names[i] = name;
    known[i].ndim = (int)(end - begin);
    for (uint32_t k = begin; k < end; k++) {
      if (arg_shape_data[k] < 0) {
        st = mxr_set_error(MXR_EINVAL, "%s: shape of %s has a negative dimension (%d)", fn, name,
                           arg_shape_data[k]);
        break;
      }
      known[i].dim[k - begin] = arg_shape_data[k];
    }
  }
  int done = 0;
  if (!st)
    st = mxr_symbol_infer_shape(s, (int)num_args, names, known, shapes, shapes + nargs, shapes + nargs + nout,
                                &done);
  if (!st) st = check_int_dims(fn, "argument", shapes, nargs, arg_names);
  if (!st) st = check_int_dims(fn, "output", shapes + nargs, nout, out_names);
  if (!st) st = check_int_dims(fn, "aux state", shapes + nargs + nout, naux, aux_names);
  if (!st) st = return_shapes(t, 0, shapes, nargs, in_shape_ndim, in_shape_data);
  if (!st) st = return_shapes(t, 1, shapes + nargs, nout, out_shape_ndim, out_shape_data);
  if (!st) st = return_shapes(t, 2, shapes + nargs + nout, naux, aux_shape_ndim, aux_shape_data);
  if (!st) {
    *in_shape_size = (uint32_t)nargs;
    *out_shape_size = (uint32_t)nout;
    *aux_shape_size = (uint32_t)naux;
    /* In MXNet's legacy shapes a 0 dimension (and ndim 0) means "not known
     * yet", so a shape holding one leaves the inference incomplete. */
    bool all_known = done != 0;
    for (int i = 0; all_known && i < nargs + nout + naux; i++) {
      all_known = shapes[i].ndim > 0;
      for (int k = 0; all_known && k < shapes[i].ndim; k++) all_known = shapes[i].dim[k] > 0;
    }
    *complete = all_known;
  }
  free(names);
  free(known);
  free(shapes);
  return capi_ret(st);
}
