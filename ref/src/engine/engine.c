/*
 * The engine: creation, push, dispatch to pools, run, completion, waits.
 * Dependency tracking lives in var.c, the pools in pool.c, bulking in bulk.c.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"

/* ---------------------------------------------------------------- errors */

struct eng_error *mxr__error_new(int status, const char *msg) {
  struct eng_error *e = malloc(sizeof *e);
  if (!e) return NULL;
  atomic_init(&e->refs, 1);
  atomic_init(&e->active, true);
  e->status = status;
  snprintf(e->msg, sizeof e->msg, "%s", msg && *msg ? msg : mxr_strerror(status));
  return e;
}

void mxr__error_retain(struct eng_error *e) {
  if (e) atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
}

void mxr__error_release(struct eng_error *e) {
  if (e && atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1) free(e);
}

/* Remember an error until wait-for-all surfaces it. */
static void register_error(mxr_engine *eng, struct eng_error *e) {
  mxr_mutex_lock(&eng->errors_mu);
  if (eng->num_errors == eng->cap_errors) {
    int ncap = eng->cap_errors ? eng->cap_errors * 2 : 8;
    struct eng_error **n = realloc(eng->errors, (size_t)ncap * sizeof *n);
    if (!n) { /* the error still reaches the vars; only wait-for-all misses it */
      mxr_mutex_unlock(&eng->errors_mu);
      return;
    }
    eng->errors = n;
    eng->cap_errors = ncap;
  }
  mxr__error_retain(e);
  eng->errors[eng->num_errors++] = e;
  mxr_mutex_unlock(&eng->errors_mu);
}

/* "NAME: <this thread's last error>", or the error alone when it already
 * starts with "NAME:" (a kernel that names its op). */
static void op_error_text(const char *name, char *msg, size_t size) {
  const char *last = mxr_last_error();
  size_t n = strlen(name);
  if (strncmp(last, name, n) == 0 && last[n] == ':') snprintf(msg, size, "%s", last);
  else snprintf(msg, size, "%s: %s", name, last);
}

/* The op failed with `status`; the message is this thread's last error. */
static void raise_op_error(struct opr *op, int status) {
  if (status >= 0) status = MXR_EOP; /* a positive return still means failure */
  char msg[MXR_ERROR_MAX];
  op_error_text(op->name, msg, sizeof msg);
  struct eng_error *e = mxr__error_new(status, msg);
  if (!e) return;
  mxr__error_release(op->err);
  op->err = e;
  register_error(op->eng, e);
}

/* --------------------------------------------------------------- options */

static int check_count(const char *what, int n, int min, int max) {
  if (n < min || n > max)
    return mxr_set_error(MXR_EINVAL, "engine options: %s = %d is out of range [%d, %d]", what, n,
                         min, max);
  return 0;
}

static int validate_opts(const struct mxr_engine_opts *o) {
  if (!mxr_engine_type_name(o->type))
    return mxr_set_error(MXR_EINVAL, "engine options: unknown engine type %d", o->type);
  int st = check_count("cpu_worker_nthreads", o->cpu_worker_nthreads, 1, 1024);
  if (!st) st = check_count("cpu_priority_nthreads", o->cpu_priority_nthreads, 1, 1024);
  if (!st) st = check_count("gpu_worker_nthreads", o->gpu_worker_nthreads, 1, 1024);
  if (!st) st = check_count("gpu_copy_nthreads", o->gpu_copy_nthreads, 1, 1024);
  if (!st) st = check_count("gpu_worker_nstreams", o->gpu_worker_nstreams, 1, 2);
  if (!st) st = check_count("pooled_nthreads", o->pooled_nthreads, 1, 1024);
  return st;
}

int mxr__engine_opts_from_config(struct mxr_engine_opts *opts) {
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
  return 0;
}

/* ------------------------------------------------------ create and free */

static int init_locks(mxr_engine *eng) {
  int st = mxr__mutex_init(&eng->finished_mu, "engine");
  if (!st) st = mxr__cond_init(&eng->finished_cv, "engine");
  if (!st) st = mxr__mutex_init(&eng->pools_mu, "engine pools");
  if (!st) st = mxr__mutex_init(&eng->errors_mu, "engine errors");
  if (!st) st = mxr__mutex_init(&eng->vars_mu, "engine vars");
  if (!st) st = mxr__mutex_init_recursive(&eng->naive_gpu_mu, "naive engine GPU ops");
  return st; /* a failure here leaks a few bytes of pthread state at most */
}

/* An op block with room for `nvars` vars and their queue links. */
static size_t opr_size(int nvars) {
  return sizeof(struct opr) + (size_t)nvars * (sizeof(mxr_var *) + sizeof(struct dep_link));
}

int mxr_engine_create(const struct mxr_engine_opts *opts, mxr_engine **out) {
  if (!opts || !out) return mxr_set_error(MXR_EINVAL, "mxr_engine_create: NULL argument");
  int st = validate_opts(opts);
  if (st) return st;
  /* aligned: the hot counters' lines must be lines of their own */
  mxr_engine *eng = aligned_alloc(MXR_CACHE_LINE, sizeof *eng);
  if (!eng) return mxr_set_error(MXR_ENOMEM, "engine: cannot allocate the engine");
  memset(eng, 0, sizeof *eng);
  mxr__recycler_init(&eng->oprs, opr_size(MXR_OPR_SMALL_VARS), MXR_OPR_RECYCLED_MAX);
  mxr__recycler_init(&eng->batches, mxr__bulk_batch_size(MXR_BULK_SMALL), MXR_OPR_RECYCLED_MAX);
  mxr__recycler_init(&eng->var_blocks, sizeof(mxr_var), MXR_OPR_RECYCLED_MAX);
  eng->opts = *opts;
  st = init_locks(eng);
  if (st) {
    free(eng);
    return st;
  }
  *out = eng;
  return 0;
}

static void stop_pool(_Atomic(struct pool *) *slot) {
  struct pool *p = atomic_exchange(slot, NULL);
  mxr__pool_stop(p);
}

static void stop_all_pools(mxr_engine *eng) {
  for (int i = 0; i < MXR_MAX_DEVICES; i++) {
    stop_pool(&eng->cpu_pools[i]);
    stop_pool(&eng->gpu_pools[i]);
    stop_pool(&eng->gpu_copy_pools[i]);
    stop_pool(&eng->gpu_priority_pools[i]);
  }
  stop_pool(&eng->cpu_priority_pool);
  stop_pool(&eng->shared_pool);
  stop_pool(&eng->shared_io_pool);
  const struct mxr_device_driver *drv = eng->opts.gpu_driver;
  for (int i = 0; i < MXR_MAX_DEVICES; i++)
    if (eng->naive_gpu_started[i] && drv && drv->worker_stop)
      drv->worker_stop(drv->user, &eng->naive_gpu_rctx[i]);
}

int mxr_engine_free(mxr_engine *eng) {
  if (!eng) return 0;
  int st = mxr_engine_wait_for_all(eng);
  char msg[MXR_ERROR_MAX];
  snprintf(msg, sizeof msg, "%s", mxr_last_error());
  mxr__bulk_forget(eng);
  stop_all_pools(eng); /* joins the workers: none is inside the engine after it */
  while (atomic_load_explicit(&eng->completing, memory_order_acquire) > 0) sched_yield();
  while (eng->vars) {
    mxr_var *v = eng->vars;
    eng->vars = v->reg_next;
    mxr__var_destroy(v);
  }
  for (int i = 0; i < eng->num_errors; i++) mxr__error_release(eng->errors[i]);
  free(eng->errors);
  mxr_cond_destroy(&eng->finished_cv);
  mxr_mutex_destroy(&eng->finished_mu);
  mxr_mutex_destroy(&eng->pools_mu);
  mxr_mutex_destroy(&eng->errors_mu);
  mxr_mutex_destroy(&eng->vars_mu);
  mxr_mutex_destroy(&eng->naive_gpu_mu);
  mxr__recycler_drain(&eng->oprs);
  mxr__recycler_drain(&eng->batches);
  mxr__recycler_drain(&eng->var_blocks);
  free(eng);
  if (st) mxr_set_error(st, "%s", msg);
  return st;
}

int mxr_engine_type_of(const mxr_engine *eng) { return eng ? eng->opts.type : -1; }

void mxr_engine_set_hooks(mxr_engine *eng, const struct mxr_engine_hooks *hooks) {
  if (!eng) return;
  /* Installing hooks while ops run is safe: the struct is complete before
   * the release store makes it visible.  Changing or removing them while
   * ops run is not (see engine.h). */
  if (hooks) eng->hooks = *hooks;
  atomic_store_explicit(&eng->has_hooks, hooks != NULL, memory_order_release);
}

void mxr_engine_get_stats(const mxr_engine *eng, struct mxr_engine_stats *out) {
  if (!eng || !out) return;
  mxr_engine *e = (mxr_engine *)eng; /* atomics are read through non-const */
  out->ops_pushed = atomic_load(&e->ops_pushed);
  out->ops_run = atomic_load(&e->ops_run);
  out->ops_skipped = atomic_load(&e->ops_skipped);
  out->ops_bulked = atomic_load(&e->ops_bulked);
  out->bulks_pushed = atomic_load(&e->bulks_pushed);
  out->vars_live = atomic_load(&e->vars_live);
  out->pools_started = atomic_load(&e->pools_started);
  out->threads_started = atomic_load(&e->threads_started);
}

/* ------------------------------------------------------------------ vars */

int mxr_engine_new_var(mxr_engine *eng, mxr_var **out) {
  if (!eng || !out) return mxr_set_error(MXR_EINVAL, "mxr_engine_new_var: NULL argument");
  mxr_var *v;
  int st = mxr__var_create(eng, &v);
  if (st) return st;
  mxr_mutex_lock(&eng->vars_mu);
  v->reg_next = eng->vars;
  if (eng->vars) eng->vars->reg_prev = v;
  eng->vars = v;
  mxr_mutex_unlock(&eng->vars_mu);
  atomic_fetch_add_explicit(&eng->vars_live, 1, memory_order_relaxed);
  *out = v;
  return 0;
}

static void release_var(mxr_engine *eng, mxr_var *v) {
  mxr_mutex_lock(&eng->vars_mu);
  if (v->reg_prev) v->reg_prev->reg_next = v->reg_next;
  else eng->vars = v->reg_next;
  if (v->reg_next) v->reg_next->reg_prev = v->reg_prev;
  mxr_mutex_unlock(&eng->vars_mu);
  atomic_fetch_sub_explicit(&eng->vars_live, 1, memory_order_relaxed);
  mxr__var_destroy(v);
}

static int noop_fn(const struct mxr_run_ctx *rctx, void *param) {
  (void)rctx;
  (void)param;
  return 0;
}

int mxr_engine_delete_var(mxr_engine *eng, mxr_var *var, mxr_sync_fn fn, void *param,
                          void (*param_free)(void *)) {
  if (!eng || !var) {
    if (param_free) param_free(param);
    return mxr_set_error(MXR_EINVAL, "mxr_engine_delete_var: NULL %s", eng ? "var" : "engine");
  }
  struct mxr_push req = {.sync_fn = fn ? fn : noop_fn, .param = param, .param_free = param_free,
                         .ctx = mxr_cpu(0), .mutable_vars = &var, .num_mutable = 1,
                         .prop = MXR_PROP_DELETE_VAR, .name = "DeleteVariable"};
  return mxr_engine_push(eng, &req);
}

/* ------------------------------------------------------------ validation */

static int check_vars(mxr_var *const *vars, int n, const char *which) {
  if (n < 0) return mxr_set_error(MXR_EINVAL, "push: negative number of %s vars (%d)", which, n);
  if (n > 0 && !vars) return mxr_set_error(MXR_EINVAL, "push: %s var array is NULL", which);
  for (int i = 0; i < n; i++)
    if (!vars[i]) return mxr_set_error(MXR_EINVAL, "push: %s var %d is NULL", which, i);
  return 0;
}

/* Insert v into the open-addressed table of `mask + 1` slots; false if it
 * is there already. */
static bool table_insert(mxr_var **table, size_t mask, mxr_var *v) {
  /* Vars are heap blocks: the low bits say little, so mix the address. */
  size_t h = (size_t)(((uintptr_t)v >> 4) * UINT64_C(0x9E3779B97F4A7C15) >> 32) & mask;
  while (table[h]) {
    if (table[h] == v) return false;
    h = (h + 1) & mask;
  }
  table[h] = v;
  return true;
}

/* Copy the distinct vars of vars[0..n) to out (room for n; may be vars
 * itself), first occurrences in order.  Returns how many, or -1 when out of
 * memory.  Linear in n: a segment of a bulked graph names dozens of vars,
 * and an executor waits on thousands. */
static int distinct_vars(mxr_var *const *vars, int n, mxr_var **out) {
  size_t slots = 32;
  while (slots < 2 * (size_t)n) slots *= 2;
  mxr_var *small[256];
  mxr_var **table = slots <= 256 ? small : malloc(slots * sizeof *table);
  if (!table) return -1;
  memset(table, 0, slots * sizeof *table);
  int m = 0;
  for (int i = 0; i < n; i++) {
    mxr_var *v = vars[i];
    if (table_insert(table, slots - 1, v)) out[m++] = v;
  }
  if (table != small) free(table);
  return m;
}

/* MXNet rejects a var named twice (within or across the sets): the op would
 * wait for itself.  Most ops name a handful of vars: those are compared
 * pairwise; more go through distinct_vars. */
static int check_duplicates(const struct mxr_push *req) {
  int n = req->num_const + req->num_mutable;
  if (n < 2) return 0;
  mxr_var *small[32];
  mxr_var **all = n <= 32 ? small : malloc((size_t)n * sizeof *all);
  if (!all) return mxr_set_error(MXR_ENOMEM, "push: out of memory checking %d vars", n);
  for (int i = 0; i < req->num_const; i++) all[i] = req->const_vars[i];
  for (int i = 0; i < req->num_mutable; i++) all[req->num_const + i] = req->mutable_vars[i];
  bool dup = false;
  int distinct = n;
  if (n <= 8) {
    for (int i = 1; i < n && !dup; i++)
      for (int j = 0; j < i && !dup; j++) dup = all[i] == all[j];
  } else {
    distinct = distinct_vars(all, n, all);
    dup = distinct >= 0 && distinct < n;
  }
  if (all != small) free(all);
  if (distinct < 0) return mxr_set_error(MXR_ENOMEM, "push: out of memory checking %d vars", n);
  if (!dup) return 0;
  return mxr_set_error(MXR_EINVAL, "push of '%s': a var appears twice in its read/write sets",
                       req->name ? req->name : "op");
}

static int check_context(const mxr_engine *eng, struct mxr_context ctx) {
  if (ctx.dev_id < 0 || ctx.dev_id >= MXR_MAX_DEVICES)
    return mxr_set_error(MXR_EINVAL, "push: device id %d is out of range [0, %d)", ctx.dev_id,
                         MXR_MAX_DEVICES);
  switch (ctx.dev_type) {
    case MXR_DEV_CPU:
    case MXR_DEV_CPU_PINNED:
    case MXR_DEV_CPU_SHARED:
      return 0;
    case MXR_DEV_GPU: {
      const struct mxr_device_driver *drv = eng->opts.gpu_driver;
      if (!drv) return mxr_set_error(MXR_ENODEV, "push: gpu(%d) requested, but this engine has no GPU driver", ctx.dev_id);
      int count = drv->device_count ? drv->device_count(drv->user) : 0;
      if (ctx.dev_id >= count)
        return mxr_set_error(MXR_ENODEV, "push: gpu(%d) does not exist (%d GPUs)", ctx.dev_id, count);
      return 0;
    }
    default:
      return mxr_set_error(MXR_EINVAL, "push: unknown device type %d", ctx.dev_type);
  }
}

int mxr__validate_push(const mxr_engine *eng, const struct mxr_push *req) {
  if (!eng || !req) return mxr_set_error(MXR_EINVAL, "push: NULL %s", eng ? "request" : "engine");
  if (!req->sync_fn == !req->async_fn)
    return mxr_set_error(MXR_EINVAL, "push of '%s': exactly one of sync_fn and async_fn must be set",
                         req->name ? req->name : "op");
  if (req->prop < 0 || req->prop >= MXR_PROP_COUNT)
    return mxr_set_error(MXR_EINVAL, "push: unknown property %d (expected 0..%d)", req->prop,
                         MXR_PROP_COUNT - 1);
  int st = check_vars(req->const_vars, req->num_const, "const");
  if (!st) st = check_vars(req->mutable_vars, req->num_mutable, "mutable");
  if (!st) st = check_context(eng, req->ctx);
  if (!st) st = check_duplicates(req);
  return st;
}

/* ----------------------------------------------------------------- pools */

static int get_pool(mxr_engine *eng, _Atomic(struct pool *) *slot, enum mxr_pool_kind kind,
                    struct mxr_context ctx, int nthreads, bool priority_order, struct pool **out) {
  struct pool *p = atomic_load_explicit(slot, memory_order_acquire);
  if (p) {
    *out = p;
    return 0;
  }
  int st = 0;
  mxr_mutex_lock(&eng->pools_mu);
  p = atomic_load_explicit(slot, memory_order_relaxed);
  if (!p) {
    st = mxr__pool_start(eng, kind, ctx, nthreads, priority_order, &p);
    if (!st) atomic_store_explicit(slot, p, memory_order_release);
  }
  mxr_mutex_unlock(&eng->pools_mu);
  *out = p;
  return st;
}

static bool is_copy(int prop) { return prop == MXR_PROP_COPY_FROM_GPU || prop == MXR_PROP_COPY_TO_GPU; }

/* ThreadedEnginePerDevice's placement rules. */
static int per_device_pool(mxr_engine *eng, const struct mxr_push *r, struct pool **out) {
  const struct mxr_engine_opts *o = &eng->opts;
  int id = r->ctx.dev_id;
  if (r->ctx.dev_type != MXR_DEV_GPU) {
    if (r->prop == MXR_PROP_CPU_PRIORITIZED)
      return get_pool(eng, &eng->cpu_priority_pool, MXR_POOL_CPU_PRIORITY, r->ctx,
                      o->cpu_priority_nthreads, true, out);
    return get_pool(eng, &eng->cpu_pools[id], MXR_POOL_CPU_WORKER, mxr_cpu(id),
                    o->cpu_worker_nthreads, false, out);
  }
  if (is_copy(r->prop))
    return get_pool(eng, &eng->gpu_copy_pools[id], MXR_POOL_GPU_COPY, r->ctx, o->gpu_copy_nthreads,
                    false, out);
  if (r->prop == MXR_PROP_GPU_PRIORITIZED)
    return get_pool(eng, &eng->gpu_priority_pools[id], MXR_POOL_GPU_PRIORITY, r->ctx,
                    o->gpu_worker_nthreads, true, out);
  return get_pool(eng, &eng->gpu_pools[id], MXR_POOL_GPU_WORKER, r->ctx, o->gpu_worker_nthreads,
                  false, out);
}

/* ThreadedEnginePooled's: one shared pool, copies on their own worker. */
static int shared_pool(mxr_engine *eng, const struct mxr_push *r, struct pool **out) {
  if (is_copy(r->prop))
    return get_pool(eng, &eng->shared_io_pool, MXR_POOL_SHARED_IO, mxr_cpu(0), 1, false, out);
  return get_pool(eng, &eng->shared_pool, MXR_POOL_SHARED, mxr_cpu(0), eng->opts.pooled_nthreads,
                  false, out);
}

/* Where an op will run.  *out NULL means inline on the thread that makes it
 * ready: async ops pushed with everything granted run on the pusher, as in
 * MXNet.  Pools start here, at push, so a pool that cannot start fails the
 * push instead of an op deep inside a completion. */
static int choose_pool(mxr_engine *eng, const struct mxr_push *r, struct pool **out) {
  *out = NULL;
  if (eng->opts.type == MXR_ENGINE_THREADED) return shared_pool(eng, r, out);
  return per_device_pool(eng, r, out);
}

/* ------------------------------------------------------- run and complete */

/* The naive engine's wait for an async op that finishes on another thread. */
struct naive_wait {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool done;
  int status;
  char msg[MXR_ERROR_MAX];
};

static void dispatch(struct opr *op, bool on_pusher);

/* Give a small block back for reuse, or free it. */
static void free_opr(struct opr *op) {
  mxr__error_release(op->err);
  if (op->num_const + op->num_mutable <= MXR_OPR_SMALL_VARS)
    mxr__recycler_give(&op->eng->oprs, op);
  else
    free(op);
}

/* The op is done: release its vars (dispatching what that grants), attach
 * its error to what it wrote, free it. */
static void complete(struct opr *op) {
  mxr_engine *eng = op->eng;
  if (op->hooked && eng->hooks.op_end) {
    struct mxr_op_event ev = {op->name, op->ctx, op->prop, op->profile};
    eng->hooks.op_end(eng->hooks.user, &ev, op->hook_cookie);
  }
  if (op->param_free) op->param_free(op->param);
  ready_list ready;
  mxr__ready_init(&ready);
  for (int i = 0; i < op->num_const + op->num_mutable; i++) {
    bool write = i >= op->num_const;
    mxr_var *v = op->vars[i];
    if (mxr__var_complete(v, write, op->err, write && op->deletes_var, &ready))
      release_var(eng, v);
  }
  free_opr(op);
  for (int i = 0; i < ready.n; i++)
    if (atomic_fetch_sub_explicit(&ready.ops[i]->wait, 1, memory_order_acq_rel) == 1)
      dispatch(ready.ops[i], false);
  mxr__ready_free(&ready);
  /* Sequentially consistent, with the waiter's count of itself and its
   * reads: either it sees this completion, or this sees it waiting. */
  uint64_t done = atomic_fetch_add(&eng->completed, 1) + 1;
  if (atomic_load(&eng->all_waiters) > 0 && done == atomic_load(&eng->pushed)) {
    mxr_mutex_lock(&eng->finished_mu);
    mxr_cond_broadcast(&eng->finished_cv);
    mxr_mutex_unlock(&eng->finished_mu);
  }
}

static void naive_async_done(struct naive_wait *w, int status);

void mxr_engine_complete(mxr_completion *done, int status) {
  if (!done || !done->op) return;
  struct opr *op = done->op;
  done->op = NULL;
  if ((uintptr_t)op & 1u) { /* the naive engine's handle: see naive_run_async */
    naive_async_done((struct naive_wait *)((uintptr_t)op & ~(uintptr_t)1u), status);
    return;
  }
  /* A thread of the caller's may complete an op after the engine's waiters
   * saw it idle; the engine is not freed until such a thread has left. */
  mxr_engine *eng = op->eng;
  atomic_fetch_add_explicit(&eng->completing, 1, memory_order_relaxed);
  if (status) raise_op_error(op, status);
  complete(op);
  atomic_fetch_sub_explicit(&eng->completing, 1, memory_order_release);
}

/* Inherit the first active error among the op's vars. */
static void inherit_error(struct opr *op) {
  for (int i = 0; i < op->num_const + op->num_mutable; i++) {
    struct eng_error *e = atomic_load_explicit(&op->vars[i]->err, memory_order_acquire);
    if (mxr__error_is_active(e)) {
      mxr__error_retain(e);
      op->err = e;
      return;
    }
  }
}

void mxr__engine_run(struct opr *op, const struct mxr_run_ctx *rctx) {
  mxr_engine *eng = op->eng;
  inherit_error(op);
  if (op->err && op->prop != MXR_PROP_NO_SKIP && !op->is_wait_marker) {
    atomic_fetch_add_explicit(&eng->ops_skipped, 1, memory_order_relaxed);
    complete(op);
    return;
  }
  if (!op->is_wait_marker) atomic_fetch_add_explicit(&eng->ops_run, 1, memory_order_relaxed);
  op->hooked = !op->is_wait_marker && atomic_load_explicit(&eng->has_hooks, memory_order_acquire);
  if (op->hooked && eng->hooks.op_begin) {
    struct mxr_op_event ev = {op->name, op->ctx, op->prop, op->profile};
    op->hook_cookie = eng->hooks.op_begin(eng->hooks.user, &ev);
  }
  if (op->async_fn) {
    op->done.op = op;
    op->async_fn(rctx, op->param, &op->done);
    return;
  }
  int st = op->sync_fn(rctx, op->param);
  const struct mxr_device_driver *drv = eng->opts.gpu_driver;
  if (st == 0 && rctx->ctx.dev_type == MXR_DEV_GPU && drv && drv->op_finish)
    st = drv->op_finish(drv->user, (struct mxr_run_ctx *)rctx);
  if (st) raise_op_error(op, st);
  complete(op);
}

void mxr__engine_fail(struct opr *op, int status) {
  raise_op_error(op, status);
  complete(op);
}

static void dispatch(struct opr *op, bool on_pusher) {
  bool inline_run = op->pool == NULL || (op->async_fn && op->prop == MXR_PROP_ASYNC && on_pusher);
  if (!inline_run && mxr__wq_push(&op->pool->queue, op) == 0) return;
  /* Inline, or the queue could not grow: running here beats losing the op. */
  struct mxr_run_ctx rctx = {.ctx = op->ctx, .stream = NULL, .aux_stream = NULL, .worker = -1};
  mxr__engine_run(op, &rctx);
}

/* ------------------------------------------------------------------ push */

static struct opr *alloc_opr(mxr_engine *eng, const struct mxr_push *r) {
  int n = r->num_const + r->num_mutable;
  struct opr *op = n <= MXR_OPR_SMALL_VARS ? mxr__recycler_take(&eng->oprs) : malloc(opr_size(n));
  if (!op) return NULL;
  op->vars = (mxr_var **)(op + 1);
  op->links = (struct dep_link *)(op->vars + n);
  return op;
}

static void fill_opr(struct opr *op, mxr_engine *eng, const struct mxr_push *r) {
  op->eng = eng;
  op->sync_fn = r->sync_fn;
  op->async_fn = r->async_fn;
  op->param = r->param;
  op->param_free = r->param_free;
  op->ctx = r->ctx;
  op->prop = r->prop;
  op->priority = r->priority;
  op->seq = atomic_fetch_add_explicit(&eng->seq, 1, memory_order_relaxed);
  op->name = r->name ? r->name : "op";
  op->profile = r->profile;
  op->num_const = r->num_const;
  op->num_mutable = r->num_mutable;
  op->err = NULL;
  op->pool = NULL;
  op->is_wait_marker = false;
  op->deletes_var = r->prop == MXR_PROP_DELETE_VAR;
  op->hooked = false;
  op->hook_cookie = 0;
  op->done.op = NULL;
  for (int i = 0; i < r->num_const; i++) op->vars[i] = r->const_vars[i];
  for (int i = 0; i < r->num_mutable; i++) op->vars[r->num_const + i] = r->mutable_vars[i];
  atomic_init(&op->wait, r->num_const + r->num_mutable + 1);
}

static int naive_push(mxr_engine *eng, const struct mxr_push *r);

int mxr__engine_push_now(mxr_engine *eng, const struct mxr_push *req, bool is_wait_marker) {
  struct pool *pool = NULL;
  int st = is_wait_marker ? 0 : choose_pool(eng, req, &pool);
  struct opr *op = st ? NULL : alloc_opr(eng, req);
  if (!op) {
    if (!st) st = mxr_set_error(MXR_ENOMEM, "push of '%s': out of memory", req->name ? req->name : "op");
    if (req->param_free) req->param_free(req->param);
    return st;
  }
  fill_opr(op, eng, req);
  op->pool = pool;
  op->is_wait_marker = is_wait_marker;
  atomic_fetch_add(&eng->pushed, 1);
  if (!is_wait_marker) atomic_fetch_add_explicit(&eng->ops_pushed, 1, memory_order_relaxed);
  int granted = 0, n = op->num_const + op->num_mutable;
  for (int i = 0; i < n; i++) {
    op->links[i].op = op;
    op->links[i].write = i >= op->num_const;
    granted += mxr__var_append(op->vars[i], &op->links[i]);
  }
  /* Take back the pusher's hold and the grants received at once. */
  if (atomic_fetch_sub_explicit(&op->wait, granted + 1, memory_order_acq_rel) == granted + 1)
    dispatch(op, true);
  return 0;
}


static int naive_rctx(mxr_engine *eng, struct mxr_context ctx, struct mxr_run_ctx *out) {
  struct mxr_run_ctx r = {.ctx = ctx, .stream = NULL, .aux_stream = NULL, .worker = -1};
  const struct mxr_device_driver *drv = eng->opts.gpu_driver;
  if (ctx.dev_type == MXR_DEV_GPU && drv && drv->worker_start) {
    int id = ctx.dev_id;
    mxr_mutex_lock(&eng->pools_mu);
    int st = 0;
    if (!eng->naive_gpu_started[id]) {
      eng->naive_gpu_rctx[id] = r;
      st = drv->worker_start(drv->user, ctx, MXR_POOL_GPU_WORKER, eng->opts.gpu_worker_nstreams,
                             &eng->naive_gpu_rctx[id]);
      eng->naive_gpu_started[id] = st == 0;
    }
    r = eng->naive_gpu_rctx[id];
    mxr_mutex_unlock(&eng->pools_mu);
    if (st) return st;
  }
  *out = r;
  return 0;
}

/* An async op on the naive engine may finish on another thread; wait. */
static void naive_async_done(struct naive_wait *w, int status) {
  mxr_mutex_lock(&w->mu);
  w->status = status;
  if (status) snprintf(w->msg, sizeof w->msg, "%s", mxr_last_error());
  w->done = true;
  mxr_cond_broadcast(&w->cv);
  mxr_mutex_unlock(&w->mu);
}

static int naive_run_async(const struct mxr_push *r, const struct mxr_run_ctx *rctx) {
  struct naive_wait w = {.done = false, .status = 0};
  int st = mxr__mutex_init(&w.mu, "naive async wait");
  if (st) return st;
  st = mxr__cond_init(&w.cv, "naive async wait");
  if (st) {
    mxr_mutex_destroy(&w.mu);
    return st;
  }
  /* The completion handle's op pointer carries the wait struct: the naive
   * engine has no op block. mxr_engine_complete() sees a tagged pointer. */
  struct mxr_completion done = {.op = (struct opr *)((uintptr_t)&w | 1u)};
  r->async_fn(rctx, r->param, &done);
  mxr_mutex_lock(&w.mu);
  while (!w.done) mxr_cond_wait(&w.cv, &w.mu);
  mxr_mutex_unlock(&w.mu);
  mxr_cond_destroy(&w.cv);
  mxr_mutex_destroy(&w.mu);
  if (w.status) return mxr_set_error(w.status, "%s", w.msg);
  return 0;
}

/* Run the op's function on this thread.  A GPU op holds naive_gpu_mu and
 * gets its device made current first (any thread may push it). */
static int naive_run(mxr_engine *eng, const struct mxr_push *r, struct mxr_run_ctx *rctx) {
  const struct mxr_device_driver *drv = eng->opts.gpu_driver;
  const bool gpu = r->ctx.dev_type == MXR_DEV_GPU && drv;
  if (gpu) mxr_mutex_lock(&eng->naive_gpu_mu);
  int st = gpu && drv->op_start ? drv->op_start(drv->user, rctx) : 0;
  if (st == 0 && r->async_fn) {
    st = naive_run_async(r, rctx);
  } else if (st == 0) {
    st = r->sync_fn(rctx, r->param);
    if (st == 0 && gpu && drv->op_finish) st = drv->op_finish(drv->user, rctx);
  }
  if (gpu) mxr_mutex_unlock(&eng->naive_gpu_mu);
  return st;
}

/* NaiveEngine: everything runs now, on this thread. */
static int naive_push(mxr_engine *eng, const struct mxr_push *r) {
  struct mxr_run_ctx rctx;
  int st = naive_rctx(eng, r->ctx, &rctx);
  if (st) {
    if (r->param_free) r->param_free(r->param);
    return st;
  }
  const char *name = r->name ? r->name : "op";
  struct mxr_op_event ev = {name, r->ctx, r->prop, r->profile};
  atomic_fetch_add_explicit(&eng->ops_pushed, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&eng->ops_run, 1, memory_order_relaxed);
  uint64_t cookie = 0;
  bool hooked = atomic_load_explicit(&eng->has_hooks, memory_order_acquire);
  if (hooked && eng->hooks.op_begin) cookie = eng->hooks.op_begin(eng->hooks.user, &ev);
  st = naive_run(eng, r, &rctx);
  if (hooked && eng->hooks.op_end) eng->hooks.op_end(eng->hooks.user, &ev, cookie);
  if (st) {
    char msg[MXR_ERROR_MAX];
    op_error_text(name, msg, sizeof msg);
    st = mxr_set_error(st > 0 ? MXR_EOP : st, "%s", msg);
  }
  if (r->param_free) r->param_free(r->param);
  for (int i = 0; i < r->num_mutable; i++) mxr__var_count_write(r->mutable_vars[i]);
  if (r->prop == MXR_PROP_DELETE_VAR) release_var(eng, r->mutable_vars[0]);
  return st;
}

int mxr_engine_push(mxr_engine *eng, const struct mxr_push *req) {
  int st = mxr__validate_push(eng, req);
  if (st) {
    if (req && req->param_free) req->param_free(req->param);
    return st;
  }
  bool naive = eng->opts.type == MXR_ENGINE_NAIVE;
  if (naive) return naive_push(eng, req);
  st = mxr__bulk_try_append(eng, req);
  if (st != 0) return st > 0 ? 0 : st;
  return naive ? naive_push(eng, req) : mxr__engine_push_now(eng, req, false);
}

int mxr_engine_push_sync(mxr_engine *eng, mxr_sync_fn fn, void *param, void (*param_free)(void *),
                         struct mxr_context ctx, mxr_var *const *const_vars, int num_const,
                         mxr_var *const *mutable_vars, int num_mutable, const char *name) {
  struct mxr_push req = {.sync_fn = fn, .param = param, .param_free = param_free, .ctx = ctx,
                         .const_vars = const_vars, .num_const = num_const,
                         .mutable_vars = mutable_vars, .num_mutable = num_mutable,
                         .prop = MXR_PROP_NORMAL, .priority = 0, .name = name};
  return mxr_engine_push(eng, &req);
}

/* ----------------------------------------------------------------- waits */

struct var_waiter {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool done;
};

static int signal_waiter(const struct mxr_run_ctx *rctx, void *param) {
  (void)rctx;
  struct var_waiter *w = param;
  mxr_mutex_lock(&w->mu);
  w->done = true;
  mxr_cond_signal(&w->cv);
  mxr_mutex_unlock(&w->mu);
  return 0;
}

/* Push a marker op reading `vars` and block until it runs. */
static int wait_marker(mxr_engine *eng, mxr_var *const *vars, int n) {
  struct var_waiter w = {.done = false};
  int st = mxr__mutex_init(&w.mu, "wait_for_var");
  if (st) return st;
  st = mxr__cond_init(&w.cv, "wait_for_var");
  if (st) {
    mxr_mutex_destroy(&w.mu);
    return st;
  }
  struct mxr_push req = {.sync_fn = signal_waiter, .param = &w, .ctx = mxr_cpu(0),
                         .const_vars = vars, .num_const = n, .name = "WaitForVar"};
  st = mxr__engine_push_now(eng, &req, true);
  if (!st) {
    mxr_mutex_lock(&w.mu);
    while (!w.done) mxr_cond_wait(&w.cv, &w.mu);
    mxr_mutex_unlock(&w.mu);
  }
  mxr_cond_destroy(&w.cv);
  mxr_mutex_destroy(&w.mu);
  return st;
}

/* Every op pushed so far has completed.  `completed` is read first: a
 * count read at t1 that equals the pushes read at t2 > t1 means that at t1
 * every op pushed had completed (completions never run ahead of pushes). */
static bool engine_idle(mxr_engine *eng) {
  uint64_t done = atomic_load(&eng->completed);
  return done == atomic_load(&eng->pushed);
}

int mxr__engine_wait_vars_quiet(mxr_engine *eng, mxr_var *const *vars, int n) {
  int st = mxr__bulk_flush(eng);
  if (st || n == 0 || eng->opts.type == MXR_ENGINE_NAIVE) return st;
  /* Nothing pushed is still to run: no marker (an executor waits like this
   * before each rebinding, mostly on an engine that has nothing to do). */
  if (engine_idle(eng)) return 0;
  mxr_var **unique = malloc((size_t)n * sizeof *unique);
  int k = unique ? distinct_vars(vars, n, unique) : -1;
  st = k < 0 ? mxr_set_error(MXR_ENOMEM, "engine: out of memory waiting for %d vars", n)
             : wait_marker(eng, unique, k);
  free(unique);
  return st;
}

int mxr_engine_wait_for_var(mxr_engine *eng, mxr_var *var) {
  if (!eng || !var) return mxr_set_error(MXR_EINVAL, "wait_for_var: NULL %s", eng ? "var" : "engine");
  int st = mxr__bulk_flush(eng);
  if (st) return st;
  if (eng->opts.type == MXR_ENGINE_NAIVE || mxr__var_ready_to_read(var))
    return mxr__var_take_error(var);
  /* A marker op that reads the var; it runs on the thread that grants it. */
  st = wait_marker(eng, &var, 1);
  return st ? st : mxr__var_take_error(var);
}

/* Surface the first active error and clear every registered one. */
static int take_all_errors(mxr_engine *eng) {
  int st = 0;
  mxr_mutex_lock(&eng->errors_mu);
  for (int i = 0; i < eng->num_errors; i++) {
    struct eng_error *e = eng->errors[i];
    bool was_active = true;
    if (atomic_compare_exchange_strong(&e->active, &was_active, false) && !st)
      st = mxr_set_error(e->status, "%s", e->msg);
    mxr__error_release(e);
  }
  eng->num_errors = 0;
  mxr_mutex_unlock(&eng->errors_mu);
  return st;
}

int mxr_engine_wait_for_all(mxr_engine *eng) {
  if (!eng) return mxr_set_error(MXR_EINVAL, "wait_for_all: NULL engine");
  int st = mxr__bulk_flush(eng);
  mxr_mutex_lock(&eng->finished_mu);
  atomic_fetch_add(&eng->all_waiters, 1);
  while (!engine_idle(eng)) mxr_cond_wait(&eng->finished_cv, &eng->finished_mu);
  atomic_fetch_sub(&eng->all_waiters, 1);
  mxr_mutex_unlock(&eng->finished_mu);
  int err = take_all_errors(eng);
  return st ? st : err;
}
