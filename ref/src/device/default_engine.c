/*
 * The library's default engine (MXNet's Engine::Get()): created on first use
 * from the process configuration, freed by mxr_engine_shutdown_default().
 *
 * This is where this build's GPU driver (mxr_gpu_driver(): the CUDA driver
 * of cuda/driver.cu, or NULL) is plugged into the engine options, from
 * above: the engine itself (engine/) knows only struct mxr_device_driver of
 * mxref/engine.h and reads the configuration's options
 * (mxr__engine_opts_from_config); mxr_engine_opts_from_config() adds the
 * driver.
 */
#include "common/threads.h"
#include "engine/engine_lib.h"
#include "mxref/device.h"
#include "mxref/error.h"

int mxr_engine_opts_from_config(struct mxr_engine_opts *opts) {
  int st = mxr__engine_opts_from_config(opts);
  if (!st) opts->gpu_driver = mxr_gpu_driver(); /* NULL without CUDA */
  return st;
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
