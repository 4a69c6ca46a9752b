/*
 * Executor benchmark.
 *
 *  1. The seed workload: 1000 chained flips on shape (10,), bound with a
 *     gradient, 1 warm-up and 20 timed forward+backward iterations (waiting
 *     for the gradient each time), under the six bulking configurations
 *     (fwd cap, bwd cap, bulk train).  Printed: ms per iteration, median of
 *     --reps runs.  Targets on the 2-core machine: fully bulked (15,15,1) at
 *     most 0.3 ms, non-bulked at most 3 ms.
 *  2. ns per op inside a bulked segment: the same chain bound for inference
 *     (one segment), forward only.
 *  3. FullyConnected forward at 1024x1024x1024 against a direct sgemm of the
 *     same size, in GFLOP/s.  Target: at least 90 % of sgemm.
 *
 * The engine is the process's (MXNET_ENGINE_TYPE etc.).  --check makes a
 * missed target exit 1.
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "mxref/executor.h"
#include "mxref/mxref.h"
#include "mxref/symbol.h"

enum { NUM_OPS = 1000, LEN = 10, ITERS = 20, MAX_REPS = 15 };

static mxr_ndarray *array(mxr_engine *eng, int ndim, const int64_t *shape, float fill) {
  mxr_ndarray *a;
  if (mxr_ndarray_create(eng, shape, ndim, mxr_cpu(0), MXR_FLOAT32, 0, &a)) bench_die("array");
  int64_t n = mxr_ndarray_size(a);
  float *buf = malloc((size_t)n * sizeof *buf);
  for (int64_t i = 0; i < n; i++) buf[i] = fill + (float)(i % 7) * 0.01f;
  if (mxr_ndarray_sync_copy_from_cpu(a, buf, (size_t)n)) bench_die("copy");
  free(buf);
  return a;
}

/* ms per forward+backward iteration of the seed workload. */
static double seed_once(mxr_engine *eng, mxr_symbol *sym, const int cfg[3]) {
  int64_t shape[] = {LEN};
  mxr_ndarray *x = array(eng, 1, shape, 0), *dx = array(eng, 1, shape, 0), *dy = array(eng, 1, shape, 1);
  struct mxr_exec_opts o;
  if (mxr_exec_opts_from_config(&o)) bench_die("config");
  o.engine = eng;
  o.bulk_train = cfg[2];
  o.max_node_train_fwd = cfg[0];
  o.max_node_train_bwd = cfg[1];
  int req = MXR_GRAD_WRITE;
  mxr_executor *ex;
  if (mxr_executor_bind(sym, mxr_cpu(0), 1, &x, &dx, &req, 0, NULL, &o, &ex)) bench_die("bind");
  double start = 0;
  for (int i = 0; i < ITERS + 1; i++) {
    if (i == 1) start = bench_now_s();
    if (mxr_executor_forward(ex, true) || mxr_executor_backward(ex, 1, &dy)) bench_die("run");
    if (mxr_ndarray_wait_to_read(dx)) bench_die("wait");
  }
  double ms = (bench_now_s() - start) * 1e3 / ITERS;
  mxr_executor_free(ex);
  mxr_ndarray_free(x);
  mxr_ndarray_free(dx);
  mxr_ndarray_free(dy);
  if (mxr_engine_wait_for_all(eng)) bench_die("wait");
  return ms;
}

/* ns per op inside one segment of NUM_OPS flips (inference). */
static double segment_once(mxr_engine *eng, mxr_symbol *sym) {
  int64_t shape[] = {LEN};
  mxr_ndarray *x = array(eng, 1, shape, 0);
  struct mxr_exec_opts o;
  if (mxr_exec_opts_from_config(&o)) bench_die("config");
  o.engine = eng;
  o.bulk_inference = true;
  mxr_executor *ex;
  if (mxr_executor_bind(sym, mxr_cpu(0), 1, &x, NULL, NULL, 0, NULL, &o, &ex)) bench_die("bind");
  int n;
  mxr_ndarray *const *outs;
  mxr_executor_outputs(ex, &n, &outs);
  double start = 0;
  for (int i = 0; i < ITERS + 1; i++) {
    if (i == 1) start = bench_now_s();
    if (mxr_executor_forward(ex, false) || mxr_ndarray_wait_to_read(outs[0])) bench_die("run");
  }
  double ns = (bench_now_s() - start) * 1e9 / ITERS / NUM_OPS;
  mxr_executor_free(ex);
  mxr_ndarray_free(x);
  if (mxr_engine_wait_for_all(eng)) bench_die("wait");
  return ns;
}

/* FullyConnected forward vs sgemm, GFLOP/s of each. */
static void fc_vs_sgemm(mxr_engine *eng, int size, int reps, double *fc, double *blas) {
  const mxr_op *op;
  if (mxr_op_find("FullyConnected", &op) != 0) {
    *fc = *blas = -1;
    return;
  }
  char hidden[16];
  snprintf(hidden, sizeof hidden, "%d", size);
  const char *k[] = {"num_hidden", "no_bias"}, *v[] = {hidden, "True"};
  mxr_symbol *data;
  if (mxr_symbol_variable("data", &data)) bench_die("variable");
  mxr_symbol *sym = bench_op_symbol("FullyConnected", 2, k, v, data, "fc");
  int64_t shape[] = {size, size};
  mxr_ndarray *args[2] = {array(eng, 2, shape, 0.5f), array(eng, 2, shape, 0.25f)};
  struct mxr_exec_opts o;
  if (mxr_exec_opts_from_config(&o)) bench_die("config");
  o.engine = eng;
  mxr_executor *ex;
  if (mxr_executor_bind(sym, mxr_cpu(0), 2, args, NULL, NULL, 0, NULL, &o, &ex)) bench_die("bind fc");
  int n;
  mxr_ndarray *const *outs;
  mxr_executor_outputs(ex, &n, &outs);
  double flops = 2.0 * size * (double)size * size, t_fc[MAX_REPS], t_blas[MAX_REPS];
  float *a = mxr_ndarray_data(args[0]), *w = mxr_ndarray_data(args[1]);
  float *c = malloc((size_t)size * size * sizeof *c);
  for (int r = 0; r < reps + 1; r++) { /* first round warms up */
    double t0 = bench_now_s();
    if (mxr_executor_forward(ex, false) || mxr_ndarray_wait_to_read(outs[0])) bench_die("fc");
    double t1 = bench_now_s();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, size, size, size, 1.0f, a, size, w, size,
                0.0f, c, size);
    double t2 = bench_now_s();
    if (r) {
      t_fc[r - 1] = t1 - t0;
      t_blas[r - 1] = t2 - t1;
    }
  }
  *fc = flops / bench_median(t_fc, reps) * 1e-9;
  *blas = flops / bench_median(t_blas, reps) * 1e-9;
  free(c);
  mxr_executor_free(ex);
  mxr_ndarray_free(args[0]);
  mxr_ndarray_free(args[1]);
  mxr_symbol_free(sym);
  mxr_symbol_free(data);
  if (mxr_engine_wait_for_all(eng)) bench_die("wait");
}

int main(int argc, char **argv) {
  bench_prog = "executor_bench";
  int reps = 5;
  bool check = false;
  int done = bench_parse_args(argc, argv, MAX_REPS, &reps, &check);
  if (done >= 0) return done;
  mxr_engine *eng;
  if (mxr_engine_default(&eng)) bench_die("engine");
  printf("engine: %s; seed workload: %d chained flips on (%d,), %d timed iterations, median of %d runs\n",
         mxr_engine_type_name(mxr_engine_type_of(eng)), NUM_OPS, LEN, ITERS, reps);
  static const int configs[6][3] = {{0, 0, 1}, {1, 1, 1}, {15, 15, 0}, {15, 0, 1}, {0, 15, 1}, {15, 15, 1}};
  mxr_symbol *sym = bench_flip_chain(NUM_OPS);
  int missed = 0;
  printf("%-22s %12s %10s\n", "(fwd,bwd,train)", "ms/iter", "target");
  for (int c = 0; c < 6; c++) {
    double t[MAX_REPS];
    for (int r = 0; r < reps; r++) t[r] = seed_once(eng, sym, configs[c]);
    double ms = bench_median(t, reps);
    bool full = c == 5, none = c <= 2;
    double target = full ? 0.3 : none ? 3.0 : 0;
    char label[32];
    snprintf(label, sizeof label, "(%d,%d,%d)", configs[c][0], configs[c][1], configs[c][2]);
    const char *verdict = target == 0 ? "" : ms <= target ? "ok" : "MISSED";
    missed += target > 0 && ms > target;
    if (target > 0) printf("%-22s %12.3f %10.1f  %s\n", label, ms, target, verdict);
    else printf("%-22s %12.3f %10s\n", label, ms, "-");
    fflush(stdout);
  }
  double seg[MAX_REPS];
  for (int r = 0; r < reps; r++) seg[r] = segment_once(eng, sym);
  printf("ns per op inside a bulked segment (flip on (10,)): %.1f\n", bench_median(seg, reps));
  mxr_symbol_free(sym);
  double fc, blas;
  fc_vs_sgemm(eng, 1024, reps, &fc, &blas);
  if (fc < 0) {
    printf("FullyConnected: not registered in this build\n");
  } else {
    double ratio = fc / blas;
    missed += ratio < 0.9;
    printf("FullyConnected 1024x1024x1024: %.1f GFLOP/s, direct sgemm %.1f GFLOP/s, ratio %.2f (target >= 0.90) %s\n",
           fc, blas, ratio, ratio >= 0.9 ? "ok" : "MISSED");
  }
  printf("%d of the targets missed\n", missed);
  mxr_engine_shutdown_default();
  return check && missed ? 1 : 0;
}
