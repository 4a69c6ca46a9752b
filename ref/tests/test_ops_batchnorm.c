/* BatchNorm against float64 plain-loop references. */
#include "nn_check.h"

/* ------------------------------------------------------------ BatchNorm */

struct bn_user {
  int axis;          /* normalised */
  bool batch_stats;  /* is_train and not use_global_stats */
  bool fix_gamma, mean_var;
  double eps;
};

static void bn_dims(const struct bn_user *u, const struct mxr_shape *d, int64_t *outer, int64_t *c, int64_t *inner) {
  *outer = 1, *inner = 1, *c = d->dim[u->axis];
  for (int k = 0; k < u->axis; k++) *outer *= d->dim[k];
  for (int k = u->axis + 1; k < d->ndim; k++) *inner *= d->dim[k];
}

/* Mean and inverse std of channel c: the batch's or the moving ones. */
static void bn_stats(const struct bn_user *u, const double *const *in, const double *const *aux,
                     const struct mxr_shape *d, int64_t c, double *mean, double *invstd) {
  int64_t outer, nc, inner;
  bn_dims(u, d, &outer, &nc, &inner);
  if (!u->batch_stats) {
    *mean = aux[0][c], *invstd = 1 / sqrt(aux[1][c] + u->eps);
    return;
  }
  double s = 0, sq = 0, n = (double)(outer * inner);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) s += in[0][(o * nc + c) * inner + i];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) sq += pow(in[0][(o * nc + c) * inner + i] - s / n, 2);
  *mean = s / n, *invstd = 1 / sqrt(sq / n + u->eps);
}

static void bn_ref(REF_ARGS) {
  REF_UNUSED;
  const struct bn_user *u = user;
  int64_t outer, nc, inner;
  bn_dims(u, &in_shapes[0], &outer, &nc, &inner);
  for (int64_t c = 0; c < nc; c++) {
    double mean, invstd, w = u->fix_gamma ? 1 : in[1][c];
    bn_stats(u, in, (const double *const *)aux, &in_shapes[0], c, &mean, &invstd);
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t j = (o * nc + c) * inner + i;
        out[0][j] = (in[0][j] - mean) * invstd * w + in[2][c];
      }
    if (u->mean_var) out[1][c] = mean, out[2][c] = invstd;
  }
}

/* Analytic gradient for output_mean_var, where MXNet ignores the head
 * gradients of mean and var: training-mode batch statistics only. */
static void bn_grad_ref(BREF_ARGS) {
  (void)nin, (void)out_shapes, (void)nout;
  const struct bn_user *u = user;
  int64_t outer, nc, inner;
  bn_dims(u, &in_shapes[0], &outer, &nc, &inner);
  double n = (double)(outer * inner);
  for (int64_t c = 0; c < nc; c++) {
    double mean, invstd, w = u->fix_gamma ? 1 : in[1][c], sdy = 0, sdyx = 0;
    bn_stats(u, in, NULL, &in_shapes[0], c, &mean, &invstd);
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t j = (o * nc + c) * inner + i;
        sdy += ograd[0][j], sdyx += ograd[0][j] * (in[0][j] - mean) * invstd;
      }
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t j = (o * nc + c) * inner + i;
        double xhat = (in[0][j] - mean) * invstd;
        grad[0][j] = w * invstd * (ograd[0][j] - sdy / n - xhat * sdyx / n);
      }
    grad[1][c] = u->fix_gamma ? 0 : sdyx, grad[2][c] = sdy;
  }
}

static void bn_case(const char *spec_keys[], const char *spec_vals[], int np, struct mxr_shape d,
                    const struct bn_user *u, bool train, int dtype, uint64_t seed, int rounds) {
  struct oc_case c = {.op = "BatchNorm", .nparams = np, .nin = 3, .in_shapes = {d, UNK, UNK},
                      .naux = 2, .aux_shapes = {UNK, UNK}, .dtype = dtype, .is_train = train,
                      .forward_ref = bn_ref, .backward_ref = u->mean_var ? bn_grad_ref : NULL,
                      .user = u, .rtol = 1e-4, .atol = 1e-5, .grad_rtol = 2e-3, .grad_atol = 2e-4};
  for (int i = 0; i < np; i++) c.keys[i] = spec_keys[i], c.vals[i] = spec_vals[i];
  oc_check(&c, seed, rounds);
}

START_TEST(test_batchnorm_against_reference) {
  const double eps = (double)1e-3f;
  static const char *k_none[1], *k_g[] = {"fix_gamma"}, *v_g[] = {"False"};
  static const char *k_ax[] = {"fix_gamma", "axis", "eps"}, *v_ax[] = {"False", "-1", "1e-5"};
  static const char *k_gs[] = {"fix_gamma", "use_global_stats"}, *v_gs[] = {"0", "True"};
  static const char *k_mv[] = {"fix_gamma", "output_mean_var", "axis"}, *v_mv[] = {"False", "True", "0"};
  struct bn_user train = {1, true, true, false, eps}, train_g = {1, true, false, false, eps},
                 infer_g = {1, false, false, false, eps}, last = {2, true, false, false, 1e-5},
                 mv = {0, true, false, true, eps}, mv_inf = {0, false, false, true, eps};
  /* training: batch statistics; fix_gamma (the default) zeroes d gamma */
  bn_case(k_none, NULL, 0, OC_SHAPE(4, 3), &train, true, MXR_FLOAT32, 40, 2);
  bn_case(k_g, v_g, 1, OC_SHAPE(2, 3, 2, 2), &train_g, true, MXR_FLOAT32, 41, 2);
  bn_case(k_g, v_g, 1, OC_SHAPE(3, 2, 4), &train_g, true, MXR_FLOAT64, 42, 1);
  bn_case(k_ax, v_ax, 3, OC_SHAPE(3, 2, 4), &last, true, MXR_FLOAT32, 43, 2);
  /* inference, and use_global_stats in training: the moving statistics */
  bn_case(k_g, v_g, 1, OC_SHAPE(2, 3, 2), &infer_g, false, MXR_FLOAT32, 44, 2);
  bn_case(k_gs, v_gs, 2, OC_SHAPE(2, 3, 2), &infer_g, true, MXR_FLOAT32, 45, 2);
  /* output_mean_var: mean and inverse std are visible, their gradients ignored */
  bn_case(k_mv, v_mv, 3, OC_SHAPE(3, 4), &mv, true, MXR_FLOAT32, 46, 2);
  struct oc_case c = {.op = "_npx_batch_norm", .nparams = 3, .keys = {"fix_gamma", "output_mean_var", "axis"},
                      .vals = {"False", "True", "0"}, .nin = 3, .in_shapes = {OC_SHAPE(3, 4), UNK, UNK},
                      .naux = 2, .aux_shapes = {UNK, UNK}, .forward_ref = bn_ref, .user = &mv_inf};
  oc_check_forward(&c, 47);
}
END_TEST

/* Moving statistics change in the training backward pass only. */
START_TEST(test_batchnorm_moving_stats) {
  uint64_t rng = 11;
  struct mxr_shape d = OC_SHAPE(4, 2, 3), ch = OC_SHAPE(2);
  struct mxr_tensor in[3] = {tensor(MXR_FLOAT32, d), tensor(MXR_FLOAT32, ch), tensor(MXR_FLOAT32, ch)};
  struct mxr_tensor out[3] = {tensor(MXR_FLOAT32, d), tensor(MXR_FLOAT32, ch), tensor(MXR_FLOAT32, ch)};
  struct mxr_tensor aux[2] = {tensor(MXR_FLOAT32, ch), tensor(MXR_FLOAT32, ch)}, g[3];
  tfill(&in[0], &rng, -2, 3), tfill(&in[1], &rng, 0.5, 1), tfill(&in[2], &rng, -1, 1);
  tfill(&aux[0], &rng, -1, 1), tfill(&aux[1], &rng, 0.5, 2);
  double mm[2] = {tget(&aux[0], 0), tget(&aux[0], 1)}, mv[2] = {tget(&aux[1], 0), tget(&aux[1], 1)};
  int req[3] = {MXR_REQ_WRITE, MXR_REQ_WRITE, MXR_REQ_WRITE};
  for (int i = 0; i < 3; i++) g[i] = tensor(MXR_FLOAT32, i ? ch : d);
  /* backward inputs: ograd, data, gamma, beta, out, mean, invstd */
  struct mxr_tensor bin[7] = {tensor(MXR_FLOAT32, d), in[0], in[1], in[2], out[0], out[1], out[2]};
  tfill(&bin[0], &rng, -1, 1);
  for (int mode = 0; mode < 3; mode++) { /* inference, use_global_stats, training */
    const char *spec = mode == 1 ? "momentum=0.75;use_global_stats=True" : "momentum=0.75";
    run("BatchNorm", spec, mode > 0, 1, in, 3, req, out, 3, aux, 2);
    for (int c = 0; c < 2; c++)
      ck_assert(tget(&aux[0], c) == (float)mm[c] && tget(&aux[1], c) == (float)mv[c]);
    run("_backward_BatchNorm", spec, mode > 0, 1, bin, 7, req, g, 3, aux, 2);
    for (int c = 0; c < 2; c++) {
      double s = 0, sq = 0;
      for (int o = 0; o < 4; o++)
        for (int i = 0; i < 3; i++) s += tget(&in[0], (o * 2 + c) * 3 + i);
      for (int o = 0; o < 4; o++)
        for (int i = 0; i < 3; i++) sq += pow(tget(&in[0], (o * 2 + c) * 3 + i) - s / 12, 2);
      double want_m = mode == 2 ? 0.75 * mm[c] + 0.25 * s / 12 : mm[c];
      double want_v = mode == 2 ? 0.75 * mv[c] + 0.25 * sq / 12 : mv[c];
      ck_assert_msg(fabs(tget(&aux[0], c) - want_m) < 1e-5, "mode %d moving_mean %g, want %g", mode, tget(&aux[0], c), want_m);
      ck_assert_msg(fabs(tget(&aux[1], c) - want_v) < 1e-5, "mode %d moving_var %g, want %g", mode, tget(&aux[1], c), want_v);
      if (mode == 2) { /* the hidden "var" output is the inverse std */
        ck_assert(fabs(tget(&out[1], c) - s / 12) < 1e-5);
        ck_assert(fabs(tget(&out[2], c) - 1 / sqrt(sq / 12 + (double)1e-3f)) < 1e-4);
      }
    }
  }
  for (int i = 0; i < 3; i++) free(in[i].data), free(out[i].data), free(g[i].data);
  free(aux[0].data), free(aux[1].data), free(bin[0].data);
}
END_TEST

START_TEST(test_batchnorm_shapes_and_params) {
  struct mxr_shape in[3] = {OC_SHAPE(2, 5, 3), UNK, UNK}, out[3], aux[2];
  ck_assert_int_eq(infer("BatchNorm", "axis=-2", in, out, aux), 0);
  expect_shape(&in[1], OC_SHAPE(5));
  expect_shape(&aux[1], OC_SHAPE(5));
  expect_shape(&out[2], OC_SHAPE(5));
  expect_shape(&out[0], OC_SHAPE(2, 5, 3));
  struct mxr_shape bad[3] = {OC_SHAPE(2, 5, 3), OC_SHAPE(4), UNK};
  expect_shape_error("BatchNorm", "", bad, "gamma: expected shape (5,), got (4,)");
  expect_shape_error("BatchNorm", "axis=3", in, "BatchNorm: axis 3 is out of range for 3 dimensions");
  const mxr_op *op = find("BatchNorm");
  mxr_op_params *p = parse("BatchNorm", "output_mean_var=True", 0);
  ck_assert_int_eq(mxr_op_num_visible_outputs(op, p), 3);
  ck_assert_int_eq(mxr_op_num_inputs(find("_backward_BatchNorm"), p), 9);
  mxr_op_params_free(p);
  p = parse("_npx_batch_norm", "min_calib_range=None;max_calib_range=2.5;cudnn_off=1", 0);
  ck_assert_int_eq(mxr_op_num_visible_outputs(op, p), 1);
  ck_assert_int_eq(mxr_op_num_aux(op, p), 2);
  ck_assert_str_eq(mxr_op_aux_name(op, p, 0), "moving_mean");
  ck_assert_str_eq(mxr_op_aux_name(op, p, 1), "moving_var");
  mxr_op_params_free(p);
  expect_parse_error("BatchNorm", "axis=one", "BatchNorm: parameter axis='one' is not valid: expected an integer");
  expect_parse_error("BatchNorm", "fix_gamma=yes", "fix_gamma='yes' is not valid");
}
END_TEST

int main(void) {
  Suite *s = suite_create("batchnorm ops");
  TCase *tc = tcase_create("batchnorm");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_batchnorm_against_reference);
  tcase_add_test(tc, test_batchnorm_moving_stats);
  tcase_add_test(tc, test_batchnorm_shapes_and_params);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
