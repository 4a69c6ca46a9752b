/*
 * Engine dispatch cost: nanoseconds per empty op, for each engine type.
 *
 *   independent  each op writes one of 1024 vars, round robin: consecutive
 *                ops never wait for each other
 *   chained      every op writes the same var: each waits for the previous
 *   +bulk15      the same with the pushing thread's bulk size at 15
 *
 * Time is measured from the first push to the return of wait-for-all, so it
 * includes pushing, dispatch, running and completion.  Each figure is the
 * median of --reps runs.  Targets (2-core machine): ThreadedEnginePerDevice
 * at most 150 ns/op unbulked and 40 bulked, NaiveEngine at most 30, and the
 * pooled ThreadedEngine within 2x of ThreadedEnginePerDevice on the same
 * workload.  These are the engine's own figures; the same ops pushed through
 * the C API are the engine-dispatch suite's (make bench-compare).  Exit
 * status 0 unless --check is given and a target is missed.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "mxref/mxref.h"

enum { NUM_VARS = 1024, MAX_REPS = 15 };

static int empty_op(const struct mxr_run_ctx *rctx, void *param) {
  (void)rctx;
  (void)param;
  return 0;
}

/* One timed run: ns per op. */
static double run_once(const struct mxr_engine_opts *opts, long ops, bool chained, int bulk) {
  mxr_engine *eng;
  if (mxr_engine_create(opts, &eng)) bench_die("create engine");
  mxr_var *vars[NUM_VARS];
  for (int v = 0; v < NUM_VARS; v++)
    if (mxr_engine_new_var(eng, &vars[v])) bench_die("new var");
  /* Warm the pools up so thread start-up is not timed. */
  if (mxr_engine_push_sync(eng, empty_op, NULL, NULL, mxr_cpu(0), NULL, 0, &vars[0], 1, "warm"))
    bench_die("push");
  if (mxr_engine_wait_for_all(eng)) bench_die("wait");
  mxr_engine_set_bulk_size(eng, bulk);
  double t0 = bench_now_s();
  for (long k = 0; k < ops; k++) {
    mxr_var *v = chained ? vars[0] : vars[k % NUM_VARS];
    if (mxr_engine_push_sync(eng, empty_op, NULL, NULL, mxr_cpu(0), NULL, 0, &v, 1, "empty"))
      bench_die("push");
  }
  if (mxr_engine_wait_for_all(eng)) bench_die("wait");
  double t1 = bench_now_s();
  mxr_engine_set_bulk_size(eng, 0);
  if (mxr_engine_free(eng)) bench_die("free engine");
  return (t1 - t0) * 1e9 / (double)ops;
}

static double median_run(const struct mxr_engine_opts *opts, long ops, bool chained, int bulk,
                         int reps) {
  double t[MAX_REPS];
  for (int r = 0; r < reps; r++) t[r] = run_once(opts, ops, chained, bulk);
  return bench_median(t, reps);
}

struct row {
  const char *engine;
  int type;
  const char *workload;
  bool chained;
  int bulk;
  double target_ns; /* 0: no fixed target */
  int relative_to;  /* >= 0: target is 2x that row's figure (a row above) */
};

static const struct row rows[] = {
    {"NaiveEngine", MXR_ENGINE_NAIVE, "independent", false, 0, 30, -1},
    {"NaiveEngine", MXR_ENGINE_NAIVE, "chained", true, 0, 30, -1},
    {"ThreadedEnginePerDevice", MXR_ENGINE_THREADED_PER_DEVICE, "independent", false, 0, 150, -1},
    {"ThreadedEnginePerDevice", MXR_ENGINE_THREADED_PER_DEVICE, "chained", true, 0, 150, -1},
    {"ThreadedEnginePerDevice", MXR_ENGINE_THREADED_PER_DEVICE, "independent+bulk15", false, 15, 40, -1},
    {"ThreadedEnginePerDevice", MXR_ENGINE_THREADED_PER_DEVICE, "chained+bulk15", true, 15, 40, -1},
    {"ThreadedEngine", MXR_ENGINE_THREADED, "independent", false, 0, 0, 2},
    {"ThreadedEngine", MXR_ENGINE_THREADED, "chained", true, 0, 0, 3},
    {"ThreadedEngine", MXR_ENGINE_THREADED, "independent+bulk15", false, 15, 0, 4},
    {"ThreadedEngine", MXR_ENGINE_THREADED, "chained+bulk15", true, 15, 0, 5},
};
#define NUM_ROWS ((int)(sizeof rows / sizeof rows[0]))

static void usage(FILE *f) {
  fprintf(f,
          "usage: engine_bench [--ops N] [--reps R] [--check]\n"
          "  --ops N   ops per run (default 1000000)\n"
          "  --reps R  runs per figure, the median is printed (default 3, max %d)\n"
          "  --check   exit 1 if a figure misses its target\n"
          "Engine options come from the MXNET_* environment (e.g. MXNET_CPU_WORKER_NTHREADS);\n"
          "the engine type is set per row.\n",
          MAX_REPS);
}

int main(int argc, char **argv) {
  bench_prog = "engine_bench";
  long ops = 1000000;
  int reps = 3;
  bool check = false;
  static const struct option longopts[] = {{"ops", required_argument, NULL, 'n'},
                                           {"reps", required_argument, NULL, 'r'},
                                           {"check", no_argument, NULL, 'c'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "n:r:ch", longopts, NULL)) != -1) {
    switch (c) {
      case 'n': ops = strtol(optarg, NULL, 10); break;
      case 'r': reps = atoi(optarg); break;
      case 'c': check = true; break;
      case 'h': usage(stdout); return 0;
      default: usage(stderr); return 2;
    }
  }
  if (ops <= 0 || reps <= 0 || reps > MAX_REPS) {
    usage(stderr);
    return 2;
  }
  struct mxr_engine_opts base;
  if (mxr_engine_opts_from_config(&base)) bench_die("configuration");
  printf("engine dispatch cost: %ld empty ops per run, median of %d runs\n", ops, reps);
  printf("%-24s %-20s %10s %10s  %s\n", "engine", "workload", "ns/op", "target", "");
  int missed = 0;
  double ns[NUM_ROWS];
  for (int i = 0; i < NUM_ROWS; i++) {
    const struct row *r = &rows[i];
    struct mxr_engine_opts o = base;
    o.type = r->type;
    ns[i] = median_run(&o, ops, r->chained, r->bulk, reps);
    double target = r->relative_to >= 0 ? 2 * ns[r->relative_to] : r->target_ns;
    bool met = ns[i] <= target;
    missed += !met;
    char shown[32];
    if (r->relative_to >= 0)
      snprintf(shown, sizeof shown, "2x=%.0f", target);
    else
      snprintf(shown, sizeof shown, "%.0f", target);
    printf("%-24s %-20s %10.1f %10s  %s\n", r->engine, r->workload, ns[i], shown, met ? "ok" : "MISSED");
    fflush(stdout);
  }
  printf("%d of the targets missed\n", missed);
  return check && missed ? 1 : 0;
}
