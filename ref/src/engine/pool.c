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

/* A worker of the threaded engine's shared pool runs ops of every device.
 * The first time it meets an op for gpu(id) it asks the driver for that
 * device's streams, as a GPU worker does at start, and keeps them until the
 * pool stops; before each GPU op it makes the op's device current, since
 * the worker may alternate between devices. */
struct shared_gpu {
  struct mxr_run_ctx rctx[MXR_MAX_DEVICES];
  bool started[MXR_MAX_DEVICES];
};

static int shared_gpu_rctx(struct pool *p, int index, struct shared_gpu **sg, const struct opr *op,
                           const struct mxr_run_ctx **out) {
  const struct mxr_device_driver *drv = p->eng->opts.gpu_driver;
  int id = op->ctx.dev_id;
  if (!*sg && !(*sg = calloc(1, sizeof **sg)))
    return mxr_set_error(MXR_ENOMEM, "engine: no memory for a shared worker's GPU streams");
  struct mxr_run_ctx *r = &(*sg)->rctx[id];
  if (!(*sg)->started[id]) {
    *r = (struct mxr_run_ctx){.ctx = op->ctx, .stream = NULL, .aux_stream = NULL, .worker = index};
    int st = drv->worker_start(drv->user, op->ctx, p->kind, p->nstreams, r);
    if (st) return st;
    (*sg)->started[id] = true;
  }
  *out = r;
  return drv->op_start ? drv->op_start(drv->user, r) : 0;
}

static void shared_gpu_stop(struct pool *p, struct shared_gpu *sg) {
  const struct mxr_device_driver *drv = p->eng->opts.gpu_driver;
  for (int id = 0; sg && id < MXR_MAX_DEVICES; id++) {
    if (!sg->started[id] || !drv->worker_stop) continue;
    /* The streams and handles belong to that device: make it current. */
    if (drv->op_start && drv->op_start(drv->user, &sg->rctx[id]) != 0)
      fprintf(stderr, "mxref: stopping gpu(%d)'s streams on a shared worker: %s\n", id, mxr_last_error());
    drv->worker_stop(drv->user, &sg->rctx[id]);
  }
  free(sg);
}

static bool needs_shared_gpu(const struct pool *p, const struct opr *op) {
  const struct mxr_device_driver *drv = p->eng->opts.gpu_driver;
  return !pool_is_gpu(p) && op->ctx.dev_type == MXR_DEV_GPU && drv && drv->worker_start;
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
  struct shared_gpu *sg = NULL;
  struct wq_batch batch = {.next = 0, .n = 0};
  struct opr *op;
  while ((op = mxr__wq_pop(&p->queue, &batch)) != NULL) {
    const struct mxr_run_ctx *run = &rctx;
    int st = needs_shared_gpu(p, op) ? shared_gpu_rctx(p, arg.index, &sg, op, &run) : 0;
    if (st)
      mxr__engine_fail(op, st);
    else
      mxr__engine_run(op, run);
  }
  shared_gpu_stop(p, sg);
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
