/*
 * Internal: the queue a worker pool takes its ops from.
 *
 * One mutex, one condition variable, one array: FIFO (a ring) or, for the
 * priority pools, a binary heap ordered by (priority desc, push order asc).
 * A worker that finds the queue empty spins for a short while, yielding
 * now and then, before it sleeps.  A push wakes a sleeping worker only when the queue holds more ops
 * than there are idle workers awake (spinning, or on their way to the lock)
 * to take them: such a worker takes the op without a futex call and a
 * context switch.  Workers busy running an op are not counted -- an op may
 * run for a long time, and the next one must not wait for it.  Only one
 * worker per queue spins at a time, so idle pools do not eat the cores the
 * pushing thread needs.
 *
 * The only worker of a FIFO queue takes every queued op (up to
 * MXR_WQ_BATCH) at once into a batch of its own, and runs them before it
 * looks at the queue again: when the pusher runs ahead, the queue's lock
 * then moves between the cores once per batch rather than once per op.
 * With one worker, taking early changes no order; with several, or in a
 * priority queue, it would (an op taken early could have run on another
 * worker, or a later push outrank it), so those take one op at a time.
 */
#ifndef MXR_ENGINE_WORKQUEUE_H
#define MXR_ENGINE_WORKQUEUE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct opr;

struct workqueue {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct opr **items;
  size_t cap, head, count; /* ring: items[(head + i) % cap]; heap: items[0..count) */
  bool priority_order;
  bool killed;
  int sleepers;
  int workers;                /* threads serving the queue */
  int idle;                   /* workers inside pop: spinning, sleeping or taking */
  atomic_size_t approx_count; /* count, readable without the lock */
  atomic_bool spinner;        /* a worker is spinning */
};

#define MXR_WQ_BATCH 32

/* One worker's ops taken from the queue and not yet handed out; start it
 * zeroed. */
struct wq_batch {
  struct opr *ops[MXR_WQ_BATCH];
  int next, n;
};

int mxr__wq_init(struct workqueue *q, bool priority_order, int workers);
void mxr__wq_destroy(struct workqueue *q);
/* Returns 0 or MXR_ENOMEM (the queue is unchanged then). */
int mxr__wq_push(struct workqueue *q, struct opr *op);
/* Blocks for the next op, from the worker's batch `b` first; NULL once the
 * batch is empty and the queue killed and drained. */
struct opr *mxr__wq_pop(struct workqueue *q, struct wq_batch *b);
/* Wake every worker and make pop return NULL once the queue is empty. */
void mxr__wq_kill(struct workqueue *q);

#endif /* MXR_ENGINE_WORKQUEUE_H */
