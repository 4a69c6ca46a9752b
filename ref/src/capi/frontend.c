/*
 * C API: what MXNet's frontends enumerate at import: operator info, packed
 * functions, legacy NDArray functions, data iterators, custom op
 * registration and the kvstore role.  libmxref has no packed functions or
 * legacy functions, so those lists are empty; MXNet's data iterators are
 * listed, none implemented.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "capi/capi_internal.h"

int MXSymbolGetAtomicSymbolInfo(AtomicSymbolCreator creator, const char **name,
                                const char **description, uint32_t *num_args,
                                const char ***arg_names, const char ***arg_type_infos,
                                const char ***arg_descriptions, const char **key_var_num_args,
                                const char **return_type) {
  static const char fn[] = "MXSymbolGetAtomicSymbolInfo";
  if (!name || !description || !num_args || !arg_names || !arg_type_infos ||
      !arg_descriptions || !key_var_num_args)
    return capi_ret(mxr__capi_null(fn, "an out pointer"));
  const mxr_op *op;
  const struct mxr_op_info *info;
  if (mxr__capi_op(creator, fn, &op) || mxr_op_info(op, &info)) return -1;
  *name = info->name;
  *description = info->description;
  *num_args = (uint32_t)info->num_args;
  /* The C API's arrays are not const; nothing writes through them. */
  *arg_names = (const char **)(uintptr_t)info->arg_names;
  *arg_type_infos = (const char **)(uintptr_t)info->arg_types;
  *arg_descriptions = (const char **)(uintptr_t)info->arg_descs;
  *key_var_num_args = info->key_var_num_args;
  if (return_type) *return_type = NULL;
  return 0;
}

/* The empty lists' arrays: valid pointers to no elements. */
static const char *no_names[1];
static void *no_handles[1];

int MXNetFuncListGlobalNames(int *out_size, const char ***out_array) {
  if (!out_size || !out_array)
    return capi_ret(mxr__capi_null("MXNetFuncListGlobalNames", "an out pointer"));
  *out_size = 0;
  *out_array = no_names;
  return 0;
}

int MXNetFuncGetGlobal(const char *name, MXNetFunctionHandle *out) {
  static const char fn[] = "MXNetFuncGetGlobal";
  if (!name) return capi_ret(mxr__capi_null(fn, "name"));
  if (!out) return capi_ret(mxr__capi_null(fn, "out"));
  return capi_ret(mxr_set_error(MXR_ENOTIMPL, "%s: packed function %s is not implemented by libmxref", fn, name));
}

int MXListFunctions(uint32_t *out_size, FunctionHandle **out_array) {
  if (!out_size || !out_array) return capi_ret(mxr__capi_null("MXListFunctions", "an out pointer"));
  *out_size = 0;
  *out_array = (FunctionHandle *)no_handles;
  return 0;
}

/* No function handle exists, so every one given is not one. */
static int no_function(const char *fn, FunctionHandle fun) {
  return capi_ret(mxr_set_error(MXR_EINVAL, "%s: %p is not a function handle (libmxref lists none)", fn, fun));
}

int MXFuncGetInfo(FunctionHandle fun, const char **name, const char **description,
                  uint32_t *num_args, const char ***arg_names, const char ***arg_type_infos,
                  const char ***arg_descriptions, const char **return_type) {
  (void)name, (void)description, (void)num_args, (void)arg_names, (void)arg_type_infos,
      (void)arg_descriptions, (void)return_type;
  return no_function("MXFuncGetInfo", fun);
}

int MXFuncDescribe(FunctionHandle fun, uint32_t *num_use_vars, uint32_t *num_scalars,
                   uint32_t *num_mutate_vars, int *type_mask) {
  (void)num_use_vars, (void)num_scalars, (void)num_mutate_vars, (void)type_mask;
  return no_function("MXFuncDescribe", fun);
}

/* MXNet 1.9.1's data iterators, in its order: listed so that frontends
 * find them, none implemented.  A creator handle points at one entry. */
static const char *const iter_names[] = {
    "CSVIter",        "ImageDetRecordIter",   "ImageRecordIter_v1",
    "ImageRecordUInt8Iter_v1", "ImageRecordIter", "ImageRecordUInt8Iter",
    "ImageRecordInt8Iter",     "LibSVMIter",      "MNISTIter",
};
#define NUM_ITERS (sizeof iter_names / sizeof iter_names[0])
#define ITER(i) ((DataIterCreator)(void *)&iter_names[i])
static DataIterCreator iter_creators[NUM_ITERS] = {ITER(0), ITER(1), ITER(2), ITER(3), ITER(4),
                                                   ITER(5), ITER(6), ITER(7), ITER(8)};
#undef ITER
static const char iter_description[] =
    "a data iterator MXNet 1.9.1 registers; it is not implemented by libmxref, and creating "
    "it fails.";

int MXListDataIters(uint32_t *out_size, DataIterCreator **out_array) {
  if (!out_size || !out_array) return capi_ret(mxr__capi_null("MXListDataIters", "an out pointer"));
  *out_size = (uint32_t)NUM_ITERS;
  *out_array = iter_creators;
  return 0;
}

/* The iterator a creator handle names, or NULL with an error. */
static const char *iter_of(const char *fn, DataIterCreator creator) {
  for (size_t i = 0; i < NUM_ITERS; i++)
    if (creator == (const void *)&iter_names[i]) return iter_names[i];
  mxr_set_error(MXR_EINVAL, "%s: %p is not a data iterator creator (get one from MXListDataIters)",
                fn, creator);
  return NULL;
}

int MXDataIterGetIterInfo(DataIterCreator creator, const char **name, const char **description,
                          uint32_t *num_args, const char ***arg_names,
                          const char ***arg_type_infos, const char ***arg_descriptions) {
  static const char fn[] = "MXDataIterGetIterInfo";
  if (!name || !description || !num_args || !arg_names || !arg_type_infos || !arg_descriptions)
    return capi_ret(mxr__capi_null(fn, "an out pointer"));
  const char *iter = iter_of(fn, creator);
  if (!iter) return -1;
  *name = iter;
  *description = iter_description;
  *num_args = 0;
  *arg_names = *arg_type_infos = *arg_descriptions = (const char **)no_names;
  return 0;
}

int MXDataIterCreateIter(DataIterCreator creator, uint32_t num_param, const char **keys,
                         const char **vals, DataIterHandle *out) {
  static const char fn[] = "MXDataIterCreateIter";
  (void)num_param, (void)keys, (void)vals;
  if (!out) return capi_ret(mxr__capi_null(fn, "out"));
  const char *iter = iter_of(fn, creator);
  if (!iter) return -1;
  return capi_ret(mxr_set_error(MXR_ENOTIMPL, "iterator %s is not implemented by libmxref", iter));
}

int MXKVStoreIsWorkerNode(int *ret) {
  if (!ret) return capi_ret(mxr__capi_null("MXKVStoreIsWorkerNode", "ret"));
  *ret = 1;
  return 0;
}

/* The frontend registers its custom op classes at import; using one goes
 * through the Custom operator, which is not implemented, so the
 * registration needs to keep nothing. */
int MXCustomOpRegister(const char *op_type, CustomOpPropCreator creator) {
  static const char fn[] = "MXCustomOpRegister";
  if (!op_type) return capi_ret(mxr__capi_null(fn, "op_type"));
  if (!creator) return capi_ret(mxr__capi_null(fn, "creator"));
  return 0;
}

int MXIsNumpyShape(int *curr) {
  if (!curr) return capi_ret(mxr__capi_null("MXIsNumpyShape", "curr"));
  *curr = 0;
  return 0;
}

int MXSetIsNumpyShape(int is_np_shape, int *prev) {
  static const char fn[] = "MXSetIsNumpyShape";
  if (!prev) return capi_ret(mxr__capi_null(fn, "prev"));
  if (is_np_shape)
    return capi_ret(mxr_set_error(MXR_ENOTIMPL,
                                  "%s: NumPy shape semantics are not implemented by libmxref (asked for %d)",
                                  fn, is_np_shape));
  *prev = 0;
  return 0;
}

int MXGetEnv(const char *name, const char **value) {
  if (!name || !value) return capi_ret(mxr__capi_null("MXGetEnv", name ? "value" : "name"));
  *value = getenv(name);
  return 0;
}

int MXSetEnv(const char *name, const char *value) {
  if (!name) return capi_ret(mxr__capi_null("MXSetEnv", "name"));
  int rc = value ? setenv(name, value, 1) : unsetenv(name);
  if (rc) return capi_ret(mxr_set_error(MXR_ESYS, "MXSetEnv: cannot set %s", name));
  return 0;
}
