/*
 * A random workload in the style of MXNet's RandSumExpr engine test: 10,000
 * ops over 100 vars, each reading 2-20 distinct vars and writing one other.
 * Every engine type and worker count must end with exactly the values of a
 * serial run.  Values are 64-bit hashes, so any reordering of a read and a
 * write shows up as a different final state.  A share of the ops is async
 * (completed from the op itself or from a helper thread) to cover that path.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_tap.h"
#include "engine_util.h"

enum { NUM_VARS = 100, NUM_OPS = 10000, MIN_READS = 2, MAX_READS = 20 };

struct rand_op {
  int reads[MAX_READS];
  int num_reads;
  int write;
  bool async;
  bool bulk_eligible;
};

struct workload {
  struct rand_op ops[NUM_OPS];
  uint64_t initial[NUM_VARS];
};

struct op_param {
  const struct rand_op *op;
  uint64_t *values;
  int index;
};

static uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xbf58476d1ce4e5b9ull;
}

static void apply(const struct rand_op *op, uint64_t *values, int index) {
  uint64_t h = (uint64_t)index;
  for (int i = 0; i < op->num_reads; i++) h = mix(h, values[op->reads[i]]);
  values[op->write] = mix(h, values[op->write]);
}

static uint64_t xorshift(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void make_workload(struct workload *w, uint64_t seed) {
  for (int v = 0; v < NUM_VARS; v++) w->initial[v] = mix(seed, (uint64_t)v);
  for (int k = 0; k < NUM_OPS; k++) {
    struct rand_op *op = &w->ops[k];
    op->num_reads = MIN_READS + (int)(xorshift(&seed) % (MAX_READS - MIN_READS + 1));
    op->write = (int)(xorshift(&seed) % NUM_VARS);
    int n = 0;
    while (n < op->num_reads) {
      int v = (int)(xorshift(&seed) % NUM_VARS);
      bool taken = v == op->write;
      for (int i = 0; i < n && !taken; i++) taken = op->reads[i] == v;
      if (!taken) op->reads[n++] = v;
    }
    op->async = xorshift(&seed) % 8 == 0;
    op->bulk_eligible = xorshift(&seed) % 2 == 0;
  }
}

static int run_sync(const struct mxr_run_ctx *rctx, void *p) {
  (void)rctx;
  struct op_param *q = p;
  apply(q->op, q->values, q->index);
  return 0;
}

static void run_async(const struct mxr_run_ctx *rctx, void *p, mxr_completion *done) {
  run_sync(rctx, p);
  mxr_engine_complete(done, 0);
}

static void run_engine(int cfg, const struct workload *w, uint64_t *values, int bulk_size) {
  mxr_engine *eng = tu_engine(cfg);
  mxr_var *vars[NUM_VARS];
  for (int v = 0; v < NUM_VARS; v++) ck_assert_int_eq(mxr_engine_new_var(eng, &vars[v]), 0);
  memcpy(values, w->initial, sizeof w->initial);
  struct op_param *params = malloc(sizeof(struct op_param) * NUM_OPS);
  if (bulk_size) mxr_engine_set_bulk_size(eng, bulk_size);
  for (int k = 0; k < NUM_OPS; k++) {
    const struct rand_op *op = &w->ops[k];
    params[k] = (struct op_param){op, values, k};
    mxr_var *reads[MAX_READS];
    for (int i = 0; i < op->num_reads; i++) reads[i] = vars[op->reads[i]];
    struct mxr_push req = {.param = &params[k], .ctx = mxr_cpu(0), .const_vars = reads,
                           .num_const = op->num_reads, .mutable_vars = &vars[op->write],
                           .num_mutable = 1, .name = "rand"};
    if (op->async) {
      req.async_fn = run_async;
      req.prop = MXR_PROP_ASYNC;
    } else {
      req.sync_fn = run_sync;
      req.priority = op->bulk_eligible ? 0 : 1; /* priority != 0 is never bulked */
    }
    ck_assert_int_eq(mxr_engine_push(eng, &req), 0);
  }
  ck_assert_int_eq(mxr_engine_wait_for_all(eng), 0);
  struct mxr_engine_stats s;
  mxr_engine_get_stats(eng, &s);
  if (bulk_size && tu_engine_configs[cfg].opts.type != MXR_ENGINE_NAIVE)
    ck_assert_uint_gt(s.bulks_pushed, 0);
  for (int v = 0; v < NUM_VARS; v++) ck_assert_int_eq(mxr_engine_delete_var(eng, vars[v], NULL, NULL, NULL), 0);
  ck_assert_int_eq(mxr_engine_free(eng), 0);
  free(params);
}

static void check_against_serial(int cfg, uint64_t seed, int bulk_size) {
  struct workload *w = malloc(sizeof *w);
  make_workload(w, seed);
  uint64_t serial[NUM_VARS], got[NUM_VARS];
  memcpy(serial, w->initial, sizeof serial);
  for (int k = 0; k < NUM_OPS; k++) apply(&w->ops[k], serial, k);
  run_engine(cfg, w, got, bulk_size);
  for (int v = 0; v < NUM_VARS; v++)
    ck_assert_msg(got[v] == serial[v], "%s (bulk %d, seed %llu): var %d differs from the serial run",
                  tu_engine_configs[cfg].label, bulk_size, (unsigned long long)seed, v);
  free(w);
}

START_TEST(test_random_matches_serial) {
  for (uint64_t seed = 1; seed <= 3; seed++) check_against_serial(_i, seed * 7919, 0);
}
END_TEST

START_TEST(test_random_bulked_matches_serial) {
  check_against_serial(_i, 104729, 15);
}
END_TEST

/* The checker itself must be able to fail: a run that drops one op differs. */
START_TEST(test_serial_oracle_detects_a_lost_op) {
  struct workload *w = malloc(sizeof *w);
  make_workload(w, 42);
  uint64_t a[NUM_VARS], b[NUM_VARS];
  memcpy(a, w->initial, sizeof a);
  memcpy(b, w->initial, sizeof b);
  for (int k = 0; k < NUM_OPS; k++) apply(&w->ops[k], a, k);
  for (int k = 0; k < NUM_OPS; k++)
    if (k != NUM_OPS / 2) apply(&w->ops[k], b, k);
  ck_assert_int_ne(memcmp(a, b, sizeof a), 0);
  free(w);
}
END_TEST

int main(void) {
  Suite *s = suite_create("engine random workload");
  TCase *tc = tcase_create("random");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_random_matches_serial, 0, TU_NUM_ENGINE_CONFIGS);
  tcase_add_loop_test(tc, test_random_bulked_matches_serial, 0, TU_NUM_ENGINE_CONFIGS);
  tcase_add_test(tc, test_serial_oracle_detects_a_lost_op);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
