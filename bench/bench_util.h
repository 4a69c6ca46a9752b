/*
 * What the benchmarks share: the monotonic clock in seconds, medians, a
 * fatal error that names the program and libmxref's last error, and the
 * seed workload's chain of flips.  Header-only: each benchmark is one program.
 */
#ifndef MXR_BENCH_UTIL_H
#define MXR_BENCH_UTIL_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/timer.h"
#include "mxref/mxref.h"
#include "mxref/symbol.h"

/* The program's name in error messages; each main() sets it first. */
static const char *bench_prog = "bench";

/* The monotonic clock of common/timer.h, in seconds. */
static inline double bench_now_s(void) { return (double)mxr__now_ns() * 1e-9; }

static inline void bench_die(const char *what) {
  fprintf(stderr, "%s: %s: %s\n", bench_prog, what, mxr_last_error());
  exit(2);
}

static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The options of a benchmark that takes `--reps R` (1..max_reps) and
 * `--check`: sets *reps and *check and returns -1 to go on, or the exit
 * status for main to return (0 after --help, 2 for a usage error). */
static inline int bench_parse_args(int argc, char **argv, int max_reps, int *reps, bool *check) {
  static const struct option longopts[] = {{"reps", required_argument, NULL, 'r'},
                                           {"check", no_argument, NULL, 'c'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  for (int c; (c = getopt_long(argc, argv, "r:ch", longopts, NULL)) != -1;) {
    if (c == 'r') *reps = atoi(optarg);
    else if (c == 'c') *check = true;
    else {
      fprintf(c == 'h' ? stdout : stderr, "usage: %s [--reps R (1..%d)] [--check]\n", bench_prog,
              max_reps);
      return c == 'h' ? 0 : 2;
    }
  }
  if (*reps < 1 || *reps > max_reps) {
    fprintf(stderr, "%s: --reps must be 1..%d\n", bench_prog, max_reps);
    return 2;
  }
  return -1;
}

/* The median of t[0..n) (sorts t). */
static inline double bench_median(double *t, int n) {
  qsort(t, (size_t)n, sizeof(double), bench_cmp_double);
  return t[n / 2];
}

/* `opname` with params k[i]=v[i], applied to `input` (or nothing). */
static inline mxr_symbol *bench_op_symbol(const char *opname, int n, const char **k,
                                          const char **v, mxr_symbol *input, const char *name) {
  const mxr_op *op;
  mxr_op_params *p;
  mxr_symbol *s;
  if (mxr_op_find(opname, &op) || mxr_op_params_parse(op, n, k, v, &p) || mxr_symbol_atomic(op, p, &s))
    bench_die(opname);
  mxr_op_params_free(p);
  if (mxr_symbol_compose(s, name, input ? 1 : 0, NULL, input ? &input : NULL)) bench_die("compose");
  return s;
}

/* The seed workload: `num_ops` chained flips (axis 0) of variable X. */
static inline mxr_symbol *bench_flip_chain(int num_ops) {
  const char *k[] = {"axis"}, *v[] = {"0"};
  mxr_symbol *x;
  if (mxr_symbol_variable("X", &x)) bench_die("variable");
  for (int i = 0; i < num_ops; i++) {
    mxr_symbol *f = bench_op_symbol("flip", 1, k, v, x, NULL);
    mxr_symbol_free(x);
    x = f;
  }
  return x;
}

#endif /* MXR_BENCH_UTIL_H */
