/*
 * mxcts-probe's own parameters, against libmxref.so: pin=split places the
 * threads on idle CPUs and says so in the result (or says why it could
 * not), pin=none leaves them alone, and a nonsense value of pin or device is
 * a usage error naming it (exit 2).  Untimed: small workloads, read for
 * their structure only.
 */
#include <check.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_tap.h"
#include "common/common.h"
#include "harness_util.h"

#define PROBE MXCTS_TEST_BUILDDIR "/harness/mxcts-probe"
#define LIBMXREF MXCTS_TEST_BUILDDIR "/ref/.libs/libmxref.so"

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

int main(void) {
  Suite *s = suite_create("probe");
  TCase *tc = tcase_create("params");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_pin_split_places_threads);
  tcase_add_test(tc, test_pin_split_needs_two_cpus);
  tcase_add_test(tc, test_no_pin_no_record);
  tcase_add_test(tc, test_bad_pin_is_a_usage_error);
  tcase_add_test(tc, test_bad_device_is_a_usage_error);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
