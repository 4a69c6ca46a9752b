/*
 * C API: what frontends ask of a symbol beyond building it: its name and
 * attributes, its parts (one output, internals, children), type
 * inference, partial shape inference, printing, copies, and nnvm's names
 * for the same calls.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi/capi_internal.h"

static int wrap_new_symbol(int st, mxr_symbol *sym, SymbolHandle *out) {
  if (st) return -1;
  if (!sym) {
    *out = NULL;
    return 0;
  }
  struct capi_symbol *h = mxr__capi_handle_new(CAPI_SYMBOL);
  if (!h) {
    mxr_symbol_free(sym);
    return -1;
  }
  h->sym = sym;
  *out = h;
  return 0;
}

int MXSymbolGetName(SymbolHandle symbol, const char **out, int *success) {
  static const char fn[] = "MXSymbolGetName";
  mxr_symbol *s;
  if (mxr__capi_symbol(symbol, fn, "symbol", &s)) return -1;
  if (!out || !success) return capi_ret(mxr__capi_null(fn, "an out pointer"));
  *out = mxr_symbol_name(s);
  *success = *out != NULL;
  return 0;
}

int MXSymbolGetAttr(SymbolHandle symbol, const char *key, const char **out, int *success) {
  static const char fn[] = "MXSymbolGetAttr";
  mxr_symbol *s;
  if (mxr__capi_symbol(symbol, fn, "symbol", &s)) return -1;
  if (!key) return capi_ret(mxr__capi_null(fn, "key"));
  if (!out || !success) return capi_ret(mxr__capi_null(fn, "an out pointer"));
  *out = mxr_symbol_attr(s, key);
  *success = *out != NULL;
  return 0;
}

int MXSymbolSetAttr(SymbolHandle symbol, const char *key, const char *value) {
  static const char fn[] = "MXSymbolSetAttr";
  mxr_symbol *s;
  if (mxr__capi_symbol(symbol, fn, "symbol", &s)) return -1;
  if (!key || !value) return capi_ret(mxr__capi_null(fn, key ? "value" : "key"));
  return capi_ret(mxr_symbol_set_attr(s, key, value));
}

static int list_attr(const char *fn, SymbolHandle symbol, int recursive, uint32_t *out_size,
                     const char ***out) {
  mxr_symbol *s;
  if (mxr__capi_symbol(symbol, fn, "symbol", &s)) return -1;
  if (!out_size || !out) return capi_ret(mxr__capi_null(fn, "an out pointer"));
  struct capi_tls *t = mxr__capi_tls();
  int num = 0;
  char **kv = NULL;
  if (!t || mxr_symbol_list_attrs(s, recursive, &num, &kv)) return -1;
  free(t->attrs);
  t->attrs = kv;
  *out_size = (uint32_t)num;
  *out = (const char **)kv;
  return 0;
}

int MXSymbolListAttr(SymbolHandle symbol, uint32_t *out_size, const char ***out) {
  return list_attr("MXSymbolListAttr", symbol, 1, out_size, out);
}

int MXSymbolListAttrShallow(SymbolHandle symbol, uint32_t *out_size, const char ***out) {
  return list_attr("MXSymbolListAttrShallow", symbol, 0, out_size, out);
}

int MXSymbolGetNumOutputs(SymbolHandle symbol, uint32_t *output_count) {
  static const char fn[] = "MXSymbolGetNumOutputs";
  mxr_symbol *s;
  const char *const *names;
  int n;
  if (mxr__capi_symbol(symbol, fn, "symbol", &s)) return -1;
  if (!output_count) return capi_ret(mxr__capi_null(fn, "output_count"));
  if (mxr_symbol_list_outputs(s, &n, &names)) return -1;
  *output_count = (uint32_t)n;
  return 0;
}

int MXSymbolGetOutput(SymbolHandle symbol, uint32_t index, SymbolHandle *out) {
  static const char fn[] = "MXSymbolGetOutput";
  mxr_symbol *s, *r = NULL;
  if (mxr__capi_symbol(symbol, fn, "symbol", &s)) return -1;
  if (!out) return capi_ret(mxr__capi_null(fn, "out"));
  if (index > INT32_MAX) return capi_ret(mxr_set_error(MXR_EINVAL, "%s: index %u is out of range", fn, index));
  int st = mxr_symbol_output(s, (int)index, &r);
  return wrap_new_symbol(st, r, out);
}

/* The three ways to make a symbol from one symbol. */
static int derive(const char *fn, SymbolHandle symbol, SymbolHandle *out,
                  int (*make)(const mxr_symbol *, mxr_symbol **)) {
  mxr_symbol *s, *r = NULL;
  if (mxr__capi_symbol(symbol, fn, "symbol", &s)) return -1;
  if (!out) return capi_ret(mxr__capi_null(fn, "out"));
  int st = make(s, &r);
  return wrap_new_symbol(st, r, out);
}

int MXSymbolGetInternals(SymbolHandle symbol, SymbolHandle *out) {
  return derive("MXSymbolGetInternals", symbol, out, mxr_symbol_internals);
}

int MXSymbolGetChildren(SymbolHandle symbol, SymbolHandle *out) {
  return derive("MXSymbolGetChildren", symbol, out, mxr_symbol_children);
}

/* libmxref inserts no AMP casts, so there are none to remove. */
int MXSymbolRemoveAmpCast(SymbolHandle sym_handle, SymbolHandle *ret_sym_handle) {
  return derive("MXSymbolRemoveAmpCast", sym_handle, ret_sym_handle, mxr_symbol_copy);
}

int MXShallowCopySymbol(SymbolHandle src, SymbolHandle *out) {
  return derive("MXShallowCopySymbol", src, out, mxr_symbol_copy);
}

int NNSymbolFree(SymbolHandle symbol) { return MXSymbolFree(symbol); }

int NNSymbolCompose(SymbolHandle sym, const char *name, nn_uint num_args, const char **keys,
                    SymbolHandle *args) {
  return MXSymbolCompose(sym, name, num_args, keys, args);
}

/* MXNet prints the graph for people; the JSON says the same. */
int MXSymbolPrint(SymbolHandle symbol, const char **out_str) {
  static const char fn[] = "MXSymbolPrint";
  mxr_symbol *s;
  if (mxr__capi_symbol(symbol, fn, "symbol", &s)) return -1;
  if (!out_str) return capi_ret(mxr__capi_null(fn, "out_str"));
  struct capi_tls *t = mxr__capi_tls();
  char *json = NULL;
  if (!t || mxr_symbol_to_json(s, &json)) return -1;
  free(t->text);
  t->text = json;
  *out_str = json;
  return 0;
}

/* ------------------------------------------------------- type inference */

static int return_types(struct capi_tls *t, int which, const int *types, int n, const int **out) {
  if (mxr__capi_reserve(&t->infer_ndim[which], ((size_t)n + 1) * sizeof(int))) return -1;
  int *dst = t->infer_ndim[which].p;
  memcpy(dst, types, (size_t)n * sizeof *dst);
  *out = dst;
  return 0;
}

static int infer_type(const char *fn, SymbolHandle sym, uint32_t num_args, const char **keys,
                      const int *arg_type_data, uint32_t *in_type_size, const int **in_type_data,
                      uint32_t *out_type_size, const int **out_type_data, uint32_t *aux_type_size,
                      const int **aux_type_data, int *complete) {
  mxr_symbol *s;
  if (mxr__capi_symbol(sym, fn, "sym", &s)) return -1;
  if (!in_type_size || !in_type_data || !out_type_size || !out_type_data || !aux_type_size ||
      !aux_type_data || !complete)
    return capi_ret(mxr__capi_null(fn, "an out pointer"));
  if (num_args > 0 && !arg_type_data) return capi_ret(mxr__capi_null(fn, "arg_type_data"));
  int nargs, nout, naux;
  const char *const *arg_names, *const *names;
  if (mxr_symbol_list_arguments(s, &nargs, &arg_names) || mxr_symbol_list_outputs(s, &nout, &names) ||
      mxr_symbol_list_auxiliary_states(s, &naux, &names))
    return -1;
  if (!keys && num_args > (uint32_t)nargs)
    return capi_ret(mxr_set_error(MXR_EINVAL, "%s: %u positional types for %d arguments", fn,
                                  (unsigned)num_args, nargs));
  struct capi_tls *t = mxr__capi_tls();
  int *types = malloc(((size_t)(nargs + nout + naux) + 1) * sizeof *types);
  const char **known = calloc((size_t)num_args + 1, sizeof *known);
  int st = t && types && known ? 0 : mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn);
  for (uint32_t i = 0; !st && i < num_args; i++) {
    known[i] = keys ? keys[i] : arg_names[i];
    if (!known[i]) st = mxr_set_error(MXR_EINVAL, "%s: keys[%u] is NULL", fn, (unsigned)i);
  }
  int done = 0;
  if (!st)
    st = mxr_symbol_infer_type(s, (int)num_args, known, arg_type_data, types, types + nargs,
                               types + nargs + nout, &done);
  if (!st) st = return_types(t, 0, types, nargs, in_type_data);
  if (!st) st = return_types(t, 1, types + nargs, nout, out_type_data);
  if (!st) st = return_types(t, 2, types + nargs + nout, naux, aux_type_data);
  if (!st) {
    *in_type_size = (uint32_t)nargs;
    *out_type_size = (uint32_t)nout;
    *aux_type_size = (uint32_t)naux;
    *complete = done;
  }
  free(types);
  free(known);
  return capi_ret(st);
}

int MXSymbolInferType(SymbolHandle sym, uint32_t num_args, const char **keys,
                      const int *arg_type_data, uint32_t *in_type_size, const int **in_type_data,
                      uint32_t *out_type_size, const int **out_type_data, uint32_t *aux_type_size,
                      const int **aux_type_data, int *complete) {
  return infer_type("MXSymbolInferType", sym, num_args, keys, arg_type_data, in_type_size,
                    in_type_data, out_type_size, out_type_data, aux_type_size, aux_type_data,
                    complete);
}

int MXSymbolInferTypePartial(SymbolHandle sym, uint32_t num_args, const char **keys,
                             const int *arg_type_data, uint32_t *in_type_size,
                             const int **in_type_data, uint32_t *out_type_size,
                             const int **out_type_data, uint32_t *aux_type_size,
                             const int **aux_type_data, int *complete) {
  int st = infer_type("MXSymbolInferTypePartial", sym, num_args, keys, arg_type_data, in_type_size,
                      in_type_data, out_type_size, out_type_data, aux_type_size, aux_type_data,
                      complete);
  if (!st) *complete = 1; /* as the partial shape call */
  return st;
}

/* MXSymbolInferShapeEx already leaves unknown shapes unknown (ndim 0)
 * instead of failing; the partial call reports its result as complete, as
 * MXNet does, so that the frontend reads the shapes. */
int MXSymbolInferShapePartialEx(SymbolHandle sym, uint32_t num_args, const char **keys,
                                const uint32_t *arg_ind_ptr, const int *arg_shape_data,
                                uint32_t *in_shape_size, const int **in_shape_ndim,
                                const int ***in_shape_data, uint32_t *out_shape_size,
                                const int **out_shape_ndim, const int ***out_shape_data,
                                uint32_t *aux_shape_size, const int **aux_shape_ndim,
                                const int ***aux_shape_data, int *complete) {
  int st = MXSymbolInferShapeEx(sym, num_args, keys, arg_ind_ptr, arg_shape_data, in_shape_size,
                                in_shape_ndim, in_shape_data, out_shape_size, out_shape_ndim,
                                out_shape_data, aux_shape_size, aux_shape_ndim, aux_shape_data,
                                complete);
  if (!st) *complete = 1;
  return st;
}

/* ---------------------------------------------------------------- files */

int MXSymbolSaveToFile(SymbolHandle symbol, const char *fname) {
  static const char fn[] = "MXSymbolSaveToFile";
  mxr_symbol *s;
  if (mxr__capi_symbol(symbol, fn, "symbol", &s)) return -1;
  if (!fname) return capi_ret(mxr__capi_null(fn, "fname"));
  char *json = NULL;
  if (mxr_symbol_to_json(s, &json)) return -1;
  FILE *f = fopen(fname, "w");
  int st = f && fputs(json, f) >= 0 ? 0 : -1;
  if (f && fclose(f) != 0) st = -1;
  free(json);
  if (st) return capi_ret(mxr_set_error(MXR_ESYS, "%s: cannot write %s", fn, fname));
  return 0;
}

int MXSymbolCreateFromFile(const char *fname, SymbolHandle *out) {
  static const char fn[] = "MXSymbolCreateFromFile";
  if (!fname || !out) return capi_ret(mxr__capi_null(fn, fname ? "out" : "fname"));
  FILE *f = fopen(fname, "rb");
  if (!f) return capi_ret(mxr_set_error(MXR_ESYS, "%s: cannot open %s", fn, fname));
  size_t cap = 4096, len = 0, n;
  char *text = malloc(cap);
  while (text && (n = fread(text + len, 1, cap - len - 1, f)) > 0) {
    len += n;
    if (len + 1 == cap) {
      char *grown = realloc(text, cap *= 2);
      if (!grown) free(text);
      text = grown;
    }
  }
  int err = ferror(f);
  fclose(f);
  if (!text) return capi_ret(mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn));
  text[len] = '\0';
  mxr_symbol *s = NULL;
  int st = err ? mxr_set_error(MXR_ESYS, "%s: cannot read %s", fn, fname) : mxr_symbol_from_json(text, &s);
  free(text);
  return wrap_new_symbol(st, s, out);
}
