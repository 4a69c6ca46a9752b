/* The 'tensor' ops (sum, mean, dot, Flatten, Reshape, transpose, Concat,
 * softmax, log_softmax) and their gradients against float64 references. */
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

static int split_params(const char *spec, const char **keys, const char **vals) {
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

static int parse(const char *op, const char *spec, mxr_op_params **p) {
  const char *k[OC_MAX_PARAMS], *v[OC_MAX_PARAMS];
  const mxr_op *o;
  ck_assert_msg(mxr_op_find(op, &o) == 0, "%s", mxr_last_error());
  int n = split_params(spec, k, v);
  *p = NULL;
  return mxr_op_params_parse(o, n, k, v, p);
}

static void expect_parse_error(const char *op, const char *spec, const char *msg) {
  mxr_op_params *p;
  ck_assert_int_eq(parse(op, spec, &p), MXR_EINVAL);
  ck_assert_ptr_null(p);
  ck_assert_msg(strstr(mxr_last_error(), msg), "%s %s: '%s' lacks '%s'", op, spec, mxr_last_error(), msg);
}

/* Shape inference with `nin` inputs and `nout` outputs (unknown ones ndim -1). */
static int infer(const char *op, const char *spec, struct mxr_shape *in, int nin,
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

static void expect_shape(const char *op, const char *spec, struct mxr_shape in, struct mxr_shape want) {
  struct mxr_shape out = UNKNOWN;
  ck_assert_msg(infer(op, spec, &in, 1, &out, 1) == 0, "%s %s: %s", op, spec, mxr_last_error());
  char a[96], b[96];
  ck_assert_msg(mxr_shape_equal(&out, &want), "%s %s: got %s, want %s", op, spec,
                mxr_shape_str(&out, a, sizeof a), mxr_shape_str(&want, b, sizeof b));
}

static void expect_shape_error(const char *op, const char *spec, struct mxr_shape in, const char *msg) {
  struct mxr_shape out = UNKNOWN;
  ck_assert_int_eq(infer(op, spec, &in, 1, &out, 1), MXR_EINVAL);
  ck_assert_msg(strstr(mxr_last_error(), msg), "%s %s: '%s' lacks '%s'", op, spec, mxr_last_error(), msg);
}

static struct oc_case make_case(const char *op, const char *spec, oc_forward_ref ref, const void *user) {
  struct oc_case c = {.op = op, .forward_ref = ref, .user = user};
  c.nparams = split_params(spec, c.keys, c.vals);
  return c;
}

static void unravel(int64_t i, const struct mxr_shape *s, int64_t *c) {
  for (int d = s->ndim - 1; d >= 0; d--) {
    c[d] = i % s->dim[d];
    i /= s->dim[d];
  }
}

static int64_t ravel(const int64_t *c, const struct mxr_shape *s) {
  int64_t i = 0;
  for (int d = 0; d < s->ndim; d++) i = i * s->dim[d] + c[d];
  return i;
}

#define REF_ARGS                                                                           \
  const void *user, const double *const *in, const struct mxr_shape *in_shapes, int nin,   \
      double *const *out, const struct mxr_shape *out_shapes, int nout, double *const *aux, \
      int naux
#define REF_UNUSED (void)nin, (void)nout, (void)aux, (void)naux, (void)out_shapes, (void)in_shapes

/* ---------------------------------------------------------- sum, mean */

struct reduce_case {
  bool red[MXR_MAX_NDIM];
  bool mean;
};

/* Each input element adds into the output element named by its kept
 * coordinates, in row-major order of the kept dims. */
static void reduce_ref(REF_ARGS) {
  REF_UNUSED;
  const struct reduce_case *rc = user;
  const struct mxr_shape *s = &in_shapes[0];
  int64_t n = oc_size(s), nout_el = oc_size(&out_shapes[0]), c[MXR_MAX_NDIM];
  for (int64_t j = 0; j < nout_el; j++) out[0][j] = 0;
  for (int64_t i = 0; i < n; i++) {
    unravel(i, s, c);
    int64_t o = 0;
    for (int d = 0; d < s->ndim; d++)
      if (!rc->red[d]) o = o * s->dim[d] + c[d];
    out[0][o] += in[0][i];
  }
  if (rc->mean)
    for (int64_t j = 0; j < nout_el; j++) out[0][j] /= (double)(n / nout_el);
}

static void check_reduce(const char *op, const char *spec, struct mxr_shape in, struct mxr_shape want,
                         struct reduce_case rc, uint64_t seed) {
  expect_shape(op, spec, in, want);
  struct oc_case c = make_case(op, spec, reduce_ref, &rc);
  c.nin = 1;
  c.in_shapes[0] = in;
  oc_check(&c, seed, 2);
  c.dtype = MXR_FLOAT64;
  oc_check(&c, seed + 100, 1);
}

#define T true
#define F false
START_TEST(test_sum_and_mean) {
  for (int m = 0; m < 2; m++) {
    const char *op = m ? "mean" : "sum";
    struct reduce_case all = {{T, T, T}, m}, ax1 = {{F, T, F}, m}, ax02 = {{T, F, T}, m},
                       last = {{F, F, T}, m};
    check_reduce(op, "", OC_SHAPE(2, 3, 4), OC_SHAPE(1), all, 10);
    check_reduce(op, "axis=None;keepdims=True", OC_SHAPE(2, 3, 4), OC_SHAPE(1, 1, 1), all, 11);
    check_reduce(op, "axis=()", OC_SHAPE(2, 3, 4), OC_SHAPE(1), all, 12);
    check_reduce(op, "axis=1", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 4), ax1, 13);
    check_reduce(op, "axis=(0,2)", OC_SHAPE(2, 3, 4), OC_SHAPE(3), ax02, 14);
    check_reduce(op, "axis=(-1,0)", OC_SHAPE(2, 3, 4), OC_SHAPE(3), ax02, 15);
    check_reduce(op, "axis=-1;keepdims=1", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 3, 1), last, 16);
    check_reduce(op, "axis=1;exclude=True", OC_SHAPE(2, 3, 4), OC_SHAPE(3), ax02, 17);
    check_reduce(op, "axis=(0,2);exclude=True;keepdims=True", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 1, 4),
                 ax1, 18);
    check_reduce(op, "axis=(0,1,2)", OC_SHAPE(2, 3, 4), OC_SHAPE(1), all, 19);
    check_reduce(op, "axis=1", OC_SHAPE(5, 6), OC_SHAPE(5), (struct reduce_case){{F, T}, m}, 20);
    check_reduce(op, "axis=0", OC_SHAPE(7), OC_SHAPE(1), (struct reduce_case){{T}, m}, 21);
  }
  /* aliases */
  struct reduce_case ax1 = {{F, T}, false};
  check_reduce("sum_axis", "axis=1", OC_SHAPE(3, 4), OC_SHAPE(3), ax1, 22);
  check_reduce("_sparse_sum", "axis=1", OC_SHAPE(3, 4), OC_SHAPE(3), ax1, 23);
  ax1.mean = true;
  check_reduce("_sparse_mean", "axis=1", OC_SHAPE(3, 4), OC_SHAPE(3), ax1, 24);
}
END_TEST

START_TEST(test_reduce_errors) {
  expect_parse_error("sum", "axis=x", "sum: parameter axis='x' is not valid");
  expect_parse_error("mean", "keepdims=maybe", "mean: parameter keepdims='maybe' is not valid");
  expect_parse_error("sum", "axes=1", "sum: unknown parameter 'axes'");
  expect_shape_error("sum", "axis=3", OC_SHAPE(2, 3, 4), "sum: axis 3 is out of range for input shape (2,3,4)");
  expect_shape_error("mean", "axis=-4", OC_SHAPE(2, 3, 4), "mean: axis -4 is out of range");
  expect_shape_error("sum", "axis=(1,-2)", OC_SHAPE(2, 3, 4), "sum: axis has duplicates");
  /* the backward op checks the ograd against the data gradient's shape */
  struct mxr_shape in = OC_SHAPE(2, 4), out = OC_SHAPE(2, 3, 4);
  ck_assert_int_eq(infer("_backward_sum", "axis=1", &in, 1, &out, 1), 0);
  in = OC_SHAPE(3, 4);
  ck_assert_int_eq(infer("_backward_mean", "axis=1", &in, 1, &out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "_backward_mean: ograd: expected shape (2,4), got (3,4)"));
  in = UNKNOWN;
  ck_assert_int_eq(infer("_backward_sum", "axis=(0,2);keepdims=True", &in, 1, &out, 1), 0);
  ck_assert(mxr_shape_equal(&in, &OC_SHAPE(1, 3, 1)));
}
END_TEST

/* ----------------------------------------------------------------- dot */

struct dot_case {
  int64_t m, n, k;
  bool ta, tb;
};

static void dot_ref(REF_ARGS) {
  REF_UNUSED;
  const struct dot_case *d = user;
  const double *A = in[0], *B = in[1];
  for (int64_t i = 0; i < d->m; i++)
    for (int64_t j = 0; j < d->n; j++) {
      double s = 0;
      for (int64_t p = 0; p < d->k; p++)
        s += (d->ta ? A[p * d->m + i] : A[i * d->k + p]) * (d->tb ? B[j * d->k + p] : B[p * d->n + j]);
      out[0][i * d->n + j] = s;
    }
}

static void check_dot(const char *spec, struct mxr_shape l, struct mxr_shape r, struct mxr_shape want,
                      struct dot_case d, uint64_t seed) {
  struct mxr_shape in[2] = {l, r}, out = UNKNOWN;
  ck_assert_msg(infer("dot", spec, in, 2, &out, 1) == 0, "%s", mxr_last_error());
  ck_assert(mxr_shape_equal(&out, &want));
  struct oc_case c = make_case("dot", spec, dot_ref, &d);
  c.nin = 2;
  c.in_shapes[0] = l, c.in_shapes[1] = r;
  c.atol = 1e-5;
  oc_check(&c, seed, 2);
  c.dtype = MXR_FLOAT64;
  oc_check(&c, seed + 100, 1);
}

START_TEST(test_dot) {
  check_dot("", OC_SHAPE(3, 4), OC_SHAPE(4, 5), OC_SHAPE(3, 5), (struct dot_case){3, 5, 4, F, F}, 30);
  check_dot("transpose_a=True", OC_SHAPE(4, 3), OC_SHAPE(4, 5), OC_SHAPE(3, 5),
            (struct dot_case){3, 5, 4, T, F}, 31);
  check_dot("transpose_b=True", OC_SHAPE(3, 4), OC_SHAPE(5, 4), OC_SHAPE(3, 5),
            (struct dot_case){3, 5, 4, F, T}, 32);
  check_dot("transpose_a=1;transpose_b=1", OC_SHAPE(4, 3), OC_SHAPE(5, 4), OC_SHAPE(3, 5),
            (struct dot_case){3, 5, 4, T, T}, 33);
  check_dot("", OC_SHAPE(6), OC_SHAPE(6), OC_SHAPE(1), (struct dot_case){1, 1, 6, F, F}, 34);
  check_dot("", OC_SHAPE(4), OC_SHAPE(4, 5), OC_SHAPE(5), (struct dot_case){1, 5, 4, F, F}, 35);
  check_dot("transpose_a=True", OC_SHAPE(4), OC_SHAPE(4, 5), OC_SHAPE(5), (struct dot_case){1, 5, 4, T, F}, 36);
  check_dot("", OC_SHAPE(3, 4), OC_SHAPE(4), OC_SHAPE(3), (struct dot_case){3, 1, 4, F, F}, 37);
  check_dot("", OC_SHAPE(2, 3, 4), OC_SHAPE(4, 5), OC_SHAPE(2, 3, 5), (struct dot_case){6, 5, 4, F, F}, 38);
  check_dot("transpose_a=True", OC_SHAPE(4, 2, 3), OC_SHAPE(4, 5), OC_SHAPE(2, 3, 5),
            (struct dot_case){6, 5, 4, T, F}, 39);
  check_dot("", OC_SHAPE(3, 4), OC_SHAPE(4, 2, 3), OC_SHAPE(3, 2, 3), (struct dot_case){3, 6, 4, F, F}, 40);
  check_dot("transpose_b=True", OC_SHAPE(3, 4), OC_SHAPE(2, 5, 4), OC_SHAPE(3, 2, 5),
            (struct dot_case){3, 10, 4, F, T}, 41);
  check_dot("forward_stype=default", OC_SHAPE(1, 1), OC_SHAPE(1, 2), OC_SHAPE(1, 2), (struct dot_case){1, 2, 1, F, F}, 42);
  struct dot_case d = {2, 3, 4, F, F};
  struct oc_case c = make_case("_sparse_dot", "", dot_ref, &d);
  c.nin = 2;
  c.in_shapes[0] = OC_SHAPE(2, 4), c.in_shapes[1] = OC_SHAPE(4, 3);
  c.atol = 1e-5;
  oc_check(&c, 43, 1);
}
END_TEST

START_TEST(test_dot_errors) {
  expect_parse_error("dot", "transpose_a=2", "dot: parameter transpose_a='2' is not valid");
  expect_parse_error("dot", "forward_stype=dense", "dot: parameter forward_stype='dense' is not valid");
  struct mxr_shape in[3] = {OC_SHAPE(3, 4), OC_SHAPE(5, 6)}, out[2] = {UNKNOWN, UNKNOWN};
  ck_assert_int_eq(infer("dot", "", in, 2, out, 1), MXR_EINVAL);
  ck_assert_str_eq(mxr_last_error(), "dot: shape mismatch: lhs (3,4) X rhs (5,6) (transpose_a=0, transpose_b=0)");
  in[0] = OC_SHAPE(3), in[1] = OC_SHAPE(3);
  ck_assert_int_eq(infer("dot", "transpose_b=True", in, 2, out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "dot: cannot transpose vectors"));
  in[0] = OC_SCALAR;
  ck_assert_int_eq(infer("dot", "", in, 2, out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "dot: scalar inputs are not supported"));
  in[0] = OC_SHAPE(2, 2, 2, 2, 2), in[1] = OC_SHAPE(2, 2, 2, 2, 2, 2);
  ck_assert_int_eq(infer("dot", "", in, 2, out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "more than 8 dims"));
  /* _backward_dot: (ograd, lhs, rhs) -> (lhs grad, rhs grad) */
  in[0] = UNKNOWN, in[1] = OC_SHAPE(4, 3), in[2] = OC_SHAPE(4, 5);
  ck_assert_int_eq(infer("_backward_dot", "transpose_a=True", in, 3, out, 2), 0);
  ck_assert(mxr_shape_equal(&in[0], &OC_SHAPE(3, 5)));
  ck_assert(mxr_shape_equal(&out[0], &OC_SHAPE(4, 3)) && mxr_shape_equal(&out[1], &OC_SHAPE(4, 5)));
  in[0] = OC_SHAPE(3, 6), out[0] = out[1] = UNKNOWN;
  ck_assert_int_eq(infer("_backward_dot", "transpose_a=True", in, 3, out, 2), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "ograd: expected shape (3,5), got (3,6)"));
}
END_TEST

/* ----------------------------------------------------- Flatten, Reshape */

static void copy_ref(REF_ARGS) {
  REF_UNUSED;
  (void)user;
  for (int64_t j = 0; j < oc_size(&in_shapes[0]); j++) out[0][j] = in[0][j];
}

static void check_copy_op(const char *op, const char *spec, struct mxr_shape in, struct mxr_shape want,
                          uint64_t seed) {
  expect_shape(op, spec, in, want);
  struct oc_case c = make_case(op, spec, copy_ref, NULL);
  c.nin = 1;
  c.in_shapes[0] = in;
  oc_check(&c, seed, 1);
}

START_TEST(test_flatten) {
  check_copy_op("Flatten", "", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 12), 50);
  check_copy_op("flatten", "", OC_SHAPE(5), OC_SHAPE(5, 1), 51);
  check_copy_op("_npx_batch_flatten", "", OC_SHAPE(3, 2), OC_SHAPE(3, 2), 52);
  check_copy_op("Flatten", "", OC_SHAPE(2, 1, 2, 2), OC_SHAPE(2, 4), 53);
  expect_shape_error("Flatten", "", OC_SCALAR, "Flatten: input must have at least one dimension");
  expect_parse_error("Flatten", "axis=1", "Flatten: unknown parameter 'axis'");
}
END_TEST

START_TEST(test_reshape_shapes) {
  /* MXNet's documented examples */
  expect_shape("Reshape", "shape=(4,0,2)", OC_SHAPE(2, 3, 4), OC_SHAPE(4, 3, 2));
  expect_shape("Reshape", "shape=(2,0,0)", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 3, 4));
  expect_shape("Reshape", "shape=(6,1,-1)", OC_SHAPE(2, 3, 4), OC_SHAPE(6, 1, 4));
  expect_shape("Reshape", "shape=(3,-1,8)", OC_SHAPE(2, 3, 4), OC_SHAPE(3, 1, 8));
  expect_shape("Reshape", "shape=(-1,)", OC_SHAPE(2, 3, 4), OC_SHAPE(24));
  expect_shape("reshape", "shape=(-2,)", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 3, 4));
  expect_shape("Reshape", "shape=(2,-2)", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 3, 4));
  expect_shape("Reshape", "shape=(-2,1,1)", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 3, 4, 1, 1));
  expect_shape("Reshape", "shape=(-3,4)", OC_SHAPE(2, 3, 4), OC_SHAPE(6, 4));
  expect_shape("Reshape", "shape=(-3,-3)", OC_SHAPE(2, 3, 4, 5), OC_SHAPE(6, 20));
  expect_shape("Reshape", "shape=(0,-3)", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 12));
  expect_shape("Reshape", "shape=(-3,-2)", OC_SHAPE(2, 3, 4), OC_SHAPE(6, 4));
  expect_shape("Reshape", "shape=(-4,1,2,-2)", OC_SHAPE(2, 3, 4), OC_SHAPE(1, 2, 3, 4));
  expect_shape("Reshape", "shape=(2,-4,-1,3,-2)", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 1, 3, 4));
  expect_shape("Reshape", "shape=(-1,0)", OC_SHAPE(10, 5, 4), OC_SHAPE(40, 5));
  expect_shape("Reshape", "shape=(-1,0);reverse=True", OC_SHAPE(10, 5, 4), OC_SHAPE(50, 4));
  expect_shape("Reshape", "shape=5", OC_SHAPE(5), OC_SHAPE(5));
  /* -1 after -2 or -4 fills the output position it produced */
  expect_shape("Reshape", "shape=(-2,-1)", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 3, 4, 1));
  expect_shape("Reshape", "shape=(-4,1,2,-1)", OC_SHAPE(2, 3, 4), OC_SHAPE(1, 2, 12));
  /* deprecated target_shape: one 0 is inferred; keep_highest keeps dim 0 */
  expect_shape("Reshape", "target_shape=(0,4)", OC_SHAPE(2, 3, 4), OC_SHAPE(6, 4));
  expect_shape("Reshape", "target_shape=(7,0);keep_highest=True", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 12));
}
END_TEST

START_TEST(test_reshape_errors) {
  expect_parse_error("Reshape", "shape=(2,a)", "Reshape: parameter shape='(2,a)' is not valid");
  expect_parse_error("Reshape", "shape=(2,-5)", "Reshape: shape value -5 is not valid");
  expect_parse_error("Reshape", "target_shape=(2,-1)", "target_shape value -1 is negative");
  expect_shape_error("Reshape", "shape=(5,5)", OC_SHAPE(2, 3, 4), "Reshape: target shape (5,5) has 25 elements, input (2,3,4) has 24");
  expect_shape_error("Reshape", "shape=(-1,-1)", OC_SHAPE(2, 3), "Reshape: shape has more than one -1");
  expect_shape_error("Reshape", "shape=(0,0,0)", OC_SHAPE(2, 3), "shape value 0 at position 2 has no input dim");
  expect_shape_error("Reshape", "shape=(2,-3)", OC_SHAPE(2, 3), "shape value -3 needs two input dims");
  expect_shape_error("Reshape", "shape=(-4,5,-1,-2)", OC_SHAPE(2, 3), "split dims (5,0)");
  expect_shape_error("Reshape", "shape=(-4,-1,-1)", OC_SHAPE(4), "one may be -1");
  expect_shape_error("Reshape", "shape=(-4,2)", OC_SHAPE(4), "-4 must be followed by two dims");
  expect_shape_error("Reshape", "shape=(-1,5)", OC_SHAPE(2, 3), "cannot infer the -1");
  expect_shape_error("Reshape", "", OC_SHAPE(2, 3), "Reshape: shape is empty");
  expect_shape_error("Reshape", "shape=(-2,1,1,1,1,1,1,1)", OC_SHAPE(2, 3), "more than 8 dims");
  struct mxr_shape in = OC_SHAPE(2, 3), out = OC_SHAPE(7);
  ck_assert_int_eq(infer("_backward_reshape", "shape=(-1,)", &in, 1, &out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "_backward_reshape: ograd (2,3) and data gradient (7,) differ in size"));
}
END_TEST

START_TEST(test_reshape_against_reference) {
  check_copy_op("Reshape", "shape=(4,-1)", OC_SHAPE(2, 3, 4), OC_SHAPE(4, 6), 60);
  check_copy_op("reshape", "shape=(-3,0);reverse=1", OC_SHAPE(2, 3, 4), OC_SHAPE(6, 4), 61);
  struct oc_case c = make_case("Reshape", "shape=(-1,)", copy_ref, NULL);
  c.nin = 1;
  c.in_shapes[0] = OC_SHAPE(3, 2);
  c.dtype = MXR_FLOAT64;
  oc_check(&c, 62, 1);
}
END_TEST

/* ----------------------------------------------------------- transpose */

static void transpose_ref(REF_ARGS) {
  REF_UNUSED;
  const int *perm = user;
  const struct mxr_shape *s = &in_shapes[0];
  int64_t c[MXR_MAX_NDIM], ci[MXR_MAX_NDIM];
  struct mxr_shape o = {s->ndim, {0}};
  for (int d = 0; d < s->ndim; d++) o.dim[d] = s->dim[perm[d]];
  ck_assert(mxr_shape_equal(&o, &out_shapes[0]));
  for (int64_t j = 0; j < oc_size(&o); j++) {
    unravel(j, &o, c);
    for (int d = 0; d < s->ndim; d++) ci[perm[d]] = c[d];
    out[0][j] = in[0][ravel(ci, s)];
  }
}

static void check_transpose(const char *spec, struct mxr_shape in, const int *perm, uint64_t seed) {
  struct oc_case c = make_case("transpose", spec, transpose_ref, perm);
  c.nin = 1;
  c.in_shapes[0] = in;
  oc_check(&c, seed, 2);
  c.dtype = MXR_FLOAT64;
  oc_check(&c, seed + 100, 1);
}

START_TEST(test_transpose) {
  static const int p10[] = {1, 0}, p210[] = {2, 1, 0}, p102[] = {1, 0, 2}, p201[] = {2, 0, 1},
                   p3102[] = {3, 1, 0, 2}, p0[] = {0};
  check_transpose("", OC_SHAPE(3, 4), p10, 70);
  check_transpose("axes=()", OC_SHAPE(2, 3, 4), p210, 71);
  check_transpose("axes=(1,0,2)", OC_SHAPE(2, 3, 4), p102, 72);
  check_transpose("axes=(2,0,1)", OC_SHAPE(2, 3, 4), p201, 73);
  check_transpose("axes=[3,1,0,2]", OC_SHAPE(2, 3, 2, 3), p3102, 74);
  check_transpose("", OC_SHAPE(5), p0, 75);
  expect_shape("transpose", "axes=(2,0,1)", OC_SHAPE(2, 3, 4), OC_SHAPE(4, 2, 3));
  /* inferred both ways; the backward's gradient takes the forward input's shape */
  struct mxr_shape in = UNKNOWN, out = OC_SHAPE(4, 2, 3);
  ck_assert_int_eq(infer("transpose", "axes=(2,0,1)", &in, 1, &out, 1), 0);
  ck_assert(mxr_shape_equal(&in, &OC_SHAPE(2, 3, 4)));
  in = OC_SHAPE(4, 2, 3), out = UNKNOWN;
  ck_assert_int_eq(infer("_backward_transpose", "axes=(2,0,1)", &in, 1, &out, 1), 0);
  ck_assert(mxr_shape_equal(&out, &OC_SHAPE(2, 3, 4)));
}
END_TEST

START_TEST(test_transpose_errors) {
  expect_parse_error("transpose", "axes=(0,0,1)", "transpose: axes is not a permutation of 0..2");
  expect_parse_error("transpose", "axes=(0,-1)", "transpose: axes is not a permutation");
  expect_parse_error("transpose", "axes=(0,1,2,3,4,5,6)", "transpose supports at most 6 dims");
  expect_shape_error("transpose", "axes=(1,0)", OC_SHAPE(2, 3, 4), "transpose: axes has 2 entries but the shape (2,3,4) has 3 dims");
  expect_shape_error("transpose", "", OC_SHAPE(1, 1, 1, 1, 1, 1, 1), "has more than 6 dims");
  struct mxr_shape in = OC_SHAPE(2, 3), out = OC_SHAPE(2, 3);
  ck_assert_int_eq(infer("transpose", "", &in, 1, &out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "transpose: output: expected shape (3,2), got (2,3)"));
}
END_TEST

/* -------------------------------------------------------------- Concat */

static void concat_ref(REF_ARGS) {
  REF_UNUSED;
  const int axis = *(const int *)user;
  const struct mxr_shape *o = &out_shapes[0];
  int64_t c[MXR_MAX_NDIM];
  for (int64_t j = 0; j < oc_size(o); j++) {
    unravel(j, o, c);
    int i = 0;
    while (c[axis] >= in_shapes[i].dim[axis]) c[axis] -= in_shapes[i++].dim[axis];
    out[0][j] = in[i][ravel(c, &in_shapes[i])];
  }
}

static void check_concat(const char *op, const char *spec, int n, const struct mxr_shape *in,
                         struct mxr_shape want, int axis, uint64_t seed) {
  static int axes[64];
  int *ax = &axes[seed % 64];
  *ax = axis;
  struct mxr_shape s[OC_MAX_TENSORS], out = UNKNOWN;
  memcpy(s, in, (size_t)n * sizeof *s);
  ck_assert_msg(infer(op, spec, s, n, &out, 1) == 0, "%s", mxr_last_error());
  ck_assert(mxr_shape_equal(&out, &want));
  struct oc_case c = make_case(op, spec, concat_ref, ax);
  c.nin = n;
  memcpy(c.in_shapes, in, (size_t)n * sizeof *in);
  oc_check(&c, seed, 2);
  c.dtype = MXR_FLOAT64;
  oc_check(&c, seed + 100, 1);
}

START_TEST(test_concat) {
  check_concat("Concat", "num_args=2", 2, (struct mxr_shape[]){OC_SHAPE(2, 3), OC_SHAPE(2, 4)},
               OC_SHAPE(2, 7), 1, 1);
  check_concat("concat", "num_args=3;dim=0", 3,
               (struct mxr_shape[]){OC_SHAPE(1, 3), OC_SHAPE(2, 3), OC_SHAPE(3, 3)}, OC_SHAPE(6, 3), 0, 2);
  check_concat("Concat", "num_args=2;dim=-1", 2,
               (struct mxr_shape[]){OC_SHAPE(2, 2, 1), OC_SHAPE(2, 2, 3)}, OC_SHAPE(2, 2, 4), 2, 3);
  check_concat("Concat", "num_args=3;dim=1", 3,
               (struct mxr_shape[]){OC_SHAPE(2, 1, 3), OC_SHAPE(2, 2, 3), OC_SHAPE(2, 1, 3)},
               OC_SHAPE(2, 4, 3), 1, 4);
  check_concat("_sparse_concat", "num_args=1;dim=0", 1, (struct mxr_shape[]){OC_SHAPE(2, 3)},
               OC_SHAPE(2, 3), 0, 5);
}
END_TEST

START_TEST(test_concat_counts_and_errors) {
  const mxr_op *op, *bop;
  mxr_op_params *p;
  ck_assert_int_eq(mxr_op_find("concat", &op), 0);
  ck_assert_str_eq(mxr_op_name(op), "Concat");
  ck_assert_int_eq(parse("Concat", "num_args=3", &p), 0);
  ck_assert_int_eq(mxr_op_num_inputs(op, p), 3);
  ck_assert_str_eq(mxr_op_input_name(op, p, 2), "arg2");
  ck_assert_int_eq(mxr_op_find(op->backward, &bop), 0);
  ck_assert_str_eq(mxr_op_name(bop), "_backward_Concat");
  ck_assert_int_eq(mxr_op_num_inputs(bop, p), 1);
  ck_assert_int_eq(mxr_op_num_outputs(bop, p), 3);
  mxr_op_params_free(p);
  expect_parse_error("Concat", "dim=1", "Concat: required parameter 'num_args' is missing");
  expect_parse_error("Concat", "num_args=0", "Concat: num_args must be at least 1, got 0");
  struct mxr_shape in[3] = {OC_SHAPE(2, 3), OC_SHAPE(3, 3)}, out = UNKNOWN;
  ck_assert_int_eq(infer("Concat", "num_args=2", in, 2, &out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "Concat: input 1 has shape (3,3), incompatible with (2,3)"));
  ck_assert_int_eq(infer("Concat", "num_args=2;dim=2", in, 2, &out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "Concat: dim=2 is out of range for shape (2,3)"));
  in[0] = in[1] = OC_SCALAR;
  ck_assert_int_eq(infer("Concat", "num_args=2;dim=0", in, 2, &out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "zero-dimensional arrays cannot be concatenated"));
  /* one unknown input is inferred from the output */
  in[0] = OC_SHAPE(2, 3), in[1] = UNKNOWN, in[2] = OC_SHAPE(2, 1), out = OC_SHAPE(2, 9);
  ck_assert_int_eq(infer("Concat", "num_args=3", in, 3, &out, 1), 0);
  ck_assert(mxr_shape_equal(&in[1], &OC_SHAPE(2, 5)));
  /* _backward_Concat: ograd -> one gradient per input */
  struct mxr_shape g = OC_SHAPE(2, 9), grads[3] = {OC_SHAPE(2, 3), UNKNOWN, OC_SHAPE(2, 1)};
  ck_assert_int_eq(infer("_backward_Concat", "num_args=3", &g, 1, grads, 3), 0);
  ck_assert(mxr_shape_equal(&grads[1], &OC_SHAPE(2, 5)));
  g = OC_SHAPE(2, 3), grads[1] = UNKNOWN;
  ck_assert_int_eq(infer("_backward_Concat", "num_args=3", &g, 1, grads, 3), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "the inputs already exceed output (2,3)"));
}
END_TEST

/* ------------------------------------------------ softmax, log_softmax */

struct softmax_case {
  int axis; /* resolved */
  double t;
  bool log;
};

static void softmax_row(const double *x, double *y, int64_t n, int64_t stride, double t, bool lg) {
  double m = -INFINITY, s = 0;
  for (int64_t j = 0; j < n; j++) m = fmax(m, x[j * stride] / t);
  for (int64_t j = 0; j < n; j++) s += exp(x[j * stride] / t - m);
  for (int64_t j = 0; j < n; j++)
    y[j * stride] = lg ? x[j * stride] / t - m - log(s) : exp(x[j * stride] / t - m) / s;
}

static void softmax_ref(REF_ARGS) {
  REF_UNUSED;
  const struct softmax_case *sc = user;
  const struct mxr_shape *s = &in_shapes[0];
  int64_t outer = 1, inner = 1, m = s->dim[sc->axis];
  for (int d = 0; d < sc->axis; d++) outer *= s->dim[d];
  for (int d = sc->axis + 1; d < s->ndim; d++) inner *= s->dim[d];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++)
      softmax_row(in[0] + o * m * inner + i, out[0] + o * m * inner + i, m, inner, sc->t, sc->log);
}

static void check_softmax(const char *op, const char *spec, struct mxr_shape in, struct softmax_case sc,
                          double lo, double hi, uint64_t seed) {
  static struct softmax_case cases[64];
  cases[seed % 64] = sc;
  struct oc_case c = make_case(op, spec, softmax_ref, &cases[seed % 64]);
  c.nin = 1;
  c.in_shapes[0] = in;
  c.lo = lo, c.hi = hi;
  oc_check(&c, seed, 2);
  c.dtype = MXR_FLOAT64;
  oc_check(&c, seed + 100, 1);
}

START_TEST(test_softmax_and_log_softmax) {
  for (int l = 0; l < 2; l++) {
    const char *op = l ? "log_softmax" : "softmax";
    check_softmax(op, "", OC_SHAPE(2, 3, 4), (struct softmax_case){2, 1, l}, 0, 0, 80);
    check_softmax(op, "axis=0", OC_SHAPE(3, 4), (struct softmax_case){0, 1, l}, -3, 3, 81);
    check_softmax(op, "axis=1;temperature=2.5", OC_SHAPE(2, 3, 4), (struct softmax_case){1, 2.5, l}, -3, 3, 82);
    check_softmax(op, "axis=-2;temperature=0.5", OC_SHAPE(2, 3, 4), (struct softmax_case){1, 0.5, l}, 0, 0, 83);
    check_softmax(op, "temperature=-1.5", OC_SHAPE(6), (struct softmax_case){0, -1.5, l}, -2, 2, 84);
    /* large inputs: exp would overflow without the shift by the row maximum */
    check_softmax(op, "", OC_SHAPE(3, 5), (struct softmax_case){1, 1, l}, 500, 1000, 85);
    check_softmax(op, "temperature=-1", OC_SHAPE(3, 5), (struct softmax_case){1, -1, l}, 500, 1000, 86);
    check_softmax(op, "axis=0", OC_SHAPE(4, 2), (struct softmax_case){0, 1, l}, -1000, -500, 87);
  }
  check_softmax("_npx_softmax", "", OC_SHAPE(2, 3), (struct softmax_case){1, 1, false}, 0, 0, 88);
  check_softmax("_npx_log_softmax", "", OC_SHAPE(2, 3), (struct softmax_case){1, 1, true}, 0, 0, 89);
}
END_TEST

START_TEST(test_softmax_errors) {
  expect_parse_error("softmax", "temperature=0", "softmax: temperature must be a finite non-zero number");
  expect_parse_error("softmax", "dtype=int32", "softmax: parameter dtype='int32' is not valid");
  expect_parse_error("log_softmax", "axis=x", "log_softmax: parameter axis='x' is not valid");
  expect_parse_error("log_softmax", "use_length=True", "log_softmax: use_length=True is not supported");
  expect_shape_error("softmax", "axis=2", OC_SHAPE(2, 3), "softmax: axis=2 is out of range for shape (2,3)");
  expect_shape_error("log_softmax", "axis=-3", OC_SHAPE(2, 3), "log_softmax: axis=-3 is out of range");
  expect_shape_error("softmax", "", OC_SCALAR, "softmax: axis=-1 is out of range for shape ()");
}
END_TEST

/* Direct kernel calls for what the checker cannot express: integer lengths,
 * a different output dtype, req null, in-place runs. */
static void run(const char *op, const char *spec, const struct mxr_tensor *in, int nin, const int *req,
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

static struct mxr_tensor tensor(void *data, struct mxr_shape s, int dtype) {
  return (struct mxr_tensor){data, s, dtype};
}

START_TEST(test_softmax_use_length) {
  enum { R = 2, C = 3, M = 4 };
  float x[R * C * M], y[R * C * M], g[R * C * M], dx[R * C * M];
  int32_t len[R * C] = {0, 1, 2, 3, 4, 2};
  int32_t lgrad[R * C];
  uint64_t rng = 7;
  for (int i = 0; i < R * C * M; i++) x[i] = (float)(4 * oc_uniform(&rng) - 2), g[i] = (float)(oc_uniform(&rng) - 0.5);
  struct mxr_tensor in[2] = {tensor(x, OC_SHAPE(R, C, M), MXR_FLOAT32), tensor(len, OC_SHAPE(R, C), MXR_INT32)};
  struct mxr_tensor out = tensor(y, OC_SHAPE(R, C, M), MXR_FLOAT32);
  struct mxr_shape shapes[2] = {OC_SHAPE(R, C, M), UNKNOWN}, oshape = UNKNOWN;
  ck_assert_int_eq(infer("softmax", "use_length=True", shapes, 2, &oshape, 1), 0);
  ck_assert(mxr_shape_equal(&shapes[1], &OC_SHAPE(R, C)));
  shapes[1] = UNKNOWN;
  ck_assert_int_eq(infer("softmax", "use_length=True;axis=1", shapes, 2, &oshape, 1), 0);
  ck_assert(mxr_shape_equal(&shapes[1], &OC_SHAPE(R, M)));
  int req[2] = {MXR_REQ_WRITE, MXR_REQ_WRITE};
  run("softmax", "use_length=True", in, 2, req, &out, 1, 0);
  /* reference: softmax over the first len elements of each row, 0 after */
  double ref[M], xr[M];
  for (int r = 0; r < R * C; r++) {
    for (int j = 0; j < M; j++) xr[j] = x[r * M + j], ref[j] = 0;
    softmax_row(xr, ref, len[r], 1, 1.0, false);
    for (int j = 0; j < M; j++) ck_assert_double_eq_tol(y[r * M + j], ref[j], 1e-6);
  }
  /* backward: (ograd, output) -> (data grad, length grad); compare with
   * central differences of the masked reference */
  struct mxr_tensor bin[2] = {tensor(g, OC_SHAPE(R, C, M), MXR_FLOAT32), out};
  struct mxr_tensor bout[2] = {tensor(dx, OC_SHAPE(R, C, M), MXR_FLOAT32), tensor(lgrad, OC_SHAPE(R, C), MXR_INT32)};
  memset(lgrad, 0x5a, sizeof lgrad);
  run("_backward_softmax", "use_length=True", bin, 2, req, bout, 2, 0);
  for (int r = 0; r < R * C; r++) {
    ck_assert_int_eq(lgrad[r], 0);
    for (int j = 0; j < M; j++) {
      double up = 0, down = 0, h = 1e-6;
      for (int s = 0; s < 2; s++) {
        for (int k = 0; k < M; k++) xr[k] = x[r * M + k];
        xr[j] += s ? -h : h;
        softmax_row(xr, ref, len[r], 1, 1.0, false);
        double sum = 0;
        for (int k = 0; k < len[r]; k++) sum += ref[k] * g[r * M + k];
        *(s ? &down : &up) = sum;
      }
      ck_assert_double_eq_tol(dx[r * M + j], j < len[r] ? (up - down) / (2 * h) : 0.0, 1e-4);
    }
  }
  len[3] = 5; /* longer than the axis */
  run("softmax", "use_length=True", in, 2, req, &out, 1, MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "softmax: length 5 at position 3 is outside [0, 4]"));
  in[1].dtype = MXR_FLOAT32;
  int types[2] = {MXR_FLOAT32, MXR_FLOAT32}, otype = -1;
  const mxr_op *op;
  mxr_op_params *p;
  ck_assert_int_eq(mxr_op_find("softmax", &op), 0);
  ck_assert_int_eq(parse("softmax", "use_length=1", &p), 0);
  ck_assert_int_eq(mxr__op_infer_type(op, p, types, 2, &otype, 1, NULL, 0), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "length must be int32 or int64, got float32"));
  mxr_op_params_free(p);
}
END_TEST

START_TEST(test_softmax_dtype_override) {
  const mxr_op *op, *bop;
  mxr_op_params *p;
  ck_assert_int_eq(mxr_op_find("softmax", &op), 0);
  ck_assert_int_eq(mxr_op_find("_backward_softmax", &bop), 0);
  ck_assert_int_eq(parse("softmax", "dtype=float64;axis=0", &p), 0);
  int it = MXR_FLOAT32, ot = -1;
  ck_assert_int_eq(mxr__op_infer_type(op, p, &it, 1, &ot, 1, NULL, 0), 0);
  ck_assert_int_eq(ot, MXR_FLOAT64);
  ot = MXR_FLOAT32;
  ck_assert_int_eq(mxr__op_infer_type(op, p, &it, 1, &ot, 1, NULL, 0), MXR_EINVAL);
  int bt[2] = {MXR_FLOAT64, -1}, gt = MXR_FLOAT32;
  ck_assert_int_eq(mxr__op_infer_type(bop, p, bt, 2, &gt, 1, NULL, 0), 0);
  ck_assert_int_eq(bt[1], MXR_FLOAT64);
  ck_assert_int_eq(gt, MXR_FLOAT32);
  mxr_op_params_free(p);
  float x[6] = {1, -2, 0.5f, 3, 0, 2}, dx[6];
  double y[6], g[6] = {0.1, -0.2, 0.3, 0.4, 0.5, -0.6}, ref[6];
  struct mxr_tensor in = tensor(x, OC_SHAPE(2, 3), MXR_FLOAT32), out = tensor(y, OC_SHAPE(2, 3), MXR_FLOAT64);
  int req[1] = {MXR_REQ_WRITE};
  run("log_softmax", "dtype=float64;axis=0", &in, 1, req, &out, 1, 0);
  for (int j = 0; j < 3; j++) {
    double col[2] = {x[j], x[3 + j]}, r[2];
    softmax_row(col, r, 2, 1, 1.0, true);
    ref[j] = r[0], ref[3 + j] = r[1];
  }
  for (int i = 0; i < 6; i++) ck_assert_double_eq_tol(y[i], ref[i], 1e-12);
  struct mxr_tensor bin[2] = {tensor(g, OC_SHAPE(2, 3), MXR_FLOAT64), out};
  struct mxr_tensor bout = tensor(dx, OC_SHAPE(2, 3), MXR_FLOAT32);
  run("_backward_log_softmax", "dtype=float64;axis=0", bin, 2, req, &bout, 1, 0);
  for (int j = 0; j < 3; j++)
    for (int i = 0; i < 2; i++) {
      double s = g[j] + g[3 + j];
      ck_assert_double_eq_tol(dx[3 * i + j], g[3 * i + j] - exp(y[3 * i + j]) * s, 1e-6);
    }
  out.dtype = MXR_FLOAT16;
  run("softmax", "dtype=float16", &in, 1, req, &out, 1, MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "softmax: output dtype float16 is not supported"));
}
END_TEST

/* ------------------------------------------ registry facts, req, dtypes */

START_TEST(test_names_and_gradients) {
  static const struct {
    const char *name, *canonical, *backward;
    unsigned flags;
  } t[] = {
      {"sum", "sum", "_backward_sum", 0}, {"sum_axis", "sum", "_backward_sum", 0},
      {"mean", "mean", "_backward_mean", 0}, {"dot", "dot", "_backward_dot", MXR_GRAD_USE_INPUTS},
      {"flatten", "Flatten", "_backward_copy", 0}, {"reshape", "Reshape", "_backward_reshape", 0},
      {"transpose", "transpose", "_backward_transpose", 0}, {"concat", "Concat", "_backward_Concat", 0},
      {"softmax", "softmax", "_backward_softmax", MXR_GRAD_USE_OUTPUTS},
      {"log_softmax", "log_softmax", "_backward_log_softmax", MXR_GRAD_USE_OUTPUTS},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    const mxr_op *op, *bop;
    ck_assert_int_eq(mxr_op_find(t[i].name, &op), 0);
    ck_assert_str_eq(mxr_op_name(op), t[i].canonical);
    ck_assert_str_eq(op->backward, t[i].backward);
    ck_assert_uint_eq(op->grad_flags, t[i].flags);
    ck_assert_msg(mxr_op_find(op->backward, &bop) == 0, "%s", mxr_last_error());
    ck_assert_ptr_null(bop->backward);
  }
  const mxr_op *op;
  const char *inplace_ops[] = {"Flatten", "Reshape", "_backward_reshape", "softmax", "log_softmax"};
  for (int i = 0; i < 5; i++) {
    ck_assert_int_eq(mxr_op_find(inplace_ops[i], &op), 0);
    ck_assert_int_eq(op->num_inplace, 1);
    ck_assert_int_eq(op->inplace[0].in, 0);
    ck_assert_int_eq(op->inplace[0].out, 0);
  }
  mxr_op_params *p;
  ck_assert_int_eq(mxr_op_find("dot", &op), 0);
  ck_assert_str_eq(mxr_op_input_name(op, NULL, 1), "rhs");
  ck_assert_int_eq(mxr_op_find("softmax", &op), 0);
  ck_assert_int_eq(parse("softmax", "use_length=True", &p), 0);
  ck_assert_int_eq(mxr_op_num_inputs(op, p), 2);
  ck_assert_str_eq(mxr_op_input_name(op, p, 1), "length");
  ck_assert_int_eq(mxr_op_find("_backward_softmax", &op), 0);
  ck_assert_int_eq(mxr_op_num_inputs(op, p), 2);
  ck_assert_int_eq(mxr_op_num_outputs(op, p), 2);
  mxr_op_params_free(p);
}
END_TEST

START_TEST(test_req_null_and_in_place) {
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {9, 9, 9, 9, 9, 9}, w[6];
  struct mxr_tensor in[2] = {tensor(x, OC_SHAPE(2, 3), MXR_FLOAT32), tensor(x, OC_SHAPE(3, 2), MXR_FLOAT32)};
  struct mxr_tensor out = tensor(y, OC_SHAPE(2, 2), MXR_FLOAT32);
  int null[2] = {MXR_REQ_NULL, MXR_REQ_NULL}, wr[1] = {MXR_REQ_WRITE}, inplace[1] = {MXR_REQ_INPLACE};
  run("dot", "", in, 2, null, &out, 1, 0);
  out.shape = OC_SHAPE(2);
  run("sum", "axis=1", in, 1, null, &out, 1, 0);
  out.shape = OC_SHAPE(2, 3);
  run("softmax", "", in, 1, null, &out, 1, 0);
  out.shape = OC_SHAPE(4, 3);
  run("Concat", "num_args=2;dim=0", (struct mxr_tensor[]){in[0], in[0]}, 2, null, &out, 1, 0);
  for (int i = 0; i < 6; i++) ck_assert_float_eq(y[i], 9);
  /* in place: Reshape leaves memory alone, softmax matches its out-of-place result */
  out = tensor(x, OC_SHAPE(6), MXR_FLOAT32);
  run("Reshape", "shape=(-1,)", in, 1, inplace, &out, 1, 0);
  for (int i = 0; i < 6; i++) ck_assert_float_eq(x[i], (float)(i + 1));
  out = tensor(w, OC_SHAPE(2, 3), MXR_FLOAT32);
  run("softmax", "", in, 1, wr, &out, 1, 0);
  out = tensor(x, OC_SHAPE(2, 3), MXR_FLOAT32);
  run("softmax", "", in, 1, inplace, &out, 1, 0);
  for (int i = 0; i < 6; i++) ck_assert_float_eq(x[i], w[i]);
  out = tensor(x, OC_SHAPE(3, 2), MXR_FLOAT32);
  run("transpose", "", in, 1, wr, &out, 1, MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "transpose: cannot run in place"));
}
END_TEST

START_TEST(test_integer_dtypes_move_exactly) {
  int64_t a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {-7, 8, 1LL << 40}, c[9], t[6];
  struct mxr_tensor in[2] = {tensor(a, OC_SHAPE(2, 3), MXR_INT64), tensor(b, OC_SHAPE(1, 3), MXR_INT64)};
  struct mxr_tensor out = tensor(c, OC_SHAPE(3, 3), MXR_INT64);
  int wr[1] = {MXR_REQ_WRITE}, add[1] = {MXR_REQ_ADD};
  run("Concat", "num_args=2;dim=0", in, 2, wr, &out, 1, 0);
  for (int i = 0; i < 9; i++) ck_assert_int_eq(c[i], i < 6 ? a[i] : b[i - 6]);
  out = tensor(t, OC_SHAPE(3, 2), MXR_INT64);
  run("transpose", "", in, 1, wr, &out, 1, 0);
  static const int64_t want[6] = {1, 4, 2, 5, 3, 6};
  for (int i = 0; i < 6; i++) ck_assert_int_eq(t[i], want[i]);
  uint8_t u[4] = {1, 2, 3, 250}, v[4];
  struct mxr_tensor ui = tensor(u, OC_SHAPE(2, 2), MXR_UINT8), uo = tensor(v, OC_SHAPE(4), MXR_UINT8);
  run("Flatten", "", &ui, 1, wr, &uo, 1, 0);
  ck_assert_int_eq(memcmp(u, v, 4), 0);
  run("Reshape", "shape=(-1,)", &ui, 1, add, &uo, 1, MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "Reshape: accumulating (req add) needs float32 or float64"));
  run("sum", "", &ui, 1, wr, &uo, 1, MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "sum: dtype uint8 is not supported"));
  int32_t ix[3] = {1, 2, 3};
  float fy[3];
  struct mxr_tensor xi = tensor(ix, OC_SHAPE(3), MXR_INT32), fo = tensor(fy, OC_SHAPE(3), MXR_FLOAT32);
  run("softmax", "", &xi, 1, wr, &fo, 1, MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "softmax: data dtype int32 is not supported"));
}
END_TEST

/* The checker runs forward kernels with req write only: here each forward
 * runs with write, then with add onto random values. */
static void check_forward_add(const char *op, const char *spec, int nin, const struct mxr_shape *shapes,
                              int dtype) {
  const mxr_op *o;
  mxr_op_params *p;
  ck_assert_int_eq(mxr_op_find(op, &o), 0);
  ck_assert_msg(parse(op, spec, &p) == 0, "%s", mxr_last_error());
  struct mxr_shape is[OC_MAX_TENSORS], os = UNKNOWN;
  memcpy(is, shapes, (size_t)nin * sizeof *is);
  ck_assert_int_eq(mxr__op_infer_shape(o, p, is, nin, &os, 1, NULL, 0), 0);
  const size_t es = mxr_dtype_size(dtype);
  struct mxr_tensor in[OC_MAX_TENSORS], w, a;
  uint64_t rng = 99;
  for (int i = 0; i < nin; i++) {
    in[i] = tensor(malloc((size_t)oc_size(&is[i]) * es), is[i], dtype);
    for (int64_t j = 0; j < oc_size(&is[i]); j++) {
      double v = 2 * oc_uniform(&rng) - 1;
      if (dtype == MXR_FLOAT64) ((double *)in[i].data)[j] = v; else ((float *)in[i].data)[j] = (float)v;
    }
  }
  const int64_t n = oc_size(&os);
  w = tensor(calloc((size_t)n, es), os, dtype);
  a = tensor(malloc((size_t)n * es), os, dtype);
  for (int64_t j = 0; j < n; j++) {
    if (dtype == MXR_FLOAT64) ((double *)a.data)[j] = (double)j; else ((float *)a.data)[j] = (float)j;
  }
  int wr[1] = {MXR_REQ_WRITE}, add[1] = {MXR_REQ_ADD};
  run(op, spec, in, nin, wr, &w, 1, 0);
  run(op, spec, in, nin, add, &a, 1, 0);
  for (int64_t j = 0; j < n; j++) {
    double got = dtype == MXR_FLOAT64 ? ((double *)a.data)[j] : ((float *)a.data)[j];
    double want = (double)j + (dtype == MXR_FLOAT64 ? ((double *)w.data)[j] : ((float *)w.data)[j]);
    ck_assert_msg(fabs(got - want) <= 1e-5 * (1 + fabs(want)), "%s %s add: element %lld: %g, want %g", op,
                  spec, (long long)j, got, want);
  }
  for (int i = 0; i < nin; i++) free(in[i].data);
  free(w.data);
  free(a.data);
  mxr_op_params_free(p);
}

START_TEST(test_forward_req_add) {
  for (int dt = MXR_FLOAT32; dt <= MXR_FLOAT64; dt++) {
    check_forward_add("sum", "axis=1", 1, (struct mxr_shape[]){OC_SHAPE(2, 3, 4)}, dt);
    check_forward_add("mean", "", 1, (struct mxr_shape[]){OC_SHAPE(2, 3)}, dt);
    check_forward_add("dot", "transpose_b=1", 2, (struct mxr_shape[]){OC_SHAPE(2, 3), OC_SHAPE(4, 3)}, dt);
    check_forward_add("dot", "", 2, (struct mxr_shape[]){OC_SHAPE(3), OC_SHAPE(3)}, dt);
    check_forward_add("Flatten", "", 1, (struct mxr_shape[]){OC_SHAPE(2, 3, 2)}, dt);
    check_forward_add("Reshape", "shape=(3,-1)", 1, (struct mxr_shape[]){OC_SHAPE(2, 3, 2)}, dt);
    check_forward_add("transpose", "axes=(1,2,0)", 1, (struct mxr_shape[]){OC_SHAPE(2, 3, 2)}, dt);
    check_forward_add("Concat", "num_args=2;dim=1", 2, (struct mxr_shape[]){OC_SHAPE(2, 1), OC_SHAPE(2, 3)}, dt);
    check_forward_add("softmax", "axis=0", 1, (struct mxr_shape[]){OC_SHAPE(3, 2)}, dt);
    check_forward_add("log_softmax", "temperature=3", 1, (struct mxr_shape[]){OC_SHAPE(3, 2)}, dt);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("tensor ops");
  TCase *tc = tcase_create("tensor");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_sum_and_mean);
  tcase_add_test(tc, test_reduce_errors);
  tcase_add_test(tc, test_dot);
  tcase_add_test(tc, test_dot_errors);
  tcase_add_test(tc, test_flatten);
  tcase_add_test(tc, test_reshape_shapes);
  tcase_add_test(tc, test_reshape_errors);
  tcase_add_test(tc, test_reshape_against_reference);
  tcase_add_test(tc, test_transpose);
  tcase_add_test(tc, test_transpose_errors);
  tcase_add_test(tc, test_concat);
  tcase_add_test(tc, test_concat_counts_and_errors);
  tcase_add_test(tc, test_softmax_and_log_softmax);
  tcase_add_test(tc, test_softmax_errors);
  tcase_add_test(tc, test_softmax_use_length);
  tcase_add_test(tc, test_softmax_dtype_override);
  tcase_add_test(tc, test_names_and_gradients);
  tcase_add_test(tc, test_req_null_and_in_place);
  tcase_add_test(tc, test_integer_dtypes_move_exactly);
  tcase_add_test(tc, test_forward_req_add);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
