/*
 * Internal: what the engine offers the rest of libmxref beyond its public
 * header (mxref/engine.h).  The engine's own data structures stay in
 * engine_internal.h, for the files of ref/src/engine only.
 */
#ifndef MXR_ENGINE_LIB_H
#define MXR_ENGINE_LIB_H

#include "mxref/engine.h"

/* The engine options the process configuration (MXNET_* variables) sets,
 * with no GPU driver; mxr_engine_opts_from_config (device/default_engine.c)
 * adds this build's. */
int mxr__engine_opts_from_config(struct mxr_engine_opts *opts);

/* Block until every op pushed so far that writes one of `vars` is done,
 * without surfacing or clearing errors (the executor's wait before it
 * frees or rebinds its arrays). */
int mxr__engine_wait_vars_quiet(mxr_engine *eng, mxr_var *const *vars, int n);

#endif /* MXR_ENGINE_LIB_H */
