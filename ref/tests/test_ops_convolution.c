/* Convolution against float64 direct-loop references, finite differences
 * for the gradients, values computed by MXNet 1.9.1 itself (native CPU
 * kernels), shape inference and parameter errors. */
#include "conv_check.h"

/* ------------------------------------------------- Convolution reference */

struct conv_cfg {
  int nsp;
  int64_t k[3], s[3], p[3], d[3]; /* the first nsp entries */
  int groups;
  bool no_bias;
};

/* y[n,f,o] = bias[f] + sum over the group's channels and kernel taps of
 * w[f,c,t] x[n,c,o*s-p+t*d] (taps outside the input read 0). */
static void conv_ref(const void *user, const double *const *in, const struct mxr_shape *in_shapes,
                     int nin, double *const *out, const struct mxr_shape *out_shapes, int nout,
                     double *const *aux, int naux) {
  (void)nin;
  (void)nout;
  (void)aux;
  (void)naux;
  const struct conv_cfg *cf = user;
  const struct mxr_shape *xs = &in_shapes[0], *ys = &out_shapes[0];
  const int nsp = cf->nsp;
  struct sp3 g;
  pad3(nsp, xs->dim + 2, g.in, 1);
  pad3(nsp, cf->k, g.k, 1);
  pad3(nsp, cf->s, g.s, 1);
  pad3(nsp, cf->p, g.p, 0);
  pad3(nsp, cf->d, g.d, 1);
  const int64_t N = xs->dim[0], C = xs->dim[1], F = ys->dim[1], G = cf->groups;
  const int64_t Cg = C / G, Fg = F / G;
  for (int i = 0; i < 3; i++) {
    g.out[i] = (g.in[i] + 2 * g.p[i] - g.d[i] * (g.k[i] - 1) - 1) / g.s[i] + 1;
    if (i >= 3 - nsp) ck_assert_int_eq(ys->dim[2 + i - (3 - nsp)], g.out[i]);
  }
  const double *x = in[0], *w = in[1], *b = cf->no_bias ? NULL : in[2];
  double *y = out[0];
  int64_t yi = 0;
  for (int64_t n = 0; n < N; n++)
    for (int64_t f = 0; f < F; f++)
      for (int64_t o0 = 0; o0 < g.out[0]; o0++)
        for (int64_t o1 = 0; o1 < g.out[1]; o1++)
          for (int64_t o2 = 0; o2 < g.out[2]; o2++) {
            double acc = b ? b[f] : 0.0;
            int64_t c0 = f / Fg * Cg;
            for (int64_t cc = 0; cc < Cg; cc++)
              for (int64_t t0 = 0; t0 < g.k[0]; t0++)
                for (int64_t t1 = 0; t1 < g.k[1]; t1++)
                  for (int64_t t2 = 0; t2 < g.k[2]; t2++) {
                    int64_t i0 = o0 * g.s[0] - g.p[0] + t0 * g.d[0];
                    int64_t i1 = o1 * g.s[1] - g.p[1] + t1 * g.d[1];
                    int64_t i2 = o2 * g.s[2] - g.p[2] + t2 * g.d[2];
                    if (i0 < 0 || i0 >= g.in[0] || i1 < 0 || i1 >= g.in[1] || i2 < 0 ||
                        i2 >= g.in[2])
                      continue;
                    double wv = w[(((f * Cg + cc) * g.k[0] + t0) * g.k[1] + t1) * g.k[2] + t2];
                    double xv = x[(((n * C + c0 + cc) * g.in[0] + i0) * g.in[1] + i1) * g.in[2] + i2];
                    acc += wv * xv;
                  }
            y[yi++] = acc;
          }
}

/* A deliberately wrong reference (ignores dilation) for the sensitivity test. */
static void conv_ref_no_dilate(const void *user, const double *const *in,
                               const struct mxr_shape *in_shapes, int nin, double *const *out,
                               const struct mxr_shape *out_shapes, int nout, double *const *aux,
                               int naux) {
  struct conv_cfg cf = *(const struct conv_cfg *)user;
  for (int i = 0; i < cf.nsp; i++) cf.d[i] = 1;
  /* keep the output extent of the dilated kernel: pad the undilated one */
  for (int i = 0; i < cf.nsp; i++) cf.p[i] += ((const struct conv_cfg *)user)->d[i] - 1;
  conv_ref(&cf, in, in_shapes, nin, out, out_shapes, nout, aux, naux);
}

/* A Convolution case: params as text, shapes from the config. */
struct conv_case_text {
  char kernel[32], stride[32], pad[32], dilate[32], filters[16], groups[16];
};

static struct oc_case conv_case(const struct conv_cfg *cf, struct conv_case_text *t,
                                struct mxr_shape data, int filters) {
  fmt_tuple(t->kernel, sizeof t->kernel, cf->nsp, cf->k);
  fmt_tuple(t->stride, sizeof t->stride, cf->nsp, cf->s);
  fmt_tuple(t->pad, sizeof t->pad, cf->nsp, cf->p);
  fmt_tuple(t->dilate, sizeof t->dilate, cf->nsp, cf->d);
  snprintf(t->filters, sizeof t->filters, "%d", filters);
  snprintf(t->groups, sizeof t->groups, "%d", cf->groups);
  struct oc_case c = {
      .op = "Convolution",
      .nparams = 7,
      .keys = {"kernel", "stride", "pad", "dilate", "num_filter", "num_group", "no_bias"},
      .vals = {t->kernel, t->stride, t->pad, t->dilate, t->filters, t->groups,
               cf->no_bias ? "True" : "False"},
      .nin = cf->no_bias ? 2 : 3,
      .in_shapes = {data},
      .atol = 1e-5,
      .forward_ref = conv_ref,
      .user = cf,
  };
  /* weight and bias shapes come from shape inference */
  c.in_shapes[1].ndim = -1;
  c.in_shapes[2].ndim = -1;
  struct mxr_shape in[3] = {data, {-1, {0}}, {-1, {0}}}, out;
  ck_assert_msg(infer("Convolution", c.nparams, c.keys, c.vals, in, c.nin, &out, 1) == 0, "%s",
                mxr_last_error());
  for (int i = 0; i < c.nin; i++) c.in_shapes[i] = in[i];
  return c;
}

/* The workspace an op asks for on the case's input shapes. */
static size_t ws_bytes(const struct oc_case *c) {
  mxr_op_params *p;
  ck_assert_int_eq(parse(c->op, c->nparams, c->keys, c->vals, &p), 0);
  size_t n = find(c->op)->workspace_bytes(mxr__op_params_struct(p), c->in_shapes, c->nin);
  mxr_op_params_free(p);
  return n;
}

/* ------------------------------------------------- Convolution tests */

START_TEST(test_conv_registry) {
  const mxr_op *a = find("Convolution"), *b = find("_npx_convolution");
  ck_assert_ptr_eq(a, b);
  const char *k[] = {"kernel", "num_filter", "no_bias"}, *v[] = {"(3,3)", "4", "True"};
  mxr_op_params *p;
  ck_assert_int_eq(parse("Convolution", 2, k, v, &p), 0);
  ck_assert_int_eq(mxr_op_num_inputs(a, p), 3);
  ck_assert_str_eq(mxr_op_input_name(a, p, 0), "data");
  ck_assert_str_eq(mxr_op_input_name(a, p, 1), "weight");
  ck_assert_str_eq(mxr_op_input_name(a, p, 2), "bias");
  ck_assert_int_eq(mxr_op_num_outputs(a, p), 1);
  const mxr_op *bw = find("_backward_Convolution");
  ck_assert_int_eq(mxr_op_num_inputs(bw, p), 4);
  ck_assert_int_eq(mxr_op_num_outputs(bw, p), 3);
  mxr_op_params_free(p);
  ck_assert_int_eq(parse("Convolution", 3, k, v, &p), 0);
  ck_assert_int_eq(mxr_op_num_inputs(a, p), 2);
  ck_assert_ptr_null(mxr_op_input_name(a, p, 2));
  ck_assert_int_eq(mxr_op_num_inputs(bw, p), 3);
  ck_assert_int_eq(mxr_op_num_outputs(bw, p), 2);
  mxr_op_params_free(p);
  ck_assert_str_eq(a->backward, "_backward_Convolution");
  ck_assert_uint_eq(a->grad_flags, MXR_GRAD_USE_INPUTS);
}
END_TEST

/* 2-D: stride 1/2, pad 0/1, dilation 1/2, groups 1/2/4, bias or not. */
START_TEST(test_conv2d_configs) {
  static const struct conv_cfg cfgs[] = {
      {2, {3, 3}, {1, 1}, {0, 0}, {1, 1}, 1, false},
      {2, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 1, false},
      {2, {3, 3}, {1, 1}, {1, 1}, {2, 2}, 1, true},
      {2, {3, 3}, {2, 2}, {1, 1}, {2, 2}, 2, false},
      {2, {2, 3}, {2, 1}, {1, 0}, {1, 1}, 2, true},
      {2, {3, 2}, {1, 2}, {0, 1}, {2, 1}, 4, false}, /* depthwise */
  };
  for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
    struct conv_case_text t;
    struct oc_case c = conv_case(&cfgs[i], &t, OC_SHAPE(2, 4, 6, 5), 4);
    oc_check(&c, 100 + i, 1);
    c = conv_case(&cfgs[i], &t, OC_SHAPE(1, 4, 6, 5), 4); /* one image: a product of its own */
    oc_check(&c, 110 + i, 1);
  }
}
END_TEST

/* 1x1 kernels: the direct path (no im2col) and a strided one.  One image
 * is multiplied in place; several have their columns copied side by side
 * with room for the product (2 x (4 channels + 6 filters) x 15 positions,
 * sized in float64). */
START_TEST(test_conv_1x1) {
  static const struct conv_cfg direct = {2, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 2, false};
  static const struct conv_cfg strided = {2, {1, 1}, {2, 2}, {0, 0}, {1, 1}, 1, true};
  static const struct conv_cfg padded = {2, {1, 1}, {1, 1}, {1, 0}, {1, 1}, 1, false};
  struct conv_case_text t;
  struct oc_case c = conv_case(&direct, &t, OC_SHAPE(1, 4, 3, 5), 6);
  ck_assert_uint_eq(ws_bytes(&c), 0); /* no column matrix needed */
  oc_check(&c, 200, 2);
  c = conv_case(&direct, &t, OC_SHAPE(2, 4, 3, 5), 6);
  ck_assert_uint_eq(ws_bytes(&c), 2 * (4 + 6) * 15 * sizeof(double));
  oc_check(&c, 203, 2);
  c = conv_case(&strided, &t, OC_SHAPE(2, 3, 5, 4), 2);
  ck_assert_uint_gt(ws_bytes(&c), 0);
  oc_check(&c, 201, 1);
  c = conv_case(&padded, &t, OC_SHAPE(1, 3, 2, 4), 2);
  oc_check(&c, 202, 1);
}
END_TEST

START_TEST(test_conv_1d_and_3d) {
  static const struct conv_cfg c1 = {1, {3}, {2}, {1}, {2}, 2, false};
  static const struct conv_cfg c1b = {1, {2}, {1}, {0}, {1}, 1, true};
  static const struct conv_cfg c3 = {3, {2, 3, 2}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}, 1, false};
  static const struct conv_cfg c3g = {3, {1, 2, 2}, {1, 1, 2}, {0, 1, 0}, {1, 1, 1}, 2, true};
  struct conv_case_text t;
  struct oc_case c = conv_case(&c1, &t, OC_SHAPE(2, 4, 9), 4);
  oc_check(&c, 300, 1);
  c = conv_case(&c1b, &t, OC_SHAPE(3, 2, 5), 3);
  oc_check(&c, 301, 1);
  c = conv_case(&c3, &t, OC_SHAPE(1, 2, 3, 5, 4), 2);
  oc_check(&c, 302, 1);
  c = conv_case(&c3g, &t, OC_SHAPE(2, 2, 2, 3, 4), 4);
  oc_check(&c, 303, 1);
}
END_TEST

START_TEST(test_conv_float64) {
  static const struct conv_cfg cf = {2, {3, 3}, {2, 1}, {1, 1}, {1, 2}, 2, false};
  struct conv_case_text t;
  struct oc_case c = conv_case(&cf, &t, OC_SHAPE(2, 4, 5, 6), 2);
  c.dtype = MXR_FLOAT64;
  c.rtol = 1e-12;
  c.atol = 1e-12;
  c.grad_rtol = 1e-6;
  c.grad_atol = 1e-7;
  oc_check(&c, 400, 1);
}
END_TEST

/* The checker must notice a reference that ignores dilation. */
START_TEST(test_conv_checker_catches_wrong_reference) {
  static const struct conv_cfg cf = {2, {3, 3}, {1, 1}, {1, 1}, {2, 2}, 1, true};
  struct conv_case_text t;
  struct oc_case c = conv_case(&cf, &t, OC_SHAPE(1, 2, 6, 6), 2);
  c.forward_ref = conv_ref_no_dilate;
  oc_check_forward(&c, 500); /* expected to fail */
}
END_TEST

/* Values computed by MXNet 1.9.1 (CPU, native kernels):
 *   d = arange(1, 97).reshape(2,3,4,4) / 10, w = (arange(108) % 7 - 3) / 4,
 *   b = (0.5, -1, 2, 0.25); Convolution(kernel=(3,3), stride=(2,2),
 *   pad=(1,1), num_filter=4); backward with a gradient of ones. */
START_TEST(test_conv_mxnet_values) {
  static const float want_y[32] = {
      -0.32499969f, -2.7750001f, 3.9250002f,  1.5750000f,  -3.6499999f, -3.0500002f, -2.2249999f,
      -2.2250001f,  0.32499981f, 1.8750005f,  -0.20000005f, -0.65000010f, 2.3500001f, 0.99999976f,
      0.050000072f, -2.25f,      -3.9250002f, -6.3750005f, 3.9250009f,  -2.0249996f, -4.8499999f,
      -3.0499990f,  -7.0249991f, -4.6250010f, 1.5250008f,  5.4750004f,  -1.4000008f, -1.8499997f,
      5.9500003f,   -0.20000100f, 2.4499998f, -2.25f};
  static const float want_dw[12] = {6.0f,  12.0f, 12.4f, 12.0f, 24.0f, 24.8f,
                                    13.6f, 27.2f, 28.0f, 9.2f,  18.4f, 18.8f};
  static const float want_dx[16] = {-0.5f, -1.0f, -0.5f, 0.5f,  0.75f, 1.5f,  0.75f, -0.75f,
                                    -0.5f, -1.0f, -0.5f, 0.5f, 0.75f, 1.5f,  0.75f, 0.0f};
  static const float want_db[4] = {8, 8, 8, 8};
  float d[96], w[108], b[4] = {0.5f, -1.0f, 2.0f, 0.25f}, ones[32];
  for (int i = 0; i < 96; i++) d[i] = (float)(i + 1) / 10.0f;
  for (int i = 0; i < 108; i++) w[i] = (float)(i % 7 - 3) / 4.0f;
  for (int i = 0; i < 32; i++) ones[i] = 1;
  const char *k[] = {"kernel", "stride", "pad", "num_filter"}, *v[] = {"(3,3)", "(2,2)", "(1,1)", "4"};
  mxr_op_params *p;
  ck_assert_int_eq(parse("Convolution", 4, k, v, &p), 0);
  struct mxr_tensor in[4] = {ftensor(OC_SHAPE(2, 4, 2, 2), ones), ftensor(OC_SHAPE(2, 3, 4, 4), d),
                             ftensor(OC_SHAPE(4, 3, 3, 3), w), ftensor(OC_SHAPE(4), b)};
  struct mxr_tensor y = ftensor(OC_SHAPE(2, 4, 2, 2), NULL);
  int req[3] = {MXR_REQ_WRITE, MXR_REQ_WRITE, MXR_REQ_WRITE};
  ck_assert_msg(run("Convolution", p, in + 1, 3, req, &y, 1) == 0, "%s", mxr_last_error());
  assert_close("output", y.data, want_y, 32, 1e-5, 1e-5);
  struct mxr_tensor g[3] = {ftensor(OC_SHAPE(2, 3, 4, 4), NULL), ftensor(OC_SHAPE(4, 3, 3, 3), NULL),
                            ftensor(OC_SHAPE(4), NULL)};
  ck_assert_msg(run("_backward_Convolution", p, in, 4, req, g, 3) == 0, "%s", mxr_last_error());
  assert_close("data gradient", g[0].data, want_dx, 16, 1e-5, 1e-6);
  assert_close("weight gradient", g[1].data, want_dw, 12, 1e-5, 1e-5);
  assert_close("bias gradient", g[2].data, want_db, 4, 0, 0);
  for (int i = 0; i < 4; i++) free(in[i].data);
  for (int i = 0; i < 3; i++) free(g[i].data);
  free(y.data);
  mxr_op_params_free(p);
}
END_TEST

/* req: NULL leaves an output alone, ADD accumulates (forward and backward). */
START_TEST(test_conv_req) {
  const char *k[] = {"kernel", "pad", "num_filter"}, *v[] = {"(2,2)", "(1,1)", "3"};
  mxr_op_params *p;
  ck_assert_int_eq(parse("Convolution", 3, k, v, &p), 0);
  float x[2 * 2 * 3 * 3], w[3 * 2 * 2 * 2], b[3] = {0.25f, -0.5f, 1};
  for (int i = 0; i < 36; i++) x[i] = (float)((i * 7) % 11) / 5.0f - 1;
  for (int i = 0; i < 24; i++) w[i] = (float)((i * 5) % 9) / 4.0f - 1;
  struct mxr_tensor in[3] = {ftensor(OC_SHAPE(2, 2, 3, 3), x), ftensor(OC_SHAPE(3, 2, 2, 2), w),
                             ftensor(OC_SHAPE(3), b)};
  struct mxr_tensor y1 = ftensor(OC_SHAPE(2, 3, 4, 4), NULL), y2 = ftensor(OC_SHAPE(2, 3, 4, 4), NULL);
  int wr[1] = {MXR_REQ_WRITE}, add[1] = {MXR_REQ_ADD}, nul[1] = {MXR_REQ_NULL};
  ck_assert_int_eq(run("Convolution", p, in, 3, wr, &y1, 1), 0);
  float *a = y1.data, *c = y2.data;
  for (int i = 0; i < 96; i++) c[i] = (float)i;
  ck_assert_int_eq(run("Convolution", p, in, 3, nul, &y2, 1), 0);
  for (int i = 0; i < 96; i++) ck_assert_float_eq(c[i], (float)i);
  ck_assert_int_eq(run("Convolution", p, in, 3, add, &y2, 1), 0);
  for (int i = 0; i < 96; i++) ck_assert_float_eq_tol(c[i], (float)i + a[i], 1e-5);

  /* backward: data gradient NULL, weight WRITE, bias ADD */
  struct mxr_tensor bin[4] = {ftensor(OC_SHAPE(2, 3, 4, 4), a), in[0], in[1], in[2]};
  struct mxr_tensor g[3] = {ftensor(OC_SHAPE(2, 2, 3, 3), NULL), ftensor(OC_SHAPE(3, 2, 2, 2), NULL),
                            ftensor(OC_SHAPE(3), NULL)};
  int all[3] = {MXR_REQ_WRITE, MXR_REQ_WRITE, MXR_REQ_WRITE};
  ck_assert_int_eq(run("_backward_Convolution", p, bin, 4, all, g, 3), 0);
  float dw[24], db[3];
  memcpy(dw, g[1].data, sizeof dw);
  memcpy(db, g[2].data, sizeof db);
  float *gx = g[0].data, *gw = g[1].data, *gb = g[2].data;
  for (int i = 0; i < 36; i++) gx[i] = 42;
  for (int i = 0; i < 24; i++) gw[i] = 42;
  for (int i = 0; i < 3; i++) gb[i] = 1;
  int mixed[3] = {MXR_REQ_NULL, MXR_REQ_WRITE, MXR_REQ_ADD};
  ck_assert_int_eq(run("_backward_Convolution", p, bin, 4, mixed, g, 3), 0);
  for (int i = 0; i < 36; i++) ck_assert_float_eq(gx[i], 42);
  for (int i = 0; i < 24; i++) ck_assert_float_eq_tol(gw[i], dw[i], 1e-6);
  for (int i = 0; i < 3; i++) ck_assert_float_eq_tol(gb[i], db[i] + 1, 1e-5);
  for (int i = 0; i < 3; i++) free(in[i].data), free(g[i].data);
  free(bin[0].data);
  free(y1.data);
  free(y2.data);
  mxr_op_params_free(p);
}
END_TEST

START_TEST(test_conv_workspace) {
  const char *k[] = {"kernel", "num_filter", "no_bias"}, *v[] = {"(3,3)", "2", "True"};
  mxr_op_params *p;
  ck_assert_int_eq(parse("Convolution", 3, k, v, &p), 0);
  const mxr_op *op = find("Convolution");
  struct mxr_shape s[2] = {OC_SHAPE(1, 2, 5, 5), OC_SHAPE(2, 2, 3, 3)};
  /* the column matrix: C * kh * kw rows, one column per output position */
  ck_assert_uint_ge(op->workspace_bytes(mxr__op_params_struct(p), s, 2), 2 * 9 * 9 * sizeof(float));
  struct mxr_tensor in[2] = {ftensor(s[0], NULL), ftensor(s[1], NULL)}, y = ftensor(OC_SHAPE(1, 2, 3, 3), NULL);
  int req[1] = {MXR_REQ_WRITE};
  struct mxr_op_ctx ctx = {0};
  ck_assert_int_eq(mxr__op_forward_cpu(op, p, &ctx, in, 2, req, &y, 1, NULL, 0), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "workspace of 0 bytes is too small"));
  /* a kernel given tensors of the wrong shape refuses them */
  struct mxr_tensor bad = ftensor(OC_SHAPE(1, 2, 4, 4), NULL);
  ck_assert_int_eq(run("Convolution", p, in, 2, req, &bad, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "output has shape (1,2,4,4), expected (1,2,3,3)"));
  free(bad.data);
  for (int i = 0; i < 2; i++) free(in[i].data);
  free(y.data);
  mxr_op_params_free(p);
}
END_TEST

START_TEST(test_conv_shapes) {
  struct mxr_shape in[3], out;
  /* weight and bias from data; MXNet 1.9.1: (1,5,6,7), kernel 3, dilate 2 -> (1,4,2,3) */
  const char *k[] = {"kernel", "dilate", "num_filter"}, *v[] = {"(3,3)", "(2,2)", "4"};
  in[0] = OC_SHAPE(1, 5, 6, 7);
  in[1].ndim = in[2].ndim = -1;
  ck_assert_int_eq(infer("Convolution", 3, k, v, in, 3, &out, 1), 0);
  assert_shape(&out, OC_SHAPE(1, 4, 2, 3), "dilated output");
  assert_shape(&in[1], OC_SHAPE(4, 5, 3, 3), "weight");
  assert_shape(&in[2], OC_SHAPE(4), "bias");
  /* groups, stride, pad, 1-D and 3-D */
  const char *k2[] = {"kernel", "stride", "pad", "num_filter", "num_group", "no_bias"};
  const char *v2[] = {"(3,2)", "(2,3)", "(1,2)", "6", "3", "True"};
  in[0] = OC_SHAPE(2, 9, 7, 8);
  in[1].ndim = -1;
  ck_assert_int_eq(infer("Convolution", 6, k2, v2, in, 2, &out, 1), 0);
  assert_shape(&out, OC_SHAPE(2, 6, 4, 4), "strided output");
  assert_shape(&in[1], OC_SHAPE(6, 3, 3, 2), "grouped weight");
  const char *v3[] = {"4", "2", "1", "8", "1", "True"};
  in[0] = OC_SHAPE(3, 2, 10);
  in[1].ndim = -1;
  ck_assert_int_eq(infer("Convolution", 6, k2, v3, in, 2, &out, 1), 0);
  assert_shape(&out, OC_SHAPE(3, 8, 5), "1-D output");
  assert_shape(&in[1], OC_SHAPE(8, 2, 4), "1-D weight");
  const char *v4[] = {"(1,2,3)", "(1,1,2)", "(0,1,1)", "2", "1", "True"};
  in[0] = OC_SHAPE(1, 3, 4, 5, 6);
  in[1].ndim = -1;
  ck_assert_int_eq(infer("Convolution", 6, k2, v4, in, 2, &out, 1), 0);
  assert_shape(&out, OC_SHAPE(1, 2, 4, 6, 3), "3-D output");
  assert_shape(&in[1], OC_SHAPE(2, 3, 1, 2, 3), "3-D weight");
  /* NHWC as MXNet 1.9.1 infers it: data (2,9,10,4), 8 filters in 2 groups */
  const char *k5[] = {"kernel", "num_filter", "num_group", "layout"}, *v5[] = {"(3,3)", "8", "2", "NHWC"};
  in[0] = OC_SHAPE(2, 9, 10, 4);
  in[1].ndim = in[2].ndim = -1;
  ck_assert_int_eq(infer("Convolution", 4, k5, v5, in, 3, &out, 1), 0);
  assert_shape(&out, OC_SHAPE(2, 7, 8, 8), "NHWC output");
  assert_shape(&in[1], OC_SHAPE(8, 3, 3, 2), "NHWC weight");
  /* unknown data: nothing inferred yet, no error */
  in[0].ndim = -1;
  in[1].ndim = in[2].ndim = -1;
  ck_assert_int_eq(infer("Convolution", 3, k, v, in, 3, &out, 1), 0);
  ck_assert_int_eq(out.ndim, -1);
  /* backward op: gradients take the inputs' shapes */
  struct mxr_shape bin[4] = {{-1, {0}}, OC_SHAPE(1, 5, 6, 7), {-1, {0}}, {-1, {0}}}, bout[3];
  ck_assert_int_eq(infer("_backward_Convolution", 3, k, v, bin, 4, bout, 3), 0);
  assert_shape(&bin[0], OC_SHAPE(1, 4, 2, 3), "ograd");
  assert_shape(&bout[0], OC_SHAPE(1, 5, 6, 7), "data gradient");
  assert_shape(&bout[1], OC_SHAPE(4, 5, 3, 3), "weight gradient");
  assert_shape(&bout[2], OC_SHAPE(4), "bias gradient");
}
END_TEST

START_TEST(test_conv_shape_errors) {
  struct mxr_shape in[3], out;
  const char *k[] = {"kernel", "num_filter", "num_group"}, *v[] = {"(3,3)", "4", "2"};
  in[0] = OC_SHAPE(1, 3, 5, 5); /* 3 channels, 2 groups */
  in[1].ndim = in[2].ndim = -1;
  ck_assert_int_eq(infer("Convolution", 3, k, v, in, 3, &out, 1), MXR_EINVAL);
  ck_assert_str_eq(mxr_last_error(), "Convolution: data has 3 channels, which num_group=2 does not divide");
  in[0] = OC_SHAPE(1, 4, 5); /* 3-D data for a 2-D kernel */
  ck_assert_int_eq(infer("Convolution", 3, k, v, in, 3, &out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "data must have 4 dimensions"));
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "got shape (1,4,5)"));
  in[0] = OC_SHAPE(1, 4, 2, 5); /* kernel taller than the input */
  ck_assert_int_eq(infer("Convolution", 3, k, v, in, 3, &out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "more than the padded input (2)"));
  in[0] = OC_SHAPE(1, 4, 5, 5);
  in[1] = OC_SHAPE(4, 4, 3, 3); /* weight must be (4,2,3,3) */
  ck_assert_int_eq(infer("Convolution", 3, k, v, in, 3, &out, 1), MXR_EINVAL);
  ck_assert_str_eq(mxr_last_error(), "Convolution: weight: expected shape (4,2,3,3), got (4,4,3,3)");
  in[1].ndim = -1;
  in[2] = OC_SHAPE(2);
  ck_assert_int_eq(infer("Convolution", 3, k, v, in, 3, &out, 1), MXR_EINVAL);
  ck_assert_str_eq(mxr_last_error(), "Convolution: bias: expected shape (4,), got (2,)");
}
END_TEST

START_TEST(test_conv_param_errors) {
  const char *k[] = {"kernel", "num_filter", "x"};
  expect_parse_error("Convolution", 1, (const char *[]){"num_filter"}, (const char *[]){"2"},
                     "Convolution: required parameter 'kernel' is missing");
  expect_parse_error("Convolution", 1, k, (const char *[]){"(3,3)"},
                     "Convolution: required parameter 'num_filter' is missing");
  expect_parse_error("Convolution", 2, k, (const char *[]){"(2,2,2,2)", "2"},
                     "Convolution: 4D convolution is not supported");
  expect_parse_error("Convolution", 2, k, (const char *[]){"()", "2"},
                     "Convolution: 0D convolution is not supported");
  expect_parse_error("Convolution", 2, k, (const char *[]){"(3,3)", "0"},
                     "Convolution: num_filter=0 must be at least 1");
  expect_parse_error("Convolution", 2, k, (const char *[]){"(0,3)", "2"},
                     "Convolution: kernel=(0,3) must be positive in every dimension");
  expect_parse_error("Convolution", 2, k, (const char *[]){"(3,3)", "two"},
                     "Convolution: parameter num_filter='two' is not valid: expected an integer");
  const char *k3[] = {"kernel", "num_filter", "stride"};
  expect_parse_error("Convolution", 3, k3, (const char *[]){"(3,3)", "2", "(1,)"},
                     "Convolution: stride=(1,) must have as many dimensions as kernel=(3,3)");
  expect_parse_error("Convolution", 3, k3, (const char *[]){"(3,3)", "2", "(1,0)"},
                     "Convolution: stride=(1,0) must be positive in every dimension");
  const char *kd[] = {"kernel", "num_filter", "dilate"};
  expect_parse_error("Convolution", 3, kd, (const char *[]){"(3,3)", "2", "(1,2,3)"},
                     "dilate=(1,2,3) must have as many dimensions as kernel=(3,3)");
  const char *kp[] = {"kernel", "num_filter", "pad"};
  expect_parse_error("Convolution", 3, kp, (const char *[]){"(3,3)", "2", "(-1,0)"},
                     "pad=(-1,0) must be non-negative in every dimension");
  const char *kg[] = {"kernel", "num_filter", "num_group"};
  expect_parse_error("Convolution", 3, kg, (const char *[]){"(3,3)", "5", "2"},
                     "Convolution: num_filter=5 is not divisible by num_group=2");
  expect_parse_error("Convolution", 3, kg, (const char *[]){"(3,3)", "4", "0"},
                     "num_group=0 must be at least 1");
  const char *kt[] = {"kernel", "num_filter", "cudnn_tune"};
  expect_parse_error("Convolution", 3, kt, (const char *[]){"(3,3)", "2", "slowest"},
                     "Convolution: parameter cudnn_tune='slowest' is not valid: expected one of "
                     "None, off, limited_workspace, fastest");
  const char *kl[] = {"kernel", "num_filter", "layout"};
  expect_parse_error("Convolution", 3, kl, (const char *[]){"(3,3)", "2", "NWC"},
                     "parameter layout='NWC' is not valid: expected one of None, NCW, NCHW, NCDHW, NHWC, NDHWC");
  expect_parse_error("Convolution", 3, kl, (const char *[]){"(3,)", "2", "NCHW"},
                     "Convolution: layout=NCHW does not fit the 1-D kernel=(3,)");
  const char *kw[] = {"kernel", "num_filter", "workspace"};
  expect_parse_error("Convolution", 3, kw, (const char *[]){"(3,3)", "2", "-1"},
                     "workspace=-1 must not be negative");
  expect_parse_error("Convolution", 3, k, (const char *[]){"(3,3)", "2", "1"},
                     "Convolution: unknown parameter 'x'");
  /* accepted as MXNet accepts them */
  const char *ka[] = {"kernel", "num_filter", "cudnn_tune", "cudnn_off", "workspace", "layout", "no_bias"};
  const char *va[] = {"[3, 3]", "2", "limited_workspace", "1", "512", "NCHW", "true"};
  mxr_op_params *p;
  ck_assert_msg(parse("Convolution", 7, ka, va, &p) == 0, "%s", mxr_last_error());
  mxr_op_params_free(p);
  const char *vb[] = {"(3,3)", "2", "None", "False", "0", "None", "0"};
  ck_assert_msg(parse("_npx_convolution", 7, ka, vb, &p) == 0, "%s", mxr_last_error());
  mxr_op_params_free(p);
  const char *vc[] = {"(3,3,3)", "2", "fastest", "True", "2048", "NDHWC", "False"};
  ck_assert_msg(parse("Convolution", 7, ka, vc, &p) == 0, "%s", mxr_last_error());
  mxr_op_params_free(p);
}
END_TEST

/* Channel-last convolution: shapes are inferred, the CPU kernel refuses. */
START_TEST(test_conv_nhwc_rejected_on_cpu) {
  const char *k[] = {"kernel", "num_filter", "layout", "no_bias"}, *v[] = {"(2,2)", "2", "NHWC", "True"};
  mxr_op_params *p;
  ck_assert_int_eq(parse("Convolution", 4, k, v, &p), 0);
  struct mxr_tensor in[2] = {ftensor(OC_SHAPE(1, 3, 3, 2), NULL), ftensor(OC_SHAPE(2, 2, 2, 2), NULL)};
  struct mxr_tensor y = ftensor(OC_SHAPE(1, 2, 2, 2), NULL);
  int req[1] = {MXR_REQ_WRITE};
  ck_assert_int_eq(run("Convolution", p, in, 2, req, &y, 1), MXR_EINVAL);
  ck_assert_str_eq(mxr_last_error(), "Convolution: layout=NHWC is not supported on CPU (only NCW, NCHW and NCDHW)");
  for (int i = 0; i < 2; i++) free(in[i].data);
  free(y.data);
  mxr_op_params_free(p);
}
END_TEST

int main(void) {
  Suite *s = suite_create("convolution ops");
  TCase *tc = tcase_create("conv");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_conv_registry);
  tcase_add_test(tc, test_conv2d_configs);
  tcase_add_test(tc, test_conv_1x1);
  tcase_add_test(tc, test_conv_1d_and_3d);
  tcase_add_test(tc, test_conv_float64);
  tcase_add_exit_test(tc, test_conv_checker_catches_wrong_reference, 1);
  tcase_add_test(tc, test_conv_mxnet_values);
  tcase_add_test(tc, test_conv_req);
  tcase_add_test(tc, test_conv_workspace);
  tcase_add_test(tc, test_conv_shapes);
  tcase_add_test(tc, test_conv_shape_errors);
  tcase_add_test(tc, test_conv_param_errors);
  tcase_add_test(tc, test_conv_nhwc_rejected_on_cpu);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
