/*
 * mxcts-probe's own parameters, against libmxref.so: pin=split places the
 * threads on idle CPUs and says so in the result (or says why it could
 * not), pin=none leaves them alone, and a nonsense value of pin or device is
 * a usage error naming it (exit 2).  Untimed: small workloads, read for
 * their structure only.
 *
 * ABI detection: against mock_old.so (MXNet 1.4.1's surface: no
 * MXEnginePushSyncND or MXNDArrayGetShapeEx, MXEnginePushSync and
 * MXNDArrayGetShape instead) a workload that needs a missing function is
 * not run (status unsupported, the function named), and the others run
 * through the older calls.
 */
#include <check.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_tap.h"
#include "common/capi_needs.h"
#include "common/common.h"
#include "harness_util.h"

#define PROBE MXCTS_TEST_BUILDDIR "/harness/mxcts-probe"
#define LIBMXREF MXCTS_TEST_BUILDDIR "/ref/.libs/libmxref.so"
#define MOCK_OLD MXCTS_TEST_BUILDDIR "/harness/tests/.libs/mock_old.so"

/* Run the probe on imperative_flips (50 flips, 2 timed iterations) with
 * extra --param arguments, on the first allowed CPU only when one_cpu;
 * returns its exit status and the result read back from its --out file
 * (NULL if unreadable). */
static int run_probe_on(bool one_cpu, const char *param1, const char *param2, json_t **result) {
  char *dir = hu_tmpdir();
  char *out = mxcts_xasprintf("%s/result.json", dir);
  const char *argv[24];
  int n = 0;
  const char *fixed[] = {PROBE, "--impl", LIBMXREF, "--workload", "imperative_flips",
                         "--param", "num_ops=50", "--param", "iterations=2",
                         "--param", "warmup=1", "--param", "bulk=0", "--out", out};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) argv[n++] = fixed[i];
  const char *extra[] = {param1, param2};
  for (int i = 0; i < 2; i++)
    if (extra[i]) {
      argv[n++] = "--param";
      argv[n++] = extra[i];
    }
  argv[n] = NULL;
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    if (one_cpu) {
      cpu_set_t set;
      if (sched_getaffinity(0, sizeof set, &set) != 0) _exit(126);
      for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) {
          CPU_ZERO(&set);
          CPU_SET(c, &set);
          break;
        }
      if (sched_setaffinity(0, sizeof set, &set) != 0) _exit(126);
    }
    execv(PROBE, (char *const *)argv);
    _exit(127);
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status), "the probe did not exit normally (status %d)", status);
  *result = json_load_file(out, 0, NULL);
  free(out);
  hu_cleanup(dir);
  return WEXITSTATUS(status);
}

static int run_probe(const char *param1, const char *param2, json_t **result) {
  return run_probe_on(false, param1, param2, result);
}

static const char *str(const json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

static bool cpu_allowed(int cpu) {
  cpu_set_t set;
  ck_assert_int_eq(sched_getaffinity(0, sizeof set, &set), 0);
  return cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set);
}

/* Where two idle CPUs exist the probe pins (the pusher on an allowed CPU, at
 * least libmxref's one worker elsewhere); on a busy machine (make -j) it may
 * find fewer, and must then say so. */
START_TEST(test_pin_split_places_threads) {
  json_t *r;
  ck_assert_int_eq(run_probe("pin=split", NULL, &r), 0);
  ck_assert_ptr_nonnull(r);
  ck_assert_str_eq(str(r, "status"), "ok");
  json_t *pin = json_object_get(r, "pinning");
  ck_assert_msg(json_is_object(pin), "no pinning record in the result");
  ck_assert_str_eq(str(pin, "mode"), "split");
  if (json_is_true(json_object_get(pin, "applied"))) {
    ck_assert(cpu_allowed((int)json_integer_value(json_object_get(pin, "pusher_cpu"))));
    ck_assert_int_ge(json_integer_value(json_object_get(pin, "idle_cpus")), 2);
    ck_assert_int_ge(json_integer_value(json_object_get(pin, "threads_pinned")), 1);
  } else {
    ck_assert(json_is_false(json_object_get(pin, "applied")));
    ck_assert_msg(strstr(str(pin, "why"), "fewer than two"), "unexpected reason: %s", str(pin, "why"));
  }
  json_decref(r);
}
END_TEST

/* With one CPU allowed, nothing can be split: not applied, and why. */
START_TEST(test_pin_split_needs_two_cpus) {
  json_t *r;
  ck_assert_int_eq(run_probe_on(true, "pin=split", NULL, &r), 0);
  ck_assert_ptr_nonnull(r);
  ck_assert_str_eq(str(r, "status"), "ok");
  json_t *pin = json_object_get(r, "pinning");
  ck_assert_msg(json_is_object(pin), "no pinning record in the result");
  ck_assert(json_is_false(json_object_get(pin, "applied")));
  ck_assert_str_eq(str(pin, "why"), "fewer than two CPUs allowed");
  json_decref(r);
}
END_TEST

START_TEST(test_no_pin_no_record) {
  json_t *r;
  ck_assert_int_eq(run_probe("pin=none", NULL, &r), 0);
  ck_assert_ptr_nonnull(r);
  ck_assert_str_eq(str(r, "status"), "ok");
  ck_assert_ptr_null(json_object_get(r, "pinning"));
  json_decref(r);
}
END_TEST

/* The probe exits 2 with status "usage" and an error naming `named`. */
static void expect_usage_error(const char *param, const char *other, const char *named) {
  json_t *r;
  ck_assert_int_eq(run_probe(param, other, &r), 2);
  ck_assert_ptr_nonnull(r);
  ck_assert_str_eq(str(r, "status"), "usage");
  ck_assert_msg(strstr(str(r, "error"), named), "error does not name %s: %s", named, str(r, "error"));
  json_decref(r);
}

START_TEST(test_bad_pin_is_a_usage_error) {
  expect_usage_error("pin=everywhere", NULL, "pin=everywhere");
}
END_TEST

START_TEST(test_bad_device_is_a_usage_error) {
  expect_usage_error("device=tpu", "pin=split", "device=tpu");
}
END_TEST

/* Run the probe: `argv` after PROBE, NULL-terminated; returns its exit
 * status and its result (NULL if unreadable). */
static int probe_argv(const char *const *args, json_t **result) {
  char *dir = hu_tmpdir();
  char *out = mxcts_xasprintf("%s/result.json", dir), *prof = mxcts_xasprintf("%s/prof", dir);
  const char *argv[32] = {PROBE, "--out", out};
  int n = 3;
  for (; *args && n < 30; args++) argv[n++] = strcmp(*args, "PROFILE_DIR") ? *args : prof;
  argv[n] = NULL;
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    execv(PROBE, (char *const *)argv);
    _exit(127);
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status), "the probe did not exit normally (status %d)", status);
  *result = json_load_file(out, 0, NULL);
  free(out);
  free(prof);
  hu_cleanup(dir);
  return WEXITSTATUS(status);
}

START_TEST(test_missing_function_is_unsupported) {
  const char *args[] = {"--impl", MOCK_OLD, "--workload", "engine_random", NULL};
  json_t *r;
  ck_assert_int_eq(probe_argv(args, &r), 0);
  ck_assert_ptr_nonnull(r);
  ck_assert_str_eq(str(r, "status"), "unsupported");
  ck_assert_str_eq(json_string_value(json_array_get(json_object_get(r, "missing"), 0)), "MXEnginePushSyncND");
  ck_assert_uint_eq(json_array_size(json_object_get(r, "missing")), 1);
  ck_assert_ptr_nonnull(strstr(str(r, "error"), "does not export MXEnginePushSyncND, which workload engine_random calls"));
  ck_assert_uint_eq(json_array_size(json_object_get(r, "checks")), 0); /* nothing ran */
  json_decref(r);
}
END_TEST

/* numerics reads shapes through MXNDArrayGetShape, a structure run marks
 * its passes through MXEnginePushSync: both run to the end, right. */
START_TEST(test_older_calls_are_used) {
  const char *num[] = {"--impl", MOCK_OLD, "--workload", "numerics", "--param", "ops=reverse,Pooling", NULL};
  json_t *r;
  ck_assert_int_eq(probe_argv(num, &r), 0);
  ck_assert_str_eq(str(r, "status"), "ok");
  size_t i, nchecks = json_array_size(json_object_get(r, "checks"));
  json_t *c;
  ck_assert_uint_gt(nchecks, 10);
  json_array_foreach(json_object_get(r, "checks"), i, c)
    ck_assert_msg(json_is_true(json_object_get(c, "pass")), "%s: %s", str(c, "name"), str(c, "detail"));
  json_decref(r);
  const char *prof[] = {"--impl", MOCK_OLD, "--workload", "imperative_flips", "--param", "num_ops=30",
                        "--param", "bulk=0", "--param", "iterations=1", "--profile", "PROFILE_DIR", NULL};
  ck_assert_int_eq(probe_argv(prof, &r), 0);
  ck_assert_msg(!strcmp(str(r, "status"), "ok"), "status %s: %s", str(r, "status"), str(r, "error"));
  json_t *pass = json_array_get(json_object_get(json_object_get(r, "structure"), "passes"), 0);
  ck_assert_int_eq(json_integer_value(json_object_get(pass, "engine_ops")), 30);
  json_decref(r);
}
END_TEST

static bool has_one(const char *fn, void *ctx) { return !strcmp(fn, (const char *)ctx); }

/* A need is met by any of its alternatives; missing ones are listed once. */
START_TEST(test_needs_alternatives) {
  ck_assert(mxcts_need_met("MXNDArrayGetShapeEx|MXNDArrayGetShape", has_one, "MXNDArrayGetShape"));
  ck_assert(mxcts_need_met("MXNDArrayGetShapeEx|MXNDArrayGetShape", has_one, "MXNDArrayGetShapeEx"));
  ck_assert(!mxcts_need_met("MXNDArrayGetShapeEx|MXNDArrayGetShape", has_one, "MXNDArrayGetShapeEx64"));
  const char *needs[] = {"MXA", "MXB|MXC", "MXA", NULL}, *missing[4];
  size_t n = 0;
  ck_assert_uint_eq(mxcts_needs_missing(needs, has_one, "MXC", missing, &n, 4), 1);
  ck_assert_str_eq(missing[0], "MXA");
  ck_assert_ptr_null(mxcts_workload_needs("no_such_workload"));
  bool push = false;
  for (const char *const *w = mxcts_workload_needs("engine_random"); *w; w++) push |= !strcmp(*w, "MXEnginePushSyncND");
  ck_assert(push);
}
END_TEST

int main(void) {
  Suite *s = suite_create("probe");
  TCase *tc = tcase_create("params");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_pin_split_places_threads);
  tcase_add_test(tc, test_pin_split_needs_two_cpus);
  tcase_add_test(tc, test_no_pin_no_record);
  tcase_add_test(tc, test_bad_pin_is_a_usage_error);
  tcase_add_test(tc, test_bad_device_is_a_usage_error);
  tcase_add_test(tc, test_missing_function_is_unsupported);
  tcase_add_test(tc, test_older_calls_are_used);
  tcase_add_test(tc, test_needs_alternatives);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
