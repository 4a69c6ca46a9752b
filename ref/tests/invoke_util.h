/*
 * Test support for imperative calls on small vectors of the default
 * engine: a vector from floats, and one op invoked by name with at most one
 * parameter.  Static inline only; a test binary includes it where it needs
 * it.
 */
#ifndef MXR_TESTS_INVOKE_UTIL_H
#define MXR_TESTS_INVOKE_UTIL_H

#include <check.h>

#include "mxref/error.h"
#include "mxref/imperative.h"
#include "mxref/ndarray.h"
#include "mxref/op.h"

/* A float32 vector of len elements on cpu(0) holding data. */
static inline mxr_ndarray *tu_vector(const float *data, int64_t len) {
  mxr_engine *eng;
  mxr_ndarray *a;
  ck_assert_int_eq(mxr_engine_default(&eng), 0);
  ck_assert_int_eq(mxr_ndarray_create(eng, &len, 1, mxr_cpu(0), MXR_FLOAT32, 0, &a), 0);
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(a, data, (size_t)len), 0);
  return a;
}

/* Invoke the op `name` (key=value when key is not NULL) on `in`, the call
 * creating the output (*out, or NULL); returns the call's status. */
static inline int tu_invoke(const char *name, const char *key, const char *value, int nin,
                            mxr_ndarray **in, mxr_ndarray **out) {
  const mxr_op *op;
  mxr_op_params *p;
  int n = 0;
  *out = NULL;
  ck_assert_int_eq(mxr_op_find(name, &op), 0);
  ck_assert_msg(mxr_op_params_parse(op, key ? 1 : 0, &key, &value, &p) == 0, "%s", mxr_last_error());
  int rc = mxr_imperative_invoke(op, p, nin, in, &n, out);
  mxr_op_params_free(p);
  return rc;
}

#endif /* MXR_TESTS_INVOKE_UTIL_H */
