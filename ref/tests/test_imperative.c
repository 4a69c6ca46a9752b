/*
 * Imperative mode: invoke, engine bulking of imperative calls, autograd
 * (chains, fan-out, add requests, retain_graph), and cached ops with the
 * seed's Gluon workload (1000 flips, static_alloc/static_shape) checked op
 * by op against the engine ops that actually run.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_tap.h"
#include "mxref/executor.h"
#include "mxref/imperative.h"
#include "mxref/mxref.h"
#include "mxref/symbol.h"
#include "symbol_util.h"

enum { LEN = 10 };

static mxr_engine *engine(void) {
  mxr_engine *eng;
  ck_assert_int_eq(mxr_engine_default(&eng), 0);
  return eng;
}

static mxr_ndarray *vec(const float *data) {
  int64_t shape[] = {LEN};
  mxr_ndarray *a;
  ck_assert_int_eq(mxr_ndarray_create(engine(), shape, 1, mxr_cpu(0), MXR_FLOAT32, 0, &a), 0);
  if (data) ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(a, data, LEN), 0);
  return a;
}

static void read_vec(mxr_ndarray *a, float *out) {
  ck_assert_msg(mxr_ndarray_sync_copy_to_cpu(a, out, LEN) == 0, "%s", mxr_last_error());
}

static const mxr_op *find(const char *name) {
  const mxr_op *op;
  ck_assert_int_eq(mxr_op_find(name, &op), 0);
  return op;
}

static mxr_op_params *params(const char *op, int n, const char *k0, const char *v0) {
  const char *k[] = {k0}, *v[] = {v0};
  mxr_op_params *p;
  ck_assert_int_eq(mxr_op_params_parse(find(op), n, k, v, &p), 0);
  return p;
}

/* y = op(inputs), a new array */
static mxr_ndarray *call(const char *op, mxr_op_params *p, int nin, mxr_ndarray **in) {
  mxr_ndarray *out[4];
  int n = 0;
  ck_assert_msg(mxr_imperative_invoke(find(op), p, nin, in, &n, out) == 0, "%s", mxr_last_error());
  ck_assert_int_eq(n, 1);
  return out[0];
}

static mxr_ndarray *flip(mxr_ndarray *x) {
  mxr_op_params *p = params("flip", 1, "axis", "0");
  mxr_ndarray *y = call("flip", p, 1, &x);
  mxr_op_params_free(p);
  return y;
}

static void iota(float *v, float scale) {
  for (int i = 0; i < LEN; i++) v[i] = scale * (float)(i + 1);
}

START_TEST(test_invoke_creates_and_writes_outputs) {
  float x[LEN], y[LEN];
  iota(x, 1);
  mxr_ndarray *X = vec(x);
  mxr_ndarray *Y = flip(X);
  read_vec(Y, y);
  for (int i = 0; i < LEN; i++) ck_assert_float_eq(y[i], x[LEN - 1 - i]);
  /* into a given output */
  mxr_ndarray *Z = vec(NULL);
  mxr_op_params *p = params("flip", 1, "axis", "0");
  int n = 1;
  ck_assert_int_eq(mxr_imperative_invoke(find("flip"), p, 1, &Y, &n, &Z), 0);
  read_vec(Z, y);
  for (int i = 0; i < LEN; i++) ck_assert_float_eq(y[i], x[i]);
  /* errors */
  n = 0;
  mxr_ndarray *two[2] = {X, X}, *outs[2];
  ck_assert_int_eq(mxr_imperative_invoke(find("flip"), p, 2, two, &n, outs), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "reverse takes 1 inputs"));
  n = 2;
  ck_assert_int_eq(mxr_imperative_invoke(find("flip"), p, 1, &X, &n, outs), MXR_EINVAL);
  mxr_op_params_free(p);
  mxr_ndarray_free(X);
  mxr_ndarray_free(Y);
  mxr_ndarray_free(Z);
}
END_TEST

/* A shape with an unknown (0 or -1) size is partial: in a graph its
 * consumers complete it, but an imperative call has none and fails. */
START_TEST(test_invoke_refuses_a_partial_shape) {
  const char *const shapes[] = {"(2,-1)", "(0,3)"};
  for (int i = 0; i < 2; i++) {
    mxr_op_params *p = params("_ones", 1, "shape", shapes[i]);
    mxr_ndarray *out[1];
    int n = 0;
    ck_assert_int_eq(mxr_imperative_invoke(find("_ones"), p, 0, NULL, &n, out), MXR_EINVAL);
    ck_assert_ptr_nonnull(strstr(mxr_last_error(), "cannot infer output 0"));
    mxr_op_params_free(p);
  }
  mxr_op_params *p = params("_ones", 1, "shape", "(2,3)");
  mxr_ndarray *whole = call("_ones", p, 0, NULL);
  ck_assert_int_eq(mxr_ndarray_size(whole), 6);
  mxr_op_params_free(p);
  mxr_ndarray_free(whole);
}
END_TEST

START_TEST(test_imperative_calls_are_engine_bulked) {
  mxr_engine *eng = engine();
  float x[LEN], y[LEN];
  iota(x, 1);
  mxr_ndarray *X = vec(x);
  struct mxr_engine_stats before, after;
  mxr_engine_get_stats(eng, &before);
  mxr_engine_set_bulk_size(eng, 15);
  mxr_ndarray *cur = mxr_ndarray_retain(X);
  for (int i = 0; i < 30; i++) {
    mxr_ndarray *next = flip(cur);
    mxr_ndarray_free(cur);
    cur = next;
  }
  mxr_engine_set_bulk_size(eng, 0);
  read_vec(cur, y);
  for (int i = 0; i < LEN; i++) ck_assert_float_eq(y[i], x[i]);
  mxr_engine_get_stats(eng, &after);
  ck_assert_uint_eq(after.bulks_pushed - before.bulks_pushed, 2);
  ck_assert_uint_ge(after.ops_bulked - before.ops_bulked, 30);
  mxr_ndarray_free(cur);
  mxr_ndarray_free(X);
}
END_TEST

static mxr_ndarray *marked(const float *data, mxr_ndarray **grad, int req) {
  mxr_ndarray *x = vec(data);
  *grad = vec(NULL);
  ck_assert_int_eq(mxr_autograd_mark_variables(1, &x, &req, grad), 0);
  return x;
}

START_TEST(test_autograd_chain_and_fan_out) {
  float x[LEN], dy[LEN], g[LEN];
  iota(x, 1);
  iota(dy, 0.5f);
  mxr_ndarray *G, *X = marked(x, &G, MXR_GRAD_WRITE), *DY = vec(dy);
  mxr_autograd_set_recording(1, NULL);
  mxr_ndarray *a = flip(X), *b = flip(a), *c = flip(b); /* three flips */
  mxr_op_params *p = params("add_n", 1, "num_args", "2");
  mxr_ndarray *in[2] = {c, X};
  mxr_ndarray *y = call("add_n", p, 2, in); /* y = flip3(x) + x: x used twice */
  mxr_op_params_free(p);
  mxr_autograd_set_recording(0, NULL);
  ck_assert_int_eq(mxr_autograd_backward(1, &y, &DY, 0, 1), 0);
  read_vec(G, g);
  for (int i = 0; i < LEN; i++) ck_assert_float_eq(g[i], dy[i] + dy[LEN - 1 - i]);
  /* the record was dropped: a second backward fails cleanly */
  ck_assert_int_eq(mxr_autograd_backward(1, &y, &DY, 0, 1), MXR_ESTATE);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "freed"));
  mxr_ndarray *arrays[] = {a, b, c, y, X, G, DY};
  for (int i = 0; i < 7; i++) mxr_ndarray_free(arrays[i]);
}
END_TEST

START_TEST(test_autograd_add_request_and_retain_graph) {
  float x[LEN], g[LEN];
  iota(x, 1);
  mxr_ndarray *G, *X = marked(x, &G, MXR_GRAD_ADD);
  float zero[LEN] = {0};
  ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(G, zero, LEN), 0);
  mxr_autograd_set_recording(1, NULL);
  mxr_ndarray *y = flip(X);
  mxr_autograd_set_recording(0, NULL);
  ck_assert_int_eq(mxr_autograd_backward(1, &y, NULL, 1, 1), 0); /* ones; keep the graph */
  ck_assert_int_eq(mxr_autograd_backward(1, &y, NULL, 0, 1), 0);
  read_vec(G, g);
  for (int i = 0; i < LEN; i++) ck_assert_float_eq(g[i], 2.0f);
  mxr_ndarray_free(y);
  mxr_ndarray_free(X);
  mxr_ndarray_free(G);
}
END_TEST

START_TEST(test_autograd_errors) {
  float x[LEN];
  iota(x, 1);
  mxr_ndarray *X = vec(x);
  mxr_ndarray *y = flip(X); /* not recording */
  ck_assert_int_eq(mxr_autograd_backward(1, &y, NULL, 0, 1), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "not computed while recording"));
  int bad = 2;
  mxr_ndarray *G = vec(NULL);
  ck_assert_int_eq(mxr_autograd_mark_variables(1, &X, &bad, &G), MXR_EINVAL);
  int prev;
  ck_assert_int_eq(mxr_autograd_set_recording(1, &prev), 0);
  ck_assert_int_eq(prev, 0);
  ck_assert_int_eq(mxr_autograd_is_recording(), 1);
  ck_assert_int_eq(mxr_autograd_set_recording(0, &prev), 0);
  ck_assert_int_eq(prev, 1);
  mxr_ndarray_free(y);
  mxr_ndarray_free(X);
  mxr_ndarray_free(G);
}
END_TEST

/* --------------------------------------------------------- cached ops */

static mxr_symbol *flip_chain(int n) {
  mxr_op_params *p = params("flip", 1, "axis", "0");
  mxr_symbol *x;
  ck_assert_int_eq(mxr_symbol_variable("data", &x), 0);
  for (int i = 0; i < n; i++) {
    mxr_symbol *f;
    ck_assert_int_eq(mxr_symbol_atomic(find("flip"), p, &f), 0);
    ck_assert_int_eq(mxr_symbol_compose(f, NULL, 1, NULL, &x), 0);
    mxr_symbol_free(x);
    x = f;
  }
  mxr_op_params_free(p);
  return x;
}

struct op_log {
  pthread_mutex_t mu;
  int n;
  char *names[8192];
};

static uint64_t log_op(void *u, const struct mxr_op_event *ev) {
  struct op_log *l = u;
  pthread_mutex_lock(&l->mu);
  if (l->n < 8192) l->names[l->n++] = strdup(ev->name);
  pthread_mutex_unlock(&l->mu);
  return 0;
}

static void clear_log(struct op_log *l) {
  for (int i = 0; i < l->n; i++) free(l->names[i]);
  l->n = 0;
}

/* Engine ops whose name is a segment of `opname` entries, and their sizes. */
static int count_segments(const struct op_log *l, int from, int to, const char *opname, int *total) {
  int segs = 0;
  *total = 0;
  for (int i = from; i < to; i++) {
    const char *s = l->names[i];
    if (strncmp(s, opname, strlen(opname)) != 0) continue;
    int n = 1;
    for (const char *p = s; *p; p++) n += *p == ',';
    segs++;
    *total += n;
  }
  return segs;
}

static void cached_seed(int fwd, int bwd, int want_fwd_segs, int want_bwd_segs) {
  enum { N = 1000 };
  mxr_engine *eng = engine();
  struct op_log log = {.n = 0};
  pthread_mutex_init(&log.mu, NULL);
  struct mxr_engine_hooks hooks = {&log, log_op, NULL};
  mxr_engine_set_hooks(eng, &hooks);
  mxr_symbol *sym = flip_chain(N);
  char f[16], b[16];
  snprintf(f, sizeof f, "%d", fwd);
  snprintf(b, sizeof b, "%d", bwd);
  const char *keys[] = {"static_alloc", "static_shape", "forward_bulk_size", "backward_bulk_size"};
  const char *vals[] = {"True", "True", f, b};
  mxr_cached_op *cop;
  ck_assert_int_eq(mxr_cached_op_create(sym, 4, keys, vals, &cop), 0);
  float x[LEN], dy[LEN], g[LEN], y[LEN];
  iota(x, 1);
  iota(dy, -0.25f);
  mxr_ndarray *G, *X = marked(x, &G, MXR_GRAD_WRITE), *DY = vec(dy);
  for (int it = 0; it < 3; it++) {
    ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
    clear_log(&log);
    mxr_autograd_set_recording(1, NULL);
    mxr_autograd_set_training(1, NULL);
    int n = 0;
    mxr_ndarray *out[1];
    ck_assert_msg(mxr_cached_op_invoke(cop, 1, &X, &n, out) == 0, "%s", mxr_last_error());
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(mxr_autograd_backward(1, out, &DY, 0, 1), 0);
    mxr_autograd_set_recording(0, NULL);
    read_vec(G, g);
    read_vec(out[0], y);
    ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
    if (it > 0) { /* after the first call the plan is warm: exactly the segments */
      int total;
      int fs = count_segments(&log, 0, log.n, "reverse", &total);
      ck_assert_int_eq(fs, want_fwd_segs);
      ck_assert_int_eq(total, N);
      /* backward: the chain's gradient (no head-gradient identity in a
       * cached op, as in MXNet) */
      int bs = count_segments(&log, 0, log.n, "_backward_reverse", &total);
      ck_assert_int_eq(bs, want_bwd_segs);
      ck_assert_int_eq(total, N);
      ck_assert_int_eq(log.n, fs + bs); /* nothing else: no copies */
      for (int i = 0; i < log.n; i++) ck_assert_msg(log.names[i][0] != '[', "cached op segments have no brackets");
    }
    for (int i = 0; i < LEN; i++) {
      ck_assert_float_eq(y[i], x[i]);
      ck_assert_float_eq(g[i], dy[i]);
    }
    mxr_ndarray_free(out[0]);
  }
  mxr_engine_set_hooks(eng, NULL);
  clear_log(&log);
  mxr_cached_op_free(cop);
  mxr_symbol_free(sym);
  mxr_ndarray_free(X);
  mxr_ndarray_free(G);
  mxr_ndarray_free(DY);
}

START_TEST(test_cached_op_seed_fully_bulked) { cached_seed(15, 15, 67, 67); }
END_TEST
START_TEST(test_cached_op_seed_half_bulked) { cached_seed(15, 0, 67, 1000); }
END_TEST
START_TEST(test_cached_op_seed_not_bulked) { cached_seed(0, 0, 1000, 1000); }
END_TEST

START_TEST(test_cached_op_inference_and_errors) {
  mxr_symbol *sym = flip_chain(5);
  mxr_cached_op *cop;
  const char *bad_k[] = {"static_alloc"}, *bad_v[] = {"maybe"};
  ck_assert_int_eq(mxr_cached_op_create(sym, 1, bad_k, bad_v, &cop), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "static_alloc='maybe'"));
  const char *unk_k[] = {"warp_speed"}, *unk_v[] = {"9"};
  ck_assert_int_eq(mxr_cached_op_create(sym, 1, unk_k, unk_v, &cop), MXR_EINVAL);
  ck_assert_int_eq(mxr_cached_op_create(sym, 0, NULL, NULL, &cop), 0);
  float x[LEN], y[LEN];
  iota(x, 1);
  mxr_ndarray *X = vec(x), *out[1];
  int n = 0;
  ck_assert_int_eq(mxr_cached_op_invoke(cop, 1, &X, &n, out), 0);
  read_vec(out[0], y);
  for (int i = 0; i < LEN; i++) ck_assert_float_eq(y[i], x[LEN - 1 - i]);
  mxr_ndarray_free(out[0]);
  n = 0;
  mxr_ndarray *two[2] = {X, X};
  ck_assert_int_eq(mxr_cached_op_invoke(cop, 2, two, &n, out), MXR_EINVAL);
  /* a different input array rebinds the plan */
  float x2[LEN];
  iota(x2, 3);
  mxr_ndarray *X2 = vec(x2);
  ck_assert_int_eq(mxr_cached_op_invoke(cop, 1, &X2, &n, out), 0);
  read_vec(out[0], y);
  for (int i = 0; i < LEN; i++) ck_assert_float_eq(y[i], x2[LEN - 1 - i]);
  mxr_ndarray_free(out[0]);
  mxr_cached_op_free(cop);
  mxr_symbol_free(sym);
  mxr_ndarray_free(X);
  mxr_ndarray_free(X2);
}
END_TEST

/* Each call returns arrays of its own: a kept output does not change when
 * the op runs again, and one freed before the next call is reused. */
START_TEST(test_cached_op_kept_outputs_stay) {
  mxr_symbol *sym = flip_chain(3);
  mxr_cached_op *cop;
  ck_assert_int_eq(mxr_cached_op_create(sym, 0, NULL, NULL, &cop), 0);
  float x[LEN], x2[LEN], y[LEN];
  iota(x, 1);
  iota(x2, -2);
  mxr_ndarray *X = vec(x), *X2 = vec(x2), *first[1], *second[1], *third[1];
  int n = 0;
  ck_assert_msg(mxr_cached_op_invoke(cop, 1, &X, &n, first) == 0, "%s", mxr_last_error());
  n = 0;
  ck_assert_msg(mxr_cached_op_invoke(cop, 1, &X2, &n, second) == 0, "%s", mxr_last_error());
  /* the caller's arrays are views of the plan's; one still held is
   * renewed, so the next call writes elsewhere */
  ck_assert_ptr_ne(mxr_ndarray_data(first[0]), mxr_ndarray_data(second[0]));
  read_vec(first[0], y);
  for (int i = 0; i < LEN; i++) ck_assert_float_eq(y[i], x[LEN - 1 - i]);
  read_vec(second[0], y);
  for (int i = 0; i < LEN; i++) ck_assert_float_eq(y[i], x2[LEN - 1 - i]);
  /* an output freed before the next call is the plan's to reuse */
  const void *reused = mxr_ndarray_data(second[0]);
  mxr_ndarray_free(second[0]);
  n = 0;
  ck_assert_msg(mxr_cached_op_invoke(cop, 1, &X, &n, third) == 0, "%s", mxr_last_error());
  ck_assert_ptr_eq(mxr_ndarray_data(third[0]), reused);
  read_vec(first[0], y);
  for (int i = 0; i < LEN; i++) ck_assert_float_eq(y[i], x[LEN - 1 - i]);
  mxr_ndarray_free(first[0]);
  mxr_ndarray_free(third[0]);
  mxr_cached_op_free(cop);
  mxr_symbol_free(sym);
  mxr_ndarray_free(X);
  mxr_ndarray_free(X2);
}
END_TEST

/* A kept output stays when the plan's memory sharing put a smaller value
 * in a view of a larger one: flip, flip, 2x2 max pool, flip, flip on 8x8
 * places the pooled values in views of the flips' arrays, so the output
 * must not share memory with any of them. */
START_TEST(test_cached_op_kept_output_apart_from_views) {
  mxr_symbol *sym;
  ck_assert_msg(mxr_symbol_from_json(tu_pool_chain_json, &sym) == 0, "%s", mxr_last_error());
  mxr_cached_op *cop;
  ck_assert_int_eq(mxr_cached_op_create(sym, 0, NULL, NULL, &cop), 0);
  const int64_t shape[] = {1, 1, 8, 8};
  float x[2][64], want[2][16], got[16];
  mxr_ndarray *X[2], *out[2];
  for (int r = 0; r < 2; r++) {
    for (int i = 0; i < 64; i++) x[r][i] = (float)((i * 37 + 11 * r) % 64) - 100.0f * (float)r;
    tu_pool_chain_output(x[r], want[r]);
    ck_assert_int_eq(mxr_ndarray_create(engine(), shape, 4, mxr_cpu(0), MXR_FLOAT32, 0, &X[r]), 0);
    ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(X[r], x[r], 64), 0);
    int n = 0;
    ck_assert_msg(mxr_cached_op_invoke(cop, 1, &X[r], &n, &out[r]) == 0, "%s", mxr_last_error());
  }
  for (int r = 0; r < 2; r++) {
    ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(out[r], got, 16), 0);
    for (int i = 0; i < 16; i++) ck_assert_float_eq(got[i], want[r][i]);
    mxr_ndarray_free(out[r]);
    mxr_ndarray_free(X[r]);
  }
  mxr_cached_op_free(cop);
  mxr_symbol_free(sym);
}
END_TEST

int main(void) {
  Suite *s = suite_create("imperative");
  TCase *tc = tcase_create("imperative");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_invoke_creates_and_writes_outputs);
  tcase_add_test(tc, test_invoke_refuses_a_partial_shape);
  tcase_add_test(tc, test_imperative_calls_are_engine_bulked);
  tcase_add_test(tc, test_autograd_chain_and_fan_out);
  tcase_add_test(tc, test_autograd_add_request_and_retain_graph);
  tcase_add_test(tc, test_autograd_errors);
  tcase_add_test(tc, test_cached_op_seed_fully_bulked);
  tcase_add_test(tc, test_cached_op_seed_half_bulked);
  tcase_add_test(tc, test_cached_op_seed_not_bulked);
  tcase_add_test(tc, test_cached_op_inference_and_errors);
  tcase_add_test(tc, test_cached_op_kept_outputs_stay);
  tcase_add_test(tc, test_cached_op_kept_output_apart_from_views);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
