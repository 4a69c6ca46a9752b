/*
 * The graph executor: op segments of the seed workload (1000 chained flips)
 * under the six bulking configurations, checked against an independent
 * prediction and against the engine ops actually pushed; results equal to
 * the input and the head gradient; identical across configurations and
 * engine types; inference bulking; grad_req add; bind errors.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_tap.h"
#include "engine_util.h"
#include "symbol_util.h"
#include "mxref/executor.h"
#include "mxref/symbol.h"

enum { NUM_OPS = 1000, LEN = 10 };

static mxr_ndarray *vector(mxr_engine *eng, const float *data) {
  int64_t shape[] = {LEN};
  mxr_ndarray *a;
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, 1, mxr_cpu(0), MXR_FLOAT32, 0, &a), 0);
  if (data) ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(a, data, LEN), 0);
  return a;
}

/* Records the names of the engine ops that run. */
struct op_log {
  pthread_mutex_t mu;
  int n;
  char *names[4096];
};

static uint64_t log_op(void *u, const struct mxr_op_event *ev) {
  struct op_log *l = u;
  pthread_mutex_lock(&l->mu);
  if (l->n < 4096) l->names[l->n++] = strdup(ev->name);
  pthread_mutex_unlock(&l->mu);
  return 0;
}

static void clear_log(struct op_log *l) {
  for (int i = 0; i < l->n; i++) free(l->names[i]);
  l->n = 0;
}

/* The seed's six configurations: (fwd cap, bwd cap, bulk train). */
static const int configs[6][3] = {{0, 0, 1}, {1, 1, 1}, {15, 15, 0}, {15, 0, 1}, {0, 15, 1}, {15, 15, 1}};

/* Independent prediction: a region of n ops as segments of size cap (the
 * last one shorter); cap 0 behaves like 1; bulking off: n single ops. */
static int predict(int n, int cap, bool on, int *sizes) {
  if (!on) {
    for (int i = 0; i < n; i++) sizes[i] = 1;
    return n;
  }
  int c = cap < 1 ? 1 : cap, k = 0;
  for (int left = n; left > 0; left -= c) sizes[k++] = left < c ? left : c;
  return k;
}

/* Number of comma-separated names in "[a,b,c]"; 1 for a plain op name. */
static int names_in(const char *name) {
  if (name[0] != '[') return 1;
  int n = 1;
  for (const char *p = name; *p; p++) n += *p == ',';
  return n;
}

static void run_config(int cfg, int engine_cfg, float *out, float *grad, bool check_structure) {
  mxr_engine *eng = tu_engine(engine_cfg);
  struct op_log log = {.n = 0};
  pthread_mutex_init(&log.mu, NULL);
  struct mxr_engine_hooks hooks = {&log, log_op, NULL};
  mxr_engine_set_hooks(eng, &hooks);
  mxr_symbol *sym = tu_flip_chain(NUM_OPS);
  float x[LEN], dy[LEN];
  for (int i = 0; i < LEN; i++) {
    x[i] = (float)(i * 0.5 - 2);
    dy[i] = (float)(1.0 / (i + 1));
  }
  mxr_ndarray *X = vector(eng, x), *dX = vector(eng, NULL), *DY = vector(eng, dy);
  int req = MXR_GRAD_WRITE;
  struct mxr_exec_opts o = {.engine = eng, .bulk_train = configs[cfg][2] != 0, .bulk_inference = true,
                            .max_node_train_fwd = configs[cfg][0], .max_node_train_bwd = configs[cfg][1]};
  mxr_executor *ex;
  ck_assert_msg(mxr_executor_bind(sym, mxr_cpu(0), 1, &X, &dX, &req, 0, NULL, &o, &ex) == 0, "%s",
                mxr_last_error());
  if (check_structure) {
    /* the backward region has one op more: MXNet's head-gradient identity */
    static int want[2][NUM_OPS + 1];
    int nwant[2] = {predict(NUM_OPS, configs[cfg][0], configs[cfg][2], want[0]),
                    predict(NUM_OPS + 1, configs[cfg][1], configs[cfg][2], want[1])};
    for (int pass = 0; pass < 2; pass++) {
      int n;
      const int *sizes;
      const char *const *names;
      ck_assert_int_eq(mxr_executor_pass_ops(ex, pass, &n, &sizes, &names), 0);
      ck_assert_msg(n == nwant[pass], "config %d pass %d: %d engine ops, predicted %d", cfg, pass, n, nwant[pass]);
      for (int i = 0; i < n; i++) {
        ck_assert_int_eq(sizes[i], want[pass][i]);
        ck_assert_int_eq(names_in(names[i]), want[pass][i]);
        /* segments are bracketed; unsegmented ops carry the op's name */
        ck_assert_int_eq(names[i][0] == '[', configs[cfg][2] != 0);
        const char *want_op = !pass ? "reverse" : i == 0 ? "_identity_with_attr_like_rhs" : "_backward_reverse";
        ck_assert_ptr_nonnull(strstr(names[i], want_op));
      }
    }
  }
  for (int it = 0; it < 2; it++) {
    clear_log(&log);
    ck_assert_int_eq(mxr_executor_forward(ex, true), 0);
    ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
    int fwd_ops = log.n;
    ck_assert_int_eq(mxr_executor_backward(ex, 1, &DY), 0);
    ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
    int bwd_ops = log.n - fwd_ops - 1; /* minus the head-gradient copy */
    struct mxr_exec_info info;
    ck_assert_int_eq(mxr_executor_info(ex, &info), 0);
    ck_assert_int_eq(fwd_ops, info.forward_engine_ops);
    ck_assert_int_eq(bwd_ops, info.backward_engine_ops);
    ck_assert_str_eq(log.names[fwd_ops], "CopyCPU2CPU");
  }
  int n;
  mxr_ndarray *const *outs;
  ck_assert_int_eq(mxr_executor_outputs(ex, &n, &outs), 0);
  ck_assert_int_eq(n, 1);
  ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(outs[0], out, LEN), 0);
  ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(dX, grad, LEN), 0);
  mxr_executor_free(ex);
  mxr_ndarray_free(X);
  mxr_ndarray_free(dX);
  mxr_ndarray_free(DY);
  mxr_symbol_free(sym);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
  clear_log(&log);
  for (int i = 0; i < LEN; i++) {
    ck_assert_float_eq(out[i], x[i]);   /* an even number of flips */
    ck_assert_float_eq(grad[i], dy[i]); /* and so is the gradient */
  }
}

START_TEST(test_six_configs_structure_and_values) {
  float out[LEN], grad[LEN];
  run_config(_i, 5 /* per-device, 2 workers */, out, grad, true);
}
END_TEST

START_TEST(test_same_bits_across_configs_and_engines) {
  float out0[LEN], grad0[LEN];
  run_config(5, 0, out0, grad0, false);
  for (int e = 0; e < TU_NUM_ENGINE_CONFIGS; e++) {
    float out[LEN], grad[LEN];
    run_config(e % 6, e, out, grad, false);
    ck_assert_int_eq(memcmp(out, out0, sizeof out), 0);
    ck_assert_int_eq(memcmp(grad, grad0, sizeof grad), 0);
  }
}
END_TEST

START_TEST(test_inference_is_one_segment) {
  mxr_engine *eng = tu_engine(5);
  mxr_symbol *sym = tu_flip_chain(7);
  float x[LEN] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, y[LEN];
  mxr_ndarray *X = vector(eng, x);
  struct mxr_exec_opts o = {.engine = eng, .bulk_train = true, .bulk_inference = true,
                            .max_node_train_fwd = 15, .max_node_train_bwd = 15};
  mxr_executor *ex;
  ck_assert_int_eq(mxr_executor_bind(sym, mxr_cpu(0), 1, &X, NULL, NULL, 0, NULL, &o, &ex), 0);
  struct mxr_exec_info info;
  ck_assert_int_eq(mxr_executor_info(ex, &info), 0);
  ck_assert_int_eq(info.forward_engine_ops, 1);
  ck_assert_int_eq(info.num_nodes, 8);
  ck_assert_int_eq(mxr_executor_forward(ex, false), 0);
  mxr_ndarray *const *outs;
  int n;
  ck_assert_int_eq(mxr_executor_outputs(ex, &n, &outs), 0);
  ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(outs[0], y, LEN), 0);
  for (int i = 0; i < LEN; i++) ck_assert_float_eq(y[i], x[LEN - 1 - i]); /* odd: reversed */
  ck_assert_int_eq(mxr_executor_backward(ex, 0, NULL), MXR_ESTATE);
  mxr_executor_free(ex);
  /* inference bulking off: one engine op per node */
  o.bulk_inference = false;
  ck_assert_int_eq(mxr_executor_bind(sym, mxr_cpu(0), 1, &X, NULL, NULL, 0, NULL, &o, &ex), 0);
  ck_assert_int_eq(mxr_executor_info(ex, &info), 0);
  ck_assert_int_eq(info.forward_engine_ops, 7);
  mxr_executor_free(ex);
  mxr_ndarray_free(X);
  mxr_symbol_free(sym);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_grad_req_add_accumulates) {
  mxr_engine *eng = tu_engine(4);
  mxr_symbol *sym = tu_flip_chain(3);
  float x[LEN], dy[LEN], g[LEN], start[LEN];
  for (int i = 0; i < LEN; i++) {
    x[i] = (float)i;
    dy[i] = (float)(i + 1);
    start[i] = 100.0f;
  }
  mxr_ndarray *X = vector(eng, x), *dX = vector(eng, start), *DY = vector(eng, dy);
  int req = MXR_GRAD_ADD;
  mxr_executor *ex;
  struct mxr_exec_opts o;
  ck_assert_int_eq(mxr_exec_opts_from_config(&o), 0);
  o.engine = eng;
  ck_assert_int_eq(mxr_executor_bind(sym, mxr_cpu(0), 1, &X, &dX, &req, 0, NULL, &o, &ex), 0);
  for (int it = 0; it < 2; it++) {
    ck_assert_int_eq(mxr_executor_forward(ex, true), 0);
    ck_assert_int_eq(mxr_executor_backward(ex, 1, &DY), 0);
  }
  ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(dX, g, LEN), 0);
  /* three flips reverse the gradient; two backward passes add it twice */
  for (int i = 0; i < LEN; i++) ck_assert_float_eq(g[i], 100.0f + 2 * dy[LEN - 1 - i]);
  mxr_executor_free(ex);
  mxr_ndarray_free(X);
  mxr_ndarray_free(dX);
  mxr_ndarray_free(DY);
  mxr_symbol_free(sym);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_bind_errors) {
  mxr_engine *eng = tu_engine(4);
  mxr_symbol *sym = tu_flip_chain(2);
  mxr_ndarray *X = vector(eng, NULL);
  struct mxr_exec_opts o = {.engine = eng};
  mxr_executor *ex;
  ck_assert_int_eq(mxr_executor_bind(sym, mxr_cpu(0), 0, NULL, NULL, NULL, 0, NULL, &o, &ex), MXR_EINVAL);
  ck_assert_str_eq(mxr_last_error(), "bind: the symbol has 1 arguments, 0 arrays were given");
  int req = MXR_GRAD_WRITE;
  ck_assert_int_eq(mxr_executor_bind(sym, mxr_cpu(0), 1, &X, NULL, &req, 0, NULL, &o, &ex), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "'X' asks for a gradient but has no gradient array"));
  req = 2;
  mxr_ndarray *G = vector(eng, NULL);
  ck_assert_int_eq(mxr_executor_bind(sym, mxr_cpu(0), 1, &X, &G, &req, 0, NULL, &o, &ex), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "grad_req 2"));
  /* A gradient array of another size than its gradient would be overrun
   * (or left half written) by the backward kernels: refused at bind. */
  req = MXR_GRAD_WRITE;
  for (int n = LEN - 1; n <= LEN + 1; n += 2) {
    const int64_t glen[] = {n};
    mxr_ndarray *W;
    ck_assert_int_eq(mxr_ndarray_create(eng, glen, 1, mxr_cpu(0), MXR_FLOAT32, 0, &W), 0);
    ck_assert_int_eq(mxr_executor_bind(sym, mxr_cpu(0), 1, &X, &W, &req, 0, NULL, &o, &ex), MXR_EINVAL);
    ck_assert_msg(strstr(mxr_last_error(), "the gradient array of 'X' has shape"), "%s", mxr_last_error());
    mxr_ndarray_free(W);
  }
  /* Bound arrays must live where the executor runs. */
  ck_assert_int_eq(mxr_executor_bind(sym, mxr_gpu(0), 1, &X, NULL, NULL, 0, NULL, &o, &ex), MXR_EINVAL);
  ck_assert_msg(strstr(mxr_last_error(), "argument 'X' is on cpu(0), but the executor runs on gpu(0)"),
                "%s", mxr_last_error());
  /* On a GPU this machine lacks (the first missing id), planning fails
   * when it allocates the executor's arrays there. */
  int dev = mxr_gpu_count();
  const int64_t len[] = {LEN};
  mxr_ndarray *GX;
  ck_assert_int_eq(mxr_ndarray_create(eng, len, 1, mxr_gpu(dev), MXR_FLOAT32, 1, &GX), 0);
  ck_assert_int_eq(mxr_executor_bind(sym, mxr_gpu(dev), 1, &GX, NULL, NULL, 0, NULL, &o, &ex), MXR_ENODEV);
  ck_assert_msg(strstr(mxr_last_error(), "GPU storage"), "%s", mxr_last_error());
  mxr_ndarray_free(GX);
  /* a scalar input cannot be flipped along axis 0 */
  mxr_ndarray *S;
  ck_assert_int_eq(mxr_ndarray_create(eng, NULL, 0, mxr_cpu(0), MXR_FLOAT32, 0, &S), 0);
  ck_assert_int_eq(mxr_executor_bind(sym, mxr_cpu(0), 1, &S, NULL, NULL, 0, NULL, &o, &ex), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "Error in operator reverse"));
  ck_assert_ptr_null(ex);
  mxr_ndarray_free(S);
  mxr_ndarray_free(G);
  mxr_ndarray_free(X);
  mxr_symbol_free(sym);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

static mxr_ndarray *array_of(mxr_engine *eng, int ndim, const int64_t *shape, int dtype) {
  mxr_ndarray *a;
  ck_assert_int_eq(mxr_ndarray_create(eng, shape, ndim, mxr_cpu(0), dtype, 0, &a), 0);
  return a;
}

static mxr_symbol *from_json(const char *json) {
  mxr_symbol *s;
  ck_assert_msg(mxr_symbol_from_json(json, &s) == 0, "%s", mxr_last_error());
  return s;
}

/* Kernels read and write bound arrays as the graph's shapes and dtypes say,
 * so every array must be what inference makes of it: a gradient array of
 * another dtype is refused naming it, both shapes and both dtypes (a
 * float32 kernel would write past a float16 array's end). */
START_TEST(test_bind_refuses_gradient_of_other_dtype) {
  mxr_engine *eng = tu_engine(4);
  struct mxr_exec_opts o = {.engine = eng};
  mxr_executor *ex = NULL;
  const int64_t len[] = {LEN};
  mxr_symbol *chain = tu_flip_chain(2);
  mxr_ndarray *X = vector(eng, NULL);
  int req = MXR_GRAD_WRITE;
  for (int dt = MXR_FLOAT64; dt <= MXR_FLOAT16; dt++) {
    mxr_ndarray *G = array_of(eng, 1, len, dt);
    ck_assert_int_eq(mxr_executor_bind(chain, mxr_cpu(0), 1, &X, &G, &req, 0, NULL, &o, &ex), MXR_EINVAL);
    char want[160];
    snprintf(want, sizeof want, "the gradient array of 'X' has shape (10,) and dtype %s, its gradient (10,) and float32",
             mxr_dtype_name(dt));
    ck_assert_msg(strstr(mxr_last_error(), want), "%s", mxr_last_error());
    mxr_ndarray_free(G);
  }
  ck_assert_ptr_null(ex);
  mxr_ndarray_free(X);
  mxr_symbol_free(chain);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* An argument or aux state with a 0 (unknown) dimension that inference
 * fills from the rest of the graph holds fewer elements than its kernels
 * read: refused naming it and both shapes. */
START_TEST(test_bind_refuses_filled_zero_dimension) {
  mxr_engine *eng = tu_engine(4);
  struct mxr_exec_opts o = {.engine = eng};
  mxr_executor *ex = NULL;
  const int64_t rows0[] = {0, 3}, two_three[] = {2, 3}, three[] = {3}, none[] = {0};
  mxr_symbol *add = from_json(
      "{\"nodes\":[{\"op\":\"null\",\"name\":\"x\",\"inputs\":[]},{\"op\":\"null\",\"name\":\"w\",\"inputs\":[]},"
      "{\"op\":\"elemwise_add\",\"name\":\"add\",\"inputs\":[[0,0,0],[1,0,0]]}],\"arg_nodes\":[0,1],"
      "\"heads\":[[2,0,0]]}");
  mxr_ndarray *xw[2] = {array_of(eng, 2, rows0, MXR_FLOAT32), array_of(eng, 2, two_three, MXR_FLOAT32)};
  ck_assert_int_eq(mxr_executor_bind(add, mxr_cpu(0), 2, xw, NULL, NULL, 0, NULL, &o, &ex), MXR_EINVAL);
  ck_assert_msg(strstr(mxr_last_error(), "bind: argument 'x' has shape (0,3) and dtype float32, the graph infers "
                                         "(2,3) and float32"),
                "%s", mxr_last_error());
  mxr_symbol *bn = from_json(
      "{\"nodes\":[{\"op\":\"null\",\"name\":\"d\",\"inputs\":[]},{\"op\":\"null\",\"name\":\"g\",\"inputs\":[]},"
      "{\"op\":\"null\",\"name\":\"b\",\"inputs\":[]},{\"op\":\"null\",\"name\":\"mm\",\"inputs\":[]},"
      "{\"op\":\"null\",\"name\":\"mv\",\"inputs\":[]},{\"op\":\"BatchNorm\",\"name\":\"bn\","
      "\"inputs\":[[0,0,0],[1,0,0],[2,0,0],[3,0,0],[4,0,0]]}],\"arg_nodes\":[0,1,2,3,4],\"heads\":[[5,0,0]]}");
  mxr_ndarray *bn_args[3] = {array_of(eng, 2, two_three, MXR_FLOAT32), array_of(eng, 1, three, MXR_FLOAT32),
                             array_of(eng, 1, three, MXR_FLOAT32)};
  mxr_ndarray *bn_aux[2] = {array_of(eng, 1, none, MXR_FLOAT32), array_of(eng, 1, three, MXR_FLOAT32)};
  ck_assert_int_eq(mxr_executor_bind(bn, mxr_cpu(0), 3, bn_args, NULL, NULL, 2, bn_aux, &o, &ex), MXR_EINVAL);
  ck_assert_msg(strstr(mxr_last_error(), "bind: aux state 'mm' has shape (0,) and dtype float32, the graph "
                                         "infers (3,) and float32"),
                "%s", mxr_last_error());
  ck_assert_ptr_null(ex);
  mxr_ndarray *all[] = {xw[0], xw[1], bn_args[0], bn_args[1], bn_args[2], bn_aux[0], bn_aux[1]};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mxr_ndarray_free(all[i]);
  mxr_symbol_free(add);
  mxr_symbol_free(bn);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* A variable's __shape__ is a hint for inference where no shape is known,
 * as in MXNet (whose bind takes the arrays' shapes): (7,), or text that is
 * no shape, does not stop a (10,) array from being bound. */
START_TEST(test_bind_shape_hint_yields_to_array) {
  mxr_engine *eng = tu_engine(4);
  struct mxr_exec_opts o = {.engine = eng};
  mxr_ndarray *X = vector(eng, NULL);
  const char *hints[] = {"(7,)", "banana"}, *k[] = {"axis"}, *v[] = {"0"};
  const mxr_op *flip;
  ck_assert_int_eq(mxr_op_find("flip", &flip), 0);
  mxr_op_params *p;
  ck_assert_int_eq(mxr_op_params_parse(flip, 1, k, v, &p), 0);
  for (int h = 0; h < 2; h++) {
    mxr_symbol *x, *f;
    ck_assert_int_eq(mxr_symbol_variable("X", &x), 0);
    ck_assert_int_eq(mxr_symbol_set_attr(x, "__shape__", hints[h]), 0);
    ck_assert_int_eq(mxr_symbol_atomic(flip, p, &f), 0);
    ck_assert_int_eq(mxr_symbol_compose(f, "f", 1, NULL, &x), 0);
    mxr_executor *ex;
    ck_assert_msg(mxr_executor_bind(f, mxr_cpu(0), 1, &X, NULL, NULL, 0, NULL, &o, &ex) == 0, "%s", mxr_last_error());
    int n;
    mxr_ndarray *const *outs;
    ck_assert_int_eq(mxr_executor_outputs(ex, &n, &outs), 0);
    ck_assert_int_eq(mxr_ndarray_ndim(outs[0]), 1);
    ck_assert_int_eq(mxr_ndarray_shape(outs[0])[0], LEN);
    mxr_executor_free(ex);
    mxr_symbol_free(f);
    mxr_symbol_free(x);
  }
  mxr_op_params_free(p);
  mxr_ndarray_free(X);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

START_TEST(test_free_with_pending_work) {
  mxr_engine *eng = tu_engine(5);
  mxr_symbol *sym = tu_flip_chain(50);
  mxr_ndarray *X = vector(eng, NULL);
  struct mxr_exec_opts o = {.engine = eng, .bulk_inference = true};
  mxr_executor *ex;
  ck_assert_int_eq(mxr_executor_bind(sym, mxr_cpu(0), 1, &X, NULL, NULL, 0, NULL, &o, &ex), 0);
  for (int i = 0; i < 20; i++) ck_assert_int_eq(mxr_executor_forward(ex, false), 0);
  mxr_executor_free(ex); /* ops still queued: the free waits for them in the engine */
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  mxr_ndarray_free(X);
  mxr_symbol_free(sym);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* The memory plan: a flip chain needs two arrays per pass when dead values'
 * arrays are reused, one per value when sharing is off; results agree. */
START_TEST(test_memory_plan_reuses_arrays) {
  mxr_engine *eng = tu_engine(5);
  mxr_symbol *sym = tu_flip_chain(101);
  float x[LEN], dy[LEN], y[2][LEN], g[2][LEN];
  for (int i = 0; i < LEN; i++) {
    x[i] = (float)(i * i);
    dy[i] = (float)(3 - i);
  }
  int arrays[2];
  for (int share = 0; share < 2; share++) {
    mxr_ndarray *X = vector(eng, x), *dX = vector(eng, NULL), *DY = vector(eng, dy);
    int req = MXR_GRAD_WRITE;
    struct mxr_exec_opts o = {.engine = eng, .bulk_train = true, .max_node_train_fwd = 15,
                              .max_node_train_bwd = 15, .match_range = share ? 10 : 0, .enable_inplace = share};
    mxr_executor *ex;
    ck_assert_int_eq(mxr_executor_bind(sym, mxr_cpu(0), 1, &X, &dX, &req, 0, NULL, &o, &ex), 0);
    struct mxr_exec_info info;
    ck_assert_int_eq(mxr_executor_info(ex, &info), 0);
    arrays[share] = info.num_arrays;
    for (int it = 0; it < 3; it++) {
      ck_assert_int_eq(mxr_executor_forward(ex, true), 0);
      ck_assert_int_eq(mxr_executor_backward(ex, 1, &DY), 0);
    }
    mxr_ndarray *const *outs;
    int n;
    ck_assert_int_eq(mxr_executor_outputs(ex, &n, &outs), 0);
    ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(outs[0], y[share], LEN), 0);
    ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(dX, g[share], LEN), 0);
    mxr_executor_free(ex);
    mxr_ndarray_free(X);
    mxr_ndarray_free(dX);
    mxr_ndarray_free(DY);
  }
  ck_assert_int_ge(arrays[0], 200); /* 100 forward + 101 backward values + head grad */
  ck_assert_int_le(arrays[1], 6);
  ck_assert_int_eq(memcmp(y[0], y[1], sizeof y[0]), 0);
  ck_assert_int_eq(memcmp(g[0], g[1], sizeof g[0]), 0);
  for (int i = 0; i < LEN; i++) {
    ck_assert_float_eq(y[1][i], x[LEN - 1 - i]); /* 101 flips */
    ck_assert_float_eq(g[1][i], dy[LEN - 1 - i]);
  }
  mxr_symbol_free(sym);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* Values of another shape take a dead value's memory as a view when it is at
 * most MXNET_EXEC_MATCH_RANGE times their size: flip, flip, 2x2 max pool,
 * flip, flip on 8x8 is two arrays with match range 10 (the pooled values
 * live in the first two), four with match range 2 (64 elements are more
 * than twice 16); the output is the pool of X either way. */
START_TEST(test_memory_plan_views_smaller_values) {
  mxr_engine *eng = tu_engine(5);
  mxr_symbol *sym;
  ck_assert_msg(mxr_symbol_from_json(tu_pool_chain_json, &sym) == 0, "%s", mxr_last_error());
  float x[64], y[16];
  for (int i = 0; i < 64; i++) x[i] = (float)((i * 37) % 64);
  const int ranges[] = {10, 2}, expect_arrays[] = {2, 4};
  for (int r = 0; r < 2; r++) {
    const int64_t shape[] = {1, 1, 8, 8};
    mxr_ndarray *X;
    ck_assert_int_eq(mxr_ndarray_create(eng, shape, 4, mxr_cpu(0), MXR_FLOAT32, 0, &X), 0);
    ck_assert_int_eq(mxr_ndarray_sync_copy_from_cpu(X, x, 64), 0);
    int req = MXR_GRAD_NULL;
    struct mxr_exec_opts o = {.engine = eng, .bulk_inference = r == 0, .match_range = ranges[r],
                              .enable_inplace = true};
    mxr_executor *ex;
    ck_assert_msg(mxr_executor_bind(sym, mxr_cpu(0), 1, &X, NULL, &req, 0, NULL, &o, &ex) == 0, "%s",
                  mxr_last_error());
    struct mxr_exec_info info;
    ck_assert_int_eq(mxr_executor_info(ex, &info), 0);
    ck_assert_int_eq(info.num_arrays, expect_arrays[r]);
    for (int it = 0; it < 3; it++) ck_assert_int_eq(mxr_executor_forward(ex, false), 0);
    mxr_ndarray *const *outs;
    int n;
    ck_assert_int_eq(mxr_executor_outputs(ex, &n, &outs), 0);
    ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(outs[0], y, 16), 0);
    float want[16];
    tu_pool_chain_output(x, want);
    for (int i = 0; i < 16; i++) ck_assert_float_eq(y[i], want[i]);
    mxr_executor_free(ex);
    mxr_ndarray_free(X);
  }
  mxr_symbol_free(sym);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* X (1,4,4), Concat(X, X) on axis 0 (32 elements), transpose of its last
 * two axes (32), sum over axis 0 (16, the output): the sum's value fits in
 * the concat's array once the transpose has read it, when the match range
 * lets a value take a block of twice its size. */
static const char halving_json[] =
    "{\"nodes\": ["
    "{\"op\": \"null\", \"name\": \"X\", \"inputs\": []},"
    "{\"op\": \"Concat\", \"name\": \"cat\", \"attrs\": {\"dim\": \"0\", \"num_args\": \"2\"},"
    " \"inputs\": [[0, 0, 0], [0, 0, 0]]},"
    "{\"op\": \"transpose\", \"name\": \"t\", \"attrs\": {\"axes\": \"(0, 2, 1)\"}, \"inputs\": [[1, 0, 0]]},"
    "{\"op\": \"sum\", \"name\": \"s\", \"attrs\": {\"axis\": \"0\"}, \"inputs\": [[2, 0, 0]]}],"
    " \"arg_nodes\": [0], \"heads\": [[3, 0, 0]]}";

/* bytes_allocated is what the plan gives op outputs (MXExecutorPrint's
 * "Total N MB allocated"): 80 floats without sharing or with exact matches
 * only, 64 when the sum takes the concat's dead block; a head gradient,
 * allocated beside the plan as in MXNet, is not counted. */
START_TEST(test_memory_plan_bytes) {
  mxr_engine *eng = tu_engine(5);
  mxr_symbol *sym;
  ck_assert_msg(mxr_symbol_from_json(halving_json, &sym) == 0, "%s", mxr_last_error());
  const int ranges[] = {0, 1, 10};
  const size_t expect[] = {80 * 4, 80 * 4, 64 * 4};
  for (int r = 0; r < 3; r++) {
    const int64_t shape[] = {1, 4, 4};
    mxr_ndarray *X;
    ck_assert_int_eq(mxr_ndarray_create(eng, shape, 3, mxr_cpu(0), MXR_FLOAT32, 0, &X), 0);
    int req = MXR_GRAD_NULL;
    struct mxr_exec_opts o = {.engine = eng, .match_range = ranges[r], .enable_inplace = true};
    mxr_executor *ex;
    ck_assert_msg(mxr_executor_bind(sym, mxr_cpu(0), 1, &X, NULL, &req, 0, NULL, &o, &ex) == 0, "%s",
                  mxr_last_error());
    struct mxr_exec_info info;
    ck_assert_int_eq(mxr_executor_info(ex, &info), 0);
    ck_assert_msg(info.bytes_allocated == expect[r], "match range %d: %zu bytes, expected %zu", ranges[r],
                  info.bytes_allocated, expect[r]);
    mxr_executor_free(ex);
    mxr_ndarray_free(X);
  }
  mxr_symbol_free(sym);
  /* With gradients and no sharing: one array per op output but the last
   * backward one (the bound gradient of X); variables are X and the head
   * gradient, whose array is not counted. */
  sym = tu_flip_chain(3);
  mxr_ndarray *X = vector(eng, NULL), *dX = vector(eng, NULL);
  int req = MXR_GRAD_WRITE;
  struct mxr_exec_opts o = {.engine = eng};
  mxr_executor *ex;
  ck_assert_int_eq(mxr_executor_bind(sym, mxr_cpu(0), 1, &X, &dX, &req, 0, NULL, &o, &ex), 0);
  struct mxr_exec_info info;
  ck_assert_int_eq(mxr_executor_info(ex, &info), 0);
  ck_assert_uint_eq(info.bytes_allocated, (size_t)(info.num_nodes - 3) * LEN * sizeof(float));
  mxr_executor_free(ex);
  mxr_ndarray_free(X);
  mxr_ndarray_free(dX);
  mxr_symbol_free(sym);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

/* A backward op that is a general op (_plus_scalar's is _copy) gets only the
 * forward parameters it knows. */
START_TEST(test_gradient_through_scalar_op) {
  mxr_engine *eng = tu_engine(4);
  mxr_symbol *x = tu_flip_chain(1);
  const mxr_op *op;
  ck_assert_int_eq(mxr_op_find("_plus_scalar", &op), 0);
  const char *k[] = {"scalar"}, *v[] = {"2"};
  mxr_op_params *p;
  ck_assert_int_eq(mxr_op_params_parse(op, 1, k, v, &p), 0);
  mxr_symbol *y;
  ck_assert_int_eq(mxr_symbol_atomic(op, p, &y), 0);
  mxr_op_params_free(p);
  ck_assert_int_eq(mxr_symbol_compose(y, "plus2", 1, NULL, &x), 0);
  float xs[LEN], dy[LEN], out[LEN], g[LEN];
  for (int i = 0; i < LEN; i++) {
    xs[i] = (float)i;
    dy[i] = (float)(10 + i);
  }
  mxr_ndarray *X = vector(eng, xs), *dX = vector(eng, NULL), *DY = vector(eng, dy);
  int req = MXR_GRAD_WRITE;
  struct mxr_exec_opts o = {.engine = eng, .bulk_train = true, .max_node_train_fwd = 15, .max_node_train_bwd = 15};
  mxr_executor *ex;
  ck_assert_msg(mxr_executor_bind(y, mxr_cpu(0), 1, &X, &dX, &req, 0, NULL, &o, &ex) == 0, "%s", mxr_last_error());
  ck_assert_int_eq(mxr_executor_forward(ex, true), 0);
  ck_assert_int_eq(mxr_executor_backward(ex, 1, &DY), 0);
  mxr_ndarray *const *outs;
  int n;
  ck_assert_int_eq(mxr_executor_outputs(ex, &n, &outs), 0);
  ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(outs[0], out, LEN), 0);
  ck_assert_int_eq(mxr_ndarray_sync_copy_to_cpu(dX, g, LEN), 0);
  for (int i = 0; i < LEN; i++) {
    ck_assert_float_eq(out[i], xs[LEN - 1 - i] + 2);
    ck_assert_float_eq(g[i], dy[LEN - 1 - i]);
  }
  mxr_executor_free(ex);
  mxr_ndarray_free(X);
  mxr_ndarray_free(dX);
  mxr_ndarray_free(DY);
  mxr_symbol_free(y);
  mxr_symbol_free(x);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("executor");
  TCase *tc = tcase_create("executor");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_six_configs_structure_and_values, 0, 6);
  tcase_add_test(tc, test_same_bits_across_configs_and_engines);
  tcase_add_test(tc, test_inference_is_one_segment);
  tcase_add_test(tc, test_grad_req_add_accumulates);
  tcase_add_test(tc, test_bind_errors);
  tcase_add_test(tc, test_bind_refuses_gradient_of_other_dtype);
  tcase_add_test(tc, test_bind_refuses_filled_zero_dimension);
  tcase_add_test(tc, test_bind_shape_hint_yields_to_array);
  tcase_add_test(tc, test_free_with_pending_work);
  tcase_add_test(tc, test_gradient_through_scalar_op);
  tcase_add_test(tc, test_memory_plan_reuses_arrays);
  tcase_add_test(tc, test_memory_plan_views_smaller_values);
  tcase_add_test(tc, test_memory_plan_bytes);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
