/*
 * Internal: a cache of equal-sized blocks, handed from the threads that
 * free them back to the threads that allocate them.
 *
 * The engine allocates on the pushing thread and frees on a worker.  The C
 * library's allocator serves that hand-over through a lock both threads
 * then take for every block; a recycler serves it without one:
 *
 *   give   (any thread)  pushes the block onto a lock-free stack, or frees
 *                        it when about `max` blocks already wait;
 *   take   (any thread)  pops from a stash refilled with the whole stack at
 *                        once, under a try-lock: a thread that finds it held
 *                        allocates instead, so nobody ever waits.
 *
 * Givers only push and the taker only swaps the whole stack out, so the
 * stack has no ABA problem.  Under AddressSanitizer every block is freed
 * and allocated afresh, so that a use after free is still caught.
 */
#ifndef MXR_COMMON_RECYCLE_H
#define MXR_COMMON_RECYCLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define MXR_RECYCLE_LINE 64

struct mxr__recycled {
  struct mxr__recycled *next;
};

struct mxr__recycler {
  /* written by giving threads */
  _Alignas(MXR_RECYCLE_LINE) _Atomic(struct mxr__recycled *) given;
  atomic_int given_count; /* about how many blocks `given` holds */
  /* written by taking threads, under `busy` */
  _Alignas(MXR_RECYCLE_LINE) atomic_flag busy;
  struct mxr__recycled *stash;
  size_t size; /* every block's size in bytes, >= sizeof(void *) */
  int max;
};

/* For a recycler with static storage duration. */
#define MXR_RECYCLER_INIT(block_size, max_waiting) \
  {.busy = ATOMIC_FLAG_INIT, .size = (block_size), .max = (max_waiting)}

void mxr__recycler_init(struct mxr__recycler *r, size_t block_size, int max_waiting);
/* A block of r->size bytes, recycled or newly allocated; NULL when out of
 * memory.  Its contents are undefined. */
void *mxr__recycler_take(struct mxr__recycler *r);
/* Give back a block from mxr__recycler_take (NULL is ignored). */
void mxr__recycler_give(struct mxr__recycler *r, void *block);
/* False under AddressSanitizer, where take allocates and give frees. */
bool mxr__recycling(void);
/* Free every waiting block.  No other thread may use r meanwhile. */
void mxr__recycler_drain(struct mxr__recycler *r);

#endif /* MXR_COMMON_RECYCLE_H */
