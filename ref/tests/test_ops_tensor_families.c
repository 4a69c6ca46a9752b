/* Checks that span the tensor families (reduce, dot, reshape, transpose,
 * concat, softmax), one table of their ops each: registered names and
 * gradients, req null and in-place runs, integer dtypes moved exactly, and
 * forward req add.  Each family's own ops are tested in
 * test_ops_<family>.c. */
#include "tensor_check.h"

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
  run("sum", "", &ui, 1, wr, &uo, 1, MXR_ENOTIMPL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "sum: dtype uint8 is not implemented by libmxref"));
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
  Suite *s = suite_create("tensor families");
  TCase *tc = tcase_create("tensor families");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_names_and_gradients);
  tcase_add_test(tc, test_req_null_and_in_place);
  tcase_add_test(tc, test_integer_dtypes_move_exactly);
  tcase_add_test(tc, test_forward_req_add);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
