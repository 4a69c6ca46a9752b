/*
 * The runner and the judge against the fake probe (fake_probe.c): every
 * process outcome, orderings that must pass, fail or stay undecided, structure,
 * equality, expectations, exact environments, timed work running alone and
 * the seeded order.  No real timing is asserted: the fake probe reports
 * canned timings, so these tests may run beside others.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_tap.h"
#include "common/common.h"
#include "harness_util.h"
#include "judge/judge.h"
#include "report/report.h"
#include "run/run.h"
#include "session/session.h"

/* Two configs, slow and fast, and an assertion of every kind. */

static const char ordered_suite[] =
    "{\"format\": 1, \"name\": \"ord\", \"workload\": \"fake\", \"params\": {\"num_ops\": 100},"
    " \"timeout\": 20,"
    " \"configs\": ["
    "  {\"id\": \"slow\", \"group\": \"unbulked\", \"env\": {\"FAKE_ID\": \"slow\", \"FAKE_MS\": \"%s\","
    "   \"FAKE_NOISE\": \"%s\", \"FAKE_OUTLIER\": \"%s\", \"FAKE_CAP\": \"off\"%s}},"
    "  {\"id\": \"fast\", \"env\": {\"FAKE_ID\": \"fast\", \"FAKE_MS\": \"1.0\", \"FAKE_NOISE\": \"%s\","
    "   \"FAKE_OUTLIER\": \"%s\", \"FAKE_CAP\": \"%s\"%s}}],"
    " \"assertions\": ["
    "  {\"id\": \"order\", \"type\": \"ordering\", \"slower\": [\"group:unbulked\"], \"faster\": [\"fast\"]},"
    "  {\"id\": \"structure\", \"type\": \"structure\", \"expect\": {"
    "    \"slow\": {\"forward\": {\"single\": 100}, \"backward\": {\"single\": 100}},"
    "    \"fast\": {\"forward\": {\"bulk\": [100, 15]}, \"backward\": {\"bulk\": [100, 15]}}}},"
    "  {\"id\": \"checks\", \"type\": \"checks\"},"
    "  {\"id\": \"value\", \"type\": \"value\", \"checks\": [\"output_is_flipped_input\"]},"
    "  {\"id\": \"same\", \"type\": \"equal\", \"path\": \"values.*.digest\"}]}";

struct ord {
  const char *slow_ms, *noise, *outlier, *slow_extra, *fast_cap, *fast_extra;
};

static char *write_ordered(const char *dir, const struct ord *o) {
  char *text = mxcts_xasprintf(ordered_suite, o->slow_ms, o->noise, o->outlier, o->slow_extra,
                               o->noise, o->outlier, o->fast_cap, o->fast_extra);
  char *path = hu_write_suite(dir, "ord", text);
  free(text);
  return path;
}

static const struct ord clear = {"2.0", "0.02", "0", "", "15", ""};

/* Run the ordered suite written with `o` under `seed`: the results, with
 * the run's directory in *dir for hu_cleanup. */
static json_t *run_ordered(const struct ord *o, uint64_t seed, char **dir) {
  *dir = hu_tmpdir();
  free(write_ordered(*dir, o));
  return hu_run(*dir, seed, 1);
}

START_TEST(test_clear_ordering_and_every_kind_pass) {
  char *dir;
  json_t *r = run_ordered(&clear, 42, &dir);
  const char *names[] = {"ord/order", "ord/structure", "ord/checks", "ord/value", "ord/same"};
  for (size_t i = 0; i < 5; i++)
    ck_assert_msg(!strcmp(hu_verdict(r, names[i]), "pass"), "%s: %s: %s", names[i],
                  hu_verdict(r, names[i]),
                  json_string_value(json_object_get(hu_assertion(r, names[i]), "detail")));
  json_t *order = hu_assertion(r, "ord/order");
  json_t *pair = json_array_get(json_object_get(json_object_get(order, "diag"), "pairs"), 0);
  /* a clear effect: 15 wins of 15 reach the upper bound in the first batch */
  ck_assert_int_eq(json_integer_value(json_object_get(pair, "wins")), 15);
  ck_assert_int_eq(json_integer_value(json_object_get(pair, "decided_at")), 15);
  ck_assert_str_eq(json_string_value(json_object_get(pair, "decision")), "pass");
  ck_assert(json_number_value(json_object_get(pair, "llr")) >= json_number_value(json_object_get(pair, "upper")));
  ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(order, "diag"), "rounds_run")), 15);
  ck_assert_ptr_null(json_object_get(order, "more_rounds"));
  const char *cmd = json_string_value(json_object_get(order, "command"));
  ck_assert_ptr_nonnull(strstr(cmd, "env -i"));
  ck_assert_ptr_nonnull(strstr(cmd, "--workload fake"));
  ck_assert_ptr_nonnull(strstr(cmd, "--param num_ops=100"));
  ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "pass");
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

/* One config per way a process can end badly, one assertion each. */
static const char bad_suite[] =
    "{\"format\": 1, \"name\": \"bad\", \"workload\": \"fake\", \"rounds\": 2, \"timeout\": 1,"
    " \"configs\": ["
    "  {\"id\": \"ok\", \"env\": {}},"
    "  {\"id\": \"crash\", \"env\": {\"FAKE_MODE\": \"crash\"}},"
    "  {\"id\": \"hang\", \"env\": {\"FAKE_MODE\": \"hang\"}},"
    "  {\"id\": \"error\", \"env\": {\"FAKE_MODE\": \"error\"}},"
    "  {\"id\": \"exit\", \"env\": {\"FAKE_MODE\": \"exit\"}},"
    "  {\"id\": \"usage\", \"env\": {\"FAKE_MODE\": \"usage\"}},"
    "  {\"id\": \"malformed\", \"env\": {\"FAKE_MODE\": \"malformed\"}}],"
    " \"assertions\": ["
    "  {\"id\": \"ok\", \"type\": \"checks\", \"configs\": [\"ok\"]},"
    "  {\"id\": \"crash\", \"type\": \"checks\", \"configs\": [\"crash\", \"ok\"]},"
    "  {\"id\": \"hang\", \"type\": \"checks\", \"configs\": [\"hang\"]},"
    "  {\"id\": \"error\", \"type\": \"checks\", \"configs\": [\"error\"]},"
    "  {\"id\": \"exit\", \"type\": \"value\", \"configs\": [\"exit\"], \"checks\": [\"x\"]},"
    "  {\"id\": \"usage\", \"type\": \"checks\", \"configs\": [\"usage\"]},"
    "  {\"id\": \"malformed\", \"type\": \"equal\", \"configs\": [\"malformed\", \"ok\"],"
    "   \"path\": \"values.output.digest\"}]}";

static void assert_verdict(json_t *r, const char *name, const char *verdict, const char *in_detail) {
  json_t *a = hu_assertion(r, name);
  const char *detail = json_string_value(json_object_get(a, "detail"));
  ck_assert_msg(a && !strcmp(hu_verdict(r, name), verdict), "%s: %s, expected %s (%s)", name,
                hu_verdict(r, name), verdict, detail ? detail : "");
  if (in_detail)
    ck_assert_msg(strstr(detail, in_detail), "%s: detail \"%s\" lacks \"%s\"", name, detail, in_detail);
}

START_TEST(test_crash_timeout_error_verdicts) {
  char *dir = hu_tmpdir();
  free(hu_write_suite(dir, "bad", bad_suite));
  double t0 = mxcts_now();
  json_t *r = hu_run(dir, 7, 4);
  ck_assert_msg(mxcts_now() - t0 < 10, "the hung processes were not killed at their deadline");
  assert_verdict(r, "bad/ok", "pass", NULL);
  assert_verdict(r, "bad/crash", "crash", "SIGSEGV");
  assert_verdict(r, "bad/hang", "timeout", "deadline");
  assert_verdict(r, "bad/error", "error", "fake failure");
  assert_verdict(r, "bad/exit", "error", "exited with status 3");
  assert_verdict(r, "bad/exit", "error", "fake_probe: exiting");
  assert_verdict(r, "bad/usage", "error", "status 2");
  assert_verdict(r, "bad/malformed", "error", "result.json");
  ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "fail");
  const char *cmd = json_string_value(json_object_get(hu_assertion(r, "bad/crash"), "command"));
  ck_assert_ptr_nonnull(strstr(cmd, "FAKE_MODE=crash"));
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

/* A config that hangs costs one deadline, not one per round: its later
 * rounds are skipped and carry the timeout; --keep-going runs them all. */
static const char hung_suite[] =
    "{\"format\": 1, \"name\": \"hung\", \"workload\": \"fake\", \"rounds\": 5, \"timeout\": 1,"
    " \"configs\": [{\"id\": \"hang\", \"env\": {\"FAKE_MODE\": \"hang\"}}, {\"id\": \"ok\"}],"
    " \"assertions\": [{\"id\": \"hang\", \"type\": \"checks\", \"configs\": [\"hang\"]},"
    "  {\"id\": \"ok\", \"type\": \"checks\", \"configs\": [\"ok\"]}]}";

/* An ordering with max_contention: rounds where a process reports more
 * contention are left out and more batches run instead, up to the budget;
 * a machine busy throughout gives an inconclusive verdict, never a pass and
 * never a failure. */
static char *contention_suite(const char *slow_contention, const char *fast_ms) {
  return mxcts_xasprintf(
      "{\"format\": 1, \"name\": \"busy\", \"workload\": \"fake\", \"rounds\": 10, \"max_rounds\": 40,"
      " \"configs\": [{\"id\": \"slow\", \"env\": {\"FAKE_MS\": \"2\", \"FAKE_ID\": \"s\","
      " \"FAKE_NOISE\": \"0.02\", \"FAKE_CONTENTION\": \"%s\"}},"
      " {\"id\": \"fast\", \"env\": {\"FAKE_MS\": \"%s\", \"FAKE_ID\": \"f\", \"FAKE_NOISE\": \"0.02\","
      " \"FAKE_CONTENTION\": \"0.1\"}}],"
      " \"assertions\": [{\"id\": \"order\", \"type\": \"ordering\", \"slower\": [\"slow\"],"
      " \"faster\": [\"fast\"], \"max_contention\": 0.5}]}",
      slow_contention, fast_ms);
}

START_TEST(test_contended_rounds_are_left_out) {
  struct { const char *slow_contention, *fast_ms, *verdict, *detail; } cases[] = {
      {"0.2", "1", "pass", NULL},                 /* quiet: judged as usual */
      {"0.2", "4", "fail", "not slower"},         /* quiet and reversed: a failure */
      {"1.5", "1", "inconclusive", "0 counted rounds (40 left out"}, /* too busy to judge */
      {"1.5", "4", "inconclusive", "budget (max_rounds = 40) is spent"}, /* even reversed */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *dir = hu_tmpdir();
    char *text = contention_suite(cases[i].slow_contention, cases[i].fast_ms);
    free(hu_write_suite(dir, "busy", text));
    free(text);
    json_t *r = hu_run(dir, 13, 1);
    assert_verdict(r, "busy/order", cases[i].verdict, cases[i].detail);
    /* Undecided: more batches ran, up to the budget; the run's status says so. */
    json_t *diag = json_object_get(hu_assertion(r, "busy/order"), "diag");
    bool undecided = !strcmp(cases[i].verdict, "inconclusive");
    /* a pass needs 15 wins (two batches of 10), a failure 31 losses (four) */
    int want = undecided ? 40 : !strcmp(cases[i].verdict, "pass") ? 20 : 40;
    ck_assert_int_eq(json_integer_value(json_object_get(diag, "rounds_run")), want);
    ck_assert_str_eq(json_string_value(json_object_get(r, "status")), undecided ? "inconclusive" : cases[i].verdict);
    ck_assert_int_eq(mxcts_results_exit_status(r), undecided ? 3 : !strcmp(cases[i].verdict, "fail"));
    json_decref(r);
    hu_cleanup(dir);
  }
}
END_TEST

/* A suite that needs a GPU: skipped when the implementation reports none,
 * run when it reports one, and run as well when asking failed (its own
 * processes then show what is wrong). */
static const char gpu_suite[] =
    "{\"format\": 1, \"name\": \"gpu\", \"workload\": \"fake\", \"rounds\": 2,"
    " \"requires\": [\"gpu\"], \"configs\": [{\"id\": \"a\"}],"
    " \"assertions\": [{\"id\": \"ok\", \"type\": \"checks\", \"configs\": [\"a\"]}]}";

START_TEST(test_gpu_suite_needs_a_gpu) {
  const char *answers[] = {"0", "1", "crash"};
  const char *want[] = {"skip", "pass", "pass"};
  for (int i = 0; i < 3; i++) {
    char *dir = hu_tmpdir();
    free(hu_write_suite(dir, "gpu", gpu_suite));
    ck_assert_int_eq(setenv("FAKE_GPUS", answers[i], 1), 0);
    struct mxcts_options o;
    hu_options(&o, dir, 9);
    mxcts_strv_push(&o.pass_env, "FAKE_GPUS");
    json_t *r = hu_run_opts(&o);
    assert_verdict(r, "gpu/ok", want[i], i == 0 ? "needs a GPU; fake reports none" : NULL);
    /* The implementation was asked once, in its own process. */
    char *path = mxcts_xasprintf("%s/out/preflight/gpu-count/outcome.json", dir);
    json_t *doc = json_load_file(path, 0, NULL);
    ck_assert_msg(doc, "%s: missing", path);
    ck_assert_str_eq(json_string_value(json_object_get(doc, "exit")), i == 2 ? "signal" : "code");
    json_decref(doc);
    free(path);
    json_decref(r);
    hu_cleanup(dir);
  }
}
END_TEST

static int count_exits(const char *dir, const char *config, const char *exit) {
  int n = 0;
  for (int r = 1; r <= 5; r++) {
    char *path = mxcts_xasprintf("%s/out/hung/%s/r%03d/outcome.json", dir, config, r);
    json_t *doc = json_load_file(path, 0, NULL);
    ck_assert_msg(doc, "%s: missing", path);
    n += !strcmp(json_string_value(json_object_get(doc, "exit")), exit);
    json_decref(doc);
    free(path);
  }
  return n;
}

/* A new directory holding the hung suite, and options to run it. */
static char *hung_setup(bool keep_going, struct mxcts_options *o) {
  char *dir = hu_tmpdir();
  free(hu_write_suite(dir, "hung", hung_suite));
  hu_options(o, dir, 5);
  o->keep_going = keep_going;
  return dir;
}

START_TEST(test_a_hung_config_costs_one_deadline) {
  for (int keep_going = 0; keep_going <= 1; keep_going++) {
    struct mxcts_options o;
    char *dir = hung_setup(keep_going, &o);
    json_t *r = hu_run_opts(&o);
    assert_verdict(r, "hung/hang", "timeout", keep_going ? "deadline" : NULL);
    assert_verdict(r, "hung/ok", "pass", NULL);
    ck_assert_int_eq(count_exits(dir, "hang", "timeout"), keep_going ? 5 : 1);
    ck_assert_int_eq(count_exits(dir, "hang", "skipped"), keep_going ? 0 : 4);
    ck_assert_int_eq(count_exits(dir, "ok", "code"), 5);
    json_t *hang = json_array_get(json_object_get(json_array_get(json_object_get(r, "suites"), 0),
                                                  "configs"), 0);
    json_t *counts = json_object_get(hang, "processes");
    ck_assert_int_eq(json_integer_value(json_object_get(counts, "timeout")), keep_going ? 5 : 1);
    ck_assert_int_eq(json_integer_value(json_object_get(counts, "skipped")), keep_going ? 0 : 4);
    json_decref(r);
    hu_cleanup(dir);
  }
}
END_TEST

/* Plan into dir/out with o, and run the plan's lines one after another
 * with sh, as GNU parallel would run them; frees o. */
static void run_plan_lines(const char *dir, struct mxcts_options *o) {
  o->self = mxcts_xstrdup(MXCTS_TEST_BUILDDIR "/harness/mxcts");
  struct mxcts_plan p;
  ck_assert_msg(mxcts_plan_build(o, &p) == 0, "plan: %s", mxcts_last_error());
  ck_assert_int_eq(mxcts_plan_write(&p), 0);
  char *jobs = mxcts_xasprintf("%s/jobs.txt", dir);
  FILE *f = fopen(jobs, "w");
  ck_assert_ptr_nonnull(f);
  mxcts_plan_print_lines(&p, 0, f);
  ck_assert_int_eq(fclose(f), 0);
  char *cmd = mxcts_xasprintf("sh -e '%s' >/dev/null 2>&1", jobs);
  ck_assert_int_eq(system(cmd), 0);
  free(cmd);
  free(jobs);
  mxcts_plan_free(&p);
  mxcts_options_free(o);
}

/* The same through the plan's lines (what GNU parallel runs), one mxcts
 * exec each: the config's group file carries the timeout from job to job.
 * Planning again into the same directory starts afresh (the second pass):
 * an earlier run's group file does not skip the new one's processes. */
START_TEST(test_plan_lines_skip_after_a_hang) {
  for (int keep_going = 0; keep_going <= 1; keep_going++) {
    struct mxcts_options o;
    char *dir = hung_setup(keep_going, &o);
    for (int pass = 0; pass < (keep_going ? 1 : 2); pass++) {
      if (pass) hu_options(&o, dir, 5);
      run_plan_lines(dir, &o);
      ck_assert_int_eq(count_exits(dir, "hang", "timeout"), keep_going ? 5 : 1);
      ck_assert_int_eq(count_exits(dir, "hang", "skipped"), keep_going ? 0 : 4);
      ck_assert_int_eq(count_exits(dir, "ok", "code"), 5);
    }
    if (!keep_going) {
      struct mxcts_outcome out;
      char *r2 = mxcts_xasprintf("%s/out/hung/hang/r002", dir);
      ck_assert_int_eq(mxcts_outcome_load(r2, &out), 0);
      ck_assert_int_eq(out.cause, MXCTS_EXIT_TIMEOUT);
      ck_assert_msg(out.detail && strstr(out.detail, "hung/hang/r001 timed out"), "detail: %s",
                    out.detail ? out.detail : "(none)");
      mxcts_outcome_free(&out);
      free(r2);
    }
    hu_cleanup(dir);
  }
}
END_TEST

START_TEST(test_crash_in_an_ordering_is_a_crash_not_slower) {
  char *dir;
  struct ord o = clear;
  o.slow_extra = ", \"FAKE_MODE\": \"crash\"";
  json_t *r = run_ordered(&o, 3, &dir);
  assert_verdict(r, "ord/order", "crash", "SIGSEGV");
  ck_assert_ptr_null(json_object_get(hu_assertion(r, "ord/order"), "first_attempt"));
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

/* 1.5x slower, 15 % log-normal noise on every process and one process in
 * twenty three times slower: the sign test must still pass, every seed. */
START_TEST(test_noisy_but_ordered_never_fails) {
  struct ord o = {"1.5", "0.15", "0.05", "", "15", ""};
  for (uint64_t seed = 1; seed <= 8; seed++) {
    char *dir;
    json_t *r = run_ordered(&o, seed, &dir);
    assert_verdict(r, "ord/order", "pass", NULL);
    json_decref(r);
    hu_cleanup(dir);
  }
}
END_TEST

/* Contended rounds never fail an ordered pair: half the slow config's
 * processes report a busy machine; those rounds are left out, further
 * batches make up for them, and the verdict is a pass on every seed. */
START_TEST(test_contended_rounds_never_fail_an_ordering) {
  for (uint64_t seed = 1; seed <= 4; seed++) {
    char *dir = hu_tmpdir();
    struct ord o = {"1.5", "0.1", "0", ", \"FAKE_BUSY_P\": \"0.5\"", "15", ""};
    char *text = mxcts_xasprintf(ordered_suite, o.slow_ms, o.noise, o.outlier, o.slow_extra, o.noise,
                                 o.outlier, o.fast_cap, o.fast_extra);
    const char *at = strstr(text, "\"timeout\": 20,"); /* the suite's default for its orderings */
    char *busy = mxcts_xasprintf("%.*s\"max_contention\": 0.5, %s", (int)(at - text), text, at);
    free(hu_write_suite(dir, "ord", busy));
    json_t *r = hu_run(dir, seed, 1);
    assert_verdict(r, "ord/order", "pass", NULL);
    json_t *pair = json_array_get(json_object_get(json_object_get(hu_assertion(r, "ord/order"), "diag"), "pairs"), 0);
    ck_assert_int_gt(json_integer_value(json_object_get(pair, "rounds_left_out")), 0);
    ck_assert_int_ge(json_integer_value(json_object_get(pair, "rounds")), 15);
    json_decref(r);
    free(text);
    free(busy);
    hu_cleanup(dir);
  }
}
END_TEST

/* Reversed timings: 31 losses in a row accept H0, in the third batch. */
START_TEST(test_reversed_timings_fail) {
  char *dir;
  struct ord o = {"0.8", "0.05", "0", "", "15", ""};
  json_t *r = run_ordered(&o, 11, &dir);
  assert_verdict(r, "ord/order", "fail", "not slower than");
  json_t *a = hu_assertion(r, "ord/order");
  json_t *pair = json_array_get(json_object_get(json_object_get(a, "diag"), "pairs"), 0);
  ck_assert_int_eq(json_integer_value(json_object_get(pair, "wins")), 0);
  ck_assert_int_eq(json_integer_value(json_object_get(pair, "decided_at")), 31);
  ck_assert_str_eq(json_string_value(json_object_get(pair, "decision")), "fail");
  ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(a, "diag"), "rounds_run")), 35);
  /* the other assertions are untouched by the failure */
  assert_verdict(r, "ord/structure", "pass", NULL);
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

/* Near the indifference point (a round wins with p about 0.66: 10 %
 * slower, 8 % noise per process, 5 % margin) the first batch decides
 * nothing: batches follow, and the verdict is whatever the SPRT reached --
 * inconclusive exactly when the budget ran out. */
START_TEST(test_indifference_point_runs_batches) {
  for (uint64_t seed = 1; seed <= 3; seed++) {
    static const struct ord o = {"1.1", "0.08", "0", "", "15", ""};
    char *dir;
    json_t *r = run_ordered(&o, seed, &dir);
    json_t *a = hu_assertion(r, "ord/order");
    const char *v = hu_verdict(r, "ord/order");
    int run = (int)json_integer_value(json_object_get(json_object_get(a, "diag"), "rounds_run"));
    ck_assert_int_gt(run, 15);
    ck_assert_int_eq((run - 15) % 10 == 0 || run == 100, 1);
    ck_assert_int_eq(!strcmp(v, "inconclusive"), run == 100);
    ck_assert_msg(!strcmp(v, "pass") || !strcmp(v, "fail") || !strcmp(v, "inconclusive"), "%s", v);
    /* the configs ran the later rounds; other assertions kept their verdicts */
    assert_verdict(r, "ord/structure", "pass", NULL);
    assert_verdict(r, "ord/same", "pass", NULL);
    json_decref(r);
    hu_cleanup(dir);
  }
}
END_TEST

/* An ordering blurred to about 57 % wins (7 % slower, 8 % noise per
 * process, 5 % margin), as a busy machine blurs a real one: never a
 * failure, on every seed; the fail walk stays below its bound. */
START_TEST(test_blurred_ordering_never_fails) {
  for (uint64_t seed = 1; seed <= 4; seed++) {
    static const struct ord o = {"1.07", "0.08", "0", "", "15", ""};
    char *dir;
    json_t *r = run_ordered(&o, seed, &dir);
    const char *v = hu_verdict(r, "ord/order");
    ck_assert_msg(!strcmp(v, "pass") || !strcmp(v, "inconclusive"), "seed %d: %s", (int)seed, v);
    json_t *pair = json_array_get(json_object_get(json_object_get(hu_assertion(r, "ord/order"), "diag"), "pairs"), 0);
    ck_assert(json_number_value(json_object_get(pair, "fail_llr")) <
              json_number_value(json_object_get(pair, "fail_upper")));
    json_decref(r);
    hu_cleanup(dir);
  }
}
END_TEST

/* One pair that accepts H0 fails an assertion over several pairs. */
START_TEST(test_one_failing_pair_fails_the_assertion) {
  static const char pairs_suite[] =
    "{\"format\": 1, \"name\": \"pairs\", \"workload\": \"fake\", \"configs\": ["
    "{\"id\": \"slow\", \"env\": {\"FAKE_MS\": \"3\"}}, {\"id\": \"fast\", \"env\": {\"FAKE_MS\": \"1\"}},"
    " {\"id\": \"also-slow\", \"env\": {\"FAKE_MS\": \"3\"}}], \"assertions\": ["
    "{\"id\": \"o\", \"type\": \"ordering\", \"slower\": [\"slow\"], \"faster\": [\"fast\", \"also-slow\"]},"
    " {\"id\": \"p\", \"type\": \"ordering\", \"slower\": [\"slow\", \"also-slow\"], \"faster\": [\"fast\"]}]}";
  char *dir = hu_tmpdir();
  free(hu_write_suite(dir, "pairs", pairs_suite));
  json_t *r = hu_run(dir, 3, 1);
  assert_verdict(r, "pairs/o", "fail", "slow not slower than also-slow");
  assert_verdict(r, "pairs/p", "pass", NULL);
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

/* The wait before a batch: none while the rounds ran quiet; doubling per
 * busy batch in a row, never above the bound. */
START_TEST(test_backoff_is_bounded) {
  json_t *busy = json_pack("{s:[{s:[{s:b, s:{s:[{s:i, s:i}]}}]}]}", "suites", "assertions",
                           "more_rounds", 1, "diag", "pairs", "rounds_left_out", 8, "rounds_seen", 10);
  json_t *quiet = json_pack("{s:[{s:[{s:b, s:{s:[{s:i, s:i}]}}]}]}", "suites", "assertions",
                            "more_rounds", 1, "diag", "pairs", "rounds_left_out", 1, "rounds_seen", 10);
  ck_assert(mxcts_session_backoff(quiet, 3, 30) == 0);
  ck_assert(mxcts_session_backoff(busy, 1, 30) == 1);
  ck_assert(mxcts_session_backoff(busy, 3, 30) == 4);
  ck_assert(mxcts_session_backoff(busy, 20, 30) == 30);
  ck_assert(mxcts_session_backoff(busy, 3, 0) == 0);
  json_decref(busy);
  json_decref(quiet);
}
END_TEST

START_TEST(test_structure_and_equal_failures) {
  char *dir;
  struct ord o = clear;
  o.fast_cap = "14";
  o.fast_extra = ", \"FAKE_SALT\": \"different\"";
  json_t *r = run_ordered(&o, 9, &dir);
  assert_verdict(r, "ord/structure", "fail", "fast forward: 8 engine ops, expected 7");
  assert_verdict(r, "ord/same", "fail", "values.output.digest");
  assert_verdict(r, "ord/order", "pass", NULL);
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

/* greater: a number larger in some configs than in others, every round. */
static const char greater_suite[] =
    "{\"format\": 1, \"name\": \"gt\", \"workload\": \"fake\", \"rounds\": 2,"
    " \"configs\": ["
    "  {\"id\": \"big\", \"env\": {\"FAKE_METRIC_A\": \"3\"}},"
    "  {\"id\": \"small\", \"env\": {\"FAKE_METRIC_A\": \"1\"}},"
    "  {\"id\": \"same\", \"env\": {\"FAKE_METRIC_A\": \"1\"}}],"
    " \"assertions\": ["
    "  {\"id\": \"more\", \"type\": \"greater\", \"path\": \"metrics.a\", \"greater\": [\"big\"],"
    "   \"than\": [\"small\", \"same\"]},"
    "  {\"id\": \"equal-is-not-more\", \"type\": \"greater\", \"path\": \"metrics.a\","
    "   \"greater\": [\"same\"], \"than\": [\"small\"]},"
    "  {\"id\": \"missing\", \"type\": \"greater\", \"path\": \"metrics.none\", \"greater\": [\"big\"],"
    "   \"than\": [\"small\"]}]}";

START_TEST(test_greater) {
  char *dir = hu_tmpdir();
  free(hu_write_suite(dir, "gt", greater_suite));
  json_t *r = hu_run(dir, 5, 2);
  assert_verdict(r, "gt/more", "pass", NULL);
  ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(hu_assertion(r, "gt/more"), "diag"),
                                                      "comparisons")), 4);
  assert_verdict(r, "gt/equal-is-not-more", "fail", "round 1: same has metrics.a = 1, not more than small's 1");
  assert_verdict(r, "gt/missing", "fail", "metrics.none is missing or not a number");
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

/* CUDA graph counts: predicted per pass, compared when the result has them. */
static const char graphs_suite[] =
    "{\"format\": 1, \"name\": \"gr\", \"workload\": \"fake\", \"timeout\": 20,"
    " \"configs\": ["
    "  {\"id\": \"on\", \"env\": {\"FAKE_CAP\": \"15\", \"FAKE_OPS\": \"30\", \"FAKE_GRAPHS\": \"%s\"}},"
    "  {\"id\": \"none\", \"env\": {\"FAKE_CAP\": \"15\", \"FAKE_OPS\": \"30\"}}],"
    " \"assertions\": ["
    "  {\"id\": \"replay\", \"type\": \"structure\", \"expect\": {"
    "    \"on\": {\"forward\": {\"bulk\": [30, 15], \"graph_launches\": 2, \"graph_captures\": 0}}}},"
    "  {\"id\": \"unreported\", \"type\": \"structure\", \"expect\": {"
    "    \"none\": {\"forward\": {\"bulk\": [30, 15], \"graph_launches\": 0}}}}]}";

START_TEST(test_cuda_graph_counts) {
  const char *launches[] = {"2", "0"};
  for (int i = 0; i < 2; i++) {
    char *dir = hu_tmpdir();
    char *text = mxcts_xasprintf(graphs_suite, launches[i]);
    free(hu_write_suite(dir, "gr", text));
    free(text);
    json_t *r = hu_run(dir, 3, 1);
    if (i == 0) assert_verdict(r, "gr/replay", "pass", NULL);
    else assert_verdict(r, "gr/replay", "fail", "on forward: 0 CUDA graph launches, expected 2");
    assert_verdict(r, "gr/unreported", "fail", "no count of CUDA graph launches reported");
    json_decref(r);
    hu_cleanup(dir);
  }
}
END_TEST

START_TEST(test_failing_checks_and_expected_check_failures) {
  char *dir = hu_tmpdir();
  free(hu_write_suite(dir, "val",
      "{\"format\": 1, \"name\": \"val\", \"workload\": \"fake\", \"rounds\": 3,"
      " \"configs\": [{\"id\": \"a\", \"env\": {\"FAKE_FAIL_CHECK\": \"second_check\"}}],"
      " \"assertions\": ["
      "  {\"id\": \"all\", \"type\": \"checks\"},"
      "  {\"id\": \"first\", \"type\": \"value\", \"checks\": [\"output_is_flipped_input\"]},"
      "  {\"id\": \"second-fails\", \"type\": \"value\", \"checks\": [\"second_check\"], \"pass\": false},"
      "  {\"id\": \"missing\", \"type\": \"value\", \"checks\": [\"no_such_check\"], \"in\": \"any\"}]}"));
  json_t *r = hu_run(dir, 1, 1);
  assert_verdict(r, "val/all", "fail", "check second_check failed");
  assert_verdict(r, "val/first", "pass", NULL);
  assert_verdict(r, "val/second-fails", "pass", NULL);
  assert_verdict(r, "val/missing", "fail", "no_such_check");
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

START_TEST(test_expectations_xfail_xpass_skip) {
  char *dir = hu_tmpdir();
  free(write_ordered(dir, &clear));
  free(hu_write_suite(dir, "bad", bad_suite));
  char *ex = mxcts_xasprintf("%s/fake.txt", dir);
  const char *text = "# known problems of the fake\n"
                     "fail ord/order   said to fail, but passes (an unexpected pass)\n"
                     "fail bad/cr*     crashes on purpose\n"
                     "flaky bad/hang   hangs on purpose\n"
                     "skip ord/same    not comparable here\n"
                     "fail nosuch/x    matches nothing\n";
  ck_assert_int_eq(mxcts_write_file(ex, text, strlen(text)), 0);
  struct mxcts_options o;
  hu_options(&o, dir, 13);
  o.expectations = ex;
  json_t *r = hu_run_opts(&o);
  assert_verdict(r, "ord/order", "xpass", NULL);
  assert_verdict(r, "bad/crash", "xfail", "SIGSEGV");
  assert_verdict(r, "bad/hang", "xfail", NULL);
  assert_verdict(r, "ord/same", "skip", "not comparable");
  assert_verdict(r, "ord/checks", "pass", NULL);
  ck_assert_str_eq(json_string_value(json_object_get(hu_assertion(r, "bad/crash"), "raw_verdict")), "crash");
  json_t *stale = json_object_get(r, "stale_expectations");
  ck_assert_int_eq(json_array_size(stale), 1);
  ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(stale, 0), "line")), 6);
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

/* Processes that die on their way out after writing a complete result: a
 * crash, a hang or an exit status each stays a failure, with the result's
 * existence said, unless an exit-crash line tolerates it; then the results
 * are judged.  Either way every round runs (the config works). */
static const char late_suite[] =
    "{\"format\": 1, \"name\": \"late\", \"workload\": \"fake\", \"rounds\": 3, \"timeout\": 1,"
    " \"configs\": ["
    "  {\"id\": \"crash\", \"env\": {\"FAKE_AT_EXIT\": \"crash\"}},"
    "  {\"id\": \"hang\", \"env\": {\"FAKE_AT_EXIT\": \"hang\"}},"
    "  {\"id\": \"status\", \"env\": {\"FAKE_AT_EXIT\": \"status\"}},"
    "  {\"id\": \"wrong\", \"env\": {\"FAKE_AT_EXIT\": \"crash\", \"FAKE_FAIL_CHECK\": \"second_check\"}}],"
    " \"assertions\": ["
    "  {\"id\": \"crash\", \"type\": \"checks\", \"configs\": [\"crash\"]},"
    "  {\"id\": \"hang\", \"type\": \"checks\", \"configs\": [\"hang\"]},"
    "  {\"id\": \"status\", \"type\": \"checks\", \"configs\": [\"status\"]},"
    "  {\"id\": \"wrong\", \"type\": \"checks\", \"configs\": [\"wrong\"]}]}";

static json_t *run_late(const char *dir, const char *expectations) {
  struct mxcts_options o;
  hu_options(&o, dir, 5);
  if (expectations) { /* the options own the path */
    o.expectations = mxcts_xasprintf("%s/fake.txt", dir);
    ck_assert_int_eq(mxcts_write_file(o.expectations, expectations, strlen(expectations)), 0);
  }
  return hu_run_opts(&o);
}

static void assert_rounds_ran(const char *dir, const char *config, int rounds) {
  for (int i = 1; i <= rounds; i++) {
    char *path = mxcts_xasprintf("%s/out/late/%s/r%03d/outcome.json", dir, config, i);
    json_t *o = json_load_file(path, 0, NULL);
    ck_assert_msg(o, "%s missing", path);
    ck_assert_msg(strcmp(json_string_value(json_object_get(o, "exit")), "skipped") != 0,
                  "%s: round %d was skipped", config, i);
    ck_assert_msg(json_is_true(json_object_get(o, "after_result")), "%s: after_result not set", path);
    json_decref(o);
    free(path);
  }
}

START_TEST(test_exit_after_result_fails_without_expectation) {
  char *dir = hu_tmpdir();
  free(hu_write_suite(dir, "late", late_suite));
  json_t *r = run_late(dir, NULL);
  assert_verdict(r, "late/crash", "crash", "after writing its result");
  assert_verdict(r, "late/hang", "timeout", "after writing its result");
  assert_verdict(r, "late/status", "error", "exited with status 4");
  assert_rounds_ran(dir, "crash", 3);
  assert_rounds_ran(dir, "hang", 3);
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

START_TEST(test_exit_crash_line_judges_the_results) {
  char *dir = hu_tmpdir();
  free(hu_write_suite(dir, "late", late_suite));
  json_t *r = run_late(dir, "exit-crash late/* dies at exit on purpose\n"
                            "fail late/status said to fail, passes once judged\n");
  assert_verdict(r, "late/crash", "pass", "3 processes ended badly after writing their results");
  assert_verdict(r, "late/crash", "pass", "dies at exit on purpose");
  assert_verdict(r, "late/hang", "pass", "exit-crash, line 1");
  assert_verdict(r, "late/status", "xpass", NULL);
  assert_verdict(r, "late/wrong", "fail", "second_check"); /* a real deviation still fails */
  json_t *diag = json_object_get(hu_assertion(r, "late/crash"), "diag");
  ck_assert_int_eq(json_integer_value(json_object_get(diag, "exit_crashes")), 3);
  ck_assert_int_eq(json_array_size(json_object_get(r, "stale_expectations")), 0);
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

START_TEST(test_skipped_suite_does_not_run) {
  char *dir = hu_tmpdir();
  free(hu_write_suite(dir, "bad", bad_suite));
  char *ex = mxcts_xasprintf("%s/fake.txt", dir);
  ck_assert_int_eq(mxcts_write_file(ex, "skip bad   not today\n", 21), 0);
  struct mxcts_options o;
  hu_options(&o, dir, 13);
  o.expectations = ex;
  double t0 = mxcts_now();
  json_t *r = hu_run_opts(&o);
  ck_assert(mxcts_now() - t0 < 0.5); /* the hang config never ran */
  assert_verdict(r, "bad/hang", "skip", "not today");
  ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "pass");
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

static json_t *first_result(const char *dir, const char *job) {
  char *path = mxcts_xasprintf("%s/out/%s/result.json", dir, job);
  json_t *doc = json_load_file(path, 0, NULL);
  ck_assert_msg(doc != NULL, "%s", path);
  free(path);
  return doc;
}

START_TEST(test_environment_is_exactly_base_plus_config) {
  char *dir = hu_tmpdir();
  free(write_ordered(dir, &clear));
  ck_assert_int_eq(setenv("MXCTS_TEST_LEAK", "1", 1), 0);
  ck_assert_int_eq(setenv("OMP_NUM_THREADS", "3", 1), 0);
  ck_assert_int_eq(setenv("ASAN_OPTIONS", "x=1", 1), 0);
  struct mxcts_options o;
  hu_options(&o, dir, 1);
  mxcts_strv_push(&o.pass_env, "ASAN_OPTIONS");
  json_t *r = hu_run_opts(&o);
  json_decref(r);
  json_t *res = first_result(dir, "ord/slow/r001");
  json_t *env = json_object_get(res, "fake_environ");
  const char *allowed[] = {"PATH", "HOME", "LD_LIBRARY_PATH", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                           "ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS", "LSAN_OPTIONS", /* passed on */
                           "FAKE_ID", "FAKE_MS", "FAKE_NOISE", "FAKE_OUTLIER", "FAKE_CAP"};
  const char *key;
  json_t *v;
  json_object_foreach(env, key, v) {
    bool ok = false;
    for (size_t i = 0; i < sizeof allowed / sizeof *allowed; i++) ok |= !strcmp(key, allowed[i]);
    ck_assert_msg(ok, "variable %s leaked into the probe's environment", key);
  }
  ck_assert_str_eq(json_string_value(json_object_get(env, "FAKE_ID")), "slow");
  ck_assert_str_eq(json_string_value(json_object_get(env, "OMP_NUM_THREADS")), "3");
  ck_assert_str_eq(json_string_value(json_object_get(env, "ASAN_OPTIONS")), "x=1");
  if (getenv("PATH")) ck_assert_str_eq(json_string_value(json_object_get(env, "PATH")), getenv("PATH"));
  /* the runner's own environment is untouched */
  ck_assert_str_eq(getenv("MXCTS_TEST_LEAK"), "1");
  ck_assert_ptr_null(getenv("FAKE_ID"));
  json_decref(res);
  hu_cleanup(dir);
}
END_TEST

/* Intervals of every process of the plan (start, end, timed). */
struct span {
  double start, end;
  bool timed;
};

static size_t spans(const char *dir, struct span **out) {
  char *path = mxcts_xasprintf("%s/out/plan.json", dir);
  struct mxcts_plan p;
  ck_assert_msg(mxcts_plan_load(path, &p) == 0, "%s", mxcts_last_error());
  *out = mxcts_xcalloc(p.njobs, sizeof **out);
  for (size_t i = 0; i < p.njobs; i++) {
    char *rp = mxcts_xasprintf("%s/result.json", p.jobs[i].dir);
    json_t *doc = json_load_file(rp, 0, NULL);
    ck_assert_ptr_nonnull(doc);
    (*out)[i] = (struct span){json_number_value(json_object_get(doc, "fake_start")),
                              json_number_value(json_object_get(doc, "fake_end")), p.jobs[i].timed};
    json_decref(doc);
    free(rp);
  }
  size_t n = p.njobs;
  mxcts_plan_free(&p);
  free(path);
  return n;
}

START_TEST(test_timed_work_runs_alone_untimed_in_parallel) {
  char *dir = hu_tmpdir();
  free(write_ordered(dir, &clear));
  free(hu_write_suite(dir, "par",
      "{\"format\": 1, \"name\": \"par\", \"workload\": \"fake\", \"rounds\": 10,"
      " \"configs\": [{\"id\": \"a\", \"env\": {\"FAKE_SLEEP_MS\": \"40\"}},"
      "              {\"id\": \"b\", \"env\": {\"FAKE_SLEEP_MS\": \"40\"}}],"
      " \"assertions\": [{\"id\": \"all\", \"type\": \"checks\"}]}"));
  json_t *r = hu_run(dir, 21, 4);
  assert_verdict(r, "par/all", "pass", NULL);
  json_decref(r);
  struct span *s;
  size_t n = spans(dir, &s), overlaps = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t k = i + 1; k < n; k++) {
      bool overlap = s[i].start < s[k].end && s[k].start < s[i].end;
      ck_assert_msg(!(overlap && (s[i].timed || s[k].timed)), "a timed process ran beside another");
      overlaps += overlap;
    }
  ck_assert_msg(overlaps > 0, "--jobs 4 ran no untimed processes in parallel");
  free(s);
  hu_cleanup(dir);
}
END_TEST

START_TEST(test_profile_file) {
  char *dir = hu_tmpdir();
  free(hu_write_suite(dir, "prof",
      "{\"format\": 1, \"name\": \"prof\", \"workload\": \"fake\", \"rounds\": 2,"
      " \"configs\": [{\"id\": \"good\", \"env\": {\"FAKE_TRACE\": \"1\"}},"
      "              {\"id\": \"bad\", \"env\": {\"FAKE_TRACE\": \"bad\"}},"
      "              {\"id\": \"none\", \"env\": {}}],"
      " \"assertions\": ["
      "  {\"id\": \"good\", \"type\": \"profile_file\", \"configs\": [\"good\"], \"min_events\": 2,"
      "   \"names_include\": [\"[reverse\"]},"
      "  {\"id\": \"names\", \"type\": \"profile_file\", \"configs\": [\"good\"],"
      "   \"names_include\": [\"ImperativeBulk\"]},"
      "  {\"id\": \"bad\", \"type\": \"profile_file\", \"configs\": [\"bad\"]},"
      "  {\"id\": \"none\", \"type\": \"profile_file\", \"configs\": [\"none\"]}]}"));
  json_t *r = hu_run(dir, 2, 1);
  assert_verdict(r, "prof/good", "pass", NULL);
  assert_verdict(r, "prof/names", "fail", "ImperativeBulk");
  assert_verdict(r, "prof/bad", "fail", "profile.json");
  assert_verdict(r, "prof/none", "fail", "profile.json: cannot open: No such file");
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

START_TEST(test_measures_and_margins) {
  char *dir = hu_tmpdir();
  free(hu_write_suite(dir, "m",
      "{\"format\": 1, \"name\": \"m\", \"workload\": \"fake\", \"rounds\": 9,"
      " \"configs\": [{\"id\": \"t\", \"env\": {\"FAKE_METRIC_A\": \"10\", \"FAKE_METRIC_B\": \"1\"}}],"
      " \"assertions\": ["
      "  {\"id\": \"a-over-b\", \"type\": \"ordering\", \"slower\": [\"t@metrics.a\"],"
      "   \"faster\": [\"t@metrics.b\"], \"margin\": 8.0},"
      "  {\"id\": \"a-over-b-10x\", \"type\": \"ordering\", \"slower\": [\"t@metrics.a\"],"
      "   \"faster\": [\"t@metrics.b\"], \"margin\": 9.0},"
      "  {\"id\": \"b-not-under-tenth\", \"type\": \"ordering\", \"slower\": [\"t@metrics.b\"],"
      "   \"faster\": [\"t@metrics.a\"], \"margin\": -0.95},"
      "  {\"id\": \"missing\", \"type\": \"ordering\", \"slower\": [\"t@metrics.zz\"],"
      "   \"faster\": [\"t@metrics.a\"]}]}"));
  json_t *r = hu_run(dir, 2, 1);
  assert_verdict(r, "m/a-over-b", "pass", NULL);
  assert_verdict(r, "m/a-over-b-10x", "fail", NULL); /* 10 is not > 1 + 9 */
  assert_verdict(r, "m/b-not-under-tenth", "pass", NULL);
  assert_verdict(r, "m/missing", "error", "metrics.zz");
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

/* The plan: every round holds every config once, in a seeded order that
 * differs between rounds, the same for the same seed; one probe seed per
 * round; structure runs first. */
START_TEST(test_plan_order_is_seeded_and_interleaved) {
  char *dir = hu_tmpdir();
  free(hu_write_suite(dir, "six",
      "{\"format\": 1, \"name\": \"six\", \"workload\": \"fake\","
      " \"configs\": [{\"id\": \"a\"}, {\"id\": \"b\"}, {\"id\": \"c\"}, {\"id\": \"d\"},"
      "              {\"id\": \"e\"}, {\"id\": \"f\"}],"
      " \"assertions\": [{\"id\": \"o\", \"type\": \"ordering\", \"slower\": [\"a\", \"b\", \"c\"],"
      "   \"faster\": [\"d\", \"e\", \"f\"]},"
      "  {\"id\": \"s\", \"type\": \"structure\", \"expect\": {\"a\": {\"forward\": {\"single\": 3}}}}]}"));
  struct mxcts_plan p[3];
  uint64_t seeds[3] = {100, 100, 101};
  for (int i = 0; i < 3; i++) {
    struct mxcts_options o;
    hu_options(&o, dir, seeds[i]);
    ck_assert_int_eq(mxcts_plan_build(&o, &p[i]), 0);
    mxcts_options_free(&o);
  }
  ck_assert_int_eq(p[0].njobs, 1 + 6 * MXCTS_DEFAULT_FIRST_BATCH);
  ck_assert_int_eq(p[0].jobs[0].kind, MXCTS_JOB_PROFILE);
  ck_assert(!p[0].jobs[0].timed);
  bool differs_between_rounds = false, differs_by_seed = false;
  for (int r = 0; r < MXCTS_DEFAULT_FIRST_BATCH; r++) {
    const struct mxcts_job *round = &p[0].jobs[1 + 6 * r];
    unsigned seen = 0;
    for (int c = 0; c < 6; c++) {
      ck_assert_int_eq(round[c].round, r + 1);
      ck_assert(round[c].timed);
      ck_assert_int_eq(round[c].seed, round[0].seed);
      seen |= 1u << round[c].config;
      ck_assert_str_eq(round[c].id, p[1].jobs[1 + 6 * r + c].id);
      differs_by_seed |= round[c].config != p[2].jobs[1 + 6 * r + c].config;
      if (r > 0) differs_between_rounds |= round[c].config != p[0].jobs[1 + c].config;
    }
    ck_assert_uint_eq(seen, 0x3f);
  }
  ck_assert(differs_between_rounds);
  ck_assert(differs_by_seed);
  /* a later batch continues the numbering, seeds and orders: the same jobs
   * as a first batch of 25 */
  size_t all[6] = {0, 1, 2, 3, 4, 5};
  mxcts_plan_add_batch(&p[0], 0, all, 6, 10);
  ck_assert_int_eq(mxcts_plan_rounds_run(&p[0], 0), 25);
  struct mxcts_options o;
  hu_options(&o, dir, 100);
  o.rounds = 25;
  struct mxcts_plan whole;
  ck_assert_int_eq(mxcts_plan_build(&o, &whole), 0);
  mxcts_options_free(&o);
  ck_assert_int_eq(whole.njobs, p[0].njobs);
  for (size_t i = 0; i < whole.njobs; i++) {
    ck_assert_str_eq(whole.jobs[i].id, p[0].jobs[i].id);
    ck_assert_int_eq(whole.jobs[i].seed, p[0].jobs[i].seed);
  }
  mxcts_plan_free(&whole);
  for (int i = 0; i < 3; i++) mxcts_plan_free(&p[i]);
  hu_cleanup(dir);
}
END_TEST

/* An ordering of "depth": "full" is a skip in a quick run, and its configs
 * run only for the other assertions; only rounds an ordering reads are
 * timed. */
static const char depth_suite[] =
    "{\"format\": 1, \"name\": \"deep\", \"workload\": \"fake\","
    " \"configs\": [{\"id\": \"slow\", \"env\": {\"FAKE_MS\": \"2.0\"}},"
    "              {\"id\": \"fast\", \"env\": {\"FAKE_MS\": \"1.0\"}}, {\"id\": \"other\"}],"
    " \"assertions\": [{\"id\": \"o\", \"type\": \"ordering\", \"depth\": \"full\","
    "   \"slower\": [\"slow\"], \"faster\": [\"fast\"]},"
    "  {\"id\": \"c\", \"type\": \"checks\", \"configs\": [\"other\"]}]}";

static size_t count_jobs(const struct mxcts_plan *p, size_t config, bool timed) {
  size_t n = 0;
  for (size_t i = 0; i < p->njobs; i++) n += p->jobs[i].config == config && p->jobs[i].timed == timed;
  return n;
}

START_TEST(test_full_depth_assertions_skip_in_a_quick_run) {
  char *dir = hu_tmpdir();
  free(hu_write_suite(dir, "deep", depth_suite));
  for (int full = 0; full <= 1; full++) {
    struct mxcts_options o;
    hu_options(&o, dir, 31);
    if (full) o.depth = mxcts_xstrdup("full");
    struct mxcts_plan p;
    ck_assert_int_eq(mxcts_plan_build(&o, &p), 0);
    ck_assert_uint_eq(count_jobs(&p, 0, true), full ? MXCTS_DEFAULT_FIRST_BATCH : 0);
    ck_assert_uint_eq(count_jobs(&p, 0, false), 0);
    ck_assert_uint_eq(count_jobs(&p, 2, true), 0); /* read by no ordering */
    ck_assert_uint_eq(count_jobs(&p, 2, false), MXCTS_DEFAULT_FIRST_BATCH);
    ck_assert_int_eq(mxcts_plan_write(&p), 0); /* mxcts judge reads the depth back */
    char *path = mxcts_xasprintf("%s/out/plan.json", dir);
    struct mxcts_plan q;
    ck_assert_msg(mxcts_plan_load(path, &q) == 0, "%s", mxcts_last_error());
    ck_assert((q.suites[0].asserts[0].skip_reason == NULL) == (full == 1));
    mxcts_plan_free(&q);
    free(path);
    mxcts_plan_free(&p);
    json_t *r = hu_run_opts(&o);
    assert_verdict(r, "deep/o", full ? "pass" : "skip", full ? NULL : "--depth full");
    assert_verdict(r, "deep/c", "pass", NULL);
    json_decref(r); /* hu_run_opts freed the options */
  }
  hu_cleanup(dir);
}
END_TEST

/* A plan whose copy of a suite is broken: the message names plan.json (the
 * suite's own file may be fine). */
START_TEST(test_plan_with_a_broken_suite_copy) {
  char *dir = hu_tmpdir();
  free(write_ordered(dir, &clear));
  struct mxcts_options o;
  hu_options(&o, dir, 78);
  struct mxcts_plan p, q;
  ck_assert_int_eq(mxcts_plan_build(&o, &p), 0);
  mxcts_options_free(&o);
  ck_assert_int_eq(mxcts_plan_write(&p), 0);
  char *path = mxcts_xasprintf("%s/out/plan.json", dir);
  json_t *doc = json_load_file(path, 0, NULL);
  json_t *suite_doc = json_object_get(json_array_get(json_object_get(doc, "suites"), 0), "doc");
  json_object_set_new(suite_doc, "assertions", json_array());
  ck_assert_int_eq(json_dump_file(doc, path, 0), 0);
  json_decref(doc);
  ck_assert_int_lt(mxcts_plan_load(path, &q), 0);
  ck_assert_msg(strstr(mxcts_last_error(), "plan.json: suites[0].doc"), "%s", mxcts_last_error());
  free(path);
  mxcts_plan_free(&p);
  hu_cleanup(dir);
}
END_TEST

/* plan.json round trip, and judging a plan whose jobs never ran. */
START_TEST(test_plan_round_trip_and_missing_outcomes) {
  char *dir = hu_tmpdir();
  free(write_ordered(dir, &clear));
  struct mxcts_options o;
  hu_options(&o, dir, 77);
  struct mxcts_plan p, q;
  ck_assert_int_eq(mxcts_plan_build(&o, &p), 0);
  mxcts_options_free(&o);
  size_t both[2] = {0, 1};
  mxcts_plan_add_batch(&p, 0, both, 2, 10); /* a later batch survives the trip */
  ck_assert_int_eq(mxcts_plan_write(&p), 0);
  char *path = mxcts_xasprintf("%s/out/plan.json", dir);
  ck_assert_msg(mxcts_plan_load(path, &q) == 0, "%s", mxcts_last_error());
  ck_assert_int_eq(q.njobs, p.njobs);
  for (size_t i = 0; i < p.njobs; i++) {
    ck_assert_str_eq(q.jobs[i].id, p.jobs[i].id);
    ck_assert_int_eq(q.jobs[i].seed, p.jobs[i].seed);
    ck_assert_int_eq(q.jobs[i].argv.n, p.jobs[i].argv.n);
    char *a = mxcts_job_command(&p.jobs[i]), *b = mxcts_job_command(&q.jobs[i]);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
  }
  json_t *r;
  ck_assert_int_eq(mxcts_judge(&q, &r), 0);
  assert_verdict(r, "ord/order", "error", "did not run");
  json_decref(r);
  mxcts_plan_free(&p);
  mxcts_plan_free(&q);
  free(path);
  hu_cleanup(dir);
}
END_TEST

int main(void) {
  Suite *s = suite_create("runner");
  TCase *tc = tcase_create("runner");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_clear_ordering_and_every_kind_pass);
  tcase_add_test(tc, test_crash_timeout_error_verdicts);
  tcase_add_test(tc, test_crash_in_an_ordering_is_a_crash_not_slower);
  tcase_add_test(tc, test_a_hung_config_costs_one_deadline);
  tcase_add_test(tc, test_plan_lines_skip_after_a_hang);
  tcase_add_test(tc, test_noisy_but_ordered_never_fails);
  tcase_add_test(tc, test_reversed_timings_fail);
  tcase_add_test(tc, test_indifference_point_runs_batches);
  tcase_add_test(tc, test_blurred_ordering_never_fails);
  tcase_add_test(tc, test_one_failing_pair_fails_the_assertion);
  tcase_add_test(tc, test_backoff_is_bounded);
  tcase_add_test(tc, test_contended_rounds_never_fail_an_ordering);
  tcase_add_test(tc, test_structure_and_equal_failures);
  tcase_add_test(tc, test_greater);
  tcase_add_test(tc, test_cuda_graph_counts);
  tcase_add_test(tc, test_failing_checks_and_expected_check_failures);
  tcase_add_test(tc, test_expectations_xfail_xpass_skip);
  tcase_add_test(tc, test_exit_after_result_fails_without_expectation);
  tcase_add_test(tc, test_exit_crash_line_judges_the_results);
  tcase_add_test(tc, test_skipped_suite_does_not_run);
  tcase_add_test(tc, test_environment_is_exactly_base_plus_config);
  tcase_add_test(tc, test_timed_work_runs_alone_untimed_in_parallel);
  tcase_add_test(tc, test_profile_file);
  tcase_add_test(tc, test_measures_and_margins);
  tcase_add_test(tc, test_plan_order_is_seeded_and_interleaved);
  tcase_add_test(tc, test_plan_round_trip_and_missing_outcomes);
  tcase_add_test(tc, test_full_depth_assertions_skip_in_a_quick_run);
  tcase_add_test(tc, test_plan_with_a_broken_suite_copy);
  tcase_add_test(tc, test_gpu_suite_needs_a_gpu);
  tcase_add_test(tc, test_contended_rounds_are_left_out);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
