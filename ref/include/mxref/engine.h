/*
 * mxref/engine.h: the dependency engine.
 *
 * Ops are pushed with a set of vars they read (const) and a set they write
 * (mutable).  Per var, writes run one at a time and in push order; reads
 * between two writes may run concurrently.  Which threads run an op depends on
 * the engine type (MXNet 1.9.1's three engines):
 *
 *   MXR_ENGINE_NAIVE               runs every op on the pushing thread, at push.
 *   MXR_ENGINE_THREADED            one shared pool of workers for all devices
 *                                  plus one worker for copy ops.
 *   MXR_ENGINE_THREADED_PER_DEVICE per CPU device a pool of cpu_worker_nthreads,
 *                                  one priority pool of cpu_priority_nthreads;
 *                                  per GPU a compute pool of gpu_worker_nthreads
 *                                  and a copy pool of gpu_copy_nthreads; pools
 *                                  start on the first op that needs them.
 *
 * Errors.  A sync op fails by returning a non-zero status (after calling
 * mxr_set_error); an async op by passing one to mxr_engine_complete().  The
 * error is attached to every var the op writes.  A later op that reads or
 * writes a var carrying an error is skipped (not run, unless its property is
 * MXR_PROP_NO_SKIP) and passes the same error on to the vars it writes.  The
 * error resurfaces, as a failing return, at mxr_engine_wait_for_var() on such
 * a var and at mxr_engine_wait_for_all(); surfacing clears it (at the var
 * wait: everywhere that error was attached; at wait-for-all: every error), so
 * later ops run again.  The naive engine runs ops at push time, so there
 * mxr_engine_push*() itself returns the op's error, and nothing is attached.
 *
 * Engine bulking (per thread, as MXNet's Engine::set_bulk_size): while the
 * calling thread's bulk size is > 0, sync ops with property NORMAL and
 * priority 0 are not pushed one by one but appended to a pending bulk that
 * becomes one engine op named "ImperativeBulk".  The bulk is pushed when it
 * reaches the bulk size, when an op for another context arrives, before any
 * op that cannot be bulked, and at every wait.  The naive engine never bulks.
 *
 * Ownership and lifetimes.
 *   - mxr_engine_create() returns an engine the caller frees with
 *     mxr_engine_free(), which first waits for all pushed ops.  The default
 *     engine (mxr_engine_default()) is owned by the library.
 *   - A var is created by mxr_engine_new_var() and freed by pushing
 *     mxr_engine_delete_var(): the var is released after every op pushed
 *     before the delete has finished.  Pushing an op that names a var after
 *     its delete is a caller error.
 *   - `param` belongs to the caller until the push call; from then on the
 *     engine owns it and calls `param_free(param)` (if not NULL) exactly once,
 *     after the op ran or was skipped, also when the push itself fails.
 *   - `name` must stay valid until the op has completed (a string literal, or
 *     a string owned by something that outlives the op).
 *   - The var arrays are copied during the push call.
 */
#ifndef MXREF_ENGINE_H
#define MXREF_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "mxref/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mxr_engine mxr_engine;
typedef struct mxr_var mxr_var;

/* Op properties, with MXNet's numbering (FnProperty). */
enum mxr_fn_property {
  MXR_PROP_NORMAL = 0,
  MXR_PROP_COPY_FROM_GPU = 1,
  MXR_PROP_COPY_TO_GPU = 2,
  MXR_PROP_CPU_PRIORITIZED = 3,
  MXR_PROP_ASYNC = 4,
  MXR_PROP_DELETE_VAR = 5,
  MXR_PROP_GPU_PRIORITIZED = 6,
  MXR_PROP_NO_SKIP = 7,
};
#define MXR_PROP_COUNT 8

/* What an op's function is told about where it runs. */
struct mxr_run_ctx {
  struct mxr_context ctx; /* the context the op was pushed for */
  void *stream;           /* the worker's device stream (GPU workers), else NULL */
  void *aux_stream;       /* the worker's second stream, if it has one, else NULL */
  int worker;             /* index of the worker thread in its pool; -1 inline */
  void *driver_data;      /* the GPU driver's per-worker state, else NULL */
};

/* A sync op: returns 0, or a negative status after mxr_set_error(). */
typedef int (*mxr_sync_fn)(const struct mxr_run_ctx *rctx, void *param);

/* Handed to an async op; it must call mxr_engine_complete() exactly once,
 * from any thread, when the op's work is done. */
typedef struct mxr_completion mxr_completion;
typedef void (*mxr_async_fn)(const struct mxr_run_ctx *rctx, void *param,
                             mxr_completion *done);

/* Finish an async op.  `status` is 0 or a negative code; with an error the
 * calling thread's last-error message is taken as the op's message. */
void mxr_engine_complete(mxr_completion *done, int status);

/*
 * Device drivers.  The engine core knows nothing about GPUs: a driver gives
 * each GPU worker thread its streams when it starts and finishes what an op
 * queued on them when the op's function returns.  All members may be NULL.
 */
enum mxr_pool_kind {
  MXR_POOL_CPU_WORKER = 0,
  MXR_POOL_CPU_PRIORITY = 1,
  MXR_POOL_GPU_WORKER = 2,
  MXR_POOL_GPU_COPY = 3,
  MXR_POOL_GPU_PRIORITY = 4,
  MXR_POOL_SHARED = 5, /* the threaded engine's common pool */
  MXR_POOL_SHARED_IO = 6,
};

struct mxr_device_driver {
  void *user;
  /* Number of GPUs; ops pushed for gpu(id) with id >= count are rejected. */
  int (*device_count)(void *user);
  /* Called on a GPU worker thread before it runs any op, and on a shared
   * worker of the threaded engine before its first op for that device;
   * fills the run ctx's stream members.  A failure stops a GPU pool from
   * starting, and fails the shared worker's op. */
  int (*worker_start)(void *user, struct mxr_context ctx, enum mxr_pool_kind kind,
                      int nstreams, struct mxr_run_ctx *rctx);
  /* Called on the worker thread when the pool stops. */
  void (*worker_stop)(void *user, struct mxr_run_ctx *rctx);
  /* Called after each sync op's function returned 0 on a GPU worker, e.g.
   * to wait for the op's kernels; a failure becomes the op's error. */
  int (*op_finish)(void *user, struct mxr_run_ctx *rctx);
  /* Called before each GPU op that runs outside a GPU worker (NaiveEngine
   * runs them on the pushing thread, the threaded engine on shared workers
   * that serve every device), and before such a thread stops a device's
   * streams, to make that device current there; a failure becomes the op's
   * error and the op does not run. */
  int (*op_start)(void *user, struct mxr_run_ctx *rctx);
};

/* Profiling categories an op is pushed under, with MXNet's numbering
 * (profiler::Profiler::ProfilerMode).  The pusher decides: the executor
 * pushes its ops as SYMBOLIC, imperative calls and engine bulks as
 * IMPERATIVE; the engine passes the bits on to its observer untouched. */
enum mxr_profile_category {
  MXR_PROFILE_SYMBOLIC = 1,
  MXR_PROFILE_IMPERATIVE = 2,
  MXR_PROFILE_API = 4,
  MXR_PROFILE_MEMORY = 8,
};

/* What the observer is told about an op. Valid during the call only. */
struct mxr_op_event {
  const char *name;
  struct mxr_context ctx;
  int prop;          /* enum mxr_fn_property */
  unsigned profile;  /* enum mxr_profile_category bits given at push */
};

/* Optional observer of every op the engine runs (the profiler's hook).
 * op_begin is called on the thread that runs the op, right before its
 * function; op_end right after it (for an async op: on the thread that
 * completes it) and receives what op_begin returned, e.g. a start time and
 * thread.  Skipped ops get no calls.  Either member may be NULL. */
struct mxr_engine_hooks {
  void *user;
  uint64_t (*op_begin)(void *user, const struct mxr_op_event *ev);
  void (*op_end)(void *user, const struct mxr_op_event *ev, uint64_t begin_cookie);
};

struct mxr_engine_opts {
  int type;                  /* enum mxr_engine_type */
  int cpu_worker_nthreads;   /* per-device engine: workers per CPU device */
  int cpu_priority_nthreads; /* per-device engine: CPU priority pool */
  int gpu_worker_nthreads;   /* per-device engine: compute workers per GPU */
  int gpu_copy_nthreads;     /* per-device engine: copy workers per GPU */
  int gpu_worker_nstreams;   /* streams per GPU worker: 1 or 2 */
  int pooled_nthreads;       /* threaded engine: shared pool size (MXNet: 16) */
  const struct mxr_device_driver *gpu_driver; /* NULL: GPU contexts are rejected */
};

/* Options as the process configuration (MXNET_* variables) sets them, with
 * the GPU driver of this build (mxr_gpu_driver(); NULL without CUDA). */
int mxr_engine_opts_from_config(struct mxr_engine_opts *opts);

/* Create an engine.  Returns 0 and sets *out, or an error (bad options,
 * threads that could not start). */
int mxr_engine_create(const struct mxr_engine_opts *opts, mxr_engine **out);

/* Wait for all ops, stop the workers and free the engine. Vars still alive
 * are freed with it.  Returns the first error wait-for-all would return.
 * The calling thread's pending bulk is pushed first; other threads must not
 * use the engine any more, nor hold a pending bulk for it. */
int mxr_engine_free(mxr_engine *eng);

/* The library's engine, created on first use from the process configuration.
 * Sets *out and returns 0, or fails when the configuration is invalid. */
int mxr_engine_default(mxr_engine **out);

/* Wait for and free the default engine (MXNotifyShutdown). Idempotent. */
int mxr_engine_shutdown_default(void);

int mxr_engine_type_of(const mxr_engine *eng);

/* Install (or with NULL remove) the op observer.  A first install may
 * happen while ops run; replacing or removing hooks must not. */
void mxr_engine_set_hooks(mxr_engine *eng, const struct mxr_engine_hooks *hooks);

/* Vars. */
int mxr_engine_new_var(mxr_engine *eng, mxr_var **out);

/* Push the deletion of `var`.  `fn`, if not NULL, runs (with param) as the
 * delete op, after every op pushed before it, e.g. to free the memory the var
 * guards; the var is released after it. */
int mxr_engine_delete_var(mxr_engine *eng, mxr_var *var, mxr_sync_fn fn,
                          void *param, void (*param_free)(void *));

/* The number of write ops on `var` that have completed. */
uint64_t mxr_var_version(mxr_var *var);

/* A push request.  Zero-initialise it and fill in what you need. */
struct mxr_push {
  mxr_sync_fn sync_fn;    /* exactly one of sync_fn and async_fn */
  mxr_async_fn async_fn;
  void *param;
  void (*param_free)(void *);
  struct mxr_context ctx;
  mxr_var *const *const_vars;
  int num_const;
  mxr_var *const *mutable_vars;
  int num_mutable;
  int prop;               /* enum mxr_fn_property */
  int priority;           /* higher runs first in priority pools */
  const char *name;       /* for the profiler; NULL means "op" */
  unsigned profile;       /* enum mxr_profile_category bits, for the observer */
  bool no_bulk;           /* push as its own op even while this thread bulks
                             (MXNet's Engine::Push, as opposed to PushSync):
                             the pending bulk is pushed first */
};

/* Push an op.  Fails (MXR_EINVAL) on a malformed request: no function, a
 * bad property or context, a var listed twice (within or across the two
 * sets), a NULL var.  On the naive engine it returns the op's own error. */
int mxr_engine_push(mxr_engine *eng, const struct mxr_push *req);

/* Shorthand for a sync NORMAL op at priority 0. */
int mxr_engine_push_sync(mxr_engine *eng, mxr_sync_fn fn, void *param,
                         void (*param_free)(void *), struct mxr_context ctx,
                         mxr_var *const *const_vars, int num_const,
                         mxr_var *const *mutable_vars, int num_mutable,
                         const char *name);

/* Block until every op pushed before this call that writes `var` has
 * completed.  Returns the error attached to var, if any (and clears it). */
int mxr_engine_wait_for_var(mxr_engine *eng, mxr_var *var);

/* Block until every op pushed so far has completed.  Returns the first error
 * raised since the last wait-for-all, if any (and clears all of them). */
int mxr_engine_wait_for_all(mxr_engine *eng);

/* Set the calling thread's bulk size for `eng`; returns the previous one.
 * Pushes the pending bulk if it already holds >= size ops. */
int mxr_engine_set_bulk_size(mxr_engine *eng, int size);

/* The calling thread's bulk size for `eng`. */
int mxr_engine_bulk_size(const mxr_engine *eng);

/* Counters, for tests and benchmarks.  Snapshot; exact once the engine is
 * idle. */
struct mxr_engine_stats {
  uint64_t ops_pushed;    /* engine ops (a bulk counts once) */
  uint64_t ops_run;       /* ops whose function ran */
  uint64_t ops_skipped;   /* ops skipped because of an input error */
  uint64_t ops_bulked;    /* sync ops appended to bulks */
  uint64_t bulks_pushed;  /* ImperativeBulk ops pushed */
  int64_t vars_live;      /* created minus released */
  int pools_started;      /* worker pools running */
  int threads_started;    /* worker threads running */
};
void mxr_engine_get_stats(const mxr_engine *eng, struct mxr_engine_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* MXREF_ENGINE_H */
