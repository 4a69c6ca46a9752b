/*
 * The library's default engine (MXNet's Engine::Get()): created on first use
 * from the process configuration, freed by mxr_engine_shutdown_default().
 *
 * This is where this build's GPU driver (mxr_gpu_driver(), the CUDA driver
 * of cuda/driver.cu or NULL) is plugged into the engine: the engine itself
 * (engine/) knows only struct mxr_device_driver of mxref/engine.h, and
 * mxr_engine_opts_from_config() fills in the options from the configuration
 * and the driver from here, above both.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "common/threads.h"
#include "mxref/config.h"
#include "mxref/device.h"
#include "mxref/engine.h"
#include "mxref/error.h"

int mxr_engine_opts_from_config(struct mxr_engine_opts *opts) {
  if (!opts) return mxr_set_error(MXR_EINVAL, "mxr_engine_opts_from_config: opts is NULL");
  int st = mxr_config_status();
  if (st) return st;
  const struct mxr_config *c = mxr_config_get();
  memset(opts, 0, sizeof *opts);
  opts->type = c->engine_type;
  opts->cpu_worker_nthreads = c->cpu_worker_nthreads;
  opts->cpu_priority_nthreads = c->cpu_priority_nthreads;
  opts->gpu_worker_nthreads = c->gpu_worker_nthreads;
  opts->gpu_copy_nthreads = c->gpu_copy_nthreads;
  opts->gpu_worker_nstreams = c->gpu_worker_nstreams;
  opts->pooled_nthreads = 16; /* MXNet's ThreadedEnginePooled uses 16 workers */
  opts->gpu_driver = mxr_gpu_driver(); /* NULL without CUDA */
  return 0;
}

static pthread_mutex_t default_mu = PTHREAD_MUTEX_INITIALIZER;
static mxr_engine *default_engine;
static bool default_shut_down;

int mxr_engine_default(mxr_engine **out) {
  if (!out) return mxr_set_error(MXR_EINVAL, "mxr_engine_default: out is NULL");
  int st = 0;
  mxr_mutex_lock(&default_mu);
  if (default_shut_down) {
    st = mxr_set_error(MXR_ESTATE, "the engine was shut down (MXNotifyShutdown)");
  } else if (!default_engine) {
    struct mxr_engine_opts opts;
    st = mxr_engine_opts_from_config(&opts);
    if (!st) st = mxr_engine_create(&opts, &default_engine);
  }
  *out = st ? NULL : default_engine;
  mxr_mutex_unlock(&default_mu);
  return st;
}

int mxr_engine_shutdown_default(void) {
  mxr_mutex_lock(&default_mu);
  mxr_engine *eng = default_engine;
  default_engine = NULL;
  default_shut_down = true;
  mxr_mutex_unlock(&default_mu);
  return mxr_engine_free(eng);
}
