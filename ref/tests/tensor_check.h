/* Helpers of the tensor family tests (test_ops_reduce.c, test_ops_dot.c,
 * test_ops_reshape.c, test_ops_transpose.c, test_ops_concat.c,
 * test_ops_softmax.c, test_ops_tensor_families.c): parsing and shape
 * inference from "key=value" specs, checker cases, index helpers, and
 * direct kernel calls. */
#ifndef MXR_TESTS_TENSOR_CHECK_H
#define MXR_TESTS_TENSOR_CHECK_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_tap.h"
#include "op_check.h"

/* ------------------------------------------------------------ helpers */

/* Parameter text "k=v;k=v" split into the case's key/value arrays.  The
 * strings live in a static pool: each test runs in its own process. */
static char pool[8192];
static size_t pool_used;

static inline int split_params(const char *spec, const char **keys, const char **vals) {
  int n = 0;
  if (!spec || !*spec) return 0;
  size_t len = strlen(spec) + 1;
  ck_assert_uint_lt(pool_used + len, sizeof pool);
  char *s = pool + pool_used;
  memcpy(s, spec, len);
  pool_used += len;
  for (char *item = strtok(s, ";"); item; item = strtok(NULL, ";")) {
    char *eq = strchr(item, '=');
    ck_assert_ptr_nonnull(eq);
    *eq = '\0';
    keys[n] = item;
    vals[n++] = eq + 1;
  }
  return n;
}

static inline int parse(const char *op, const char *spec, mxr_op_params **p) {
  const char *k[OC_MAX_PARAMS], *v[OC_MAX_PARAMS];
  const mxr_op *o;
  ck_assert_msg(mxr_op_find(op, &o) == 0, "%s", mxr_last_error());
  int n = split_params(spec, k, v);
  *p = NULL;
  return mxr_op_params_parse(o, n, k, v, p);
}

static inline void expect_parse_error(const char *op, const char *spec, const char *msg) {
  mxr_op_params *p;
  ck_assert_int_eq(parse(op, spec, &p), MXR_EINVAL);
  ck_assert_ptr_null(p);
  ck_assert_msg(strstr(mxr_last_error(), msg), "%s %s: '%s' lacks '%s'", op, spec, mxr_last_error(), msg);
}

/* Shape inference with `nin` inputs and `nout` outputs (unknown ones ndim -1). */
static inline int infer(const char *op, const char *spec, struct mxr_shape *in, int nin,
                 struct mxr_shape *out, int nout) {
  const mxr_op *o;
  mxr_op_params *p;
  ck_assert_int_eq(mxr_op_find(op, &o), 0);
  ck_assert_msg(parse(op, spec, &p) == 0, "%s", mxr_last_error());
  ck_assert_int_eq(mxr_op_num_inputs(o, p), nin);
  ck_assert_int_eq(mxr_op_num_outputs(o, p), nout);
  int st = mxr__op_infer_shape(o, p, in, nin, out, nout, NULL, 0);
  mxr_op_params_free(p);
  return st;
}

#define UNKNOWN ((struct mxr_shape){-1, {0}})

static inline void expect_shape(const char *op, const char *spec, struct mxr_shape in, struct mxr_shape want) {
  struct mxr_shape out = UNKNOWN;
  ck_assert_msg(infer(op, spec, &in, 1, &out, 1) == 0, "%s %s: %s", op, spec, mxr_last_error());
  char a[96], b[96];
  ck_assert_msg(mxr_shape_equal(&out, &want), "%s %s: got %s, want %s", op, spec,
                mxr_shape_str(&out, a, sizeof a), mxr_shape_str(&want, b, sizeof b));
}

static inline void expect_shape_error(const char *op, const char *spec, struct mxr_shape in, const char *msg) {
  struct mxr_shape out = UNKNOWN;
  ck_assert_int_eq(infer(op, spec, &in, 1, &out, 1), MXR_EINVAL);
  ck_assert_msg(strstr(mxr_last_error(), msg), "%s %s: '%s' lacks '%s'", op, spec, mxr_last_error(), msg);
}

static inline struct oc_case make_case(const char *op, const char *spec, oc_forward_ref ref, const void *user) {
  struct oc_case c = {.op = op, .forward_ref = ref, .user = user};
  c.nparams = split_params(spec, c.keys, c.vals);
  return c;
}

static inline void unravel(int64_t i, const struct mxr_shape *s, int64_t *c) {
  for (int d = s->ndim - 1; d >= 0; d--) {
    c[d] = i % s->dim[d];
    i /= s->dim[d];
  }
}

static inline int64_t ravel(const int64_t *c, const struct mxr_shape *s) {
  int64_t i = 0;
  for (int d = 0; d < s->ndim; d++) i = i * s->dim[d] + c[d];
  return i;
}

/* Direct kernel calls for what the checker cannot express: integer lengths,
 * a different output dtype, req null, in-place runs. */
static inline void run(const char *op, const char *spec, const struct mxr_tensor *in, int nin, const int *req,
                struct mxr_tensor *out, int nout, int want) {
  const mxr_op *o;
  mxr_op_params *p;
  ck_assert_int_eq(mxr_op_find(op, &o), 0);
  ck_assert_msg(parse(op, spec, &p) == 0, "%s", mxr_last_error());
  struct mxr_op_ctx ctx = {0};
  int st = mxr__op_forward_cpu(o, p, &ctx, in, nin, req, out, nout, NULL, 0);
  ck_assert_msg(st == want, "%s: status %d (%s)", op, st, mxr_last_error());
  mxr_op_params_free(p);
}

static inline struct mxr_tensor tensor(void *data, struct mxr_shape s, int dtype) {
  return (struct mxr_tensor){data, s, dtype};
}

/* Short booleans for tables of axis flags and transposes. */
#define T true
#define F false

#endif /* MXR_TESTS_TENSOR_CHECK_H */
