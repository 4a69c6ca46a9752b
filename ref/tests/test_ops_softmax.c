/* softmax and log_softmax and their gradients against float64 references. */
#include "tensor_check.h"

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

int main(void) {
  Suite *s = suite_create("softmax ops");
  TCase *tc = tcase_create("softmax");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_softmax_and_log_softmax);
  tcase_add_test(tc, test_softmax_errors);
  tcase_add_test(tc, test_softmax_use_length);
  tcase_add_test(tc, test_softmax_dtype_override);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
