/*
 * Worker pools: N threads serving one queue.  A pool for a GPU asks the
 * engine's device driver for each worker's streams before the worker takes
 * its first op; the engine core never sees a stream except as the opaque
 * pointers in struct mxr_run_ctx.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"

struct worker_arg {
  struct pool *pool;
  int index;
};

static bool pool_is_gpu(const struct pool *p) { return p->ctx.dev_type == MXR_DEV_GPU; }

/* Tell the starting thread that this worker is ready (or failed). */
static void report_ready(struct pool *p, int status, const char *msg) {
  mxr_mutex_lock(&p->start_mu);
  if (status && !p->start_status) {
    p->start_status = status;
    snprintf(p->start_msg, sizeof p->start_msg, "%s", msg);
  }
  p->ready_count++;
  mxr_cond_broadcast(&p->start_cv);
  mxr_mutex_unlock(&p->start_mu);
}

static void *worker_main(void *argp) {
  struct worker_arg arg = *(struct worker_arg *)argp;
  free(argp);
  struct pool *p = arg.pool;
  const struct mxr_device_driver *drv = p->eng->opts.gpu_driver;
  struct mxr_run_ctx rctx = {.ctx = p->ctx, .stream = NULL, .aux_stream = NULL, .worker = arg.index};
  bool started = false;
  if (pool_is_gpu(p) && drv && drv->worker_start) {
    int st = drv->worker_start(drv->user, p->ctx, p->kind, p->nstreams, &rctx);
    if (st) {
      report_ready(p, st, mxr_last_error());
      return NULL;
    }
    started = true;
  }
  report_ready(p, 0, "");
  struct opr *op;
  while ((op = mxr__wq_pop(&p->queue)) != NULL) mxr__engine_run(op, &rctx);
  if (started && drv->worker_stop) drv->worker_stop(drv->user, &rctx);
  return NULL;
}

static int create_threads(struct pool *p) {
  for (int i = 0; i < p->nthreads; i++) {
    struct worker_arg *arg = malloc(sizeof *arg);
    if (!arg) return mxr_set_error(MXR_ENOMEM, "engine: cannot start a worker");
    arg->pool = p;
    arg->index = i;
    int rc = pthread_create(&p->threads[i], NULL, worker_main, arg);
    if (rc != 0) {
      free(arg);
      return mxr_set_error(MXR_ESYS, "engine: pthread_create for worker %d of %d failed: %s", i,
                           p->nthreads, strerror(rc));
    }
    p->started++;
  }
  return 0;
}

/* Wait until every created worker has reported in; returns the first
 * worker-start failure. */
static int await_workers(struct pool *p) {
  mxr_mutex_lock(&p->start_mu);
  while (p->ready_count < p->started) mxr_cond_wait(&p->start_cv, &p->start_mu);
  int st = p->start_status;
  mxr_mutex_unlock(&p->start_mu);
  if (st) return mxr_set_error(st, "engine: a worker for %s(%d) could not start: %s",
                               pool_is_gpu(p) ? "gpu" : "cpu", p->ctx.dev_id, p->start_msg);
  return 0;
}

static int init_sync(struct pool *p) {
  int st = mxr__mutex_init(&p->start_mu, "pool start");
  if (st) return st;
  st = mxr__cond_init(&p->start_cv, "pool start");
  if (st) mxr_mutex_destroy(&p->start_mu);
  return st;
}

int mxr__pool_start(struct mxr_engine *eng, enum mxr_pool_kind kind, struct mxr_context ctx,
                    int nthreads, bool priority_order, struct pool **out) {
  struct pool *p = calloc(1, sizeof *p);
  if (!p) return mxr_set_error(MXR_ENOMEM, "engine: cannot allocate a worker pool");
  p->eng = eng;
  p->kind = kind;
  p->ctx = ctx;
  p->nthreads = nthreads;
  p->nstreams = eng->opts.gpu_worker_nstreams;
  p->threads = calloc((size_t)nthreads, sizeof *p->threads);
  int st = p->threads ? 0 : mxr_set_error(MXR_ENOMEM, "engine: cannot allocate %d workers", nthreads);
  if (!st) st = init_sync(p);
  if (st) {
    free(p->threads);
    free(p);
    return st;
  }
  st = mxr__wq_init(&p->queue, priority_order, nthreads);
  if (!st) st = create_threads(p);
  if (!st) st = await_workers(p);
  if (st) {
    mxr__pool_stop(p);
    return st;
  }
  atomic_fetch_add(&eng->pools_started, 1);
  atomic_fetch_add(&eng->threads_started, nthreads);
  *out = p;
  return 0;
}

void mxr__pool_stop(struct pool *p) {
  if (!p) return;
  if (p->queue.items) {
    mxr__wq_kill(&p->queue);
    for (int i = 0; i < p->started; i++) MXR_PTHREAD_CHECK(pthread_join(p->threads[i], NULL));
    mxr__wq_destroy(&p->queue);
  }
  mxr_cond_destroy(&p->start_cv);
  mxr_mutex_destroy(&p->start_mu);
  free(p->threads);
  free(p);
}
