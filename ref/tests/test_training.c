/*
 * End to end: a small MLP (the shape of seed 003's network, scaled down) and
 * a small convolutional net train for a few SGD steps through the executor
 * and their loss falls; gradients are bit-identical across bulking
 * configurations and engine types.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_tap.h"
#include "engine_util.h"
#include "mxref/executor.h"
#include "mxref/imperative.h"
#include "mxref/symbol.h"

#define MAX_ARGS 16

static uint64_t rng_state;
static double uniform(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

/* op(inputs...) with string params; inputs bound by name. */
static mxr_symbol *op_sym(const char *op, const char *name, int nkv, const char *const *kv,
                          int nin, const char *const *in_names, mxr_symbol *const *in) {
  const mxr_op *o;
  ck_assert_msg(mxr_op_find(op, &o) == 0, "%s", mxr_last_error());
  const char *k[8], *v[8];
  for (int i = 0; i < nkv; i++) {
    k[i] = kv[2 * i];
    v[i] = kv[2 * i + 1];
  }
  mxr_op_params *p;
  ck_assert_msg(mxr_op_params_parse(o, nkv, k, v, &p) == 0, "%s", mxr_last_error());
  mxr_symbol *s;
  ck_assert_int_eq(mxr_symbol_atomic(o, p, &s), 0);
  mxr_op_params_free(p);
  ck_assert_msg(mxr_symbol_compose(s, name, nin, in_names, in) == 0, "%s", mxr_last_error());
  return s;
}

static mxr_symbol *chain(mxr_symbol *x, const char *op, const char *name, int nkv, const char *const *kv) {
  const char *data[] = {"data"};
  mxr_symbol *s = op_sym(op, name, nkv, kv, 1, data, &x);
  mxr_symbol_free(x);
  return s;
}

static mxr_symbol *with_label(mxr_symbol *x) {
  mxr_symbol *label;
  ck_assert_int_eq(mxr_symbol_variable("softmax_label", &label), 0);
  const char *names[] = {"data", "label"};
  mxr_symbol *in[] = {x, label};
  mxr_symbol *s = op_sym("SoftmaxOutput", "softmax", 0, NULL, 2, names, in);
  mxr_symbol_free(x);
  mxr_symbol_free(label);
  return s;
}

static mxr_symbol *mlp(void) {
  mxr_symbol *x;
  ck_assert_int_eq(mxr_symbol_variable("data", &x), 0);
  const char *fc1[] = {"num_hidden", "32"}, *act[] = {"act_type", "relu"}, *fc2[] = {"num_hidden", "4"};
  x = chain(x, "FullyConnected", "fc1", 1, fc1);
  x = chain(x, "Activation", "relu1", 1, act);
  x = chain(x, "FullyConnected", "fc2", 1, fc2);
  return with_label(x);
}

static mxr_symbol *convnet(void) {
  mxr_symbol *x;
  ck_assert_int_eq(mxr_symbol_variable("data", &x), 0);
  const char *conv[] = {"num_filter", "4", "kernel", "(3,3)", "pad", "(1,1)"};
  const char *act[] = {"act_type", "relu"};
  const char *pool[] = {"pool_type", "max", "kernel", "(2,2)", "stride", "(2,2)"};
  const char *fc[] = {"num_hidden", "2"};
  x = chain(x, "Convolution", "conv1", 3, conv);
  x = chain(x, "Activation", "relu1", 1, act);
  x = chain(x, "Pooling", "pool1", 3, pool);
  x = chain(x, "Flatten", "flat", 0, NULL);
  x = chain(x, "FullyConnected", "fc1", 1, fc);
  return with_label(x);
}

struct net {
  mxr_symbol *sym;
  int nargs;
  mxr_ndarray *args[MAX_ARGS], *grads[MAX_ARGS];
  int req[MAX_ARGS];
  int data_arg, label_arg;
  mxr_executor *ex;
};

static void fill(mxr_ndarray *a, double scale, bool non_negative_labels, int classes) {
  int64_t n = mxr_ndarray_size(a);
  float *buf = malloc((size_t)n * sizeof *buf);
  for (int64_t i = 0; i < n; i++)
    buf[i] = non_negative_labels ? (float)(int)(uniform() * classes) : (float)((uniform() * 2 - 1) * scale);
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(a, buf, (size_t)n), 0);
  free(buf);
}

/* Bind with data shape `dshape`; parameters get small random values. */
static void bind(struct net *n, mxr_engine *eng, const struct mxr_exec_opts *o, const struct mxr_shape *dshape,
                 uint64_t seed) {
  rng_state = seed;
  const char *const *names;
  ck_assert_int_eq(mxr_symbol_list_arguments(n->sym, &n->nargs, &names), 0);
  const char *dn[] = {"data"};
  struct mxr_shape shapes[MAX_ARGS], outs[4], auxs[4];
  int complete;
  ck_assert_int_eq(mxr_symbol_infer_shape(n->sym, 1, dn, dshape, shapes, outs, auxs, &complete), 0);
  ck_assert_int_eq(complete, 1);
  for (int a = 0; a < n->nargs; a++) {
    ck_assert_int_eq(mxr_ndarray_create(eng, shapes[a].dim, shapes[a].ndim, mxr_cpu(0), MXR_FLOAT32, 0, &n->args[a]), 0);
    ck_assert_int_eq(mxr_ndarray_create(eng, shapes[a].dim, shapes[a].ndim, mxr_cpu(0), MXR_FLOAT32, 0, &n->grads[a]), 0);
    bool is_data = strcmp(names[a], "data") == 0, is_label = strcmp(names[a], "softmax_label") == 0;
    if (is_data) n->data_arg = a;
    if (is_label) n->label_arg = a;
    n->req[a] = is_data || is_label ? MXR_GRAD_NULL : MXR_GRAD_WRITE;
    fill(n->args[a], is_data ? 1.0 : 0.3, is_label, 0);
  }
  ck_assert_msg(mxr_executor_bind(n->sym, mxr_cpu(0), n->nargs, n->args, n->grads, n->req, 0, NULL, o, &n->ex) == 0,
                "%s", mxr_last_error());
}

static void unbind(struct net *n) {
  mxr_executor_free(n->ex);
  for (int a = 0; a < n->nargs; a++) {
    mxr_ndarray_free(n->args[a]);
    mxr_ndarray_free(n->grads[a]);
  }
  mxr_symbol_free(n->sym);
}

/* Mean cross-entropy of the softmax output against the labels. */
static double loss(struct net *n, int classes) {
  int k;
  mxr_ndarray *const *outs;
  ck_assert_int_eq(mxr_executor_outputs(n->ex, &k, &outs), 0);
  int64_t total = mxr_ndarray_size(outs[0]), batch = total / classes;
  float *p = malloc((size_t)total * sizeof *p), *lab = malloc((size_t)batch * sizeof *lab);
  ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(outs[0], p, (size_t)total), 0);
  ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(n->args[n->label_arg], lab, (size_t)batch), 0);
  double l = 0;
  for (int64_t i = 0; i < batch; i++) l -= log(fmax(p[i * classes + (int)lab[i]], 1e-12));
  free(p);
  free(lab);
  return l / (double)batch;
}

static void sgd_step(struct net *n, double lr) {
  const mxr_op *sgd;
  ck_assert_int_eq(mxr_op_find("sgd_update", &sgd), 0);
  char lrs[32];
  snprintf(lrs, sizeof lrs, "%g", lr);
  const char *k[] = {"lr"}, *v[] = {lrs};
  mxr_op_params *p;
  ck_assert_int_eq(mxr_op_params_parse(sgd, 1, k, v, &p), 0);
  for (int a = 0; a < n->nargs; a++) {
    if (n->req[a] == MXR_GRAD_NULL) continue;
    mxr_ndarray *in[2] = {n->args[a], n->grads[a]};
    int one = 1;
    mxr_ndarray *out = n->args[a];
    ck_assert_msg(mxr_imperative_invoke(sgd, p, 2, in, &one, &out) == 0, "%s", mxr_last_error());
  }
  mxr_op_params_free(p);
}

static void train(mxr_symbol *sym, struct mxr_shape dshape, int classes, double lr, int steps) {
  mxr_engine *eng;
  ck_assert_int_eq(mxr_engine_default(&eng), 0);
  struct mxr_exec_opts o;
  ck_assert_int_eq(mxr_exec_opts_from_config(&o), 0);
  o.engine = eng;
  struct net n = {.sym = sym};
  bind(&n, eng, &o, &dshape, 12345);
  fill(n.args[n.label_arg], 0, true, classes);
  double first = 0, last = 0;
  for (int s = 0; s < steps; s++) {
    ck_assert_int_eq(mxr_executor_forward(n.ex, true), 0);
    ck_assert_int_eq(mxr_executor_backward(n.ex, 0, NULL), 0);
    double l = loss(&n, classes);
    ck_assert_msg(isfinite(l), "step %d: loss %g", s, l);
    if (s == 0) first = l;
    last = l;
    sgd_step(&n, lr);
  }
  ck_assert_msg(last < 0.7 * first, "loss did not fall: %g -> %g", first, last);
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  unbind(&n);
}

START_TEST(test_mlp_trains) { train(mlp(), (struct mxr_shape){2, {16, 8}}, 4, 0.05, 60); }
END_TEST

START_TEST(test_convnet_trains) { train(convnet(), (struct mxr_shape){4, {8, 1, 6, 6}}, 2, 0.2, 40); }
END_TEST

/* Gradients of one forward+backward, as bytes. */
static void gradients(int engine_cfg, int fwd, int bwd, bool train_bulk, float *out, size_t cap, size_t *len) {
  mxr_engine *eng = tu_engine(engine_cfg);
  struct mxr_exec_opts o = {.engine = eng, .bulk_train = train_bulk, .bulk_inference = true,
                            .max_node_train_fwd = fwd, .max_node_train_bwd = bwd};
  struct net n = {.sym = mlp()};
  struct mxr_shape ds = {2, {16, 8}};
  bind(&n, eng, &o, &ds, 777);
  ck_assert_int_eq(mxr_executor_forward(n.ex, true), 0);
  ck_assert_int_eq(mxr_executor_backward(n.ex, 0, NULL), 0);
  *len = 0;
  for (int a = 0; a < n.nargs; a++) {
    if (n.req[a] == MXR_GRAD_NULL) continue;
    size_t m = (size_t)mxr_ndarray_size(n.grads[a]);
    ck_assert_uint_le(*len + m, cap);
    ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(n.grads[a], out + *len, m), 0);
    *len += m;
  }
  unbind(&n);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}

START_TEST(test_bit_identical_across_configs_and_engines) {
  enum { CAP = 8192 };
  static float ref[CAP], got[CAP];
  size_t nref, ngot;
  gradients(0, 0, 0, false, ref, CAP, &nref);
  ck_assert_uint_gt(nref, 100);
  static const int cfg[4][3] = {{15, 15, 1}, {0, 15, 1}, {1, 1, 1}, {15, 0, 0}};
  for (int e = 0; e < TU_NUM_ENGINE_CONFIGS; e++) {
    gradients(e, cfg[e % 4][0], cfg[e % 4][1], cfg[e % 4][2], got, CAP, &ngot);
    ck_assert_uint_eq(ngot, nref);
    ck_assert_msg(memcmp(got, ref, nref * sizeof(float)) == 0, "%s: gradients differ", tu_engine_configs[e].label);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("training");
  TCase *tc = tcase_create("training");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_mlp_trains);
  tcase_add_test(tc, test_convnet_trains);
  tcase_add_test(tc, test_bit_identical_across_configs_and_engines);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
