/*
 * mxcts against mock implementations that are wrong on purpose (mock_*.c):
 * each must be caught with the right verdict, and the noisy but correct one
 * must pass.  These runs time real work, so this test runs after every other
 * test but the conformance run (harness/tests/local.mk), and holds the
 * host-wide lock like any mxcts run.
 *
 * The engine-suite cases (nowait, serial) judge no timing: their verdicts
 * come from the probe's deterministic checks.
 *
 * In a sanitizer build (MXCTS_SANITIZERS set) timings mean nothing: the
 * ordering verdicts of the nobulk and noisy mocks are not asserted there.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_tap.h"
#include "common/common.h"
#include "harness_util.h"

static bool sanitized(void) {
  const char *s = getenv("MXCTS_SANITIZERS");
  return s && *s;
}

/* Options for a run of `suites` (comma-separated) against mock `name`. */
static void mock_options(struct mxcts_options *o, const char *dir, const char *name,
                         const char *suites) {
  hu_options(o, dir, 20261121);
  free(o->impl);
  free(o->impl_name);
  free(o->probe);
  free(o->suites_dir);
  free(o->lock_file);
  o->impl = mxcts_xasprintf(MXCTS_TEST_BUILDDIR "/harness/tests/.libs/mock_%s.so", name);
  o->impl_name = mxcts_xasprintf("mock_%s", name);
  o->probe = mxcts_xstrdup(MXCTS_TEST_BUILDDIR "/harness/mxcts-probe");
  o->suites_dir = mxcts_xstrdup(MXCTS_TEST_SRCDIR "/suites");
  o->lock_file = mxcts_default_lock_file();
  o->jobs = 2;
  o->grace_s = 0.5;
  char *list = mxcts_xstrdup(suites), *save = NULL;
  for (char *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save))
    mxcts_strv_push(&o->suites, s);
  free(list);
}

static void expect_verdict(json_t *r, const char *name, const char *verdict) {
  json_t *a = hu_assertion(r, name);
  ck_assert_msg(a, "%s: no such assertion in the results", name);
  const char *detail = json_string_value(json_object_get(a, "detail"));
  ck_assert_msg(!strcmp(hu_verdict(r, name), verdict), "%s: %s, expected %s (%s)", name,
                hu_verdict(r, name), verdict, detail ? detail : "");
}

/* A timed ordering on a shared machine: `verdict`, or inconclusive when the
 * load kept the SPRT from deciding within the budget -- never the opposite
 * verdict. */
static void expect_timed_verdict(json_t *r, const char *name, const char *verdict) {
  if (!strcmp(hu_verdict(r, name), "inconclusive")) {
    printf("# %s: inconclusive under load (%s)\n", name,
           json_string_value(json_object_get(hu_assertion(r, name), "detail")));
    return;
  }
  expect_verdict(r, name, verdict);
}

/* Every assertion of the run has `verdict`; returns how many there are. */
static int expect_all(json_t *r, const char *verdict) {
  int n = 0;
  size_t i, k;
  json_t *s, *a;
  json_array_foreach(json_object_get(r, "suites"), i, s) {
    json_array_foreach(json_object_get(s, "assertions"), k, a) {
      expect_verdict(r, json_string_value(json_object_get(a, "name")), verdict);
      n++;
    }
  }
  return n;
}

START_TEST(test_crash_in_forward_is_a_crash) {
  char *dir = hu_tmpdir();
  struct mxcts_options o;
  mock_options(&o, dir, "crash", "bulking-symbolic,bulking-cachedop");
  json_t *r = hu_run_opts(&o);
  ck_assert_int_eq(expect_all(r, "crash"), 11);
  const char *detail =
      json_string_value(json_object_get(hu_assertion(r, "bulking-symbolic/segments"), "detail"));
  ck_assert_msg(strstr(detail, "SIGSEGV") || strstr(detail, "SIGABRT"), "detail: %s", detail);
  ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "fail");
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

START_TEST(test_hang_in_forward_is_a_timeout) {
  char *dir = hu_tmpdir();
  struct mxcts_options o;
  mock_options(&o, dir, "hang", "bulking-symbolic,bulking-cachedop");
  o.timeout_scale = 0.01; /* 120 s -> 1.2 s */
  double t0 = mxcts_now();
  json_t *r = hu_run_opts(&o);
  double took = mxcts_now() - t0;
  ck_assert_int_eq(expect_all(r, "timeout"), 11);
  /* 28 configs, one deadline each, two at a time; not one per round */
  ck_assert_msg(took < 60, "the hanging mock took %.1f s", took);
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

START_TEST(test_ignored_bulking_fails_structure_and_ordering) {
  char *dir = hu_tmpdir();
  struct mxcts_options o;
  mock_options(&o, dir, "nobulk", "bulking-symbolic,bulking-inference,bulking-imperative,engine-dispatch");
  o.rounds = 8; /* 8 losses in a row accept H0: bulking buys nothing */
  o.max_backoff_s = 2;
  json_t *r = hu_run_opts(&o);
  expect_verdict(r, "bulking-symbolic/segments", "fail");
  expect_verdict(r, "bulking-inference/segments", "fail");
  expect_verdict(r, "bulking-imperative/imperative-bulks", "fail");
  if (!sanitized()) {
    expect_timed_verdict(r, "bulking-symbolic/half-bulked-faster-than-unbulked", "fail");
    expect_timed_verdict(r, "bulking-symbolic/fully-bulked-faster-than-half", "fail");
    expect_timed_verdict(r, "bulking-inference/one-segment-faster", "fail");
    expect_timed_verdict(r, "engine-dispatch/bulked-faster-independent", "fail");
    expect_timed_verdict(r, "engine-dispatch/bulked-faster-chained", "fail");
  }
  /* its numbers are right */
  expect_verdict(r, "bulking-symbolic/output-and-gradient", "pass");
  expect_verdict(r, "bulking-symbolic/outputs-identical-across-configs", "pass");
  expect_verdict(r, "bulking-inference/output", "pass");
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

START_TEST(test_wrong_gradient_fails_numerics) {
  char *dir = hu_tmpdir();
  struct mxcts_options o;
  mock_options(&o, dir, "badgrad", "numerics,bulking-imperative");
  json_t *r = hu_run_opts(&o);
  expect_verdict(r, "numerics/every-op-matches-oracle", "fail");
  expect_verdict(r, "numerics/pooling-matches-oracle", "fail");
  expect_verdict(r, "numerics/grad-req-add-matches-oracle", "fail");
  const char *detail = json_string_value(
      json_object_get(hu_assertion(r, "numerics/every-op-matches-oracle"), "detail"));
  ck_assert_msg(strstr(detail, "grad"), "the failure does not name a gradient: %s", detail);
  /* forward-only checks are untouched */
  expect_verdict(r, "bulking-imperative/output", "pass");
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

struct expected {
  const char *assertion, *verdict;
};

/* The engine suite against mock_engine with MOCK_ENGINE_BUG=bug, one
 * round, must give each listed verdict: deterministic checks, no timing is
 * judged. */
static void expect_engine_suite(const char *bug, const struct expected *want, size_t n) {
  char *dir = hu_tmpdir();
  struct mxcts_options o;
  mock_options(&o, dir, "engine", "engine");
  o.rounds = 1;
  setenv("MOCK_ENGINE_BUG", bug, 1);
  mxcts_strv_push(&o.pass_env, "MOCK_ENGINE_BUG");
  json_t *r = hu_run_opts(&o);
  unsetenv("MOCK_ENGINE_BUG");
  for (size_t i = 0; i < n; i++) expect_verdict(r, want[i].assertion, want[i].verdict);
  json_decref(r);
  hu_cleanup(dir);
}

START_TEST(test_early_waits_fail_wait_checks) {
  static const struct expected want[] = {
      {"engine/wait-to-read-waits-for-writes", "fail"},
      {"engine/wait-to-write-waits-for-reads-and-writes", "fail"},
      /* WaitAll still waits: what is read after it is right */
      {"engine/matches-serial-run", "pass"},
      {"engine/independent-ops-overlap", "pass"},
  };
  expect_engine_suite("nowait", want, sizeof want / sizeof want[0]);
}
END_TEST

START_TEST(test_serial_engine_fails_overlap_checks) {
  static const struct expected want[] = {
      {"engine/independent-ops-overlap", "fail"},
      {"engine/reads-overlap", "fail"},
      {"engine/wait-to-read-own-var-only", "fail"},
      /* a serial order is a valid one, and its waits are right */
      {"engine/one-worker-runs-serially", "pass"},
      {"engine/matches-serial-run", "pass"},
      {"engine/wait-to-read-waits-for-writes", "pass"},
  };
  expect_engine_suite("serial", want, sizeof want / sizeof want[0]);
}
END_TEST

/* How many of the run's processes said they were slow on purpose. */
static int count_slow_processes(const char *dir) {
  int n = 0;
  char *cmd = mxcts_xasprintf("grep -rl 'mock_noisy: slow process' '%s/out' --include=stderr.txt", dir);
  FILE *f = popen(cmd, "r");
  ck_assert_ptr_nonnull(f);
  char line[4096];
  while (fgets(line, sizeof line, f)) n++;
  pclose(f);
  free(cmd);
  return n;
}

START_TEST(test_noisy_timings_are_no_failure) {
  char *dir = hu_tmpdir();
  struct mxcts_options o;
  mock_options(&o, dir, "noisy", "bulking-symbolic");
  o.rounds = 25; /* a first batch of 25: enough processes to see slow ones */
  json_t *r = hu_run_opts(&o);
  expect_verdict(r, "bulking-symbolic/segments", "pass");
  expect_verdict(r, "bulking-symbolic/output-and-gradient", "pass");
  expect_verdict(r, "bulking-symbolic/outputs-identical-across-configs", "pass");
  if (!sanitized()) {
    expect_timed_verdict(r, "bulking-symbolic/half-bulked-faster-than-unbulked", "pass");
    expect_timed_verdict(r, "bulking-symbolic/fully-bulked-faster-than-half", "pass");
  }
  /* about one process in 20 is slow: with some 340 processes, none would
   * mean the noise did not happen (probability ~ 1e-8) */
  int slow = count_slow_processes(dir);
  ck_assert_msg(slow > 0, "no process of the noisy mock was slow");
  printf("# noisy mock: %d slow processes, both orderings %s\n", slow,
         sanitized() ? "not judged (sanitizer build)" : "not failed");
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

/* An older release's C API (mock_old: no MXEnginePushSyncND,
 * MXNDArrayGetShapeEx or MXLibInfoFeatures; MXEnginePushSync and
 * MXNDArrayGetShape instead): exactly the engine suite, which needs
 * MXEnginePushSyncND, is unsupported, every one of its assertions, naming
 * it; structure runs mark their passes through MXEnginePushSync and
 * numerics reads shapes through MXNDArrayGetShape, so everything else
 * passes. */
/* Whether one of `configs` (the config ids an assertion read, from the
 * results) of suites/SUITE.json runs `workload`. */
static bool reads_workload(const char *suite, json_t *configs, const char *workload) {
  char path[512];
  snprintf(path, sizeof path, "%s/suites/%s.json", MXCTS_TEST_SRCDIR, suite);
  json_t *doc = json_load_file(path, 0, NULL);
  ck_assert_msg(doc, "cannot read %s", path);
  const char *top = json_string_value(json_object_get(doc, "workload"));
  bool reads = false;
  size_t i, k;
  json_t *c, *id;
  json_array_foreach(json_object_get(doc, "configs"), i, c) {
    const char *w = json_string_value(json_object_get(c, "workload"));
    json_array_foreach(configs, k, id) {
      if (!strcmp(json_string_value(id), json_string_value(json_object_get(c, "id"))))
        reads |= !strcmp(w ? w : top, workload);
    }
  }
  json_decref(doc);
  return reads;
}

/* An implementation without MXEnginePushSyncND: every assertion whose
 * workload calls it (the engine suite's, the profiler's contract checks) is
 * unsupported, naming the function; the others run and pass. */
START_TEST(test_old_capi_is_unsupported_where_needed) {
  char *dir = hu_tmpdir();
  struct mxcts_options o;
  mock_options(&o, dir, "old", "engine,profiler,numerics");
  o.rounds = 1;
  json_t *r = hu_run_opts(&o);
  int unsupported = 0, engine = 0, pass = 0;
  size_t i, k;
  json_t *s, *a;
  json_array_foreach(json_object_get(r, "suites"), i, s) {
    const char *suite = json_string_value(json_object_get(s, "name"));
    json_array_foreach(json_object_get(s, "assertions"), k, a) {
      const char *name = json_string_value(json_object_get(a, "name"));
      json_t *configs = json_object_get(a, "configs");
      if (reads_workload(suite, configs, "engine_random") || reads_workload(suite, configs, "profiler_contract")) {
        expect_verdict(r, name, "unsupported");
        const char *detail = json_string_value(json_object_get(a, "detail"));
        ck_assert_msg(strstr(detail, "does not export MXEnginePushSyncND"), "%s: %s", name, detail);
        unsupported++;
        engine += !strncmp(name, "engine/", 7);
      } else {
        expect_verdict(r, name, "pass");
        pass++;
      }
    }
  }
  json_t *doc = json_load_file(MXCTS_TEST_SRCDIR "/suites/engine.json", 0, NULL);
  ck_assert_ptr_nonnull(doc);
  ck_assert_int_eq(engine, (int)json_array_size(json_object_get(doc, "assertions")));
  json_decref(doc);
  ck_assert_int_ge(pass, 4);
  ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "fail");
  printf("# old C API: %d unsupported (%d of the engine suite), %d pass\n", unsupported, engine, pass);
  json_decref(r);
  hu_cleanup(dir);
}
END_TEST

int main(void) {
  Suite *s = suite_create("mocks");
  TCase *tc = tcase_create("mocks");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_crash_in_forward_is_a_crash);
  tcase_add_test(tc, test_hang_in_forward_is_a_timeout);
  tcase_add_test(tc, test_wrong_gradient_fails_numerics);
  tcase_add_test(tc, test_ignored_bulking_fails_structure_and_ordering);
  tcase_add_test(tc, test_noisy_timings_are_no_failure);
  tcase_add_test(tc, test_early_waits_fail_wait_checks);
  tcase_add_test(tc, test_serial_engine_fails_overlap_checks);
  tcase_add_test(tc, test_old_capi_is_unsupported_where_needed);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
