/*
 * The library's default engine (MXNet's Engine::Get()): created on first use
 * from the process configuration, freed by mxr_engine_shutdown_default().
 */
#include "engine/engine_internal.h"

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
