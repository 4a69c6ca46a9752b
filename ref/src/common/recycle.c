/* Block recycling between threads (recycle.h). */
#include <stdbool.h>
#include <stdlib.h>

#include "common/recycle.h"

#if defined(__SANITIZE_ADDRESS__)
#define RECYCLE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RECYCLE 0
#endif
#endif
#ifndef RECYCLE
#define RECYCLE 1
#endif

bool mxr__recycling(void) { return RECYCLE; }

void mxr__recycler_init(struct mxr__recycler *r, size_t block_size, int max_waiting) {
  atomic_init(&r->given, NULL);
  atomic_init(&r->given_count, 0);
  atomic_flag_clear(&r->busy);
  r->stash = NULL;
  r->size = block_size < sizeof(struct mxr__recycled) ? sizeof(struct mxr__recycled) : block_size;
  r->max = max_waiting;
}

/* Move every given block to the stash.  Called under `busy`.  The count is
 * zeroed rather than decremented by the blocks moved, so that refilling
 * does not walk the list: a block given meanwhile may be counted on the
 * wrong side of the zero, an error of at most one per giving thread that
 * the next refill clears. */
static void refill(struct mxr__recycler *r) {
  atomic_store_explicit(&r->given_count, 0, memory_order_relaxed);
  /* acquire: the blocks' next links were written by the givers */
  r->stash = atomic_exchange_explicit(&r->given, NULL, memory_order_acquire);
}

void *mxr__recycler_take(struct mxr__recycler *r) {
  struct mxr__recycled *b = NULL;
  if (RECYCLE && !atomic_flag_test_and_set_explicit(&r->busy, memory_order_acquire)) {
    if (!r->stash) refill(r);
    b = r->stash;
    if (b) r->stash = b->next;
    atomic_flag_clear_explicit(&r->busy, memory_order_release);
  }
  return b ? (void *)b : malloc(r->size);
}

void mxr__recycler_give(struct mxr__recycler *r, void *block) {
  if (!block) return;
  /* The count is approximate (read, then pushed): the bound is loose by
   * the number of threads giving at the same moment. */
  if (!RECYCLE || atomic_load_explicit(&r->given_count, memory_order_relaxed) >= r->max) {
    free(block);
    return;
  }
  atomic_fetch_add_explicit(&r->given_count, 1, memory_order_relaxed);
  struct mxr__recycled *b = block;
  struct mxr__recycled *head = atomic_load_explicit(&r->given, memory_order_relaxed);
  do {
    b->next = head;
  } while (!atomic_compare_exchange_weak_explicit(&r->given, &head, b, memory_order_release,
                                                  memory_order_relaxed));
}

static void free_list(struct mxr__recycled *b) {
  while (b) {
    struct mxr__recycled *next = b->next;
    free(b);
    b = next;
  }
}

void mxr__recycler_drain(struct mxr__recycler *r) {
  free_list(r->stash);
  r->stash = NULL;
  free_list(atomic_exchange(&r->given, NULL));
  atomic_store(&r->given_count, 0);
}
