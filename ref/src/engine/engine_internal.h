/*
 * Internal: the engine's data structures, shared by the files of
 * ref/src/engine and by nothing else (the rest of the library uses
 * engine_lib.h).  Nothing here is part of the public API.
 *
 * How an op flows (threaded engines):
 *   push      -> one `opr` block is allocated; each of its vars gets a
 *                dep_link appended (var.c).  A var grants the op at once when
 *                it is free for that access; otherwise the link waits in the
 *                var's queue.  `wait` counts the grants still missing, plus
 *                one held by the pusher until every link is appended.
 *   dispatch  -> when `wait` reaches 0 the op goes to its pool's queue
 *                (pool.c), or runs inline (async ops on the pushing thread,
 *                and the wait-for-var marker ops).
 *   run       -> engine.c: the op inherits an error from any of its vars and
 *                is then skipped; else its function runs.
 *   complete  -> each var releases its grant and grants the next waiting ops,
 *                which are dispatched in turn; the op's error is attached to
 *                the vars it wrote; param_free; the block is freed.
 */
#ifndef MXR_ENGINE_INTERNAL_H
#define MXR_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/recycle.h"
#include "common/threads.h"
#include "engine/engine_lib.h"
#include "engine/workqueue.h"
#include "mxref/config.h"
#include "mxref/engine.h"
#include "mxref/error.h"

/* An error raised by an op, shared (refcounted) by the op, the vars it was
 * attached to and the engine's list of errors not yet surfaced. */
struct eng_error {
  atomic_int refs;
  atomic_bool active; /* false once surfaced by a wait: cleared everywhere */
  int status;
  char msg[MXR_ERROR_MAX];
};

struct eng_error *mxr__error_new(int status, const char *msg);
void mxr__error_retain(struct eng_error *e);
void mxr__error_release(struct eng_error *e);
static inline bool mxr__error_is_active(const struct eng_error *e) {
  return e != NULL && atomic_load_explicit(&e->active, memory_order_acquire);
}

struct opr;

/* One var's view of one op that uses it. */
struct dep_link {
  struct opr *op;
  struct dep_link *next;
  bool write;
};

struct mxr_var {
  pthread_mutex_t mu;
  struct dep_link *head, *tail; /* ops not yet granted, in push order */
  int active_reads;             /* granted reads still running */
  bool active_write;            /* a granted write is running */
  bool to_delete;               /* release after the running write */
  uint64_t version;             /* completed writes */
  _Atomic(struct eng_error *) err; /* changed under mu by the granted writer */
  struct mxr_engine *eng;
  struct mxr_var *reg_prev, *reg_next; /* the engine's registry of live vars */
};

struct mxr_completion {
  struct opr *op;
};

struct pool;

struct opr {
  struct mxr_engine *eng;
  mxr_sync_fn sync_fn;
  mxr_async_fn async_fn;
  void *param;
  void (*param_free)(void *);
  struct mxr_context ctx;
  int prop;
  int priority;
  uint64_t seq;          /* push order, breaks priority ties */
  const char *name;
  unsigned profile;      /* profiling category bits, passed to the observer */
  atomic_int wait;       /* grants still missing (+1 while being pushed) */
  int num_const, num_mutable;
  mxr_var **vars;        /* const vars, then mutable vars */
  struct dep_link *links;/* links[i] belongs to vars[i] */
  struct eng_error *err; /* inherited from an input, or raised by the op */
  struct pool *pool;     /* where it runs; NULL: inline on the dispatching thread */
  bool is_wait_marker;   /* wait-for-var marker: runs despite errors */
  bool deletes_var;      /* delete-var op: its mutable var is released */
  bool hooked;           /* op_begin was called: op_end is due */
  uint64_t hook_cookie;  /* what op_begin returned */
  struct mxr_completion done;
  /* trailing storage: vars[] then links[] */
};

/* Op blocks for at most this many vars are recycled rather than freed
 * (common/recycle.h): the thread that completes an op is seldom the one that
 * pushes the next. */
#define MXR_OPR_SMALL_VARS 4
/* At most about this many blocks of each kind wait for reuse. */
#define MXR_OPR_RECYCLED_MAX 4096
/* Bulks of at most this many ops have recycled blocks (bulk.c). */
#define MXR_BULK_SMALL 16

/* Dependency tracking (var.c). */
int mxr__var_create(struct mxr_engine *eng, mxr_var **out);
void mxr__var_destroy(mxr_var *var);
/* Append op's link i to its var; returns true if granted at once. */
bool mxr__var_append(mxr_var *var, struct dep_link *link);
/* Release a grant and collect the ops newly granted into `ready` (caller
 * decrements their wait).  Returns true if the var must now be destroyed. */
typedef struct {
  struct opr **ops;
  int n, cap;
  struct opr *inline_buf[8];
} ready_list;
void mxr__ready_init(ready_list *r);
void mxr__ready_free(ready_list *r);
bool mxr__var_complete(mxr_var *var, bool write, struct eng_error *op_err,
                       bool release_var, ready_list *ready);
/* Count a write that bypassed dependency tracking (the naive engine). */
void mxr__var_count_write(mxr_var *var);
/* Is the var free of pending writes (reading it would not wait)? */
bool mxr__var_ready_to_read(mxr_var *var);
/* Surface the var's error: returns its status (message stored) and clears it. */
int mxr__var_take_error(mxr_var *var);

/* Worker pools (pool.c). */
struct pool {
  struct mxr_engine *eng;
  enum mxr_pool_kind kind;
  struct mxr_context ctx;
  int nthreads;
  int nstreams;
  struct workqueue queue;
  pthread_t *threads;
  int started;           /* threads created */
  pthread_mutex_t start_mu;
  pthread_cond_t start_cv;
  int ready_count;       /* workers that finished driver start */
  int start_status;      /* first worker-start failure */
  char start_msg[MXR_ERROR_MAX];
};
int mxr__pool_start(struct mxr_engine *eng, enum mxr_pool_kind kind,
                    struct mxr_context ctx, int nthreads, bool priority_order,
                    struct pool **out);
void mxr__pool_stop(struct pool *p);

/* Engine. */

/* A cache line: counters written by pushing threads and by workers are kept
 * on lines of their own, so that one side's writes do not evict what the
 * other side only reads. */
#define MXR_CACHE_LINE 64

struct mxr_engine {
  struct mxr_engine_opts opts;
  pthread_mutex_t finished_mu; /* with finished_cv: wait-for-all */
  pthread_cond_t finished_cv;
  atomic_int all_waiters;      /* threads in wait-for-all; read by completions */
  atomic_int completing;       /* threads inside mxr_engine_complete */

  pthread_mutex_t pools_mu;    /* pool creation */
  _Atomic(struct pool *) cpu_pools[MXR_MAX_DEVICES];
  _Atomic(struct pool *) cpu_priority_pool;
  _Atomic(struct pool *) gpu_pools[MXR_MAX_DEVICES];
  _Atomic(struct pool *) gpu_copy_pools[MXR_MAX_DEVICES];
  _Atomic(struct pool *) gpu_priority_pools[MXR_MAX_DEVICES];
  _Atomic(struct pool *) shared_pool;
  _Atomic(struct pool *) shared_io_pool;
  struct mxr_run_ctx naive_gpu_rctx[MXR_MAX_DEVICES]; /* naive engine: GPU streams */
  bool naive_gpu_started[MXR_MAX_DEVICES];
  /* Held (recursively) while the naive engine runs a GPU op: the device's
   * streams, library handles and scratch in naive_gpu_rctx serve one op at
   * a time, whichever thread pushed it. */
  pthread_mutex_t naive_gpu_mu;

  pthread_mutex_t errors_mu;   /* errors raised and not yet surfaced by wait-for-all */
  struct eng_error **errors;
  int num_errors, cap_errors;

  pthread_mutex_t vars_mu;     /* registry of live vars */
  struct mxr_var *vars;

  struct mxr_engine_hooks hooks; /* written before has_hooks is set (release) */
  atomic_bool has_hooks;

  atomic_int_fast64_t vars_live;
  atomic_int pools_started, threads_started;

  /* Recycled blocks: small ops' blocks, small bulks' batches, vars. */
  struct mxr__recycler oprs, batches, var_blocks;
  /* Written by pushing threads.  `pushed` and `completed` count every op
   * block, wait markers included: the engine is idle when they are equal
   * (read completed first; see mxr_engine_wait_for_all). */
  _Alignas(MXR_CACHE_LINE) atomic_uint_fast64_t seq, pushed;
  atomic_uint_fast64_t ops_pushed, ops_bulked, bulks_pushed;
  /* Written by workers. */
  _Alignas(MXR_CACHE_LINE) atomic_uint_fast64_t completed, ops_run, ops_skipped;
};

/* Run a dispatched op on the calling thread (engine.c). */
void mxr__engine_run(struct opr *op, const struct mxr_run_ctx *rctx);
/* The op cannot run (its worker has no run context for its device): it
 * fails with `status` and this thread's last error, and completes. */
void mxr__engine_fail(struct opr *op, int status);

/* Push a validated request; bypasses bulking (engine.c). */
int mxr__engine_push_now(mxr_engine *eng, const struct mxr_push *req, bool is_wait_marker);

/* Bulking (bulk.c). */
/* Try to append a sync request to this thread's bulk; returns 1 if taken,
 * 0 if the op must be pushed normally (the bulk was flushed first as the
 * rules require), or a negative status. */
int mxr__bulk_try_append(mxr_engine *eng, const struct mxr_push *req);
/* The size of a pushed bulk's block for `count` ops. */
size_t mxr__bulk_batch_size(int count);
/* Push this thread's pending bulk for `eng`, if any. */
int mxr__bulk_flush(mxr_engine *eng);

/* Unbind this thread's bulk state from an engine being freed, so a new
 * engine at the same address does not inherit it. */
void mxr__bulk_forget(mxr_engine *eng);

/* Validate a push request (engine.c). */
int mxr__validate_push(const mxr_engine *eng, const struct mxr_push *req);

#endif /* MXR_ENGINE_INTERNAL_H */
