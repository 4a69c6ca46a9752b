/* Helpers of the Convolution and Pooling tests (test_ops_convolution.c,
 * test_ops_pooling.c): op lookup, parsing, shape inference and CPU runs
 * with parameters as key/value arrays, float32 tensors, comparisons. */
#ifndef MXR_TESTS_CONV_CHECK_H
#define MXR_TESTS_CONV_CHECK_H

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_tap.h"
#include "op_check.h"

/* Spatial geometry padded in front to 3 dimensions (extent 1). */
struct sp3 {
  int64_t in[3], out[3], k[3], s[3], p[3], d[3];
};

static inline void pad3(int nsp, const int64_t *src, int64_t *dst, int64_t fill) {
  for (int i = 0; i < 3; i++) dst[i] = i < 3 - nsp ? fill : src[i - (3 - nsp)];
}

static inline const mxr_op *find(const char *name) {
  const mxr_op *op = NULL;
  ck_assert_msg(mxr_op_find(name, &op) == 0, "%s", mxr_last_error());
  return op;
}

static inline int parse(const char *op, int n, const char *const *k, const char *const *v,
                 mxr_op_params **out) {
  *out = NULL;
  return mxr_op_params_parse(find(op), n, k, v, out);
}

/* Parsing must fail with a message containing `want`. */
static inline void expect_parse_error(const char *op, int n, const char *const *k, const char *const *v,
                               const char *want) {
  mxr_op_params *p;
  ck_assert_int_eq(parse(op, n, k, v, &p), MXR_EINVAL);
  ck_assert_ptr_null(p);
  ck_assert_msg(strstr(mxr_last_error(), want) != NULL, "error '%s' lacks '%s'", mxr_last_error(),
                want);
}

/* Shape inference of `op` on the given input shapes; returns the status
 * and leaves the shapes updated. */
static inline int infer(const char *op, int n, const char *const *k, const char *const *v,
                 struct mxr_shape *in, int nin, struct mxr_shape *out, int nout) {
  mxr_op_params *p;
  ck_assert_msg(parse(op, n, k, v, &p) == 0, "%s", mxr_last_error());
  ck_assert_int_eq(mxr_op_num_inputs(find(op), p), nin);
  ck_assert_int_eq(mxr_op_num_outputs(find(op), p), nout);
  for (int i = 0; i < nout; i++) out[i].ndim = -1;
  int st = mxr__op_infer_shape(find(op), p, in, nin, out, nout, NULL, 0);
  mxr_op_params_free(p);
  return st;
}

static inline void assert_shape(const struct mxr_shape *got, struct mxr_shape want, const char *what) {
  char a[96], b[96];
  ck_assert_msg(mxr_shape_equal(got, &want), "%s: got %s, want %s", what,
                mxr_shape_str(got, a, sizeof a), mxr_shape_str(&want, b, sizeof b));
}

static inline struct mxr_tensor ftensor(struct mxr_shape s, const float *init) {
  int64_t n = mxr_shape_size(&s);
  struct mxr_tensor t = {calloc((size_t)(n ? n : 1), sizeof(float)), s, MXR_FLOAT32};
  ck_assert_ptr_nonnull(t.data);
  if (init) memcpy(t.data, init, (size_t)n * sizeof(float));
  return t;
}

/* Run an op's CPU kernel with a workspace of the size it asks for. */
static inline int run(const char *opname, mxr_op_params *p, const struct mxr_tensor *in, int nin,
               const int *req, struct mxr_tensor *out, int nout) {
  const mxr_op *op = find(opname);
  struct mxr_shape shapes[8];
  for (int i = 0; i < nin; i++) shapes[i] = in[i].shape;
  struct mxr_op_ctx ctx = {0};
  ctx.workspace_size =
      op->workspace_bytes ? op->workspace_bytes(mxr__op_params_struct(p), shapes, nin) : 0;
  ctx.workspace = ctx.workspace_size ? malloc(ctx.workspace_size) : NULL;
  int st = mxr__op_forward_cpu(op, p, &ctx, in, nin, req, out, nout, NULL, 0);
  free(ctx.workspace);
  return st;
}

static inline void assert_close(const char *what, const float *got, const float *want, int64_t n,
                         double rtol, double atol) {
  for (int64_t i = 0; i < n; i++)
    ck_assert_msg(fabs((double)got[i] - want[i]) <= atol + rtol * fabs((double)want[i]),
                  "%s element %lld: got %.9g, want %.9g", what, (long long)i, got[i], want[i]);
}

static inline void fmt_tuple(char *buf, size_t size, int n, const int64_t *v) {
  size_t used = (size_t)snprintf(buf, size, "(");
  for (int i = 0; i < n; i++) used += (size_t)snprintf(buf + used, size - used, "%lld,", (long long)v[i]);
  snprintf(buf + used, size - used, ")");
}

#endif /* MXR_TESTS_CONV_CHECK_H */
