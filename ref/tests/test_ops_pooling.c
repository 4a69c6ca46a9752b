/* Pooling against float64 direct-loop references, finite differences for
 * the gradients, values computed by MXNet 1.9.1 itself (native CPU
 * kernels), shape inference and parameter errors. */
#include "conv_check.h"

/* ----------------------------------------------------- Pooling reference */

enum { P_MAX, P_AVG, P_SUM, P_LP };

struct pool_cfg {
  int type;
  int nsp;
  int64_t k[3], s[3], p[3]; /* the first nsp entries */
  bool full, same, global, exclude_pad, last;
  int pv;
  double lowest; /* what max pooling gives for an empty window */
};

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Each output is a function of its window [o*s-p, o*s-p+k) per dimension:
 * max of the elements inside the input, or their sum, divided for avg by
 * the window size cut at the far edge of the padding (or, excluding
 * padding, by the number of elements inside the input). */
static void pool_ref(const void *user, const double *const *in, const struct mxr_shape *in_shapes,
                     int nin, double *const *out, const struct mxr_shape *out_shapes, int nout,
                     double *const *aux, int naux) {
  (void)nin;
  (void)nout;
  (void)aux;
  (void)naux;
  const struct pool_cfg *cf = user;
  const struct mxr_shape *xs = &in_shapes[0], *ys = &out_shapes[0];
  const int nsp = cf->nsp, off = 3 - nsp, nd = xs->ndim;
  const int64_t N = xs->dim[0], C = cf->last ? xs->dim[nd - 1] : xs->dim[1];
  const int sp0 = cf->last ? 1 : 2; /* first spatial axis */
  struct sp3 g;
  pad3(nsp, xs->dim + sp0, g.in, 1);
  pad3(nsp, cf->k, g.k, 1);
  pad3(nsp, cf->s, g.s, 1);
  pad3(nsp, cf->p, g.p, 0);
  int64_t isz = 1, osz = 1;
  for (int i = 0; i < 3; i++) {
    if (cf->global) {
      g.k[i] = g.in[i];
      g.s[i] = 1;
      g.p[i] = 0;
    }
    int64_t span = g.in[i] + 2 * g.p[i] - g.k[i];
    g.out[i] = cf->global ? 1
               : cf->same ? ceil_div(g.in[i], g.s[i])
               : cf->full ? ceil_div(span, g.s[i]) + 1
                          : span / g.s[i] + 1;
    if (i >= off) ck_assert_int_eq(ys->dim[sp0 + i - off], g.out[i]);
    isz *= g.in[i];
    osz *= g.out[i];
  }
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t o0 = 0; o0 < g.out[0]; o0++)
        for (int64_t o1 = 0; o1 < g.out[1]; o1++)
          for (int64_t o2 = 0; o2 < g.out[2]; o2++) {
            const int64_t o[3] = {o0, o1, o2};
            int64_t start[3], divisor = 1, count = 0;
            for (int i = 0; i < 3; i++) {
              start[i] = o[i] * g.s[i] - g.p[i];
              int64_t end = start[i] + g.k[i];
              if (end > g.in[i] + g.p[i]) end = g.in[i] + g.p[i];
              divisor *= end - start[i];
            }
            double acc = cf->type == P_MAX ? cf->lowest : 0.0;
            for (int64_t t0 = 0; t0 < g.k[0]; t0++)
              for (int64_t t1 = 0; t1 < g.k[1]; t1++)
                for (int64_t t2 = 0; t2 < g.k[2]; t2++) {
                  int64_t i0 = start[0] + t0, i1 = start[1] + t1, i2 = start[2] + t2;
                  if (i0 < 0 || i0 >= g.in[0] || i1 < 0 || i1 >= g.in[1] || i2 < 0 || i2 >= g.in[2])
                    continue;
                  int64_t j = (i0 * g.in[1] + i1) * g.in[2] + i2;
                  double xv = in[0][cf->last ? (n * isz + j) * C + c : (n * C + c) * isz + j];
                  count++;
                  if (cf->type == P_MAX)
                    acc = xv > acc ? xv : acc;
                  else
                    acc += cf->type == P_LP ? pow(xv, cf->pv) : xv;
                }
            if (cf->type == P_AVG) acc /= (double)(cf->exclude_pad ? count : divisor);
            if (cf->type == P_LP) acc = cf->pv == 2 ? sqrt(acc) : cf->pv == 3 ? cbrt(acc) : acc;
            int64_t oj = (o0 * g.out[1] + o1) * g.out[2] + o2;
            out[0][cf->last ? (n * osz + oj) * C + c : (n * C + c) * osz + oj] = acc;
          }
}

struct pool_text {
  char kernel[32], stride[32], pad[32], pv[8];
};

static const char *const pool_type_names[] = {"max", "avg", "sum", "lp"};

static struct oc_case pool_case(const struct pool_cfg *cf, struct pool_text *t, struct mxr_shape data,
                                const char *layout) {
  fmt_tuple(t->kernel, sizeof t->kernel, cf->nsp, cf->k);
  fmt_tuple(t->stride, sizeof t->stride, cf->nsp, cf->s);
  fmt_tuple(t->pad, sizeof t->pad, cf->nsp, cf->p);
  snprintf(t->pv, sizeof t->pv, "%d", cf->pv ? cf->pv : 2);
  struct oc_case c = {
      .op = "Pooling",
      .nparams = 9,
      .keys = {"kernel", "stride", "pool_type", "pooling_convention", "global_pool",
               "count_include_pad", "p_value", "layout", "cudnn_off"},
      .vals = {t->kernel, t->stride, pool_type_names[cf->type],
               cf->same ? "same" : cf->full ? "full" : "valid", cf->global ? "True" : "False",
               cf->exclude_pad ? "False" : "True", t->pv, layout ? layout : "None", "False"},
      .nin = 1,
      .in_shapes = {data},
      .forward_ref = pool_ref,
      .user = cf,
  };
  c.keys[c.nparams] = "pad";
  c.vals[c.nparams++] = cf->same ? "(0,0,0)" : t->pad; /* what MXNet 1.9.1 needs for "same" */
  return c;
}

/* ------------------------------------------------------ Pooling tests */

START_TEST(test_pool_registry) {
  const mxr_op *a = find("Pooling"), *b = find("_npx_pooling");
  ck_assert_ptr_eq(a, b);
  ck_assert_str_eq(a->backward, "_backward_Pooling");
  ck_assert_uint_eq(a->grad_flags, MXR_GRAD_USE_INPUTS | MXR_GRAD_USE_OUTPUTS);
  mxr_op_params *p;
  const char *k[] = {"kernel"}, *v[] = {"(2,2)"};
  ck_assert_int_eq(parse("Pooling", 1, k, v, &p), 0);
  ck_assert_int_eq(mxr_op_num_inputs(a, p), 1);
  ck_assert_int_eq(mxr_op_num_outputs(a, p), 1);
  ck_assert_str_eq(mxr_op_input_name(a, p, 0), "data");
  ck_assert_int_eq(mxr_op_num_inputs(find("_backward_Pooling"), p), 3);
  ck_assert_int_eq(mxr_op_num_outputs(find("_backward_Pooling"), p), 1);
  mxr_op_params_free(p);
}
END_TEST

/* 2-D max/avg/sum with stride 1/2, pad 0/1, both conventions; avg also
 * without counting the padding.  No window is empty, so max has a
 * gradient everywhere finite differences can see it. */
START_TEST(test_pool2d_configs) {
  static const struct {
    int64_t k, s, p;
    bool full;
  } geo[] = {{2, 1, 0, false}, {3, 2, 1, false}, {3, 2, 1, true}, {2, 2, 0, true}, {3, 1, 1, true}};
  for (int type = P_MAX; type <= P_SUM; type++)
    for (size_t i = 0; i < sizeof geo / sizeof geo[0]; i++)
      for (int excl = 0; excl <= (type == P_AVG && geo[i].p ? 1 : 0); excl++) {
        struct pool_cfg cf = {type, 2, {geo[i].k, geo[i].k}, {geo[i].s, geo[i].s},
                              {geo[i].p, geo[i].p}, geo[i].full, false, false, excl, false, 0, -FLT_MAX};
        struct pool_text t;
        struct oc_case c = pool_case(&cf, &t, OC_SHAPE(2, 3, 6, 7), NULL);
        oc_check(&c, 1000 + 10 * (uint64_t)type + i, 1);
      }
  /* non-square kernel, stride and pad */
  struct pool_cfg cf = {P_AVG, 2, {2, 3}, {1, 2}, {1, 0}, true, false, false, false, false, 0, -FLT_MAX};
  struct pool_text t;
  struct oc_case c = pool_case(&cf, &t, OC_SHAPE(1, 2, 5, 8), NULL);
  oc_check(&c, 1100, 1);
  cf.type = P_MAX;
  c = pool_case(&cf, &t, OC_SHAPE(1, 2, 5, 8), NULL);
  oc_check(&c, 1101, 1);
}
END_TEST

START_TEST(test_pool_global) {
  for (int type = P_MAX; type <= P_SUM; type++) {
    /* the kernel, stride and pad given are ignored */
    struct pool_cfg cf = {type, 2, {2, 2}, {2, 2}, {1, 1}, false, false, true, false, false, 0, -FLT_MAX};
    struct pool_text t;
    struct oc_case c = pool_case(&cf, &t, OC_SHAPE(2, 3, 4, 5), NULL);
    oc_check(&c, 1200 + (uint64_t)type, 1);
    /* no kernel at all, 1-D and 3-D data */
    struct oc_case c2 = {.op = "Pooling", .nparams = 2, .keys = {"global_pool", "pool_type"},
                         .vals = {"True", pool_type_names[type]}, .nin = 1,
                         .in_shapes = {OC_SHAPE(2, 3, 5)}, .forward_ref = pool_ref, .user = &cf};
    cf.nsp = 1;
    oc_check(&c2, 1210 + (uint64_t)type, 1);
    cf.nsp = 3;
    c2.in_shapes[0] = OC_SHAPE(1, 2, 3, 2, 4);
    oc_check(&c2, 1220 + (uint64_t)type, 1);
  }
}
END_TEST

START_TEST(test_pool_lp) {
  for (int pv = 1; pv <= 3; pv++) {
    struct pool_cfg cf = {P_LP, 2, {2, 2}, {2, 1}, {0, 1}, pv == 3, false, false, false, false, pv, -FLT_MAX};
    struct pool_text t;
    struct oc_case c = pool_case(&cf, &t, OC_SHAPE(2, 2, 5, 4), NULL);
    /* positive inputs keep the p-th root away from 0 */
    c.lo = 0.2;
    c.hi = 1.0;
    oc_check(&c, 1300 + (uint64_t)pv, 1);
  }
}
END_TEST

START_TEST(test_pool_1d_and_3d) {
  struct pool_text t;
  struct pool_cfg c1 = {P_MAX, 1, {3}, {2}, {1}, true, false, false, false, false, 0, -FLT_MAX};
  struct oc_case c = pool_case(&c1, &t, OC_SHAPE(2, 3, 8), NULL);
  oc_check(&c, 1400, 1);
  c1.type = P_AVG;
  c1.exclude_pad = true;
  c = pool_case(&c1, &t, OC_SHAPE(2, 3, 8), NULL);
  oc_check(&c, 1401, 1);
  struct pool_cfg c3 = {P_AVG, 3, {2, 2, 3}, {1, 2, 2}, {1, 0, 1}, false, false, false, false, false, 0, -FLT_MAX};
  c = pool_case(&c3, &t, OC_SHAPE(1, 2, 3, 4, 5), NULL);
  oc_check(&c, 1402, 1);
  c3.type = P_MAX;
  c3.full = true;
  c = pool_case(&c3, &t, OC_SHAPE(1, 2, 3, 4, 5), NULL);
  oc_check(&c, 1403, 1);
  c3.type = P_SUM;
  c = pool_case(&c3, &t, OC_SHAPE(1, 2, 3, 4, 5), NULL);
  oc_check(&c, 1404, 1);
}
END_TEST

/* Channel-last layouts, which MXNet's CPU pooling supports. */
START_TEST(test_pool_channel_last) {
  struct pool_text t;
  struct pool_cfg cf = {P_MAX, 2, {3, 2}, {2, 1}, {1, 0}, false, false, false, false, true, 0, -FLT_MAX};
  struct oc_case c = pool_case(&cf, &t, OC_SHAPE(2, 5, 4, 3), "NHWC");
  oc_check(&c, 1500, 1);
  cf.type = P_AVG;
  cf.full = true;
  c = pool_case(&cf, &t, OC_SHAPE(2, 5, 4, 3), "NHWC");
  oc_check(&c, 1501, 1);
  struct pool_cfg c1 = {P_SUM, 1, {2}, {2}, {1}, true, false, false, false, true, 0, -FLT_MAX};
  c = pool_case(&c1, &t, OC_SHAPE(2, 5, 3), "NWC");
  oc_check(&c, 1502, 1);
  struct pool_cfg c3 = {P_AVG, 3, {2, 2, 2}, {1, 1, 2}, {0, 1, 0}, false, false, false, true, true, 0, -FLT_MAX};
  c = pool_case(&c3, &t, OC_SHAPE(1, 3, 3, 4, 2), "NDHWC");
  oc_check(&c, 1503, 1);
  struct pool_cfg cg = {P_AVG, 2, {1, 1}, {1, 1}, {0, 0}, false, false, true, false, true, 0, -FLT_MAX};
  c = pool_case(&cg, &t, OC_SHAPE(2, 3, 4, 5), "NHWC");
  oc_check(&c, 1504, 1);
}
END_TEST

START_TEST(test_pool_same_1d) {
  struct pool_text t;
  struct pool_cfg cf = {P_MAX, 1, {3}, {2}, {0}, false, true, false, false, false, 0, -FLT_MAX};
  struct oc_case c = pool_case(&cf, &t, OC_SHAPE(2, 2, 9), NULL);
  oc_check(&c, 1600, 1);
  cf.type = P_AVG;
  c = pool_case(&cf, &t, OC_SHAPE(2, 2, 9), NULL);
  oc_check(&c, 1601, 1);
}
END_TEST

START_TEST(test_pool_float64) {
  struct pool_text t;
  struct pool_cfg cf = {P_AVG, 2, {3, 3}, {2, 2}, {1, 1}, true, false, false, true, false, 0, -DBL_MAX};
  struct oc_case c = pool_case(&cf, &t, OC_SHAPE(2, 2, 6, 6), NULL);
  c.dtype = MXR_FLOAT64;
  c.rtol = c.atol = 1e-13;
  c.grad_rtol = 1e-6;
  c.grad_atol = 1e-7;
  oc_check(&c, 1700, 1);
  cf.type = P_MAX;
  c = pool_case(&cf, &t, OC_SHAPE(2, 2, 6, 6), NULL);
  c.dtype = MXR_FLOAT64;
  c.rtol = c.atol = 1e-13;
  c.grad_rtol = 1e-6;
  c.grad_atol = 1e-7;
  oc_check(&c, 1701, 1);
  /* an empty max window holds the lowest double */
  struct pool_cfg ce = {P_MAX, 2, {2, 2}, {2, 2}, {1, 1}, true, false, false, false, false, 0, -DBL_MAX};
  c = pool_case(&ce, &t, OC_SHAPE(1, 1, 5, 5), NULL);
  c.dtype = MXR_FLOAT64;
  oc_check_forward(&c, 1702);
}
END_TEST

/* The checker must notice a reference that gets count_include_pad wrong. */
START_TEST(test_pool_checker_catches_wrong_reference) {
  struct pool_text t;
  struct pool_cfg cf = {P_AVG, 2, {3, 3}, {2, 2}, {1, 1}, false, false, false, false, false, 0, -FLT_MAX};
  struct oc_case c = pool_case(&cf, &t, OC_SHAPE(1, 1, 5, 5), NULL);
  c.vals[5] = "False"; /* the op excludes the padding, the reference includes it */
  oc_check_forward(&c, 1800); /* expected to fail */
}
END_TEST

/* Run Pooling forward and backward on float data and compare with values
 * MXNet 1.9.1 computed (native CPU kernels). */
static void pool_mxnet_case(int np, const char *const *k, const char *const *v, struct mxr_shape xs,
                            const float *x, struct mxr_shape ys, const float *og,
                            const float *want_y, const float *want_g) {
  mxr_op_params *p;
  ck_assert_msg(parse("Pooling", np, k, v, &p) == 0, "%s", mxr_last_error());
  struct mxr_shape in = xs, out = {-1, {0}};
  ck_assert_msg(mxr__op_infer_shape(find("Pooling"), p, &in, 1, &out, 1, NULL, 0) == 0, "%s",
                mxr_last_error());
  assert_shape(&out, ys, "output");
  struct mxr_tensor bin[3] = {ftensor(ys, og), ftensor(xs, x), ftensor(ys, NULL)};
  struct mxr_tensor g = ftensor(xs, NULL);
  int req[1] = {MXR_REQ_WRITE};
  ck_assert_msg(run("Pooling", p, &bin[1], 1, req, &bin[2], 1) == 0, "%s", mxr_last_error());
  assert_close("output", bin[2].data, want_y, mxr_shape_size(&ys), 1e-6, 0);
  ck_assert_msg(run("_backward_Pooling", p, bin, 3, req, &g, 1) == 0, "%s", mxr_last_error());
  assert_close("gradient", g.data, want_g, mxr_shape_size(&xs), 1e-6, 0);
  for (int i = 0; i < 3; i++) free(bin[i].data);
  free(g.data);
  mxr_op_params_free(p);
}

START_TEST(test_pool_mxnet_values) {
  const float L = -FLT_MAX;
  float a[25], og[16], ones[16];
  for (int i = 0; i < 25; i++) a[i] = (float)(i + 1);
  for (int i = 0; i < 16; i++) og[i] = (float)(i + 1), ones[i] = 1;
  const char *k[] = {"kernel", "stride", "pad", "pool_type", "pooling_convention", "count_include_pad"};
  /* 5x5 arange, kernel 2, stride 2, pad 1, full: the last row and column of windows are empty */
  static const float max_y[16] = {1, 3, 5, L, 11, 13, 15, L, 21, 23, 25, L, L, L, L, L};
  static const float max_g[25] = {1, 0, 2, 0, 3, 0, 0, 0, 0, 0, 5, 0, 6,
                                  0, 7, 0, 0, 0, 0, 0, 9, 0, 10, 0, 11};
  const char *v1[] = {"(2,2)", "(2,2)", "(1,1)", "max", "full", "None"};
  pool_mxnet_case(6, k, v1, OC_SHAPE(1, 1, 5, 5), a, OC_SHAPE(1, 1, 4, 4), og, max_y, max_g);
  static const float avg_y[16] = {0.25f, 1.25f, 2.25f, 0, 4.25f, 10, 12, 0, 9.25f, 20, 22, 0, 0, 0, 0, 0};
  static const float avg_g[25] = {0.25f, 0.5f, 0.5f, 0.75f, 0.75f, 1.25f, 1.5f, 1.5f, 1.75f,
                                  1.75f, 1.25f, 1.5f, 1.5f, 1.75f, 1.75f, 2.25f, 2.5f, 2.5f,
                                  2.75f, 2.75f, 2.25f, 2.5f, 2.5f, 2.75f, 2.75f};
  const char *v2[] = {"(2,2)", "(2,2)", "(1,1)", "avg", "full", "None"};
  pool_mxnet_case(6, k, v2, OC_SHAPE(1, 1, 5, 5), a, OC_SHAPE(1, 1, 4, 4), og, avg_y, avg_g);
  static const float ex_y[16] = {1, 2.5f, 4.5f, 0, 8.5f, 10, 12, 0, 18.5f, 20, 22, 0, 0, 0, 0, 0};
  static const float ex_g[25] = {1, 1, 1, 1.5f, 1.5f, 2.5f, 1.5f, 1.5f, 1.75f, 1.75f, 2.5f, 1.5f, 1.5f,
                                 1.75f, 1.75f, 4.5f, 2.5f, 2.5f, 2.75f, 2.75f, 4.5f, 2.5f, 2.5f, 2.75f, 2.75f};
  const char *v3[] = {"(2,2)", "(2,2)", "(1,1)", "avg", "full", "False"};
  pool_mxnet_case(6, k, v3, OC_SHAPE(1, 1, 5, 5), a, OC_SHAPE(1, 1, 4, 4), og, ex_y, ex_g);
  /* ties: the first maximum of a window (row-major) takes the gradient */
  static const float tie_x[16] = {1, 2, 2, 0, 2, 2, 1, 2, 0, 1, 2, 2, 2, 0, 2, 1};
  static const float tie_y[9] = {2, 2, 2, 2, 2, 2, 2, 2, 2};
  static const float tie_g[16] = {0, 2, 1, 0, 1, 1, 0, 1, 0, 0, 2, 0, 1, 0, 0, 0};
  const char *v4[] = {"(2,2)", "(1,1)", "(0,0)", "max", "valid", "None"};
  pool_mxnet_case(6, k, v4, OC_SHAPE(1, 1, 4, 4), tie_x, OC_SHAPE(1, 1, 3, 3), ones, tie_y, tie_g);
  static const float tie2_y[9] = {2, 2, 2, 2, 2, 2, 2, 2, 1};
  static const float tie2_g[16] = {0, 2, 0, 0, 1, 1, 0, 2, 0, 0, 0, 0, 1, 0, 1, 1};
  const char *v5[] = {"(3,3)", "(2,2)", "(1,1)", "max", "full", "None"};
  pool_mxnet_case(6, k, v5, OC_SHAPE(1, 1, 4, 4), tie_x, OC_SHAPE(1, 1, 3, 3), ones, tie2_y, tie2_g);
  /* 1-D "same" (MXNet 1.9.1 needs pad=(0,0,0) for it) */
  float b[7];
  for (int i = 0; i < 7; i++) b[i] = (float)(i + 1);
  const char *k6[] = {"kernel", "stride", "pool_type", "pooling_convention", "pad"};
  static const float same_y[4] = {3, 5, 7, 7}, same_g[7] = {0, 0, 1, 0, 1, 0, 2};
  const char *v6[] = {"(3,)", "(2,)", "max", "same", "(0,0,0)"};
  pool_mxnet_case(5, k6, v6, OC_SHAPE(1, 1, 7), b, OC_SHAPE(1, 1, 4), ones, same_y, same_g);
  static const float savg_y[4] = {2, 4, 6, 7};
  static const float savg_g[7] = {1 / 3.f, 1 / 3.f, 2 / 3.f, 1 / 3.f, 2 / 3.f, 1 / 3.f, 4 / 3.f};
  const char *v7[] = {"(3,)", "(2,)", "avg", "same", "(0,0,0)"};
  pool_mxnet_case(5, k6, v7, OC_SHAPE(1, 1, 7), b, OC_SHAPE(1, 1, 4), ones, savg_y, savg_g);
}
END_TEST

/* Windows entirely in the padding (pad >= kernel), as MXNet 1.9.1 computes
 * them: avg excluding padding gives NaN in 3-D and 0 in 1-D/2-D, max gives
 * the lowest float and passes no gradient. */
START_TEST(test_pool_empty_windows) {
  const char *k[] = {"kernel", "pad", "pool_type", "count_include_pad"};
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  mxr_op_params *p;
  int req[1] = {MXR_REQ_WRITE};
  const char *v3[] = {"(1,1,1)", "(1,1,1)", "avg", "False"};
  ck_assert_int_eq(parse("Pooling", 4, k, v3, &p), 0);
  struct mxr_tensor in = ftensor(OC_SHAPE(1, 1, 2, 2, 2), x), y = ftensor(OC_SHAPE(1, 1, 4, 4, 4), NULL);
  ck_assert_int_eq(run("Pooling", p, &in, 1, req, &y, 1), 0);
  const float *yv = y.data;
  for (int d = 0; d < 4; d++)
    for (int h = 0; h < 4; h++)
      for (int w = 0; w < 4; w++) {
        float v = yv[(d * 4 + h) * 4 + w];
        if (d % 3 && h % 3 && w % 3)
          ck_assert_float_eq(v, x[((d - 1) * 2 + h - 1) * 2 + w - 1]);
        else
          ck_assert_msg(isnan(v), "3-D empty window (%d,%d,%d) gave %g, not NaN", d, h, w, v);
      }
  free(in.data);
  free(y.data);
  mxr_op_params_free(p);
  static const float avg2[16] = {0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0};
  const char *v2[] = {"(1,1)", "(1,1)", "avg", "False"};
  ck_assert_int_eq(parse("Pooling", 4, k, v2, &p), 0);
  in = ftensor(OC_SHAPE(1, 1, 2, 2), x);
  y = ftensor(OC_SHAPE(1, 1, 4, 4), NULL);
  ck_assert_int_eq(run("Pooling", p, &in, 1, req, &y, 1), 0);
  assert_close("2-D avg", y.data, avg2, 16, 0, 0);
  mxr_op_params_free(p);
  const float L = -FLT_MAX;
  static const float ones[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  const float max2[16] = {L, L, L, L, L, 1, 2, L, L, 3, 4, L, L, L, L, L};
  const char *vm[] = {"(1,1)", "(1,1)", "max", "None"};
  ck_assert_int_eq(parse("Pooling", 4, k, vm, &p), 0);
  ck_assert_int_eq(run("Pooling", p, &in, 1, req, &y, 1), 0);
  assert_close("2-D max", y.data, max2, 16, 0, 0);
  struct mxr_tensor bin[3] = {ftensor(OC_SHAPE(1, 1, 4, 4), ones), in, y}, g = ftensor(OC_SHAPE(1, 1, 2, 2), NULL);
  ck_assert_int_eq(run("_backward_Pooling", p, bin, 3, req, &g, 1), 0);
  assert_close("2-D max gradient", g.data, ones, 4, 0, 0);
  free(bin[0].data);
  free(in.data);
  free(y.data);
  free(g.data);
  mxr_op_params_free(p);
}
END_TEST

START_TEST(test_pool_req) {
  const char *k[] = {"kernel", "pool_type"}, *v[] = {"(2,2)", "avg"};
  mxr_op_params *p;
  ck_assert_int_eq(parse("Pooling", 2, k, v, &p), 0);
  float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, prior[4] = {10, 20, 30, 40};
  struct mxr_tensor in = ftensor(OC_SHAPE(1, 1, 3, 3), x), y = ftensor(OC_SHAPE(1, 1, 2, 2), prior);
  int nul[1] = {MXR_REQ_NULL}, add[1] = {MXR_REQ_ADD};
  ck_assert_int_eq(run("Pooling", p, &in, 1, nul, &y, 1), 0);
  assert_close("untouched", y.data, prior, 4, 0, 0);
  ck_assert_int_eq(run("Pooling", p, &in, 1, add, &y, 1), 0);
  static const float want[4] = {13, 24, 36, 47};
  assert_close("accumulated", y.data, want, 4, 0, 0);
  /* backward with req add lands on the prior gradient */
  float og[4] = {4, 4, 4, 4}, g0[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  struct mxr_tensor bin[3] = {ftensor(OC_SHAPE(1, 1, 2, 2), og), in, y};
  struct mxr_tensor g = ftensor(OC_SHAPE(1, 1, 3, 3), g0);
  ck_assert_int_eq(run("_backward_Pooling", p, bin, 3, nul, &g, 1), 0);
  assert_close("untouched gradient", g.data, g0, 9, 0, 0);
  ck_assert_int_eq(run("_backward_Pooling", p, bin, 3, add, &g, 1), 0);
  static const float want_g[9] = {2, 3, 2, 3, 5, 3, 2, 3, 2};
  assert_close("accumulated gradient", g.data, want_g, 9, 0, 0);
  free(bin[0].data);
  free(in.data);
  free(y.data);
  free(g.data);
  mxr_op_params_free(p);
}
END_TEST

START_TEST(test_pool_shapes) {
  struct mxr_shape in, out;
  /* MXNet 1.9.1 on (2,3,7,8) */
  const char *k[] = {"kernel", "stride", "pad", "pooling_convention"};
  const char *v1[] = {"(3,3)", "(2,2)", "(0,0)", "full"}, *v2[] = {"(3,3)", "(2,2)", "(0,0)", "valid"};
  const char *v3[] = {"(2,3)", "(3,2)", "(1,1)", "full"};
  in = OC_SHAPE(2, 3, 7, 8);
  ck_assert_int_eq(infer("Pooling", 4, k, v1, &in, 1, &out, 1), 0);
  assert_shape(&out, OC_SHAPE(2, 3, 3, 4), "full");
  ck_assert_int_eq(infer("Pooling", 4, k, v2, &in, 1, &out, 1), 0);
  assert_shape(&out, OC_SHAPE(2, 3, 3, 3), "valid");
  ck_assert_int_eq(infer("Pooling", 4, k, v3, &in, 1, &out, 1), 0);
  assert_shape(&out, OC_SHAPE(2, 3, 4, 5), "full, padded");
  /* defaults: stride 1, no pad */
  ck_assert_int_eq(infer("Pooling", 1, k, v1, &in, 1, &out, 1), 0);
  assert_shape(&out, OC_SHAPE(2, 3, 5, 6), "defaults");
  /* global pooling keeps batch and channel */
  const char *kg[] = {"global_pool", "layout"}, *vg[] = {"True", "NHWC"};
  ck_assert_int_eq(infer("Pooling", 1, kg, vg, &in, 1, &out, 1), 0);
  assert_shape(&out, OC_SHAPE(2, 3, 1, 1), "global");
  ck_assert_int_eq(infer("Pooling", 2, kg, vg, &in, 1, &out, 1), 0);
  assert_shape(&out, OC_SHAPE(2, 1, 1, 8), "global NHWC");
  in = OC_SHAPE(2, 3, 4, 5, 6);
  ck_assert_int_eq(infer("Pooling", 1, kg, vg, &in, 1, &out, 1), 0);
  assert_shape(&out, OC_SHAPE(2, 3, 1, 1, 1), "global 3-D");
  /* 1-D same: ceil(x / stride) */
  const char *ks[] = {"kernel", "stride", "pooling_convention", "pad"};
  const char *vs[] = {"(3,)", "(2,)", "same", "(0,0,0)"};
  in = OC_SHAPE(1, 2, 9);
  ck_assert_int_eq(infer("Pooling", 4, ks, vs, &in, 1, &out, 1), 0);
  assert_shape(&out, OC_SHAPE(1, 2, 5), "same");
  /* backward: the gradient has the data's shape */
  struct mxr_shape bin[3] = {{-1, {0}}, OC_SHAPE(2, 3, 7, 8), {-1, {0}}}, bout;
  ck_assert_int_eq(infer("_backward_Pooling", 4, k, v1, bin, 3, &bout, 1), 0);
  assert_shape(&bin[0], OC_SHAPE(2, 3, 3, 4), "ograd");
  assert_shape(&bin[2], OC_SHAPE(2, 3, 3, 4), "output");
  assert_shape(&bout, OC_SHAPE(2, 3, 7, 8), "data gradient");
  in.ndim = -1;
  ck_assert_int_eq(infer("Pooling", 4, k, v1, &in, 1, &out, 1), 0);
  ck_assert_int_eq(out.ndim, -1);
}
END_TEST

START_TEST(test_pool_shape_errors) {
  struct mxr_shape in, out;
  const char *k[] = {"kernel", "pad", "pooling_convention", "layout"};
  const char *v[] = {"(7,7)", "(0,1)", "valid", "None"};
  in = OC_SHAPE(1, 1, 5, 5);
  ck_assert_int_eq(infer("Pooling", 2, k, v, &in, 1, &out, 1), MXR_EINVAL);
  ck_assert_str_eq(mxr_last_error(), "Pooling: kernel=(7,7) exceeds the input in spatial dimension 0 (5 padded to 5)");
  const char *v2[] = {"(2,)", "(0,)", "valid", "None"};
  ck_assert_int_eq(infer("Pooling", 2, k, v2, &in, 1, &out, 1), MXR_EINVAL);
  ck_assert_str_eq(mxr_last_error(), "Pooling: kernel=(2,) needs 3-D data, got shape (1,1,5,5)");
  const char *v3[] = {"(2,2)", "(0,0,0)", "same", "None"};
  ck_assert_int_eq(infer("Pooling", 3, k, v3, &in, 1, &out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "pooling_convention=same needs 3-D data"));
  const char *kg[] = {"global_pool"}, *vg[] = {"True"};
  in = OC_SHAPE(4, 5);
  ck_assert_int_eq(infer("Pooling", 1, kg, vg, &in, 1, &out, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "data must be 3-D, 4-D or 5-D"));
  /* a layout fixed by the kernel must fit the data (global pooling too) */
  const char *kl[] = {"kernel", "global_pool"}, *vl[] = {"(2,2)", "True"};
  in = OC_SHAPE(1, 2, 3, 4, 5);
  ck_assert_int_eq(infer("Pooling", 2, kl, vl, &in, 1, &out, 1), MXR_EINVAL);
  ck_assert_str_eq(mxr_last_error(), "Pooling: layout=NCHW does not fit data of shape (1,2,3,4,5)");
  in = OC_SHAPE(1, 2, 4, 4);
  out = OC_SHAPE(1, 2, 3, 3);
  mxr_op_params *p;
  ck_assert_int_eq(parse("Pooling", 2, kl, vl, &p), 0);
  ck_assert_int_eq(mxr__op_infer_shape(find("Pooling"), p, &in, 1, &out, 1, NULL, 0), MXR_EINVAL);
  ck_assert_str_eq(mxr_last_error(), "Pooling: output: expected shape (1,2,1,1), got (1,2,3,3)");
  mxr_op_params_free(p);
}
END_TEST

START_TEST(test_pool_param_errors) {
  const char *k[] = {"kernel", "pool_type", "p_value"};
  expect_parse_error("Pooling", 0, NULL, NULL, "Pooling: 0D pooling is not supported");
  expect_parse_error("Pooling", 1, k, (const char *[]){"(2,2,2,2)"}, "Pooling: 4D pooling is not supported");
  expect_parse_error("Pooling", 1, k, (const char *[]){"(0,2)"},
                     "Pooling: kernel=(0,2) must be positive in every dimension");
  expect_parse_error("Pooling", 2, k, (const char *[]){"(2,2)", "min"},
                     "Pooling: parameter pool_type='min' is not valid: expected one of max, avg, sum, lp");
  expect_parse_error("Pooling", 2, k, (const char *[]){"(2,2)", "lp"},
                     "Pooling: pool_type=lp needs p_value (1, 2 or 3)");
  expect_parse_error("Pooling", 3, k, (const char *[]){"(2,2)", "lp", "4"},
                     "Pooling: p_value=4 is not supported (1, 2 or 3)");
  const char *ks[] = {"kernel", "stride", "pad"};
  expect_parse_error("Pooling", 2, ks, (const char *[]){"(2,2)", "(2,)"},
                     "Pooling: stride=(2,) must have as many dimensions as kernel=(2,2)");
  expect_parse_error("Pooling", 2, ks, (const char *[]){"(2,2)", "(0,1)"},
                     "Pooling: stride=(0,1) must be positive in every dimension");
  expect_parse_error("Pooling", 3, ks, (const char *[]){"(2,2)", "(1,1)", "(1,1,1)"},
                     "Pooling: pad=(1,1,1) must have as many dimensions as kernel=(2,2)");
  const char *kc[] = {"kernel", "count_include_pad"};
  expect_parse_error("Pooling", 2, kc, (const char *[]){"(2,2)", "maybe"},
                     "Pooling: parameter count_include_pad='maybe' is not valid: expected True, False or None");
  const char *kl[] = {"kernel", "layout"};
  expect_parse_error("Pooling", 2, kl, (const char *[]){"(2,2)", "NCW"},
                     "Pooling: layout=NCW does not fit the 2-D kernel=(2,2)");
  expect_parse_error("Pooling", 2, kl, (const char *[]){"(2,2)", "CHWN"},
                     "expected one of None, NCW, NCHW, NCDHW, NWC, NHWC, NDHWC");
  const char *kp[] = {"kernel", "pad", "pooling_convention"};
  expect_parse_error("Pooling", 3, kp, (const char *[]){"(3,)", "(0,0,1)", "same"},
                     "Pooling: pooling_convention=same needs pad=(0,0,0) (MXNet 1.9.1 reads three "
                     "pad entries), got pad=(0,0,1)");
  expect_parse_error("Pooling", 3, kp, (const char *[]){"(3,)", "(0,)", "same"}, "got pad=(0,)");
  const char *kq[] = {"kernel", "pooling_convention"}; /* pad left out */
  expect_parse_error("Pooling", 2, kq, (const char *[]){"(3,)", "same"}, "got pad=()");
  expect_parse_error("Pooling", 3, kp, (const char *[]){"(3,)", "(0,)", "middle"},
                     "expected one of valid, full, same");
  /* accepted as MXNet accepts them */
  const char *ka[] = {"kernel", "count_include_pad", "cudnn_off", "p_value", "layout", "global_pool"};
  const char *va[] = {"(2,2)", "TRUE", "True", "7", "NHWC", "0"};
  mxr_op_params *p;
  ck_assert_msg(parse("Pooling", 6, ka, va, &p) == 0, "%s", mxr_last_error());
  mxr_op_params_free(p);
  const char *vb[] = {"()", "none", "False", "None", "None", "True"};
  ck_assert_msg(parse("_npx_pooling", 6, ka, vb, &p) == 0, "%s", mxr_last_error());
  mxr_op_params_free(p);
  const char *kz[] = {"kernel", "pad", "pooling_convention"}, *vz[] = {"(3,)", "(0,0,0)", "same"};
  ck_assert_msg(parse("Pooling", 3, kz, vz, &p) == 0, "%s", mxr_last_error());
  mxr_op_params_free(p);
}
END_TEST

int main(void) {
  Suite *s = suite_create("pooling ops");
  TCase *tc = tcase_create("pooling");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_pool_registry);
  tcase_add_test(tc, test_pool2d_configs);
  tcase_add_test(tc, test_pool_global);
  tcase_add_test(tc, test_pool_lp);
  tcase_add_test(tc, test_pool_1d_and_3d);
  tcase_add_test(tc, test_pool_channel_last);
  tcase_add_test(tc, test_pool_same_1d);
  tcase_add_test(tc, test_pool_float64);
  tcase_add_exit_test(tc, test_pool_checker_catches_wrong_reference, 1);
  tcase_add_test(tc, test_pool_mxnet_values);
  tcase_add_test(tc, test_pool_empty_windows);
  tcase_add_test(tc, test_pool_req);
  tcase_add_test(tc, test_pool_shapes);
  tcase_add_test(tc, test_pool_shape_errors);
  tcase_add_test(tc, test_pool_param_errors);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
