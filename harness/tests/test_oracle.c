/* The float64 oracle (harness/oracle/oracle*.c): every op's forward on small
 * hand-computed cases, stated gradients of the loss ops, finite differences
 * against analytic derivatives, the comparison routine, the parameter
 * parser, the input generator, the Dropout check, and the case table. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_tap.h"
#include "oracle/oracle.h"

#define SHP(...) \
  ((struct mxcts_oracle_shape){(int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}})
#define V(...) ((const double[]){__VA_ARGS__})
#define NOF(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const double LN2 = 0.6931471805599453, LN3 = 1.0986122886681098;

/* ------------------------------------------------------------ helpers */

/* "k=v;k=v" into keys/vals (pointers into buf). */
static int split_params(const char *spec, char *buf, size_t size, const char **keys, const char **vals) {
  int n = 0;
  if (!spec || !*spec) return 0;
  snprintf(buf, size, "%s", spec);
  for (char *tok = strtok(buf, ";"); tok; tok = strtok(NULL, ";")) {
    char *eq = strchr(tok, '=');
    ck_assert_msg(eq != NULL, "bad spec %s", spec);
    *eq = '\0';
    keys[n] = tok, vals[n] = eq + 1;
    n++;
  }
  return n;
}

static int prep(struct mxcts_oracle_call *c, const char *op, const char *params, int nin,
                const struct mxcts_oracle_shape *shapes, bool train, struct mxcts_oracle_error *err) {
  char buf[256];
  const char *keys[12] = {NULL}, *vals[12] = {NULL};
  int n = split_params(params, buf, sizeof buf, keys, vals);
  return mxcts_oracle_prepare(c, op, n, keys, vals, nin, shapes, train, err);
}

static void expect_values(const char *what, const char *op, const double *got, const double *want,
                          int64_t n, double tol) {
  struct mxcts_oracle_cmp r;
  ck_assert_msg(mxcts_oracle_compare(got, want, n, tol, tol, &r),
                "%s %s: element %lld is %.17g, expected %.17g", op, what, (long long)r.worst, r.got, r.want);
}

/* One hand-computed case: forward (and aux, mutated inputs), and the
 * expected gradient of the inputs whose grad[i] is given (stated for
 * GRAD_DIRECT ops, finite differences otherwise) for head gradient head. */
struct hand {
  const char *op, *params;
  bool train;
  int nin;
  struct mxcts_oracle_shape shape[4];
  const double *in[4], *aux[2];
  struct mxcts_oracle_shape out_shape;
  const double *out, *aux_out[2], *mutated[2];
  const double *head, *grad[4];
};

static void check_hand(const struct hand *h) {
  struct mxcts_oracle_call c;
  struct mxcts_oracle_error err = {""};
  int st = prep(&c, h->op, h->params, h->nin, h->shape, h->train, &err);
  ck_assert_msg(st == 0, "%s(%s): %s", h->op, h->params ? h->params : "", err.msg);
  char a[64], b[64];
  ck_assert_msg(mxcts_oracle_shape_equal(&c.out_shape[0], &h->out_shape), "%s: output shape %s, expected %s",
                h->op, mxcts_oracle_shape_str(&c.out_shape[0], a, sizeof a), mxcts_oracle_shape_str(&h->out_shape, b, sizeof b));
  const int64_t n = mxcts_oracle_shape_size(&h->out_shape);
  double out[256], auxo[2][8], mut[2][16];
  double *outs[1] = {out}, *auxs[2] = {auxo[0], auxo[1]}, *muts[2] = {mut[0], mut[1]};
  ck_assert_int_le(n, 256);
  ck_assert_int_eq(mxcts_oracle_forward(&c, h->in, h->aux, outs, auxs, muts, &err), 0);
  expect_values("output", h->op, out, h->out, n, 1e-12);
  for (int j = 0; j < 2; j++) {
    if (h->aux_out[j]) expect_values("aux", h->op, auxo[j], h->aux_out[j], mxcts_oracle_shape_size(&c.aux_shape[j]), 1e-12);
    if (h->mutated[j]) expect_values("mutated", h->op, mut[j], h->mutated[j], n, 1e-12);
  }
  unsigned which = 0;
  double g[4][64], *gs[4] = {g[0], g[1], g[2], g[3]};
  for (int i = 0; i < h->nin; i++) which |= h->grad[i] ? 1u << i : 0;
  if (!which) return;
  ck_assert_int_eq(mxcts_oracle_expected_grad(&c, h->in, h->aux, &h->head, which, gs, &err), 0);
  for (int i = 0; i < h->nin; i++)
    if (h->grad[i])
      expect_values("gradient", h->op, g[i], h->grad[i], mxcts_oracle_shape_size(&h->shape[i]),
                    c.grad == MXCTS_ORACLE_GRAD_DIRECT ? 1e-12 : 1e-7);
}

/* ------------------------------------------------------------ forward, by hand */

START_TEST(test_basic_ops) {
  check_hand(&(struct hand){.op = "reverse", .params = "axis=0", .nin = 1, .shape = {SHP(3)}, .in = {V(1, 2, 3)},
                            .out_shape = SHP(3), .out = V(3, 2, 1)});
  check_hand(&(struct hand){.op = "flip", .params = "axis=(0,1)", .nin = 1, .shape = {SHP(2, 2)},
                            .in = {V(1, 2, 3, 4)}, .out_shape = SHP(2, 2), .out = V(4, 3, 2, 1)});
  check_hand(&(struct hand){.op = "reverse", .params = "axis=-1", .nin = 1, .shape = {SHP(2, 3)},
                            .in = {V(1, 2, 3, 4, 5, 6)}, .out_shape = SHP(2, 3), .out = V(3, 2, 1, 6, 5, 4)});
  check_hand(&(struct hand){.op = "_copy", .nin = 1, .shape = {SHP(2)}, .in = {V(1.5, -2)}, .out_shape = SHP(2),
                            .out = V(1.5, -2), .head = V(3, 4), .grad = {V(3, 4)}});
  check_hand(&(struct hand){.op = "_zeros", .params = "shape=(2,2)", .out_shape = SHP(2, 2), .out = V(0, 0, 0, 0)});
  check_hand(&(struct hand){.op = "_ones", .params = "shape=[3]", .out_shape = SHP(3), .out = V(1, 1, 1)});
  check_hand(&(struct hand){.op = "zeros_like", .nin = 1, .shape = {SHP(1, 2)}, .in = {V(1, 2)},
                            .out_shape = SHP(1, 2), .out = V(0, 0)});
  check_hand(&(struct hand){.op = "ones_like", .nin = 1, .shape = {SHP(1, 2)}, .in = {V(1, 2)},
                            .out_shape = SHP(1, 2), .out = V(1, 1)});
  check_hand(&(struct hand){.op = "add_n", .params = "num_args=3", .nin = 3, .shape = {SHP(2), SHP(2), SHP(2)},
                            .in = {V(1, 2), V(10, 20), V(100, 200)}, .out_shape = SHP(2), .out = V(111, 222)});
}
END_TEST

START_TEST(test_arithmetic_ops) {
  static const char *const names[] = {"elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div"};
  const double *want[] = {V(4, 7), V(-2, -3), V(3, 10), V(1.0 / 3, 0.4)};
  for (int i = 0; i < 4; i++)
    check_hand(&(struct hand){.op = names[i], .nin = 2, .shape = {SHP(2), SHP(2)}, .in = {V(1, 2), V(3, 5)},
                              .out_shape = SHP(2), .out = want[i]});
  static const char *const scalars[][2] = {{"_plus_scalar", "scalar=1.5"}, {"_minus_scalar", "scalar=0.75"},
                                           {"_rminus_scalar", "scalar=2"},  {"_mul_scalar", "scalar=-1.5"},
                                           {"_div_scalar", "scalar=4"},     {"_rdiv_scalar", "scalar=2"}};
  const double *swant[] = {V(2.5, 5.5), V(0.25, 3.25), V(1, -2), V(-1.5, -6), V(0.25, 1), V(2, 0.5)};
  for (int i = 0; i < 6; i++)
    check_hand(&(struct hand){.op = scalars[i][0], .params = scalars[i][1], .nin = 1, .shape = {SHP(2)},
                              .in = {V(1, 4)}, .out_shape = SHP(2), .out = swant[i]});
  check_hand(&(struct hand){.op = "broadcast_add", .nin = 2, .shape = {SHP(2, 1), SHP(1, 3)}, .in = {V(1, 2), V(10, 20, 30)},
                            .out_shape = SHP(2, 3), .out = V(11, 21, 31, 12, 22, 32)});
  check_hand(&(struct hand){.op = "broadcast_sub", .nin = 2, .shape = {SHP(2, 3), SHP(3)},
                            .in = {V(1, 2, 3, 4, 5, 6), V(1, 1, 2)}, .out_shape = SHP(2, 3), .out = V(0, 1, 1, 3, 4, 4)});
  check_hand(&(struct hand){.op = "broadcast_mul", .nin = 2, .shape = {SHP(2, 3), SHP(2, 1)},
                            .in = {V(1, 2, 3, 4, 5, 6), V(2, 3)}, .out_shape = SHP(2, 3), .out = V(2, 4, 6, 12, 15, 18)});
  check_hand(&(struct hand){.op = "broadcast_div", .nin = 2, .shape = {SHP(2, 2), SHP(2)},
                            .in = {V(2, 4, 6, 8), V(2, 4)}, .out_shape = SHP(2, 2), .out = V(1, 1, 3, 2),
                            .head = V(1, 1, 1, 1), .grad = {V(0.5, 0.25, 0.5, 0.25), V(-2, -0.75)}});
}
END_TEST

START_TEST(test_unary_ops) {
  const struct {
    const char *op, *params;
    double in[2], out[2];
  } t[] = {
      {"negative", NULL, {1, -2}, {-1, 2}},          {"exp", NULL, {0, 1}, {1, M_E}},
      {"log", NULL, {1, M_E}, {0, 1}},                {"sqrt", NULL, {4, 2.25}, {2, 1.5}},
      {"square", NULL, {3, -0.5}, {9, 0.25}},         {"relu", NULL, {-1, 0.5}, {0, 0.5}},
      {"sigmoid", NULL, {0, LN3}, {0.5, 0.75}},       {"tanh", NULL, {0, 0.5493061443340548}, {0, 0.5}},
      {"Activation", "act_type=relu", {-1, 0.5}, {0, 0.5}},
      {"Activation", "act_type=sigmoid", {0, LN3}, {0.5, 0.75}},
      {"Activation", "act_type=tanh", {0, 0.5493061443340548}, {0, 0.5}},
      {"Activation", "act_type=softrelu", {0, LN3}, {LN2, 1.3862943611198906}},
      {"Activation", "act_type=softsign", {1, -3}, {0.5, -0.75}},
      {"LeakyReLU", NULL, {-2, 3}, {-0.5, 3}}, /* slope 0.25 */
      {"LeakyReLU", "act_type=leaky;slope=0.125", {-2, 3}, {-0.25, 3}},
      {"LeakyReLU", "act_type=elu;slope=0.5", {-LN2, 1}, {-0.25, 1}},
      {"LeakyReLU", "act_type=selu", {-LN2, 1}, {-0.8790496704236883, 1.0507009873554805}},
      {"LeakyReLU", "act_type=gelu", {0, 1}, {0, 0.8413447460685429}},
  };
  for (int i = 0; i < NOF(t); i++)
    check_hand(&(struct hand){.op = t[i].op, .params = t[i].params, .nin = 1, .shape = {SHP(2)}, .in = {t[i].in},
                              .out_shape = SHP(2), .out = t[i].out});
  /* prelu: gamma meets data's axis 1 */
  check_hand(&(struct hand){.op = "LeakyReLU", .params = "act_type=prelu", .nin = 2, .shape = {SHP(2, 2), SHP(2)},
                            .in = {V(-1, -2, -3, 4), V(0.5, 0.25)}, .out_shape = SHP(2, 2), .out = V(-0.5, -0.5, -1.5, 4),
                            .head = V(1, 1, 1, 1), .grad = {V(0.5, 0.25, 0.5, 1), V(-4, -2)}});
  /* relu's gradient by finite differences away from 0 */
  check_hand(&(struct hand){.op = "relu", .nin = 1, .shape = {SHP(2)}, .in = {V(-0.5, 0.5)}, .out_shape = SHP(2),
                            .out = V(0, 0.5), .head = V(3, 3), .grad = {V(0, 3)}});
  /* clip: the gradient passes at the bounds; crossed bounds test a_max first */
  check_hand(&(struct hand){.op = "clip", .params = "a_min=-0.5;a_max=0.5", .nin = 1, .shape = {SHP(4)},
                            .in = {V(-1, -0.5, 0.5, 2)}, .out_shape = SHP(4), .out = V(-0.5, -0.5, 0.5, 0.5),
                            .head = V(1, 2, 3, 4), .grad = {V(0, 2, 3, 0)}});
  check_hand(&(struct hand){.op = "clip", .params = "a_min=1;a_max=-1", .nin = 1, .shape = {SHP(3)},
                            .in = {V(-2, 0, 2)}, .out_shape = SHP(3), .out = V(1, -1, -1)});
}
END_TEST

/* MXNet's results for NaN, the infinities and -0.0: relu and clip pass NaN
 * on; sums with a NaN, or with both infinities, are NaN. */
START_TEST(test_special_values) {
  const double *x = V(NAN, INFINITY, -INFINITY, -0.0);
  const struct {
    const char *op, *params;
    const double *out;
  } t[] = {
      {"relu", NULL, V(NAN, INFINITY, 0, 0)},
      {"Activation", "act_type=relu", V(NAN, INFINITY, 0, 0)},
      {"negative", NULL, V(NAN, -INFINITY, INFINITY, 0)},
      {"exp", NULL, V(NAN, INFINITY, 0, 1)},
      {"log", NULL, V(NAN, INFINITY, NAN, -INFINITY)},
      {"sqrt", NULL, V(NAN, INFINITY, NAN, 0)},
      {"sigmoid", NULL, V(NAN, 1, 0, 0.5)},
      {"tanh", NULL, V(NAN, 1, -1, 0)},
      {"clip", "a_min=-1;a_max=1", V(NAN, 1, -1, 0)},
  };
  for (int i = 0; i < NOF(t); i++)
    check_hand(&(struct hand){.op = t[i].op, .params = t[i].params, .nin = 1, .shape = {SHP(4)}, .in = {x},
                              .out_shape = SHP(4), .out = t[i].out});
  check_hand(&(struct hand){.op = "sum", .params = "axis=1", .nin = 1, .shape = {SHP(3, 2)},
                            .in = {V(INFINITY, 1, INFINITY, -INFINITY, NAN, 2)}, .out_shape = SHP(3),
                            .out = V(INFINITY, NAN, NAN)});
  check_hand(&(struct hand){.op = "mean", .params = "axis=0", .nin = 1, .shape = {SHP(2, 2)},
                            .in = {V(-INFINITY, 1, -INFINITY, 3)}, .out_shape = SHP(2), .out = V(-INFINITY, 2)});
}
END_TEST

/* Cast converts as C does: toward zero into the integer types; the call
 * says which dtype its output has. */
START_TEST(test_cast) {
  const struct {
    const char *params;
    int dtype;
    const double *in, *out;
  } t[] = {
      {"dtype=int8", MXCTS_ORACLE_INT8, V(2.75, -2.75, 127.9, -128.9), V(2, -2, 127, -128)},
      {"dtype=uint8", MXCTS_ORACLE_UINT8, V(-0.5, 0.5, 254.9, 3), V(0, 0, 254, 3)},
      {"dtype=int32", MXCTS_ORACLE_INT32, V(-1e5 - 0.5, 7.999, -0.25, 0), V(-1e5, 7, 0, 0)},
      {"dtype=float32", MXCTS_ORACLE_FLOAT32, V(0.1, -1e-50, 1, 3e38), V((float)0.1, -0.0, 1, (float)3e38)},
      {"dtype=float64", MXCTS_ORACLE_FLOAT64, V(0.1, -2, 1e300, 5e-324), V(0.1, -2, 1e300, 5e-324)},
  };
  for (int i = 0; i < NOF(t); i++) {
    check_hand(&(struct hand){.op = "Cast", .params = t[i].params, .nin = 1, .shape = {SHP(4)}, .in = {t[i].in},
                              .out_shape = SHP(4), .out = t[i].out});
    struct mxcts_oracle_call c;
    ck_assert_int_eq(prep(&c, "cast", t[i].params, 1, (const struct mxcts_oracle_shape[]){SHP(4)}, false, NULL), 0);
    ck_assert_int_eq(c.out_dtype, t[i].dtype);
    ck_assert_int_eq(c.grad, MXCTS_ORACLE_GRAD_NONE);
  }
  struct mxcts_oracle_call c;
  ck_assert_int_eq(prep(&c, "relu", NULL, 1, (const struct mxcts_oracle_shape[]){SHP(4)}, false, NULL), 0);
  ck_assert_int_eq(c.out_dtype, MXCTS_ORACLE_SAME_DTYPE);
  ck_assert_int_eq(prep(&c, "_zeros", "shape=(2,);dtype=int32", 0, NULL, false, NULL), 0);
  ck_assert_int_eq(c.out_dtype, MXCTS_ORACLE_INT32);
  ck_assert_int_eq(prep(&c, "Cast", "dtype=int64", 1, (const struct mxcts_oracle_shape[]){SHP(4)}, false, NULL),
                   MXCTS_ORACLE_ENOTSUP);
}
END_TEST

START_TEST(test_reduce_and_dot) {
  const double *x = V(1, 2, 3, 4, 5, 6);
  check_hand(&(struct hand){.op = "sum", .nin = 1, .shape = {SHP(2, 3)}, .in = {x}, .out_shape = SHP(1), .out = V(21)});
  check_hand(&(struct hand){.op = "sum", .params = "axis=1", .nin = 1, .shape = {SHP(2, 3)}, .in = {x},
                            .out_shape = SHP(2), .out = V(6, 15)});
  check_hand(&(struct hand){.op = "sum_axis", .params = "axis=(0,);keepdims=True", .nin = 1, .shape = {SHP(2, 3)},
                            .in = {x}, .out_shape = SHP(1, 3), .out = V(5, 7, 9)});
  check_hand(&(struct hand){.op = "sum", .params = "axis=1;exclude=True", .nin = 1, .shape = {SHP(2, 3)}, .in = {x},
                            .out_shape = SHP(3), .out = V(5, 7, 9), .head = V(1, 2, 3), .grad = {V(1, 2, 3, 1, 2, 3)}});
  check_hand(&(struct hand){.op = "mean", .nin = 1, .shape = {SHP(2, 3)}, .in = {x}, .out_shape = SHP(1), .out = V(3.5)});
  check_hand(&(struct hand){.op = "mean", .params = "axis=-1;keepdims=1", .nin = 1, .shape = {SHP(2, 3)}, .in = {x},
                            .out_shape = SHP(2, 1), .out = V(2, 5), .head = V(3, 6), .grad = {V(1, 1, 1, 2, 2, 2)}});
  const double *a = V(1, 2, 3, 4), *b = V(5, 6, 7, 8);
  check_hand(&(struct hand){.op = "dot", .nin = 2, .shape = {SHP(2, 2), SHP(2, 2)}, .in = {a, b}, .out_shape = SHP(2, 2),
                            .out = V(19, 22, 43, 50)});
  check_hand(&(struct hand){.op = "dot", .params = "transpose_a=True", .nin = 2, .shape = {SHP(2, 2), SHP(2, 2)},
                            .in = {a, b}, .out_shape = SHP(2, 2), .out = V(26, 30, 38, 44)});
  check_hand(&(struct hand){.op = "dot", .params = "transpose_b=true", .nin = 2, .shape = {SHP(2, 2), SHP(2, 2)},
                            .in = {a, b}, .out_shape = SHP(2, 2), .out = V(17, 23, 39, 53)});
  check_hand(&(struct hand){.op = "dot", .nin = 2, .shape = {SHP(3), SHP(3)}, .in = {V(1, 2, 3), V(4, 5, 6)},
                            .out_shape = SHP(1), .out = V(32)});
  check_hand(&(struct hand){.op = "dot", .nin = 2, .shape = {SHP(2, 1, 2), SHP(2, 1)}, .in = {a, V(1, -1)},
                            .out_shape = SHP(2, 1, 1), .out = V(-1, -1)});
}
END_TEST

START_TEST(test_layers) {
  const double *w = V(1, 0, 0.5, -1);
  check_hand(&(struct hand){.op = "FullyConnected", .params = "num_hidden=2", .nin = 3, .shape = {SHP(1, 2), SHP(2, 2), SHP(2)},
                            .in = {V(1, 2), w, V(10, 20)}, .out_shape = SHP(1, 2), .out = V(11, 18.5),
                            .head = V(1, 2), .grad = {V(2, -2), V(1, 2, 2, 4), V(1, 2)}});
  check_hand(&(struct hand){.op = "FullyConnected", .params = "num_hidden=2;no_bias=True", .nin = 2,
                            .shape = {SHP(1, 2, 1), SHP(2, 2)}, .in = {V(1, 2), w}, .out_shape = SHP(1, 2), .out = V(1, -1.5)});
  check_hand(&(struct hand){.op = "FullyConnected", .params = "num_hidden=2;flatten=False", .nin = 3,
                            .shape = {SHP(2, 1, 2), SHP(2, 2), SHP(2)}, .in = {V(1, 2, 0, 1), w, V(0, 1)},
                            .out_shape = SHP(2, 1, 2), .out = V(1, -0.5, 0, 0)});
  check_hand(&(struct hand){.op = "softmax", .nin = 1, .shape = {SHP(3)}, .in = {V(1, 2, 3)}, .out_shape = SHP(3),
                            .out = V(0.09003057317038046, 0.24472847105479767, 0.6652409557748219)});
  check_hand(&(struct hand){.op = "log_softmax", .nin = 1, .shape = {SHP(3)}, .in = {V(1, 2, 3)}, .out_shape = SHP(3),
                            .out = V(-2.40760596444438, -1.4076059644443801, -0.40760596444438013)});
  check_hand(&(struct hand){.op = "softmax", .params = "temperature=2", .nin = 1, .shape = {SHP(2)}, .in = {V(0, 2 * LN3)},
                            .out_shape = SHP(2), .out = V(0.25, 0.75)});
  check_hand(&(struct hand){.op = "softmax", .params = "axis=0", .nin = 1, .shape = {SHP(2, 2)}, .in = {V(0, 1, LN3, 1)},
                            .out_shape = SHP(2, 2), .out = V(0.25, 0.5, 0.75, 0.5)});
  check_hand(&(struct hand){.op = "Flatten", .nin = 1, .shape = {SHP(2, 1, 2)}, .in = {V(1, 2, 3, 4)},
                            .out_shape = SHP(2, 2), .out = V(1, 2, 3, 4)});
  check_hand(&(struct hand){.op = "transpose", .nin = 1, .shape = {SHP(2, 3)}, .in = {V(1, 2, 3, 4, 5, 6)},
                            .out_shape = SHP(3, 2), .out = V(1, 4, 2, 5, 3, 6)});
  check_hand(&(struct hand){.op = "transpose", .params = "axes=(2,0,1)", .nin = 1, .shape = {SHP(1, 2, 3)},
                            .in = {V(1, 2, 3, 4, 5, 6)}, .out_shape = SHP(3, 1, 2), .out = V(1, 4, 2, 5, 3, 6)});
  check_hand(&(struct hand){.op = "Concat", .params = "num_args=2", .nin = 2, .shape = {SHP(2, 1), SHP(2, 2)},
                            .in = {V(1, 2), V(3, 4, 5, 6)}, .out_shape = SHP(2, 3), .out = V(1, 3, 4, 2, 5, 6),
                            .head = V(1, 2, 3, 4, 5, 6), .grad = {V(1, 4), V(2, 3, 5, 6)}});
  check_hand(&(struct hand){.op = "concat", .params = "num_args=2;dim=0", .nin = 2, .shape = {SHP(1, 2), SHP(1, 2)},
                            .in = {V(1, 2), V(3, 4)}, .out_shape = SHP(2, 2), .out = V(1, 2, 3, 4)});
  check_hand(&(struct hand){.op = "Dropout", .nin = 1, .shape = {SHP(2)}, .in = {V(1, -2)}, .out_shape = SHP(2),
                            .out = V(1, -2)});
}
END_TEST

START_TEST(test_reshape_shapes) {
  const struct {
    const char *params;
    struct mxcts_oracle_shape in, out;
  } t[] = {
      {"shape=(4,-1)", SHP(2, 3, 4), SHP(4, 6)},          {"shape=(0,-1)", SHP(2, 3, 4), SHP(2, 12)},
      {"shape=(-2,1)", SHP(2, 3, 4), SHP(2, 3, 4, 1)},    {"shape=(-3,-2)", SHP(2, 3, 4), SHP(6, 4)},
      {"shape=(-4,1,2,-2)", SHP(2, 3, 4), SHP(1, 2, 3, 4)}, {"shape=(-4,-1,2,-2)", SHP(4, 3), SHP(2, 2, 3)},
      {"shape=(-1,0);reverse=True", SHP(2, 3, 4), SHP(6, 4)}, {"shape=(-1,0);reverse=True", SHP(10, 5, 4), SHP(50, 4)},
  };
  double x[200];
  for (int i = 0; i < 200; i++) x[i] = i;
  for (int i = 0; i < NOF(t); i++)
    check_hand(&(struct hand){.op = "Reshape", .params = t[i].params, .nin = 1, .shape = {t[i].in}, .in = {x},
                              .out_shape = t[i].out, .out = x});
}
END_TEST

START_TEST(test_losses) {
  /* y = softmax rows: [0.25, 0.75] and [0.5, 0.5] */
  const double *x = V(0, LN3, 0, 0);
  check_hand(&(struct hand){.op = "SoftmaxOutput", .nin = 2, .shape = {SHP(2, 2), SHP(2)}, .in = {x, V(1, 0)},
                            .out_shape = SHP(2, 2), .out = V(0.25, 0.75, 0.5, 0.5), .head = V(9, 9, 9, 9),
                            .grad = {V(0.25, -0.25, -0.5, 0.5), V(0, 0)}});
  check_hand(&(struct hand){.op = "Softmax", .params = "grad_scale=2;normalization=batch", .nin = 2, .shape = {SHP(2, 2), SHP(2)},
                            .in = {x, V(1, 0)}, .out_shape = SHP(2, 2), .out = V(0.25, 0.75, 0.5, 0.5),
                            .head = V(1, 1, 1, 1), .grad = {V(0.25, -0.25, -0.5, 0.5)}});
  check_hand(&(struct hand){.op = "SoftmaxOutput", .params = "use_ignore=True;ignore_label=0;normalization=valid",
                            .nin = 2, .shape = {SHP(2, 2), SHP(2)}, .in = {x, V(1, 0)}, .out_shape = SHP(2, 2),
                            .out = V(0.25, 0.75, 0.5, 0.5), .head = V(1, 1, 1, 1), .grad = {V(0.25, -0.25, 0, 0)}});
  check_hand(&(struct hand){.op = "SoftmaxOutput", .params = "ignore_label=0;normalization=valid", .nin = 2,
                            .shape = {SHP(2, 2), SHP(2)}, .in = {x, V(1, 0)}, .out_shape = SHP(2, 2),
                            .out = V(0.25, 0.75, 0.5, 0.5), .head = V(1, 1, 1, 1), .grad = {V(0.25, -0.25, -0.5, 0.5)}});
  /* multi_output: classes on axis 1, two positions, divided by 2 (null normalization) */
  check_hand(&(struct hand){.op = "SoftmaxOutput", .params = "multi_output=True", .nin = 2, .shape = {SHP(1, 2, 2), SHP(1, 2)},
                            .in = {V(0, 0, LN3, 0), V(1, 0)}, .out_shape = SHP(1, 2, 2), .out = V(0.25, 0.5, 0.75, 0.5),
                            .head = V(1, 1, 1, 1), .grad = {V(0.125, -0.25, -0.125, 0.25)}});
  check_hand(&(struct hand){.op = "SoftmaxOutput", .params = "grad_scale=2;normalization=valid", .nin = 2,
                            .shape = {SHP(1, 2), SHP(1, 2)}, .in = {V(0, LN3), V(0.5, 0.5)}, .out_shape = SHP(1, 2),
                            .out = V(0.25, 0.75), .head = V(1, 1), .grad = {V(-0.5, 0.5)}}); /* probabilities */
  check_hand(&(struct hand){.op = "SoftmaxOutput", .params = "smooth_alpha=0.25", .nin = 2, .shape = {SHP(1, 3), SHP(1)},
                            .in = {V(0, 0, 0), V(0)}, .out_shape = SHP(1, 3), .out = V(1.0 / 3, 1.0 / 3, 1.0 / 3),
                            .head = V(1, 1, 1), .grad = {V(1.0 / 3 - 0.75, 1.0 / 3 - 0.125, 1.0 / 3 - 0.125)}});
  check_hand(&(struct hand){.op = "LinearRegressionOutput", .nin = 2, .shape = {SHP(2, 2), SHP(2, 2)},
                            .in = {V(1, 2, 3, 4), V(0, 0, 1, 1)}, .out_shape = SHP(2, 2), .out = V(1, 2, 3, 4),
                            .head = V(7, 7, 7, 7), .grad = {V(0.5, 1, 1, 1.5), V(0, 0, 0, 0)}});
  check_hand(&(struct hand){.op = "MAERegressionOutput", .params = "grad_scale=3", .nin = 2, .shape = {SHP(2, 2), SHP(2, 2)},
                            .in = {V(1, 2, 3, 4), V(2, 0, 3, 5)}, .out_shape = SHP(2, 2), .out = V(1, 2, 3, 4),
                            .head = V(1, 1, 1, 1), .grad = {V(-1.5, 1.5, -1.5, -1.5)}});
  check_hand(&(struct hand){.op = "LogisticRegressionOutput", .nin = 2, .shape = {SHP(2, 1), SHP(2)}, .in = {V(0, LN3), V(1, 0)},
                            .out_shape = SHP(2, 1), .out = V(0.5, 0.75), .head = V(1, 1), .grad = {V(-0.5, 0.75)}});
  /* selu: MXNet's stated gradient lambda * (alpha + y) for y <= 0 */
  check_hand(&(struct hand){.op = "LeakyReLU", .params = "act_type=selu", .nin = 1, .shape = {SHP(2)}, .in = {V(-LN2, 1)},
                            .out_shape = SHP(2), .out = V(-0.8790496704236883, 1.0507009873554805), .head = V(1, 2),
                            .grad = {V(0.8344809841986977, 2 * 1.0507009873554805)}});
}
END_TEST

START_TEST(test_conv_and_pool) {
  const double *x = V(1, 2, 3, 4, 5, 6, 7, 8, 9), *w = V(1, 2, 3, 4);
  check_hand(&(struct hand){.op = "Convolution", .params = "kernel=(2,2);num_filter=1", .nin = 3,
                            .shape = {SHP(1, 1, 3, 3), SHP(1, 1, 2, 2), SHP(1)}, .in = {x, w, V(0.5)},
                            .out_shape = SHP(1, 1, 2, 2), .out = V(37.5, 47.5, 67.5, 77.5),
                            .head = V(1, 1, 1, 1), .grad = {V(1, 3, 2, 4, 10, 6, 3, 7, 4), V(12, 16, 24, 28), V(4)}});
  check_hand(&(struct hand){.op = "Convolution", .params = "kernel=(2,2);stride=(2,2);pad=(1,1);num_filter=1;no_bias=True",
                            .nin = 2, .shape = {SHP(1, 1, 3, 3), SHP(1, 1, 2, 2)}, .in = {x, w},
                            .out_shape = SHP(1, 1, 2, 2), .out = V(4, 18, 36, 77)});
  check_hand(&(struct hand){.op = "Convolution", .params = "kernel=(2,2);dilate=(2,2);num_filter=1;no_bias=1", .nin = 2,
                            .shape = {SHP(1, 1, 3, 3), SHP(1, 1, 2, 2)}, .in = {x, w}, .out_shape = SHP(1, 1, 1, 1), .out = V(64)});
  check_hand(&(struct hand){.op = "Convolution", .params = "kernel=(1,1);num_filter=2;num_group=2;no_bias=True", .nin = 2,
                            .shape = {SHP(1, 2, 1, 1), SHP(2, 1, 1, 1)}, .in = {V(1, 2), V(10, 100)},
                            .out_shape = SHP(1, 2, 1, 1), .out = V(10, 200)});
  check_hand(&(struct hand){.op = "Convolution", .params = "kernel=(2,);num_filter=1;no_bias=True", .nin = 2,
                            .shape = {SHP(1, 1, 4), SHP(1, 1, 2)}, .in = {V(1, 2, 4, 8), V(1, -1)},
                            .out_shape = SHP(1, 1, 3), .out = V(-1, -2, -4)});
  double p16[16];
  for (int i = 0; i < 16; i++) p16[i] = i + 1;
  const struct {
    const char *params;
    struct mxcts_oracle_shape in, out;
    const double *want;
  } t[] = {
      {"kernel=(2,2);stride=(2,2)", SHP(1, 1, 4, 4), SHP(1, 1, 2, 2), V(6, 8, 14, 16)},
      {"kernel=(2,2);stride=(2,2);pool_type=avg", SHP(1, 1, 4, 4), SHP(1, 1, 2, 2), V(3.5, 5.5, 11.5, 13.5)},
      {"kernel=(2,2);stride=(2,2);pool_type=sum", SHP(1, 1, 4, 4), SHP(1, 1, 2, 2), V(14, 22, 46, 54)},
      {"global_pool=True", SHP(1, 1, 4, 4), SHP(1, 1, 1, 1), V(16)},
      {"global_pool=True;pool_type=avg;kernel=(9,9)", SHP(1, 1, 4, 4), SHP(1, 1, 1, 1), V(8.5)},
      {"kernel=(3,3);stride=(2,2);pad=(1,1);pool_type=avg", SHP(1, 1, 3, 3), SHP(1, 1, 2, 2),
       V(12.0 / 9, 16.0 / 9, 24.0 / 9, 28.0 / 9)},
      {"kernel=(3,3);stride=(2,2);pad=(1,1);pool_type=avg;count_include_pad=False", SHP(1, 1, 3, 3),
       SHP(1, 1, 2, 2), V(3, 4, 6, 7)},
      {"kernel=(3,3);stride=(2,2);pad=(1,1)", SHP(1, 1, 3, 3), SHP(1, 1, 2, 2), V(5, 6, 8, 9)},
      {"kernel=(2,2);stride=(2,2);pooling_convention=full", SHP(1, 1, 3, 3), SHP(1, 1, 2, 2), V(5, 6, 8, 9)},
      {"kernel=(2,2);stride=(2,2);pooling_convention=valid", SHP(1, 1, 3, 3), SHP(1, 1, 1, 1), V(5)},
      {"kernel=(2,);stride=(1,)", SHP(1, 1, 3), SHP(1, 1, 2), V(2, 3)},
      /* the last window ends at in + pad: it counts 2 (not 3) places */
      {"kernel=(3,);stride=(2,);pad=(1,);pool_type=avg;pooling_convention=full", SHP(1, 1, 4), SHP(1, 1, 3), V(1, 3, 2)},
      {"kernel=(2,2,2);pool_type=sum", SHP(1, 1, 2, 2, 2), SHP(1, 1, 1, 1, 1), V(36)},
  };
  for (int i = 0; i < NOF(t); i++)
    check_hand(&(struct hand){.op = "Pooling", .params = t[i].params, .nin = 1, .shape = {t[i].in}, .in = {p16},
                              .out_shape = t[i].out, .out = t[i].want});
  check_hand(&(struct hand){.op = "Pooling", .params = "kernel=(2,2);pool_type=lp;p_value=2", .nin = 1,
                            .shape = {SHP(1, 1, 2, 2)}, .in = {V(3, 0, 0, 4)}, .out_shape = SHP(1, 1, 1, 1), .out = V(5)});
  check_hand(&(struct hand){.op = "Pooling", .params = "kernel=(2,2);pool_type=lp;p_value=3", .nin = 1,
                            .shape = {SHP(1, 1, 2, 2)}, .in = {V(1, 2, 0, 0)}, .out_shape = SHP(1, 1, 1, 1), .out = V(cbrt(9))});
  check_hand(&(struct hand){.op = "Pooling", .params = "kernel=(3,);pool_type=lp;p_value=1", .nin = 1,
                            .shape = {SHP(1, 1, 3)}, .in = {V(1, -2, 4)}, .out_shape = SHP(1, 1, 1), .out = V(3)});
  /* channel-last: (1,2,2,2) NHWC holds channel 0 = 1..4 and channel 1 = 10..40 interleaved */
  check_hand(&(struct hand){.op = "Pooling", .params = "kernel=(2,1);pool_type=sum;layout=NHWC", .nin = 1,
                            .shape = {SHP(1, 2, 2, 2)}, .in = {V(1, 10, 2, 20, 3, 30, 4, 40)}, .out_shape = SHP(1, 1, 2, 2),
                            .out = V(4, 40, 6, 60)});
  check_hand(&(struct hand){.op = "Pooling", .params = "kernel=(2,);stride=(2,);layout=NWC", .nin = 1,
                            .shape = {SHP(2, 4, 1)}, .in = {V(1, 5, 2, 3, 9, 7, 8, 6)}, .out_shape = SHP(2, 2, 1),
                            .out = V(5, 3, 9, 8)});
  check_hand(&(struct hand){.op = "Pooling", .params = "global_pool=True;pool_type=avg;layout=NWC", .nin = 1,
                            .shape = {SHP(1, 3, 2)}, .in = {V(1, 10, 2, 20, 3, 30)}, .out_shape = SHP(1, 1, 2),
                            .out = V(2, 20)});
  /* max pooling's gradient goes to the maximum */
  check_hand(&(struct hand){.op = "Pooling", .params = "kernel=(2,2)", .nin = 1, .shape = {SHP(1, 1, 2, 2)},
                            .in = {V(0.1, 0.9, 0.3, 0.2)}, .out_shape = SHP(1, 1, 1, 1), .out = V(0.9), .head = V(2),
                            .grad = {V(0, 2, 0, 0)}});
}
END_TEST

START_TEST(test_batchnorm_and_optimizers) {
  /* eps=1e-300 makes 1/sqrt(var + eps) exact */
  const double *x = V(1, 10, 3, 30), *gamma = V(2, 1), *beta = V(0.5, -1);
  check_hand(&(struct hand){.op = "BatchNorm", .params = "fix_gamma=False;eps=1e-300;momentum=0.5", .train = true, .nin = 3,
                            .shape = {SHP(2, 2), SHP(2), SHP(2)}, .in = {x, gamma, beta}, .aux = {V(0, 0), V(1, 1)},
                            .out_shape = SHP(2, 2), .out = V(-1.5, -2, 2.5, 0), .aux_out = {V(1, 10), V(1, 50.5)}});
  check_hand(&(struct hand){.op = "BatchNorm", .params = "eps=1e-300;momentum=0.5", .train = true, .nin = 3,
                            .shape = {SHP(2, 2), SHP(2), SHP(2)}, .in = {x, gamma, beta}, .aux = {V(0, 0), V(1, 1)},
                            .out_shape = SHP(2, 2), .out = V(-0.5, -2, 1.5, 0)}); /* fix_gamma: gamma is 1 */
  const double *infer_out = V(0.5, -1, 2.5, 1);
  check_hand(&(struct hand){.op = "BatchNorm", .params = "fix_gamma=False;eps=1e-300", .nin = 3,
                            .shape = {SHP(2, 2), SHP(2), SHP(2)}, .in = {x, gamma, beta}, .aux = {V(1, 10), V(4, 100)},
                            .out_shape = SHP(2, 2), .out = infer_out, .aux_out = {V(1, 10), V(4, 100)}});
  check_hand(&(struct hand){.op = "BatchNorm", .params = "fix_gamma=False;eps=1e-300;use_global_stats=True", .train = true,
                            .nin = 3, .shape = {SHP(2, 2), SHP(2), SHP(2)}, .in = {x, gamma, beta},
                            .aux = {V(1, 10), V(4, 100)}, .out_shape = SHP(2, 2), .out = infer_out,
                            .aux_out = {V(1, 10), V(4, 100)}});
  check_hand(&(struct hand){.op = "sgd_update", .params = "lr=0.5;wd=0.25", .nin = 2, .shape = {SHP(2), SHP(2)},
                            .in = {V(1, 2), V(0.5, -1)}, .out_shape = SHP(2), .out = V(0.625, 2.25)});
  check_hand(&(struct hand){.op = "sgd_update", .params = "lr=0.5;wd=0.25;clip_gradient=0.25", .nin = 2,
                            .shape = {SHP(2), SHP(2)}, .in = {V(1, 2), V(0.5, -1)}, .out_shape = SHP(2), .out = V(0.75, 1.875)});
  check_hand(&(struct hand){.op = "sgd_mom_update", .params = "lr=0.5;momentum=0.5", .nin = 3,
                            .shape = {SHP(2), SHP(2), SHP(2)}, .in = {V(1, 2), V(1, -1), V(0.5, 1)}, .out_shape = SHP(2),
                            .out = V(0.75, 3), .mutated = {V(-0.25, 1)}});
  check_hand(&(struct hand){.op = "adam_update", .params = "lr=0.5;beta1=0.5;beta2=0.75;epsilon=1e-30", .nin = 4,
                            .shape = {SHP(2), SHP(2), SHP(2), SHP(2)}, .in = {V(1, 2), V(2, -4), V(0, 1), V(0, 3)},
                            .out_shape = SHP(2), .out = V(0.5, 2.3), .mutated = {V(1, -1.5), V(1, 6.25)}});
}
END_TEST

/* ------------------------------------------------------------ finite differences */

static void randn(double *x, int n, uint64_t seed) {
  struct mxcts_oracle_rng r;
  mxcts_oracle_rng_seed(&r, seed);
  const struct mxcts_oracle_fill f = {MXCTS_ORACLE_FILL_UNIFORM, 0, 0};
  mxcts_oracle_fill_values(&f, x, n, MXCTS_ORACLE_FLOAT64, &r);
}

/* grad of input 0 (and 1) of `op` by finite differences. */
static void fd(const char *op, const char *params, int nin, const struct mxcts_oracle_shape *shapes,
               const double *const *in, const double *head, double **grad) {
  struct mxcts_oracle_call c;
  struct mxcts_oracle_error err = {""};
  ck_assert_msg(prep(&c, op, params, nin, shapes, false, &err) == 0, "%s", err.msg);
  ck_assert_int_eq(c.grad, MXCTS_ORACLE_GRAD_FD);
  ck_assert_msg(mxcts_oracle_fd_grad(&c, in, NULL, &head, (1u << nin) - 1, grad, &err) == 0, "%s", err.msg);
}

START_TEST(test_fd_matches_analytic_derivatives) {
  double x[12], h[12], g[12], want[12], *gs[2] = {g, NULL};
  randn(x, 12, 1), randn(h, 12, 2);
  const struct mxcts_oracle_shape s34 = SHP(3, 4);
  fd("exp", NULL, 1, &s34, (const double *[]){x}, h, gs);
  for (int i = 0; i < 12; i++) want[i] = h[i] * exp(x[i]);
  expect_values("d exp", "exp", g, want, 12, 1e-8);
  fd("tanh", NULL, 1, &s34, (const double *[]){x}, h, gs);
  for (int i = 0; i < 12; i++) want[i] = h[i] * (1 - tanh(x[i]) * tanh(x[i]));
  expect_values("d tanh", "tanh", g, want, 12, 1e-8);
  /* softmax rows of 4: dx = y * (h - sum(h * y)) */
  double y[12], *ys[1] = {y};
  struct mxcts_oracle_call c;
  ck_assert_int_eq(prep(&c, "softmax", NULL, 1, &s34, false, NULL), 0);
  mxcts_oracle_forward(&c, (const double *[]){x}, NULL, ys, NULL, NULL, NULL);
  fd("softmax", NULL, 1, &s34, (const double *[]){x}, h, gs);
  for (int r = 0; r < 3; r++) {
    double s = 0;
    for (int j = 0; j < 4; j++) s += h[r * 4 + j] * y[r * 4 + j];
    for (int j = 0; j < 4; j++) want[r * 4 + j] = y[r * 4 + j] * (h[r * 4 + j] - s);
  }
  expect_values("d softmax", "softmax", g, want, 12, 1e-8);
  /* dot: A (3,4) B (4,2), G (3,2): dA = G B^T, dB = A^T G */
  double b[8], gg[6], da[12], db[8], wa[12] = {0}, wb[8] = {0}, *gd[2] = {da, db};
  randn(b, 8, 3), randn(gg, 6, 4);
  fd("dot", NULL, 2, (const struct mxcts_oracle_shape[]){SHP(3, 4), SHP(4, 2)}, (const double *[]){x, b}, gg, gd);
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 4; k++)
      for (int j = 0; j < 2; j++) {
        wa[i * 4 + k] += gg[i * 2 + j] * b[k * 2 + j];
        wb[k * 2 + j] += x[i * 4 + k] * gg[i * 2 + j];
      }
  expect_values("d lhs", "dot", da, wa, 12, 1e-8);
  expect_values("d rhs", "dot", db, wb, 8, 1e-8);
}
END_TEST

START_TEST(test_fd_selects_inputs) {
  struct mxcts_oracle_call c;
  struct mxcts_oracle_error err;
  const struct mxcts_oracle_shape s[2] = {SHP(2), SHP(2)};
  ck_assert_int_eq(prep(&c, "elemwise_mul", NULL, 2, s, false, NULL), 0);
  double g0[2] = {-7, -7}, g1[2] = {-7, -7}, *gs[2] = {g0, g1};
  const double *in[2] = {V(2, 3), V(5, 7)}, *head = V(1, 10);
  ck_assert_int_eq(mxcts_oracle_fd_grad(&c, in, NULL, &head, 2u, gs, &err), 0);
  ck_assert(g0[0] == -7 && g0[1] == -7); /* not asked for: untouched */
  expect_values("d rhs", "elemwise_mul", g1, V(2, 30), 2, 1e-9);
  gs[1] = NULL;
  ck_assert_int_eq(mxcts_oracle_fd_grad(&c, in, NULL, &head, 3u, gs, &err), MXCTS_ORACLE_EINVAL);
  /* a stated gradient is refused for derivative ops, and vice versa */
  ck_assert_int_eq(mxcts_oracle_backward(&c, in, NULL, &head, gs, &err), MXCTS_ORACLE_ENOTSUP);
  ck_assert_int_eq(prep(&c, "sgd_update", "lr=1", 2, s, false, NULL), 0);
  ck_assert_int_eq(mxcts_oracle_expected_grad(&c, in, NULL, &head, 1u, gs, &err), MXCTS_ORACLE_ENOTSUP);
}
END_TEST

/* SoftmaxOutput's stated gradient is the derivative of the cross-entropy
 * -log softmax(x)[label] (normalization null, no ignore); selu's stated
 * gradient is MXNet's and differs from the derivative where x < 0. */
START_TEST(test_stated_gradients_against_derivatives) {
  double x[12], onehot[12] = {0}, fdg[12], direct[12], lab[3] = {2, 0, 3};
  double *gs[2] = {fdg, NULL}, *ds[2] = {direct, NULL};
  randn(x, 12, 5);
  for (int r = 0; r < 3; r++) onehot[r * 4 + (int)lab[r]] = -1;
  fd("log_softmax", NULL, 1, (const struct mxcts_oracle_shape[]){SHP(3, 4)}, (const double *[]){x}, onehot, gs);
  struct mxcts_oracle_call c;
  ck_assert_int_eq(prep(&c, "SoftmaxOutput", NULL, 2, (const struct mxcts_oracle_shape[]){SHP(3, 4), SHP(3)}, true, NULL), 0);
  ck_assert_int_eq(c.grad, MXCTS_ORACLE_GRAD_DIRECT);
  const double *head = x; /* ignored */
  ck_assert_int_eq(mxcts_oracle_backward(&c, (const double *[]){x, lab}, NULL, &head, ds, NULL), 0);
  expect_values("cross-entropy", "SoftmaxOutput", direct, fdg, 12, 1e-8);

  const double *xs = V(-0.5, -1.5, 0.5, 2), *ones = V(1, 1, 1, 1);
  ck_assert_int_eq(prep(&c, "LeakyReLU", "act_type=selu", 1, (const struct mxcts_oracle_shape[]){SHP(4)}, false, NULL), 0);
  ck_assert_int_eq(mxcts_oracle_backward(&c, &xs, NULL, &ones, ds, NULL), 0);
  ck_assert_int_eq(mxcts_oracle_fd_grad(&c, &xs, NULL, &ones, 1u, gs, NULL), 0);
  for (int i = 0; i < 4; i++)
    ck_assert_msg(xs[i] < 0 ? fabs(direct[i] - fdg[i]) > 1e-3 : fabs(direct[i] - fdg[i]) < 1e-8,
                  "selu at %g: stated %.17g, derivative %.17g", xs[i], direct[i], fdg[i]);
}
END_TEST

/* ------------------------------------------------------------ comparison */

START_TEST(test_compare) {
  struct mxcts_oracle_cmp r;
  ck_assert(mxcts_oracle_compare(V(1, 2, 3), V(1, 2, 3), 3, 0, 0, &r));
  ck_assert(r.pass && r.nbad == 0 && r.max_abs == 0 && r.n == 3);
  /* exactly at the bound passes, one ulp beyond fails (relative, then absolute) */
  const double b = 1 + 0x1p-10;
  ck_assert(mxcts_oracle_compare(&b, V(1), 1, 0x1p-10, 0, &r));
  const double b1 = nextafter(b, 2);
  ck_assert(!mxcts_oracle_compare(&b1, V(1), 1, 0x1p-10, 0, &r));
  ck_assert(r.nbad == 1 && r.worst == 0 && r.got == b1 && r.want == 1);
  const double a = 0x1p-12, a1 = nextafter(a, 1);
  ck_assert(mxcts_oracle_compare(&a, V(0), 1, 0.5, 0x1p-12, NULL));
  ck_assert(!mxcts_oracle_compare(&a1, V(0), 1, 0.5, 0x1p-12, &r));
  ck_assert(isinf(r.max_rel));
  /* where a finite value is expected NaN and Inf never pass, whatever the tolerance */
  ck_assert(!mxcts_oracle_compare(V(1, NAN), V(1, 1), 2, 1e9, 1e9, &r));
  ck_assert(r.worst == 1 && isnan(r.got));
  ck_assert(!mxcts_oracle_compare(V(-INFINITY, 0), V(5, 0), 2, 1e9, 1e9, NULL));
  /* where NaN or Inf is expected only the same kind passes: NaN for NaN,
   * the infinity of the same sign; a finite value never */
  ck_assert(mxcts_oracle_compare(V(NAN, INFINITY, -INFINITY, 2), V(NAN, INFINITY, -INFINITY, 2), 4, 0, 0, &r));
  ck_assert(r.nbad == 0 && r.max_abs == 0);
  ck_assert(!mxcts_oracle_compare(V(1, 1), V(NAN, 1), 2, 1e9, 1e9, &r));
  ck_assert(r.worst == 0 && isnan(r.want) && r.got == 1);
  ck_assert(!mxcts_oracle_compare(V(INFINITY), V(NAN), 1, 1e9, 1e9, NULL));
  ck_assert(!mxcts_oracle_compare(V(NAN), V(INFINITY), 1, 1e9, 1e9, NULL));
  ck_assert(!mxcts_oracle_compare(V(-INFINITY), V(INFINITY), 1, 1e9, 1e9, NULL));
  ck_assert(!mxcts_oracle_compare(V(DBL_MAX), V(INFINITY), 1, 1e9, 1e9, NULL));
  ck_assert(!mxcts_oracle_compare(V(0, 3), V(-INFINITY, 3), 2, 1e9, 1e9, &r) && r.nbad == 1);
  /* the worst element is the one furthest outside its own bound */
  ck_assert(!mxcts_oracle_compare(V(1.1, 90, 7, 0, 1), V(1, 101, 5, 0, 1), 5, 0.01, 0, &r));
  ck_assert(r.nbad == 3 && r.worst == 2 && r.got == 7 && r.want == 5);
  ck_assert(r.max_abs == 11 && fabs(r.max_rel - 0.4) < 1e-15);
  /* bad tolerances fail; nothing to compare passes */
  ck_assert(!mxcts_oracle_compare(V(1), V(1), 1, -1, 0, NULL));
  ck_assert(!mxcts_oracle_compare(V(1), V(1), 1, NAN, 0, NULL));
  ck_assert(mxcts_oracle_compare(NULL, NULL, 0, 0, 0, &r) && r.worst == -1);
}
END_TEST

/* ------------------------------------------------------------ parameters */

START_TEST(test_parsers) {
  int64_t i = 0;
  ck_assert(mxcts_oracle_parse_int(" -2 ", &i) == 0 && i == -2);
  ck_assert(mxcts_oracle_parse_int("+7", &i) == 0 && i == 7);
  const char *bad_int[] = {"", " ", "1.5", "12abc", "abc", "99999999999999999999", "--1", "0x10"};
  for (int k = 0; k < NOF(bad_int); k++)
    ck_assert_msg(mxcts_oracle_parse_int(bad_int[k], &i) == MXCTS_ORACLE_EINVAL && i == 7, "int '%s'", bad_int[k]);
  ck_assert_int_eq(mxcts_oracle_parse_int(NULL, &i), MXCTS_ORACLE_EINVAL);
  double f = 0;
  ck_assert(mxcts_oracle_parse_float("1e-3", &f) == 0 && f == 1e-3);
  ck_assert(mxcts_oracle_parse_float(" -0.5", &f) == 0 && f == -0.5);
  const char *bad_float[] = {"", "abc", "1.0x", "nan", "inf", "1e999", "1,5"};
  for (int k = 0; k < NOF(bad_float); k++)
    ck_assert_msg(mxcts_oracle_parse_float(bad_float[k], &f) == MXCTS_ORACLE_EINVAL && f == -0.5, "float '%s'", bad_float[k]);
  bool v = false;
  const char *yes[] = {"True", "true", "1", " True "}, *no[] = {"False", "false", "0"};
  for (int k = 0; k < NOF(yes); k++) ck_assert(mxcts_oracle_parse_bool(yes[k], &v) == 0 && v);
  for (int k = 0; k < NOF(no); k++) ck_assert(mxcts_oracle_parse_bool(no[k], &v) == 0 && !v);
  const char *bad_bool[] = {"yes", "TRUE", "", "2", "None"};
  for (int k = 0; k < NOF(bad_bool); k++) ck_assert_int_eq(mxcts_oracle_parse_bool(bad_bool[k], &v), MXCTS_ORACLE_EINVAL);
  int n = -1;
  int64_t t[MXCTS_ORACLE_MAX_NDIM];
  ck_assert(mxcts_oracle_parse_tuple("(2,3)", &n, t) == 0 && n == 2 && t[0] == 2 && t[1] == 3);
  ck_assert(mxcts_oracle_parse_tuple("[ -1 , 0 ]", &n, t) == 0 && n == 2 && t[0] == -1 && t[1] == 0);
  ck_assert(mxcts_oracle_parse_tuple("5", &n, t) == 0 && n == 1 && t[0] == 5);
  ck_assert(mxcts_oracle_parse_tuple("(4,)", &n, t) == 0 && n == 1 && t[0] == 4);
  ck_assert(mxcts_oracle_parse_tuple("()", &n, t) == 0 && n == 0);
  ck_assert(mxcts_oracle_parse_tuple("(1,2,3,4,5,6,7,8)", &n, t) == 0 && n == 8);
  const char *bad_tuple[] = {"(2,2", "(2,,2)", "(,)", "(a)", "(1,2,3,4,5,6,7,8,9)", "", "2,2", "(2]", "(1.5)"};
  for (int k = 0; k < NOF(bad_tuple); k++)
    ck_assert_msg(mxcts_oracle_parse_tuple(bad_tuple[k], &n, t) == MXCTS_ORACLE_EINVAL && n == 8, "tuple '%s'", bad_tuple[k]);
  struct mxcts_oracle_value pv;
  ck_assert(mxcts_oracle_parse_value(MXCTS_ORACLE_P_OPT_INT, NULL, "None", &pv) == 0 && pv.none);
  ck_assert(mxcts_oracle_parse_value(MXCTS_ORACLE_P_OPT_TUPLE, NULL, "1", &pv) == 0 && !pv.none && pv.n == 1);
  ck_assert(mxcts_oracle_parse_value(MXCTS_ORACLE_P_OPT_BOOL, NULL, "False", &pv) == 0 && !pv.none && pv.i == 0);
  const char *const choices[] = {"a", "bb", NULL};
  ck_assert(mxcts_oracle_parse_value(MXCTS_ORACLE_P_ENUM, choices, "bb", &pv) == 0 && pv.i == 1);
  ck_assert_int_eq(mxcts_oracle_parse_value(MXCTS_ORACLE_P_ENUM, choices, "b", &pv), MXCTS_ORACLE_EINVAL);
  ck_assert_int_eq(mxcts_oracle_parse_value(MXCTS_ORACLE_P_INT, NULL, "None", &pv), MXCTS_ORACLE_EINVAL);
  char longtext[80];
  memset(longtext, 'x', sizeof longtext - 1), longtext[79] = '\0';
  ck_assert_int_eq(mxcts_oracle_parse_value(MXCTS_ORACLE_P_STRING, NULL, longtext, &pv), MXCTS_ORACLE_EINVAL);
}
END_TEST

static void expect_error(int code, const char *op, const char *params, int nin,
                         const struct mxcts_oracle_shape *shapes, bool train, const char *needle) {
  struct mxcts_oracle_call c;
  struct mxcts_oracle_error err = {""};
  int st = prep(&c, op, params, nin, shapes, train, &err);
  ck_assert_msg(st == code, "%s(%s): status %d, expected %d (%s)", op, params, st, code, err.msg);
  ck_assert_msg(strstr(err.msg, needle) != NULL, "%s(%s): message '%s' lacks '%s'", op, params, err.msg, needle);
  ck_assert_int_eq(mxcts_oracle_forward(&c, NULL, NULL, NULL, NULL, NULL, NULL), MXCTS_ORACLE_EINVAL);
}

START_TEST(test_prepare_errors) {
  const struct mxcts_oracle_shape s23 = SHP(2, 3), two[2] = {SHP(2, 3), SHP(3, 2)};
  const int E = MXCTS_ORACLE_EINVAL, N = MXCTS_ORACLE_ENOTSUP;
  expect_error(MXCTS_ORACLE_EUNKNOWN, "no_such_op", NULL, 1, &s23, false, "no_such_op");
  expect_error(E, "Activation", "act_type=relu;foo=1", 1, &s23, false, "unknown parameter 'foo'");
  expect_error(E, "Activation", NULL, 1, &s23, false, "act_type");
  expect_error(E, "Activation", "act_type=swish", 1, &s23, false, "act_type='swish'");
  expect_error(E, "Activation", "act_type=relu;act_type=tanh", 1, &s23, false, "twice");
  expect_error(E, "Convolution", "kernel=(3,x);num_filter=1", 3,
               (const struct mxcts_oracle_shape[]){SHP(1, 1, 3, 3), SHP(1, 1, 3, 3), SHP(1)}, false, "kernel='(3,x)'");
  expect_error(E, "sum", "keepdims=maybe", 1, &s23, false, "keepdims");
  expect_error(E, "elemwise_add", NULL, 1, &s23, false, "expected 2 input(s), got 1");
  expect_error(E, "elemwise_add", NULL, 2, two, false, "(3,2)");
  expect_error(E, "broadcast_add", NULL, 2, (const struct mxcts_oracle_shape[]){SHP(2, 3), SHP(4)}, false, "broadcast");
  expect_error(E, "FullyConnected", "num_hidden=4", 3, (const struct mxcts_oracle_shape[]){SHP(2, 3), SHP(4, 2), SHP(4)},
               false, "weight");
  expect_error(E, "Convolution", "kernel=(2,2);num_filter=2", 3,
               (const struct mxcts_oracle_shape[]){SHP(1, 1, 3, 3), SHP(2, 2, 2, 2), SHP(2)}, false, "weight");
  expect_error(E, "Reshape", "shape=(5,-1)", 1, &s23, false, "-1");
  expect_error(E, "Reshape", "shape=(-1,-1)", 1, &s23, false, "more than one -1");
  expect_error(E, "transpose", "axes=(0,0)", 1, &s23, false, "permutation");
  expect_error(E, "Concat", "num_args=2;dim=0", 2, two, false, "does not fit");
  expect_error(E, "sum", "axis=(1,1)", 1, &s23, false, "twice");
  expect_error(E, "reverse", "axis=2", 1, &s23, false, "out of range");
  expect_error(N, "Pooling", "kernel=(2,2);stride=(3,3);pad=(1,1);pool_type=avg;pooling_convention=full", 1,
               (const struct mxcts_oracle_shape[]){SHP(1, 1, 4, 4)}, false, "covers no input");
  expect_error(N, "Dropout", "p=0.5", 1, &s23, true, "mxcts_oracle_dropout_check");
  expect_error(N, "LeakyReLU", "act_type=rrelu", 1, &s23, false, "rrelu");
  expect_error(N, "BatchNorm", "output_mean_var=True", 3, (const struct mxcts_oracle_shape[]){SHP(2, 3), SHP(3), SHP(3)},
               true, "output_mean_var");
  expect_error(N, "Pooling", "kernel=(2,);pooling_convention=same;pad=(0,0,0)", 1,
               (const struct mxcts_oracle_shape[]){SHP(1, 1, 4)}, false, "same");
  expect_error(N, "Convolution", "kernel=(1,1);num_filter=1;layout=NHWC", 3,
               (const struct mxcts_oracle_shape[]){SHP(1, 1, 1, 1), SHP(1, 1, 1, 1), SHP(1)}, false, "NHWC");
  expect_error(N, "softmax", "use_length=True", 1, &s23, false, "use_length");
  expect_error(N, "SoftmaxOutput", "out_grad=True", 2, (const struct mxcts_oracle_shape[]){SHP(2, 3), SHP(2)}, false, "out_grad");
}
END_TEST

/* ------------------------------------------------------------ inputs, Dropout */

START_TEST(test_fill) {
  double a[1000], b[1000];
  struct mxcts_oracle_rng r1, r2;
  const struct mxcts_oracle_fill away = {MXCTS_ORACLE_FILL_AWAY, 0, 0}, lab = {MXCTS_ORACLE_FILL_INT, 0, 5},
                                  dist = {MXCTS_ORACLE_FILL_DISTINCT, -1, 1}, pos = {MXCTS_ORACLE_FILL_UNIFORM, 0.5, 2};
  mxcts_oracle_rng_seed(&r1, 42), mxcts_oracle_rng_seed(&r2, 42);
  mxcts_oracle_fill_values(&pos, a, 1000, MXCTS_ORACLE_FLOAT32, &r1);
  mxcts_oracle_fill_values(&pos, b, 1000, MXCTS_ORACLE_FLOAT32, &r2);
  ck_assert(memcmp(a, b, sizeof a) == 0); /* same seed, same values */
  for (int i = 0; i < 1000; i++) ck_assert(a[i] >= 0.5 && a[i] <= 2 && a[i] == (double)(float)a[i]);
  mxcts_oracle_rng_seed(&r2, 43);
  mxcts_oracle_fill_values(&pos, b, 1000, MXCTS_ORACLE_FLOAT32, &r2);
  ck_assert(memcmp(a, b, sizeof a) != 0);
  int neg = 0;
  mxcts_oracle_fill_values(&away, a, 1000, MXCTS_ORACLE_FLOAT64, &r1);
  for (int i = 0; i < 1000; i++) ck_assert(fabs(a[i]) >= 0.1 && fabs(a[i]) < 1), neg += a[i] < 0;
  ck_assert(neg > 400 && neg < 600);
  int seen[5] = {0};
  mxcts_oracle_fill_values(&lab, a, 1000, MXCTS_ORACLE_FLOAT32, &r1);
  for (int i = 0; i < 1000; i++) ck_assert(a[i] == floor(a[i]) && a[i] >= 0 && a[i] < 5), seen[(int)a[i]]++;
  for (int k = 0; k < 5; k++) ck_assert(seen[k] > 100);
  mxcts_oracle_fill_values(&dist, a, 100, MXCTS_ORACLE_FLOAT32, &r1);
  bool sorted = true;
  for (int i = 0; i < 100; i++) {
    ck_assert(a[i] >= -1 && a[i] < 1);
    sorted = sorted && (i == 0 || a[i] > a[i - 1]);
    for (int j = 0; j < i; j++) ck_assert_msg(fabs(a[i] - a[j]) >= 0.01 - 1e-6, "%g and %g", a[i], a[j]);
  }
  ck_assert(!sorted);
  const struct mxcts_oracle_fill cst = {MXCTS_ORACLE_FILL_CONST, -1.5, -1.5};
  mxcts_oracle_fill_values(&cst, a, 10, MXCTS_ORACLE_FLOAT32, &r1);
  for (int i = 0; i < 10; i++) ck_assert(a[i] == -1.5);
}
END_TEST

/* Values as each dtype holds them: float32 and float16 round to nearest
 * even, integers go toward zero and wrap; every float16 bit pattern comes
 * back from its value. */
START_TEST(test_dtypes) {
  for (int d = 0; d < MXCTS_ORACLE_NUM_DTYPES; d++)
    ck_assert_int_eq(mxcts_oracle_dtype_code(mxcts_oracle_dtype_name(d)), d);
  ck_assert(mxcts_oracle_dtype_name(6) == NULL && mxcts_oracle_dtype_code("int64") == -1);
  ck_assert_str_eq(mxcts_oracle_dtype_name(MXCTS_ORACLE_UINT8), "uint8");
  const struct {
    int dtype;
    double in, out;
  } t[] = {
      {MXCTS_ORACLE_INT8, 200, -56},         {MXCTS_ORACLE_INT8, -129, 127},   {MXCTS_ORACLE_INT8, -2.75, -2},
      {MXCTS_ORACLE_INT8, 127.5, 127},       {MXCTS_ORACLE_UINT8, -3, 253},    {MXCTS_ORACLE_UINT8, 300.5, 44},
      {MXCTS_ORACLE_UINT8, -0.5, 0},         {MXCTS_ORACLE_INT32, 2147483648.0, -2147483648.0},
      {MXCTS_ORACLE_INT32, -7.9, -7},        {MXCTS_ORACLE_FLOAT32, 0.1, (float)0.1},
      {MXCTS_ORACLE_FLOAT64, 0.1, 0.1},      {MXCTS_ORACLE_FLOAT16, 1 + 0x1p-11, 1}, /* a tie: to even */
      {MXCTS_ORACLE_FLOAT16, 1 + 0x1p-10 + 0x1p-11, 1 + 0x1p-9},                      /* a tie: to even */
      {MXCTS_ORACLE_FLOAT16, 65504, 65504},  {MXCTS_ORACLE_FLOAT16, 65519.9, 65504},
      {MXCTS_ORACLE_FLOAT16, 65520, INFINITY}, {MXCTS_ORACLE_FLOAT16, -1e6, -INFINITY},
      {MXCTS_ORACLE_FLOAT16, 0x1p-24, 0x1p-24}, {MXCTS_ORACLE_FLOAT16, 0x1p-26, 0},
      {MXCTS_ORACLE_FLOAT16, 0x1.8p-24, 0x1p-23}, {MXCTS_ORACLE_FLOAT16, 0.1, 0.0999755859375},
  };
  for (int i = 0; i < NOF(t); i++)
    ck_assert_msg(mxcts_oracle_round_to(t[i].dtype, t[i].in) == t[i].out, "%s of %.17g: %.17g, expected %.17g",
                  mxcts_oracle_dtype_name(t[i].dtype), t[i].in, mxcts_oracle_round_to(t[i].dtype, t[i].in), t[i].out);
  ck_assert(isnan(mxcts_oracle_round_to(MXCTS_ORACLE_FLOAT16, NAN)));
  ck_assert(signbit(mxcts_oracle_round_to(MXCTS_ORACLE_FLOAT16, -0.0)));
  for (unsigned b = 0; b < 65536; b++) {
    const double v = mxcts_oracle_f16_value((uint16_t)b);
    if (!isnan(v)) ck_assert_msg(mxcts_oracle_f16_bits(v) == b, "float16 %04x", b);
  }
  ck_assert(mxcts_oracle_f16_value(0x3c00) == 1 && mxcts_oracle_f16_value(0xc000) == -2);
  ck_assert(mxcts_oracle_f16_value(0x0001) == 0x1p-24 && mxcts_oracle_f16_value(0x7bff) == 65504);
  /* fills in a dtype hold the dtype's values; special values hold one of each kind per 8 */
  double x[16];
  struct mxcts_oracle_rng r;
  mxcts_oracle_rng_seed(&r, 7);
  const struct mxcts_oracle_fill u = {MXCTS_ORACLE_FILL_UNIFORM, -4, 4}, sp = {MXCTS_ORACLE_FILL_SPECIAL, 0, 0};
  mxcts_oracle_fill_values(&u, x, 16, MXCTS_ORACLE_FLOAT16, &r);
  for (int i = 0; i < 16; i++) ck_assert(x[i] == mxcts_oracle_round_to(MXCTS_ORACLE_FLOAT16, x[i]) && fabs(x[i]) <= 4);
  mxcts_oracle_fill_values(&sp, x, 16, MXCTS_ORACLE_FLOAT32, &r);
  ck_assert(isnan(x[0]) && isnan(x[8]) && x[1] == INFINITY && x[2] == -INFINITY && x[3] == 0 && signbit(x[3]));
  ck_assert(x[4] == 0x1p-140 && (float)x[4] == x[4] && x[5] == -0x1p-140 && x[6] == 0.5 && x[7] == -1.5);
  mxcts_oracle_fill_values(&sp, x, 8, MXCTS_ORACLE_FLOAT64, &r);
  ck_assert(x[4] == 0x1p-1070 && x[4] < 0x1p-1022);
  /* exact cases and the integer dtypes compare exactly */
  const struct mxcts_oracle_case exact = {.op = "Cast", .exact = true}, plain = {.op = "relu"};
  struct mxcts_oracle_tol tol = mxcts_oracle_case_tol(&exact, MXCTS_ORACLE_FLOAT32, false);
  ck_assert(tol.rtol == 0 && tol.atol == 0);
  tol = mxcts_oracle_case_tol(&plain, MXCTS_ORACLE_INT8, false);
  ck_assert(tol.rtol == 0 && tol.atol == 0);
  tol = mxcts_oracle_case_tol(&plain, MXCTS_ORACLE_FLOAT32, false);
  ck_assert(tol.rtol == 1e-4);
}
END_TEST

START_TEST(test_dropout_check) {
  double x[100], y[100], head[100], g[100];
  randn(x, 100, 9), randn(head, 100, 10);
  for (int i = 0; i < 100; i++) y[i] = i % 2 ? x[i] / 0.75 : 0; /* p = 0.25: 50 kept where 75 expected */
  struct mxcts_oracle_dropout_report r;
  ck_assert(!mxcts_oracle_dropout_check(0.25, x, y, 100, 1e-6, 0, 4, &r));
  ck_assert(r.bad < 0 && r.kept == 50 && fabs(r.z + 25 / sqrt(100 * 0.25 * 0.75)) < 1e-12);
  ck_assert(mxcts_oracle_dropout_check(0.5, x, y, 100, 1e-6, 0, 4, NULL) == false); /* wrong scale */
  for (int i = 0; i < 100; i++) y[i] = i % 2 ? 2 * x[i] : 0;
  ck_assert(mxcts_oracle_dropout_check(0.5, x, y, 100, 1e-6, 0, 4, &r));
  ck_assert(r.kept == 50 && r.z == 0);
  y[7] = x[7]; /* kept without scaling */
  ck_assert(!mxcts_oracle_dropout_check(0.5, x, y, 100, 1e-6, 0, 4, &r) && r.bad == 7 && r.want == 2 * x[7]);
  y[7] = NAN;
  ck_assert(!mxcts_oracle_dropout_check(0.5, x, y, 100, 1e-6, 0, 4, &r) && r.bad == 7);
  y[7] = 2 * x[7];
  mxcts_oracle_dropout_grad(0.5, y, head, g, 100);
  for (int i = 0; i < 100; i++) ck_assert(g[i] == (i % 2 ? 2 * head[i] : 0));
}
END_TEST

/* ------------------------------------------------------------ the case table */

START_TEST(test_case_table) {
  static const char *const required[] = {
      "reverse", "_copy", "_zeros", "_ones", "zeros_like", "ones_like", "add_n", "elemwise_add",
      "elemwise_sub", "elemwise_mul", "elemwise_div", "_plus_scalar", "_minus_scalar", "_rminus_scalar",
      "_mul_scalar", "_div_scalar", "_rdiv_scalar", "broadcast_add", "broadcast_sub", "broadcast_mul",
      "broadcast_div", "negative", "exp", "log", "sqrt", "square", "relu", "sigmoid", "tanh", "Activation",
      "LeakyReLU", "sum", "mean", "dot", "FullyConnected", "softmax", "log_softmax", "SoftmaxOutput",
      "LinearRegressionOutput", "Flatten", "Reshape", "transpose", "Concat", "Dropout", "Convolution",
      "Pooling", "BatchNorm", "sgd_update", "sgd_mom_update", "adam_update", "clip", "Cast"};
  for (int i = 0; i < NOF(required); i++) ck_assert_str_eq(mxcts_oracle_canonical(required[i]), required[i]);
  ck_assert_str_eq(mxcts_oracle_canonical("flip"), "reverse");
  ck_assert_str_eq(mxcts_oracle_canonical("Softmax"), "SoftmaxOutput");
  ck_assert_ptr_null(mxcts_oracle_canonical("_backward_reverse"));
  int n1, n2, total = 0;
  ck_assert_ptr_eq(mxcts_oracle_cases_for("flip", &n1), mxcts_oracle_cases_for("reverse", &n2));
  ck_assert(n1 == n2 && n1 >= 1);
  ck_assert(mxcts_oracle_cases_for("nope", &n1) == NULL && n1 == 0);
  for (int k = 0; k < mxcts_oracle_num_ops(); k++) { /* every op has consecutive cases */
    const char *op = mxcts_oracle_op_name(k);
    const struct mxcts_oracle_case *first = mxcts_oracle_cases_for(op, &n1);
    ck_assert_msg(first && n1 > 0, "%s has no case", op);
    for (int i = 0; i < n1; i++) {
      ck_assert_str_eq(first[i].op, op);
      for (int j = 0; j < i; j++) ck_assert_msg(strcmp(first[i].name, first[j].name) != 0, "%s: %s twice", op, first[i].name);
    }
    total += n1;
  }
  ck_assert_int_eq(total, mxcts_oracle_num_cases());
  ck_assert_ptr_null(mxcts_oracle_case_at(total));
  struct mxcts_oracle_tol t = mxcts_oracle_case_tol(mxcts_oracle_case_at(0), MXCTS_ORACLE_FLOAT32, false);
  ck_assert(t.rtol == 1e-4 && t.atol == 1e-5);
  t = mxcts_oracle_case_tol(mxcts_oracle_case_at(0), MXCTS_ORACLE_FLOAT64, true);
  ck_assert(t.rtol == 1e-6 && t.atol == 1e-8);
}
END_TEST

/* Case cs prepares as it says and gives finite values on random inputs
 * drawn from seed k. */
static void check_case_runs(const struct mxcts_oracle_case *cs, uint64_t k) {
  {
    struct mxcts_oracle_call c;
    struct mxcts_oracle_error err = {""};
    const char *keys[MXCTS_ORACLE_MAX_CASE_PARAMS];
    ck_assert(mxcts_oracle_case_params(cs, keys, NULL) <= MXCTS_ORACLE_MAX_CASE_PARAMS);
    int st = mxcts_oracle_prepare_case(&c, cs, &err);
    ck_assert_msg(cs->grad_inputs >> cs->nin == 0, "%s/%s: grad_inputs", cs->op, cs->name);
    if (cs->random) {
      ck_assert_msg(st == MXCTS_ORACLE_ENOTSUP && cs->grad == MXCTS_ORACLE_GRAD_NONE, "%s/%s", cs->op, cs->name);
      return;
    }
    ck_assert_msg(st == 0, "%s/%s: %s", cs->op, cs->name, err.msg);
    ck_assert_msg(c.grad == cs->grad, "%s/%s: grad %d, table says %d", cs->op, cs->name, c.grad, cs->grad);
    ck_assert_msg(cs->grad != MXCTS_ORACLE_GRAD_NONE || cs->grad_inputs == 0, "%s/%s", cs->op, cs->name);
    struct mxcts_oracle_rng r;
    mxcts_oracle_rng_seed(&r, k);
    double *in[MXCTS_ORACLE_MAX_INPUTS] = {0}, *aux[2] = {0}, *auxo[2] = {0}, *out[4] = {0}, *head[4] = {0},
           *grad[MXCTS_ORACLE_MAX_INPUTS] = {0}, *mut[4] = {0};
    for (int i = 0; i < c.nin; i++) {
      int64_t n = mxcts_oracle_shape_size(&c.in_shape[i]);
      in[i] = malloc((size_t)n * sizeof(double)), grad[i] = malloc((size_t)n * sizeof(double));
      mxcts_oracle_fill_values(&cs->in_fill[i], in[i], n, MXCTS_ORACLE_FLOAT32, &r);
    }
    for (int j = 0; j < c.naux; j++) {
      int64_t n = mxcts_oracle_shape_size(&c.aux_shape[j]);
      aux[j] = malloc((size_t)n * sizeof(double)), auxo[j] = malloc((size_t)n * sizeof(double));
      mxcts_oracle_fill_values(&cs->aux_fill[j], aux[j], n, MXCTS_ORACLE_FLOAT32, &r);
    }
    for (int o = 0; o < c.nout; o++) {
      int64_t n = mxcts_oracle_shape_size(&c.out_shape[o]);
      out[o] = malloc((size_t)n * sizeof(double)), head[o] = malloc((size_t)n * sizeof(double));
      mxcts_oracle_fill_values(&cs->head_fill, head[o], n, MXCTS_ORACLE_FLOAT32, &r);
    }
    for (int m = 0; m < c.nmutated; m++) mut[m] = malloc((size_t)mxcts_oracle_shape_size(&c.in_shape[c.mutated[m]]) * sizeof(double));
    ck_assert_int_eq(mxcts_oracle_forward(&c, (const double *const *)in, (const double *const *)aux, out, auxo, mut, &err), 0);
    struct mxcts_oracle_cmp cmp;
    for (int o = 0; o < c.nout; o++) {
      int64_t n = mxcts_oracle_shape_size(&c.out_shape[o]);
      ck_assert_msg(mxcts_oracle_compare(out[o], out[o], n, 0, 0, &cmp), "%s/%s: output %lld is %g", cs->op, cs->name,
                    (long long)cmp.worst, cmp.got);
    }
    for (int m = 0; m < c.nmutated; m++)
      ck_assert(mxcts_oracle_compare(mut[m], mut[m], mxcts_oracle_shape_size(&c.out_shape[0]), 0, 0, NULL));
    for (int j = 0; j < c.naux; j++)
      ck_assert(mxcts_oracle_compare(auxo[j], auxo[j], mxcts_oracle_shape_size(&c.aux_shape[j]), 0, 0, NULL));
    if (cs->grad_inputs) {
      st = mxcts_oracle_expected_grad(&c, (const double *const *)in, (const double *const *)aux,
                                      (const double *const *)head, cs->grad_inputs, grad, &err);
      ck_assert_msg(st == 0, "%s/%s: %s", cs->op, cs->name, err.msg);
      for (int i = 0; i < c.nin; i++)
        if (cs->grad_inputs >> i & 1u)
          ck_assert_msg(mxcts_oracle_compare(grad[i], grad[i], mxcts_oracle_shape_size(&c.in_shape[i]), 0, 0, &cmp),
                        "%s/%s: gradient of input %d", cs->op, cs->name, i);
    }
    for (int i = 0; i < MXCTS_ORACLE_MAX_INPUTS; i++) free(in[i]), free(grad[i]);
    for (int i = 0; i < 4; i++) free(out[i]), free(head[i]), free(mut[i]);
    for (int j = 0; j < 2; j++) free(aux[j]), free(auxo[j]);
  }
}

/* Every case of the table runs. */
START_TEST(test_every_case_runs) {
  for (int k = 0; k < mxcts_oracle_num_cases(); k++) {
    const struct mxcts_oracle_case *cs = mxcts_oracle_case_at(k);
    ck_assert_msg(cs->random || (cs->grad == MXCTS_ORACLE_GRAD_NONE) == (cs->grad_inputs == 0), "%s/%s",
                  cs->op, cs->name);
    check_case_runs(cs, (uint64_t)k);
  }
}
END_TEST

/* The generated cases: each runs; together they hold ranks 1 to 4, size-1
 * dimensions, negative axes, the temperature on a non-last axis, edge
 * inputs (large magnitudes, constants), all-negative max pooling with
 * padding; and a point out of range is no case. */
START_TEST(test_generated_cases) {
  struct mxcts_oracle_gen_case g;
  int cases = 0, points = mxcts_oracle_num_gen_points(), fwd_only = 0;
  bool rank[5] = {false}, size1 = false, neg_axis = false;
  bool temp_first = false, large = false, neg_pool = false;
  for (int i = 0; i < points; i++) {
    if (!mxcts_oracle_gen_case_at(i, &g)) continue;
    const struct mxcts_oracle_case *c = &g.c;
    cases++;
    ck_assert_ptr_eq(c->name, g.name);
    ck_assert_str_eq(mxcts_oracle_canonical(c->op), c->op);
    check_case_runs(c, (uint64_t)i);
    const struct mxcts_oracle_shape *s = &c->in_shapes[0];
    rank[s->ndim < 5 ? s->ndim : 0] = true;
    for (int d = 0; d < s->ndim; d++) size1 = size1 || s->dim[d] == 1;
    fwd_only += c->grad_inputs == 0;
    bool has_temp = false, axis0 = false, max = !strcmp(c->op, "Pooling"), pad = false;
    for (int k = 0; k < MXCTS_ORACLE_MAX_CASE_PARAMS && c->params[k].key; k++) {
      const char *key = c->params[k].key, *val = c->params[k].val;
      neg_axis = neg_axis || (!strcmp(key, "axis") && val[0] == '-');
      has_temp = has_temp || !strcmp(key, "temperature");
      axis0 = axis0 || (!strcmp(key, "axis") && !strcmp(val, "0"));
      max = max && !(!strcmp(key, "pool_type") && strcmp(val, "max"));
      pad = pad || (!strcmp(key, "pad") && strchr(val, '1'));
    }
    temp_first = temp_first || (has_temp && axis0 && s->ndim > 1);
    large = large || (c->in_fill[0].lo >= 998 || c->in_fill[0].hi <= -998);
    neg_pool = neg_pool || (max && pad && c->in_fill[0].hi < 0);
  }
  ck_assert_int_ge(cases, 2000);
  ck_assert(fwd_only > 0 && fwd_only < cases);
  ck_assert(rank[1] && rank[2] && rank[3] && rank[4] && size1 && neg_axis);
  ck_assert(temp_first && large && neg_pool);
  ck_assert(!mxcts_oracle_gen_case_at(points, &g) && !mxcts_oracle_gen_case_at(-1, &g));
}
END_TEST

/* What each kind of generated case holds: special values forward only in
 * float32/float64, dtype cases exact in one dtype beyond those, views of
 * input 0 with gradients; and cases that the eight planted bugs of
 * harness/tests/mutants need (a batch of 2 with groups, channel-last
 * pooling, lp p_value=3, a negative BatchNorm axis other than -1, Concat on
 * an axis with two dimensions behind it, FullyConnected flatten=False on
 * 4-D data, Cast into an integer type). */
START_TEST(test_generated_kinds) {
  struct mxcts_oracle_gen_case g;
  int per_kind[MXCTS_ORACLE_GEN_NUM_KINDS] = {0}, dtype_seen = 0;
  bool conv_batch_groups = false, pool_last = false, lp3 = false, bn_axis = false, concat_inner = false,
       fc_4d = false, cast_int = false, special_nan = false;
  for (int i = 0; i < mxcts_oracle_num_gen_points(); i++) {
    if (!mxcts_oracle_gen_case_at(i, &g)) continue;
    const struct mxcts_oracle_case *c = &g.c;
    ck_assert_str_eq(g.c.name, g.name);
    ck_assert_ptr_nonnull(mxcts_oracle_gen_kind_name(g.kind));
    per_kind[g.kind]++;
    switch (g.kind) {
      case MXCTS_ORACLE_GEN_SPECIAL:
        ck_assert(c->in_fill[0].kind == MXCTS_ORACLE_FILL_SPECIAL && c->grad_inputs == 0 && c->dtypes == 0);
        special_nan = special_nan || !strcmp(c->op, "relu");
        break;
      case MXCTS_ORACLE_GEN_DTYPE:
        ck_assert(c->exact && c->grad_inputs == 0 && c->dtypes != 0 && (c->dtypes & (c->dtypes - 1)) == 0);
        ck_assert(!(c->dtypes & (1u << MXCTS_ORACLE_FLOAT32 | 1u << MXCTS_ORACLE_FLOAT64)));
        dtype_seen |= (int)c->dtypes;
        break;
      case MXCTS_ORACLE_GEN_VIEW:
        ck_assert(c->view != MXCTS_ORACLE_VIEW_NONE && c->grad_inputs != 0);
        break;
      default:
        ck_assert(c->view == MXCTS_ORACLE_VIEW_NONE && c->dtypes == 0);
    }
    const char *name = c->name;
    const struct mxcts_oracle_shape *x = &c->in_shapes[0];
    conv_batch_groups = conv_batch_groups || (!strcmp(c->op, "Convolution") && x->dim[0] == 2 && strstr(name, ":g2"));
    pool_last = pool_last || (!strcmp(c->op, "Pooling") && strstr(name, "NHWC") && strstr(name, "gen:max"));
    lp3 = lp3 || (!strcmp(c->op, "Pooling") && strstr(name, "gen:lp3"));
    bn_axis = bn_axis || (!strcmp(c->op, "BatchNorm") && strstr(name, "axis-2:") && x->ndim == 3);
    concat_inner = concat_inner || (!strcmp(c->op, "Concat") && strstr(name, "dim0") && x->ndim >= 3);
    fc_4d = fc_4d || (!strcmp(c->op, "FullyConnected") && strstr(name, "no_flatten") && x->ndim == 4);
    cast_int = cast_int || (!strcmp(c->op, "Cast") && strstr(name, "int8"));
  }
  for (int k = 0; k < MXCTS_ORACLE_GEN_NUM_KINDS; k++) ck_assert_msg(per_kind[k] > 0, "no %s case", mxcts_oracle_gen_kind_name(k));
  ck_assert_int_eq(dtype_seen, 1 << MXCTS_ORACLE_FLOAT16 | 1 << MXCTS_ORACLE_UINT8 | 1 << MXCTS_ORACLE_INT32 |
                                   1 << MXCTS_ORACLE_INT8);
  ck_assert(conv_batch_groups && pool_last && lp3 && bn_axis && concat_inner && fc_4d && cast_int && special_nan);
  ck_assert_ptr_null(mxcts_oracle_gen_kind_name(MXCTS_ORACLE_GEN_NUM_KINDS));
}
END_TEST

/* A Convolution case's values, one per dimension of its space: the rank
 * and batch of its data, and each parameter's value (a tuple's first
 * entry; "-" when not given, "named" for a layout). */
enum { NFEAT = 9 };
static void conv_features(const struct mxcts_oracle_case *c, char (*out)[32]) {
  static const char *const keys[] = {"num_group", "kernel", "stride", "dilate", "pad", "no_bias", "layout"};
  snprintf(out[0], sizeof out[0], "rank=%d", c->in_shapes[0].ndim);
  snprintf(out[1], sizeof out[1], "batch=%lld", (long long)c->in_shapes[0].dim[0]);
  for (int k = 0; k < NOF(keys); k++) {
    snprintf(out[2 + k], sizeof out[0], "%s=-", keys[k]);
    for (int j = 0; j < MXCTS_ORACLE_MAX_CASE_PARAMS && c->params[j].key; j++) {
      const char *v = c->params[j].val;
      if (strcmp(c->params[j].key, keys[k])) continue;
      if (v[0] == '(') snprintf(out[2 + k], sizeof out[0], "%s=%.1s", keys[k], v + 1);
      else snprintf(out[2 + k], sizeof out[0], "%s=%s", keys[k], k == 6 ? "named" : v);
    }
  }
}

/* Whether features a and b of a case match pair p. */
static bool holds(char (*f)[32], int a, int b, char (*p)[32]) { return !strcmp(f[a], p[0]) && !strcmp(f[b], p[1]); }

/* Quick depth: fewer Convolution and Pooling cases than full, the same
 * every time, a subset of full's; and every pair of parameter values (and
 * input shapes) that two of full's Convolution cases hold appears together
 * in some quick case. */
START_TEST(test_generated_selection) {
  const int np = mxcts_oracle_num_gen_points();
  int *quick = malloc((size_t)np * sizeof *quick), *again = malloc((size_t)np * sizeof *again),
      *full = malloc((size_t)np * sizeof *full);
  const int nq = mxcts_oracle_gen_select(false, quick), nf = mxcts_oracle_gen_select(true, full);
  ck_assert_int_eq(mxcts_oracle_gen_select(false, again), nq);
  ck_assert(memcmp(quick, again, (size_t)nq * sizeof *quick) == 0);
  ck_assert(nq > 0 && nq < nf && nf <= np);
  struct mxcts_oracle_gen_case g;
  for (int i = 0, j = 0; i < nq; i++) { /* quick is an ascending subset of full, and only cases */
    ck_assert(i == 0 || quick[i] > quick[i - 1]);
    while (j < nf && full[j] < quick[i]) j++;
    ck_assert(j < nf && full[j] == quick[i] && mxcts_oracle_gen_case_at(quick[i], &g));
  }
  enum { MAXP = 400 };
  static char pairs[MAXP][2][32];
  static bool seen[MAXP];
  int npairs = 0, nconv_full = 0, nconv_quick = 0;
  char f[NFEAT][32];
  for (int i = 0; i < nf; i++) { /* every pair full's Convolution cases hold */
    mxcts_oracle_gen_case_at(full[i], &g);
    if (strcmp(g.c.op, "Convolution") || g.kind != MXCTS_ORACLE_GEN_SPACE) continue;
    nconv_full++;
    conv_features(&g.c, f);
    for (int a = 0; a < NFEAT; a++)
      for (int b = a + 1; b < NFEAT; b++) {
        int k = 0;
        while (k < npairs && !holds(f, a, b, pairs[k])) k++;
        if (k == npairs && npairs < MAXP) strcpy(pairs[npairs][0], f[a]), strcpy(pairs[npairs++][1], f[b]);
      }
  }
  ck_assert(npairs > 100 && npairs < MAXP);
  for (int i = 0; i < nq; i++) {
    mxcts_oracle_gen_case_at(quick[i], &g);
    if (strcmp(g.c.op, "Convolution") || g.kind != MXCTS_ORACLE_GEN_SPACE) continue;
    nconv_quick++;
    conv_features(&g.c, f);
    for (int a = 0; a < NFEAT; a++)
      for (int b = a + 1; b < NFEAT; b++)
        for (int k = 0; k < npairs; k++) seen[k] = seen[k] || holds(f, a, b, pairs[k]);
  }
  for (int k = 0; k < npairs; k++) ck_assert_msg(seen[k], "quick lacks the pair %s, %s", pairs[k][0], pairs[k][1]);
  ck_assert(nconv_quick > 0 && nconv_quick * 10 < nconv_full);
  free(quick), free(again), free(full);
}
END_TEST

int main(void) {
  Suite *s = suite_create("oracle");
  TCase *fwd = tcase_create("forward");
  tcase_add_test(fwd, test_basic_ops);
  tcase_add_test(fwd, test_arithmetic_ops);
  tcase_add_test(fwd, test_unary_ops);
  tcase_add_test(fwd, test_special_values);
  tcase_add_test(fwd, test_cast);
  tcase_add_test(fwd, test_reduce_and_dot);
  tcase_add_test(fwd, test_layers);
  tcase_add_test(fwd, test_reshape_shapes);
  tcase_add_test(fwd, test_losses);
  tcase_add_test(fwd, test_conv_and_pool);
  tcase_add_test(fwd, test_batchnorm_and_optimizers);
  suite_add_tcase(s, fwd);
  TCase *grad = tcase_create("gradients");
  tcase_add_test(grad, test_fd_matches_analytic_derivatives);
  tcase_add_test(grad, test_fd_selects_inputs);
  tcase_add_test(grad, test_stated_gradients_against_derivatives);
  suite_add_tcase(s, grad);
  TCase *tools = tcase_create("tools");
  tcase_add_test(tools, test_compare);
  tcase_add_test(tools, test_parsers);
  tcase_add_test(tools, test_prepare_errors);
  tcase_add_test(tools, test_fill);
  tcase_add_test(tools, test_dtypes);
  tcase_add_test(tools, test_dropout_check);
  suite_add_tcase(s, tools);
  TCase *table = tcase_create("table");
  tcase_add_test(table, test_case_table);
  tcase_add_test(table, test_every_case_runs);
  tcase_add_test(table, test_generated_cases);
  tcase_add_test(table, test_generated_kinds);
  tcase_add_test(table, test_generated_selection);
  suite_add_tcase(s, table);
  return mxr_test_run(s);
}
