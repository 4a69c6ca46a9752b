/*
 * Test support for engine-based tests: engine configurations to loop over,
 * and small op bodies.  Static inline only; every test binary includes it.
 */
#ifndef MXR_TESTS_ENGINE_UTIL_H
#define MXR_TESTS_ENGINE_UTIL_H

#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "mxref/mxref.h"

struct tu_engine_config {
  const char *label;
  struct mxr_engine_opts opts;
};

/* Every engine type, and the worker counts the tests care about. */
static const struct tu_engine_config tu_engine_configs[] = {
    {"NaiveEngine", {MXR_ENGINE_NAIVE, 1, 1, 1, 1, 1, 1, NULL}},
    {"ThreadedEngine/1", {MXR_ENGINE_THREADED, 1, 1, 1, 1, 1, 1, NULL}},
    {"ThreadedEngine/4", {MXR_ENGINE_THREADED, 1, 1, 1, 1, 1, 4, NULL}},
    {"ThreadedEngine/16", {MXR_ENGINE_THREADED, 1, 1, 1, 1, 1, 16, NULL}},
    {"ThreadedEnginePerDevice/1", {MXR_ENGINE_THREADED_PER_DEVICE, 1, 1, 1, 1, 1, 4, NULL}},
    {"ThreadedEnginePerDevice/2", {MXR_ENGINE_THREADED_PER_DEVICE, 2, 2, 1, 1, 1, 4, NULL}},
    {"ThreadedEnginePerDevice/4", {MXR_ENGINE_THREADED_PER_DEVICE, 4, 2, 1, 1, 1, 4, NULL}},
};
#define TU_NUM_ENGINE_CONFIGS ((int)(sizeof tu_engine_configs / sizeof tu_engine_configs[0]))

/* Create the engine of configuration i, failing the test if that fails. */
static inline mxr_engine *tu_engine(int i) {
  mxr_engine *eng = NULL;
  int st = mxr_engine_create(&tu_engine_configs[i].opts, &eng);
  ck_assert_msg(st == 0, "%s: %s", tu_engine_configs[i].label, mxr_last_error());
  return eng;
}

/* Options with the given type and worker counts, no GPU driver. */
static inline struct mxr_engine_opts tu_opts(int type, int cpu_workers) {
  struct mxr_engine_opts o = {type, cpu_workers, 2, 1, 1, 1, 4, NULL};
  return o;
}

static inline void tu_sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static inline double tu_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif /* MXR_TESTS_ENGINE_UTIL_H */
