/* The worker pools' queue (workqueue.h). */
#include <sched.h>
#include <stdlib.h>

#include "common/threads.h"
#include "common/timer.h"
#include "engine/engine_internal.h"
#include "engine/workqueue.h"
#include "mxref/error.h"

/* How long an idle worker spins before sleeping.  Long enough to cover the
 * gap between two pushes of a busy pushing thread, short enough to give the
 * core back quickly when work stops. */
#define SPIN_NS 50000u
/* After this long the spinner yields now and then (see spin_for_work). */
#define YIELD_AFTER_NS 5000u

int mxr__wq_init(struct workqueue *q, bool priority_order, int workers) {
  q->cap = 256;
  q->items = malloc(q->cap * sizeof *q->items);
  if (!q->items) return mxr_set_error(MXR_ENOMEM, "engine: cannot allocate a worker queue");
  q->head = q->count = 0;
  q->priority_order = priority_order;
  q->killed = false;
  q->sleepers = 0;
  q->idle = 0;
  q->workers = workers;
  atomic_init(&q->approx_count, 0);
  atomic_init(&q->spinner, false);
  int st = mxr__mutex_init_adaptive(&q->mu, "worker queue");
  if (st) {
    free(q->items);
    return st;
  }
  st = mxr__cond_init(&q->cv, "worker queue");
  if (st) {
    mxr_mutex_destroy(&q->mu);
    free(q->items);
  }
  return st;
}

void mxr__wq_destroy(struct workqueue *q) {
  mxr_cond_destroy(&q->cv);
  mxr_mutex_destroy(&q->mu);
  free(q->items);
  q->items = NULL;
}

/* Heap order: higher priority first, then earlier push. */
static bool runs_before(const struct opr *a, const struct opr *b) {
  if (a->priority != b->priority) return a->priority > b->priority;
  return a->seq < b->seq;
}

static void heap_push(struct workqueue *q, struct opr *op) {
  size_t i = q->count++;
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!runs_before(op, q->items[parent])) break;
    q->items[i] = q->items[parent];
    i = parent;
  }
  q->items[i] = op;
}

static struct opr *heap_pop(struct workqueue *q) {
  struct opr *top = q->items[0];
  struct opr *last = q->items[--q->count];
  size_t i = 0;
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= q->count) break;
    if (child + 1 < q->count && runs_before(q->items[child + 1], q->items[child])) child++;
    if (!runs_before(q->items[child], last)) break;
    q->items[i] = q->items[child];
    i = child;
  }
  if (q->count > 0) q->items[i] = last;
  return top;
}

/* Double the array, keeping the ring's order. Called with the lock held. */
static int grow(struct workqueue *q) {
  size_t ncap = q->cap * 2;
  struct opr **n = malloc(ncap * sizeof *n);
  if (!n) return mxr_set_error(MXR_ENOMEM, "engine: cannot grow a worker queue to %zu ops", ncap);
  for (size_t i = 0; i < q->count; i++)
    n[i] = q->items[q->priority_order ? i : (q->head + i) % q->cap];
  free(q->items);
  q->items = n;
  q->cap = ncap;
  q->head = 0;
  return 0;
}

int mxr__wq_push(struct workqueue *q, struct opr *op) {
  mxr_mutex_lock(&q->mu);
  if (q->count == q->cap) {
    int st = grow(q);
    if (st) {
      mxr_mutex_unlock(&q->mu);
      return st;
    }
  }
  if (q->priority_order)
    heap_push(q, op);
  else
    q->items[(q->head + q->count++) % q->cap] = op;
  atomic_store_explicit(&q->approx_count, q->count, memory_order_release);
  if (q->sleepers > 0 && q->count > (size_t)(q->idle - q->sleepers)) mxr_cond_signal(&q->cv);
  mxr_mutex_unlock(&q->mu);
  return 0;
}

static struct opr *take_locked(struct workqueue *q) {
  struct opr *op;
  if (q->priority_order) {
    op = heap_pop(q);
  } else {
    op = q->items[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
  }
  atomic_store_explicit(&q->approx_count, q->count, memory_order_relaxed);
  return op;
}

/* Spin until the queue looks non-empty or SPIN_NS pass.  Only one worker of
 * the queue spins; the others go straight to sleep.  After YIELD_AFTER_NS
 * the spinner yields every 64 turns: on a core it shares with the pushing
 * thread (a busy machine, or more workers than cores) it would otherwise
 * hold the core for a whole time slice while the pusher, which has the
 * work, waits.  Not sooner: on an idle machine the next op mostly comes
 * within a few microseconds, and a yield then only delays taking it. */
static void spin_for_work(struct workqueue *q) {
  bool expected = false;
  if (!atomic_compare_exchange_strong(&q->spinner, &expected, true)) return;
  uint64_t start = mxr__now_ns();
  for (unsigned i = 1;; i++) {
    if (atomic_load_explicit(&q->approx_count, memory_order_acquire) > 0) break;
    mxr__cpu_relax();
    if ((i & 63) == 0) {
      uint64_t spun = mxr__now_ns() - start;
      if (spun > SPIN_NS) break;
      if (spun > YIELD_AFTER_NS) sched_yield();
    }
  }
  atomic_store(&q->spinner, false);
}

/* Move what is left in the queue to the batch (see workqueue.h). */
static void take_batch(struct workqueue *q, struct wq_batch *b) {
  b->next = b->n = 0;
  if (q->priority_order || q->workers != 1) return;
  while (q->count > 0 && b->n < MXR_WQ_BATCH) b->ops[b->n++] = take_locked(q);
}

struct opr *mxr__wq_pop(struct workqueue *q, struct wq_batch *b) {
  if (b->next < b->n) return b->ops[b->next++];
  mxr_mutex_lock(&q->mu);
  q->idle++;
  if (q->count == 0 && !q->killed) {
    mxr_mutex_unlock(&q->mu);
    spin_for_work(q);
    mxr_mutex_lock(&q->mu);
  }
  while (q->count == 0 && !q->killed) {
    q->sleepers++;
    mxr_cond_wait(&q->cv, &q->mu);
    q->sleepers--;
  }
  struct opr *op = NULL;
  if (q->count > 0) {
    op = take_locked(q);
    take_batch(q, b);
  }
  q->idle--;
  mxr_mutex_unlock(&q->mu);
  return op;
}

void mxr__wq_kill(struct workqueue *q) {
  mxr_mutex_lock(&q->mu);
  q->killed = true;
  mxr_cond_broadcast(&q->cv);
  mxr_mutex_unlock(&q->mu);
}
