/*
 * Test support for symbol-based tests: the seed workload's chain of flips.
 * Static inline only; a test binary includes it where it needs it.
 */
#ifndef MXR_TESTS_SYMBOL_UTIL_H
#define MXR_TESTS_SYMBOL_UTIL_H

#include <check.h>
#include <math.h>

#include "mxref/op.h"
#include "mxref/symbol.h"

/* X followed by n flips along axis 0 (the caller frees the symbol). */
static inline mxr_symbol *tu_flip_chain(int n) {
  const mxr_op *op;
  ck_assert_int_eq(mxr_op_find("flip", &op), 0);
  const char *k[] = {"axis"}, *v[] = {"0"};
  mxr_op_params *p;
  ck_assert_int_eq(mxr_op_params_parse(op, 1, k, v, &p), 0);
  mxr_symbol *x;
  ck_assert_int_eq(mxr_symbol_variable("X", &x), 0);
  for (int i = 0; i < n; i++) {
    mxr_symbol *f;
    ck_assert_int_eq(mxr_symbol_atomic(op, p, &f), 0);
    ck_assert_int_eq(mxr_symbol_compose(f, NULL, 1, NULL, &x), 0);
    mxr_symbol_free(x);
    x = f;
  }
  mxr_op_params_free(p);
  return x;
}

/* flip, flip, 2x2 max pool, flip, flip on a (1, 1, 8, 8) input: the pooled
 * values fit in views of the flips' dead arrays. */
static const char tu_pool_chain_json[] =
    "{\"nodes\": ["
    "{\"op\": \"null\", \"name\": \"X\", \"inputs\": []},"
    "{\"op\": \"flip\", \"name\": \"f1\", \"attrs\": {\"axis\": \"3\"}, \"inputs\": [[0, 0, 0]]},"
    "{\"op\": \"flip\", \"name\": \"f2\", \"attrs\": {\"axis\": \"3\"}, \"inputs\": [[1, 0, 0]]},"
    "{\"op\": \"Pooling\", \"name\": \"pool\", \"attrs\": {\"kernel\": \"(2, 2)\", \"stride\": \"(2, 2)\","
    " \"pool_type\": \"max\"}, \"inputs\": [[2, 0, 0]]},"
    "{\"op\": \"flip\", \"name\": \"f3\", \"attrs\": {\"axis\": \"2\"}, \"inputs\": [[3, 0, 0]]},"
    "{\"op\": \"flip\", \"name\": \"f4\", \"attrs\": {\"axis\": \"2\"}, \"inputs\": [[4, 0, 0]]}],"
    " \"arg_nodes\": [0], \"heads\": [[5, 0, 0]]}";

/* What tu_pool_chain_json computes from the 8x8 image x: its 2x2 max pool
 * (the flips cancel). */
static inline void tu_pool_chain_output(const float *x, float *y) {
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) {
      const float *w = &x[16 * i + 2 * j];
      y[4 * i + j] = fmaxf(fmaxf(w[0], w[1]), fmaxf(w[8], w[9]));
    }
}

#endif /* MXR_TESTS_SYMBOL_UTIL_H */
