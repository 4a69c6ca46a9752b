/* clip and _backward_clip against float64 references, and the corners of
 * MXNet's definition the random checks do not reach: NaN, values at the
 * bounds, crossed bounds, bounds kept as float. */
#include "tensor_check.h"

/* user: the bounds as given; the kernels use them rounded to float. */
static void bounds_of(const void *user, double *lo, double *hi) {
  const double *b = user;
  *lo = (double)(float)b[0];
  *hi = (double)(float)b[1];
}

static void clip_ref(REF_ARGS) {
  REF_UNUSED;
  double lo, hi;
  bounds_of(user, &lo, &hi);
  for (int64_t i = 0; i < oc_size(&in_shapes[0]); i++) {
    const double x = in[0][i];
    out[0][i] = x > hi ? hi : (x < lo ? lo : x);
  }
}

/* Not left to finite differences: a random input may fall within a step
 * of a bound, where the derivative is MXNet's convention. */
static void clip_grad_ref(BREF_ARGS) {
  (void)nin, (void)out_shapes, (void)nout;
  double lo, hi;
  bounds_of(user, &lo, &hi);
  for (int64_t i = 0; i < oc_size(&in_shapes[0]); i++)
    grad[0][i] = in[0][i] > hi || in[0][i] < lo ? 0.0 : ograd[0][i];
}

static void check_clip(const char *spec, const double *b, struct mxr_shape shape, uint64_t seed) {
  struct oc_case c = make_case("clip", spec, clip_ref, b);
  c.backward_ref = clip_grad_ref;
  c.nin = 1;
  c.in_shapes[0] = shape;
  c.lo = -2, c.hi = 2;
  oc_check(&c, seed, 2);
  c.dtype = MXR_FLOAT64;
  oc_check(&c, seed + 100, 1);
}

START_TEST(test_clip) {
  static const double b1[] = {-0.5, 0.5}, b2[] = {-0.3, 0.7}, b3[] = {0, 1e9}, b4[] = {1, 1};
  check_clip("a_min=-0.5;a_max=0.5", b1, OC_SHAPE(3, 4), 80);
  check_clip("a_min=-0.3;a_max=0.7", b2, OC_SHAPE(2, 3, 4), 81); /* not exact in float */
  check_clip("a_min=0;a_max=1e9", b3, OC_SHAPE(7), 82);
  check_clip("a_min=1;a_max=1", b4, OC_SHAPE(2, 5), 83);
  expect_shape("clip", "a_min=0;a_max=1", OC_SHAPE(2, 3, 4), OC_SHAPE(2, 3, 4));
  struct mxr_shape in = UNKNOWN, out = OC_SHAPE(4, 2);
  ck_assert_int_eq(infer("clip", "a_min=0;a_max=1", &in, 1, &out, 1), 0);
  ck_assert(mxr_shape_equal(&in, &OC_SHAPE(4, 2)));
}
END_TEST

START_TEST(test_clip_corners) {
  /* NaN passes, and so does its gradient; the bounds themselves pass the
   * gradient; float64 data meets the bounds as float. */
  double x[] = {NAN, -0.5, 0.5, -0.50001, 0.50001, 0.7}, y[6], g[] = {1, 2, 3, 4, 5, 6}, dx[6];
  struct mxr_tensor tx = tensor(x, OC_SHAPE(6), MXR_FLOAT64), ty = tensor(y, OC_SHAPE(6), MXR_FLOAT64);
  const int w[] = {MXR_REQ_WRITE};
  run("clip", "a_min=-0.5;a_max=0.7", &tx, 1, w, &ty, 1, 0);
  ck_assert(isnan(y[0]));
  ck_assert(y[1] == -0.5 && y[2] == 0.5 && y[3] == -0.5 && y[4] == 0.50001);
  ck_assert(y[5] == (double)0.7f); /* 0.7 > float(0.7): clipped to float(0.7) */
  struct mxr_tensor gin[] = {tensor(g, OC_SHAPE(6), MXR_FLOAT64), tx}, tdx = tensor(dx, OC_SHAPE(6), MXR_FLOAT64);
  run("_backward_clip", "a_min=-0.5;a_max=0.5", gin, 2, w, &tdx, 1, 0);
  ck_assert(dx[0] == 1 && dx[1] == 2 && dx[2] == 3 && dx[3] == 0 && dx[4] == 0 && dx[5] == 0);

  /* Crossed bounds: tested against a_max first, as MXNet does. */
  float xf[] = {-2, 0, 2}, yf[3];
  struct mxr_tensor txf = tensor(xf, OC_SHAPE(3), MXR_FLOAT32), tyf = tensor(yf, OC_SHAPE(3), MXR_FLOAT32);
  run("clip", "a_min=1;a_max=-1", &txf, 1, w, &tyf, 1, 0);
  ck_assert(yf[0] == 1 && yf[1] == -1 && yf[2] == -1);

  /* In place, and null / add requests. */
  float v[] = {-3, 0.25f, 3}, acc[] = {10, 10, 10};
  struct mxr_tensor tv = tensor(v, OC_SHAPE(3), MXR_FLOAT32), tacc = tensor(acc, OC_SHAPE(3), MXR_FLOAT32);
  const int add[] = {MXR_REQ_ADD}, null[] = {MXR_REQ_NULL}, inplace[] = {MXR_REQ_INPLACE};
  run("clip", "a_min=-1;a_max=1", &tv, 1, add, &tacc, 1, 0);
  ck_assert(acc[0] == 9 && acc[1] == 10.25f && acc[2] == 11);
  run("clip", "a_min=-1;a_max=1", &tv, 1, null, &tacc, 1, 0);
  ck_assert(acc[0] == 9);
  run("clip", "a_min=-1;a_max=1", &tv, 1, inplace, &tv, 1, 0);
  ck_assert(v[0] == -1 && v[1] == 0.25f && v[2] == 1);
}
END_TEST

START_TEST(test_clip_errors) {
  expect_parse_error("clip", "a_min=0", "clip: required parameter 'a_max' is missing");
  expect_parse_error("clip", "a_max=0", "clip: required parameter 'a_min' is missing");
  expect_parse_error("clip", "a_min=x;a_max=1", "a_min");
  int32_t xi[2] = {1, 2}, yi[2];
  struct mxr_tensor tx = tensor(xi, OC_SHAPE(2), MXR_INT32), ty = tensor(yi, OC_SHAPE(2), MXR_INT32);
  const int w[] = {MXR_REQ_WRITE};
  run("clip", "a_min=0;a_max=1", &tx, 1, w, &ty, 1, MXR_ENOTIMPL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "clip: dtype int32 is not implemented"));
  const mxr_op *o;
  ck_assert_int_eq(mxr_op_find("clip", &o), 0);
  ck_assert_int_eq(mxr_op_is_implemented(o), 1);
  ck_assert_int_eq(mxr_op_find("_backward_clip", &o), 0);
  ck_assert_int_eq(mxr_op_is_implemented(o), 1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("clip");
  TCase *tc = tcase_create("clip");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_clip);
  tcase_add_test(tc, test_clip_corners);
  tcase_add_test(tc, test_clip_errors);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
