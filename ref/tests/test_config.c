/*
 * Tests for the environment configuration (mxref/config.h).
 *
 * The expected variables, defaults and ranges are written out again below
 * (`specs`), independently of the library's table, so that a wrong default,
 * range or field offset in ref/src/common/env.c shows up as a failure.
 * Parsing is tested through mxr_config_parse() with a fake environment; the
 * real environment is only used in child processes, to check the read at
 * library load.
 */
#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_tap.h"
#include "child_process.h"
#include "mxref/config.h"
#include "mxref/error.h"


/* ---- what the library must implement ------------------------------------ */

struct spec {
  const char *name;
  const char *kind;
  size_t offset, size;
  long long def;
  long long min, max;             /* int */
  const char *const *choices;     /* enum, NULL-terminated, index = value */
};

#define F(f) offsetof(struct mxr_config, f), sizeof(((struct mxr_config *)0)->f)
#define S_INT(n, f, d, lo, hi) {n, "int", F(f), d, lo, hi, NULL}
#define S_BOOL(n, f, d) {n, "bool", F(f), d, 0, 1, NULL}
#define S_ENUM(n, f, d, c) {n, "enum", F(f), d, 0, 0, c}

static const char *const engines[] = {"NaiveEngine", "ThreadedEngine",
                                      "ThreadedEnginePerDevice", NULL};
static const char *const pools[] = {"Naive", "Round", "Unpooled", NULL};

#define MAX_NODE "MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN"

static const struct spec specs[] = {
    S_ENUM("MXNET_ENGINE_TYPE", engine_type, MXR_ENGINE_THREADED_PER_DEVICE, engines),
    S_INT("MXNET_CPU_WORKER_NTHREADS", cpu_worker_nthreads, 1, 1, INT_MAX),
    S_INT("MXNET_CPU_PRIORITY_NTHREADS", cpu_priority_nthreads, 4, 1, INT_MAX),
    S_INT("MXNET_CPU_NNPACK_NTHREADS", cpu_nnpack_nthreads, 4, 1, INT_MAX),
    S_INT("MXNET_GPU_WORKER_NTHREADS", gpu_worker_nthreads, 2, 1, INT_MAX),
    S_INT("MXNET_GPU_COPY_NTHREADS", gpu_copy_nthreads, 1, 1, INT_MAX),
    S_INT("MXNET_GPU_WORKER_NSTREAMS", gpu_worker_nstreams, 1, 1, 2),
    S_INT("MXNET_OMP_MAX_THREADS", omp_max_threads, 0, 0, INT_MAX),
    S_BOOL("MXNET_EXEC_ENABLE_INPLACE", exec_enable_inplace, 1),
    S_INT("MXNET_EXEC_MATCH_RANGE", exec_match_range, 10, 0, INT_MAX),
    S_INT("MXNET_EXEC_NUM_TEMP", exec_num_temp, 1, 1, INT_MAX),
    S_INT("MXNET_GPU_MEM_POOL_RESERVE", gpu_mem_pool_reserve, 5, 0, 100),
    S_ENUM("MXNET_GPU_MEM_POOL_TYPE", gpu_mem_pool_type, MXR_GPU_POOL_NAIVE, pools),
    S_BOOL("MXNET_BACKWARD_DO_MIRROR", backward_do_mirror, 0),
    S_BOOL("MXNET_EXEC_BULK_EXEC_INFERENCE", exec_bulk_exec_inference, 1),
    S_BOOL("MXNET_EXEC_BULK_EXEC_TRAIN", exec_bulk_exec_train, 1),
    S_INT(MAX_NODE, exec_bulk_exec_max_node_train, 15, 0, INT_MAX),
    S_INT(MAX_NODE "_FWD", exec_bulk_exec_max_node_train_fwd, 15, 0, INT_MAX),
    S_INT(MAX_NODE "_BWD", exec_bulk_exec_max_node_train_bwd, 15, 0, INT_MAX),
    S_INT("MXNET_KVSTORE_REDUCTION_NTHREADS", kvstore_reduction_nthreads, 4, 1, INT_MAX),
    S_INT("MXNET_KVSTORE_BIGARRAY_BOUND", kvstore_bigarray_bound, 1000000, 0, LLONG_MAX),
    S_BOOL("MXNET_ENABLE_GPU_P2P", enable_gpu_p2p, 1),
    S_BOOL("MXNET_PROFILER_AUTOSTART", profiler_autostart, 0),
    S_INT("MXNET_PROFILER_MODE", profiler_mode, 0, 0, 255),
    S_INT("MXNET_CUDNN_AUTOTUNE_DEFAULT", cudnn_autotune_default, 1, 0, 2),
    S_BOOL("MXNET_CUDA_ALLOW_TENSOR_CORE", cuda_allow_tensor_core, 1),
    S_BOOL("MXNET_CUDA_TENSOR_OP_MATH_ALLOW_CONVERSION", cuda_tensor_op_math_allow_conversion, 0),
    S_BOOL("MXNET_ENABLE_CUDA_GRAPHS", enable_cuda_graphs, 0),
};

#define NSPECS (sizeof specs / sizeof specs[0])

static const struct spec *spec_named(const char *name) {
  for (size_t i = 0; i < NSPECS; i++)
    if (strcmp(specs[i].name, name) == 0) return &specs[i];
  ck_abort_msg("no spec for %s", name);
  return NULL;
}

static long long field_value(const struct mxr_config *c, const struct spec *s) {
  const char *p = (const char *)c + s->offset;
  if (s->size == sizeof(bool)) return *(const bool *)p;
  if (s->size == sizeof(int)) return *(const int *)p;
  return *(const long long *)p;
}

static const struct mxr_config_var *var_named(const char *name) {
  for (size_t i = 0; i < mxr_config_var_count(); i++)
    if (strcmp(mxr_config_var_at(i)->name, name) == 0) return mxr_config_var_at(i);
  return NULL;
}

/* ---- a fake environment: NULL-terminated "NAME=VALUE" strings ----------- */

static const char *fake_lookup(void *user, const char *name) {
  size_t n = strlen(name);
  for (const char *const *e = user; *e; e++)
    if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
  return NULL;
}

static int parse_env(const char *const *env, struct mxr_config *out) {
  return mxr_config_parse(fake_lookup, (void *)env, out);
}

/* Parse an environment holding just NAME=value. */
static int parse_one(const char *name, const char *value, struct mxr_config *out) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s=%s", name, value);
  const char *env[] = {buf, NULL};
  return parse_env(env, out);
}

static void assert_accepts(const struct spec *s, const char *value, long long want) {
  struct mxr_config c;
  int rc = parse_one(s->name, value, &c);
  ck_assert_msg(rc == 0, "%s='%s' rejected: %s", s->name, value, mxr_last_error());
  ck_assert_msg(field_value(&c, s) == want, "%s='%s' gave %lld, want %lld", s->name, value,
                field_value(&c, s), want);
}

/* The value is rejected with the documented message and the field keeps
 * its default. */
static void assert_rejects(const struct spec *s, const char *value) {
  struct mxr_config c;
  const struct mxr_config_var *v = var_named(s->name);
  ck_assert_ptr_nonnull(v);
  int rc = parse_one(s->name, value, &c);
  ck_assert_msg(rc == MXR_ECONFIG, "%s='%s' accepted (rc %d)", s->name, value, rc);
  char want[512];
  snprintf(want, sizeof want, "%s='%s' is not accepted: expected %s", s->name, value,
           v->accepted);
  ck_assert_msg(strstr(mxr_last_error(), want), "message '%s' lacks '%s'", mxr_last_error(),
                want);
  ck_assert_int_eq(field_value(&c, s), s->def);
}

/* ---- the table ---------------------------------------------------------- */

START_TEST(test_table_has_every_variable) {
  ck_assert_uint_eq(mxr_config_var_count(), NSPECS);
  for (size_t i = 0; i < NSPECS; i++) {
    const struct mxr_config_var *v = var_named(specs[i].name);
    ck_assert_msg(v != NULL, "%s missing from the table", specs[i].name);
    ck_assert_str_eq(v->kind, specs[i].kind);
  }
  ck_assert_ptr_null(mxr_config_var_at(mxr_config_var_count()));
}
END_TEST

START_TEST(test_table_rows_complete_and_unique) {
  size_t n = mxr_config_var_count();
  for (size_t i = 0; i < n; i++) {
    const struct mxr_config_var *v = mxr_config_var_at(i);
    ck_assert_ptr_nonnull(v);
    ck_assert_msg(v->doc && strlen(v->doc) >= 20, "%s: doc too short", v->name);
    ck_assert_msg(v->accepted && *v->accepted, "%s: no accepted text", v->name);
    ck_assert_msg(v->fallback && *v->fallback, "%s: no default", v->name);
    for (size_t j = i + 1; j < n; j++)
      ck_assert_msg(strcmp(v->name, mxr_config_var_at(j)->name) != 0, "%s twice", v->name);
  }
}
END_TEST

/* The default written in the table, given as a value, is the default in
 * effect: the listing cannot drift from the behaviour. */
START_TEST(test_table_default_text_is_the_default) {
  const struct spec *s = &specs[_i];
  const struct mxr_config_var *v = var_named(s->name);
  ck_assert_ptr_nonnull(v);
  if (strcmp(v->fallback, MAX_NODE) == 0) {
    ck_assert_msg(strncmp(s->name, MAX_NODE "_", strlen(MAX_NODE) + 1) == 0,
                  "%s should not inherit", s->name);
    return;
  }
  assert_accepts(s, v->fallback, s->def);
}
END_TEST

/* ---- valid values ------------------------------------------------------- */

START_TEST(test_defaults) {
  struct mxr_config c;
  const char *env[] = {NULL};
  memset(&c, 0xa5, sizeof c);
  ck_assert_int_eq(parse_env(env, &c), 0);
  for (size_t i = 0; i < NSPECS; i++)
    ck_assert_msg(field_value(&c, &specs[i]) == specs[i].def, "%s default %lld, want %lld",
                  specs[i].name, field_value(&c, &specs[i]), specs[i].def);
}
END_TEST

static void check_int_range_ends(const struct spec *s) {
  char buf[64];
  snprintf(buf, sizeof buf, "%lld", s->min);
  assert_accepts(s, buf, s->min);
  snprintf(buf, sizeof buf, "%lld", s->max);
  assert_accepts(s, buf, s->max);
  snprintf(buf, sizeof buf, "%lld", s->min - 1);
  assert_rejects(s, buf);
  if (s->max < LLONG_MAX) {
    snprintf(buf, sizeof buf, "%lld", s->max + 1);
    assert_rejects(s, buf);
  }
}

START_TEST(test_int_spellings) {
  const struct spec *s = spec_named("MXNET_CPU_WORKER_NTHREADS");
  assert_accepts(s, "8", 8);
  assert_accepts(s, " 8 ", 8);
  assert_accepts(s, "\t+3\n", 3);
  assert_accepts(s, "007", 7);
  assert_accepts(spec_named("MXNET_KVSTORE_BIGARRAY_BOUND"), "5000000000", 5000000000LL);
  assert_accepts(spec_named("MXNET_PROFILER_MODE"), "255", 255);
}
END_TEST

static void check_bool_spellings(const struct spec *s) {
  static const struct {
    const char *text;
    long long value;
  } cases[] = {{"0", 0},       {"1", 1},       {"true", 1},  {"false", 0},
               {"TRUE", 1},    {"False", 0},   {"tRuE", 1},  {"FALSE", 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    assert_accepts(s, cases[i].text, cases[i].value);
  assert_rejects(s, "yes");
  assert_rejects(s, "2");
  assert_rejects(s, "");
}

static void check_enum_choices(const struct spec *s) {
  for (long long k = 0; s->choices[k]; k++) {
    char lower[64];
    assert_accepts(s, s->choices[k], k);
    ck_assert_msg(strstr(var_named(s->name)->accepted, s->choices[k]), "%s not listed",
                  s->choices[k]);
    size_t n = strlen(s->choices[k]);
    for (size_t j = 0; j <= n; j++) lower[j] = (char)tolower((unsigned char)s->choices[k][j]);
    assert_rejects(s, lower);
  }
}

/* Every row, by its kind: ints at and just past both ends of their range,
 * bools in every spelling, enums with every choice. */
START_TEST(test_row_values) {
  const struct spec *s = &specs[_i];
  if (strcmp(s->kind, "int") == 0)
    check_int_range_ends(s);
  else if (strcmp(s->kind, "bool") == 0)
    check_bool_spellings(s);
  else if (strcmp(s->kind, "enum") == 0)
    check_enum_choices(s);
  else
    ck_abort_msg("%s: unknown kind %s", s->name, s->kind);
}
END_TEST

START_TEST(test_engine_type_name) {
  ck_assert_str_eq(mxr_engine_type_name(MXR_ENGINE_NAIVE), "NaiveEngine");
  ck_assert_str_eq(mxr_engine_type_name(MXR_ENGINE_THREADED), "ThreadedEngine");
  ck_assert_str_eq(mxr_engine_type_name(MXR_ENGINE_THREADED_PER_DEVICE),
                   "ThreadedEnginePerDevice");
  ck_assert_ptr_null(mxr_engine_type_name(-1));
  ck_assert_ptr_null(mxr_engine_type_name(3));
  ck_assert_ptr_null(mxr_engine_type_name(INT_MAX));
  ck_assert_ptr_null(mxr_engine_type_name(INT_MIN));
}
END_TEST

/* ---- FWD/BWD fall back to MAX_NODE_TRAIN -------------------------------- */

START_TEST(test_fwd_bwd_follow_max_node_train) {
  struct mxr_config c;
  const char *env[] = {MAX_NODE "=7", NULL};
  ck_assert_int_eq(parse_env(env, &c), 0);
  ck_assert_int_eq(c.exec_bulk_exec_max_node_train, 7);
  ck_assert_int_eq(c.exec_bulk_exec_max_node_train_fwd, 7);
  ck_assert_int_eq(c.exec_bulk_exec_max_node_train_bwd, 7);
}
END_TEST

START_TEST(test_fwd_bwd_override_max_node_train) {
  struct mxr_config c;
  const char *env[] = {MAX_NODE "=7", MAX_NODE "_FWD=3", NULL};
  ck_assert_int_eq(parse_env(env, &c), 0);
  ck_assert_int_eq(c.exec_bulk_exec_max_node_train_fwd, 3);
  ck_assert_int_eq(c.exec_bulk_exec_max_node_train_bwd, 7);
  const char *env2[] = {MAX_NODE "_BWD=0", NULL};
  ck_assert_int_eq(parse_env(env2, &c), 0);
  ck_assert_int_eq(c.exec_bulk_exec_max_node_train_fwd, 15);
  ck_assert_int_eq(c.exec_bulk_exec_max_node_train_bwd, 0);
}
END_TEST

/* An invalid value keeps the default, which for FWD/BWD is the value of
 * MAX_NODE_TRAIN, itself back at its default when invalid. */
START_TEST(test_fwd_bwd_after_invalid_max_node_train) {
  struct mxr_config c;
  const char *env[] = {MAX_NODE "=abc", MAX_NODE "_BWD=4", NULL};
  ck_assert_int_eq(parse_env(env, &c), MXR_ECONFIG);
  ck_assert_int_eq(c.exec_bulk_exec_max_node_train_fwd, 15);
  ck_assert_int_eq(c.exec_bulk_exec_max_node_train_bwd, 4);
  const char *env2[] = {MAX_NODE "=7", MAX_NODE "_FWD=abc", NULL};
  ck_assert_int_eq(parse_env(env2, &c), MXR_ECONFIG);
  ck_assert_int_eq(c.exec_bulk_exec_max_node_train_fwd, 7);
}
END_TEST

/* ---- invalid values ----------------------------------------------------- */

static const struct {
  const char *name;
  const char *value;
} invalid[] = {
    {"MXNET_CPU_WORKER_NTHREADS", "abc"},
    {"MXNET_CPU_WORKER_NTHREADS", "-1"},
    {"MXNET_CPU_WORKER_NTHREADS", "0"},
    {"MXNET_CPU_WORKER_NTHREADS", "1.5"},
    {"MXNET_CPU_WORKER_NTHREADS", "12abc"},
    {"MXNET_CPU_WORKER_NTHREADS", ""},
    {"MXNET_CPU_WORKER_NTHREADS", "   "},
    {"MXNET_CPU_WORKER_NTHREADS", "0x10"},
    {"MXNET_CPU_WORKER_NTHREADS", "1 2"},
    {"MXNET_CPU_WORKER_NTHREADS", "+ 2"},
    {"MXNET_CPU_WORKER_NTHREADS", "2147483648"},
    {"MXNET_CPU_WORKER_NTHREADS", "99999999999999999999"},
    {"MXNET_KVSTORE_BIGARRAY_BOUND", "99999999999999999999"},
    {"MXNET_KVSTORE_BIGARRAY_BOUND", "1e6"},
    {"MXNET_KVSTORE_BIGARRAY_BOUND", "-1"},
    {MAX_NODE, "abc"},
    {MAX_NODE "_FWD", "-1"},
    {"MXNET_GPU_WORKER_NSTREAMS", "3"},
    {"MXNET_GPU_MEM_POOL_RESERVE", "101"},
    {"MXNET_PROFILER_MODE", "256"},
    {"MXNET_CUDNN_AUTOTUNE_DEFAULT", "3"},
    {"MXNET_ENGINE_TYPE", "FooEngine"},
    {"MXNET_ENGINE_TYPE", ""},
    {"MXNET_ENGINE_TYPE", " NaiveEngine"},
    {"MXNET_GPU_MEM_POOL_TYPE", "Pooled"},
    {"MXNET_EXEC_ENABLE_INPLACE", "yes"},
    {"MXNET_EXEC_ENABLE_INPLACE", ""},
};

START_TEST(test_invalid_value) {
  assert_rejects(spec_named(invalid[_i].name), invalid[_i].value);
}
END_TEST

/* One bad variable does not stop the others from being applied. */
START_TEST(test_invalid_keeps_valid_others) {
  struct mxr_config c;
  const char *env[] = {"MXNET_GPU_COPY_NTHREADS=3", "MXNET_CPU_WORKER_NTHREADS=abc",
                       "MXNET_ENGINE_TYPE=NaiveEngine", NULL};
  ck_assert_int_eq(parse_env(env, &c), MXR_ECONFIG);
  ck_assert_int_eq(c.gpu_copy_nthreads, 3);
  ck_assert_int_eq(c.engine_type, MXR_ENGINE_NAIVE);
  ck_assert_int_eq(c.cpu_worker_nthreads, 1);
}
END_TEST

START_TEST(test_two_invalid_in_one_message) {
  struct mxr_config c;
  const char *env[] = {"MXNET_ENGINE_TYPE=FooEngine", "MXNET_EXEC_NUM_TEMP=0", NULL};
  ck_assert_int_eq(parse_env(env, &c), MXR_ECONFIG);
  char want[MXR_ERROR_MAX];
  snprintf(want, sizeof want,
           "MXNET_ENGINE_TYPE='FooEngine' is not accepted: expected %s; "
           "MXNET_EXEC_NUM_TEMP='0' is not accepted: expected %s",
           var_named("MXNET_ENGINE_TYPE")->accepted, var_named("MXNET_EXEC_NUM_TEMP")->accepted);
  ck_assert_str_eq(mxr_last_error(), want);
}
END_TEST

/* A runaway value is cut so that the variables after it still fit. */
START_TEST(test_long_value_is_cut) {
  struct mxr_config c;
  char big[700];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  char entry[800];
  snprintf(entry, sizeof entry, "MXNET_ENGINE_TYPE=%s", big);
  const char *env[] = {entry, "MXNET_PROFILER_AUTOSTART=maybe", NULL};
  ck_assert_int_eq(parse_env(env, &c), MXR_ECONFIG);
  const char *msg = mxr_last_error();
  ck_assert_msg(strstr(msg, "MXNET_ENGINE_TYPE='xxxx"), "%s", msg);
  ck_assert_msg(strstr(msg, "...'"), "%s", msg);
  ck_assert_msg(strstr(msg, "MXNET_PROFILER_AUTOSTART='maybe' is not accepted"), "%s", msg);
}
END_TEST

/* mxr_config_parse touches no state on success: not even the last error. */
START_TEST(test_success_keeps_last_error) {
  struct mxr_config c;
  const char *env[] = {"MXNET_ENGINE_TYPE=NaiveEngine", NULL};
  mxr_set_error(MXR_EINVAL, "sentinel");
  ck_assert_int_eq(parse_env(env, &c), 0);
  ck_assert_str_eq(mxr_last_error(), "sentinel");
}
END_TEST

/* ---- the read at library load, in a child process ----------------------- */

#define CHILD_FLAG "--config-child"

static void *status_on_thread(void *arg) {
  int *rc = arg;
  *rc = mxr_config_status();
  printf("thread-message=%s\n", mxr_last_error());
  return NULL;
}

/* Runs in the child: report what the library read at load.  With `setenv_abc`
 * the environment is changed first, which must make no difference. */
static int child_main(const char *mode) {
  if (strcmp(mode, "setenv") == 0) setenv(MAX_NODE, "abc", 1);
  const struct mxr_config *c = mxr_config_get();
  int rc = mxr_config_status();
  printf("status=%d\nfwd=%d\nmessage=%s\n", rc, c->exec_bulk_exec_max_node_train_fwd,
         rc ? mxr_last_error() : "");
  pthread_t t;
  int thread_rc = 1;
  if (pthread_create(&t, NULL, status_on_thread, &thread_rc) != 0) return 1;
  pthread_join(t, NULL);
  printf("thread-status=%d\n", thread_rc);
  return fflush(stdout) == 0 ? 0 : 1;
}

/* Run this test binary as a child in `mode`, with every MXNET_* variable
 * of this process's environment replaced by `add`; returns what it printed
 * (caller frees). */
static char *run_child(const char *mode, const char *add) {
  static const char *const drop[] = {"MXNET_", NULL};
  const char *const env[] = {add, NULL};
  char *argv[] = {"test_config", CHILD_FLAG, (char *)mode, NULL};
  return tu_run_self(argv, drop, env);
}

START_TEST(test_invalid_env_at_load_fails_status) {
  char *out = run_child("plain", MAX_NODE "=abc");
  char want_status[32];
  snprintf(want_status, sizeof want_status, "status=%d\n", MXR_ECONFIG);
  ck_assert_msg(strstr(out, want_status), "%s", out);
  ck_assert_msg(strstr(out, "message=" MAX_NODE "='abc' is not accepted: expected "), "%s",
                out);
  ck_assert_msg(strstr(out, "thread-message=" MAX_NODE "='abc' is not accepted"), "%s", out);
  snprintf(want_status, sizeof want_status, "thread-status=%d\n", MXR_ECONFIG);
  ck_assert_msg(strstr(out, want_status), "%s", out);
  ck_assert_msg(strstr(out, "fwd=15\n"), "%s", out);
  free(out);
}
END_TEST

/* The value in effect is the one at load: a later setenv changes nothing. */
START_TEST(test_env_is_read_at_load_only) {
  char *out = run_child("setenv", MAX_NODE "=7");
  ck_assert_msg(strstr(out, "status=0\n"), "%s", out);
  ck_assert_msg(strstr(out, "fwd=7\n"), "%s", out);
  ck_assert_msg(strstr(out, "thread-status=0\n"), "%s", out);
  free(out);
}
END_TEST

/* ---- suite -------------------------------------------------------------- */

static Suite *config_suite(void) {
  Suite *s = suite_create("config");
  TCase *table = tcase_create("table");
  tcase_add_test(table, test_table_has_every_variable);
  tcase_add_test(table, test_table_rows_complete_and_unique);
  tcase_add_loop_test(table, test_table_default_text_is_the_default, 0, NSPECS);
  tcase_add_test(table, test_engine_type_name);
  suite_add_tcase(s, table);

  TCase *valid = tcase_create("valid");
  tcase_add_test(valid, test_defaults);
  tcase_add_loop_test(valid, test_row_values, 0, NSPECS);
  tcase_add_test(valid, test_int_spellings);
  tcase_add_test(valid, test_fwd_bwd_follow_max_node_train);
  tcase_add_test(valid, test_fwd_bwd_override_max_node_train);
  tcase_add_test(valid, test_fwd_bwd_after_invalid_max_node_train);
  tcase_add_test(valid, test_success_keeps_last_error);
  suite_add_tcase(s, valid);

  TCase *bad = tcase_create("invalid");
  tcase_add_loop_test(bad, test_invalid_value, 0, sizeof invalid / sizeof invalid[0]);
  tcase_add_test(bad, test_invalid_keeps_valid_others);
  tcase_add_test(bad, test_two_invalid_in_one_message);
  tcase_add_test(bad, test_long_value_is_cut);
  suite_add_tcase(s, bad);

  TCase *load = tcase_create("load");
  tcase_add_test(load, test_invalid_env_at_load_fails_status);
  tcase_add_test(load, test_env_is_read_at_load_only);
  suite_add_tcase(s, load);
  return s;
}

int main(int argc, char **argv) {
  if (argc > 2 && strcmp(argv[1], CHILD_FLAG) == 0) return child_main(argv[2]);
  return mxr_test_run(config_suite());
}
