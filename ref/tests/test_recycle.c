/*
 * Tests for block recycling between threads (common/recycle.h): blocks are
 * whole and never handed to two owners at once, a given block comes back,
 * the waiting blocks stay bounded, and blocks freed on one thread serve
 * another (the engine's pattern) without a race.  Run under TSan by
 * `make check-engine`.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "check_tap.h"
#include "common/recycle.h"
#include "common/threads.h"

#define BLOCK 96

START_TEST(test_blocks_are_whole_and_distinct) {
  struct mxr__recycler r;
  mxr__recycler_init(&r, BLOCK, 64);
  unsigned char *a = mxr__recycler_take(&r), *b = mxr__recycler_take(&r);
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_nonnull(b);
  ck_assert_ptr_ne(a, b);
  memset(a, 0xaa, BLOCK);
  memset(b, 0xbb, BLOCK);
  for (int i = 0; i < BLOCK; i++) ck_assert_int_eq(a[i], 0xaa);
  mxr__recycler_give(&r, a);
  mxr__recycler_give(&r, b);
  mxr__recycler_give(&r, NULL); /* ignored */
  mxr__recycler_drain(&r);
}
END_TEST

START_TEST(test_a_given_block_comes_back) {
  struct mxr__recycler r;
  mxr__recycler_init(&r, BLOCK, 64);
  void *a = mxr__recycler_take(&r);
  mxr__recycler_give(&r, a);
  if (!mxr__recycling()) {
    /* AddressSanitizer: the block was freed, and its quarantine keeps the
     * address from coming straight back */
    void *b = mxr__recycler_take(&r);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_ne(b, a);
    mxr__recycler_give(&r, b);
    ck_assert_int_eq(atomic_load(&r.given_count), 0);
    return;
  }
  ck_assert_int_eq(atomic_load(&r.given_count), 1);
  ck_assert_ptr_eq(mxr__recycler_take(&r), a);
  ck_assert_int_eq(atomic_load(&r.given_count), 0);
  mxr__recycler_give(&r, a);
  mxr__recycler_drain(&r);
  ck_assert_int_eq(atomic_load(&r.given_count), 0);
}
END_TEST

START_TEST(test_waiting_blocks_are_bounded) {
  enum { MAX = 16, N = 3 * MAX };
  struct mxr__recycler r;
  mxr__recycler_init(&r, BLOCK, MAX);
  void *blocks[N];
  for (int i = 0; i < N; i++) ck_assert_ptr_nonnull(blocks[i] = mxr__recycler_take(&r));
  for (int i = 0; i < N; i++) mxr__recycler_give(&r, blocks[i]);
  ck_assert_int_eq(atomic_load(&r.given_count), mxr__recycling() ? MAX : 0);
  mxr__recycler_drain(&r);
}
END_TEST

/* A pushing thread takes blocks and hands them, stamped, through a small
 * channel to a completing thread, which checks the stamp and gives them
 * back; a third thread takes and gives on its own at the same time. */
enum { HANDOFFS = 200000, CHANNEL = 64 };

struct channel {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  uint64_t *slot[CHANNEL];
  int head, count;
  bool done;
};

static struct mxr__recycler shared;
static struct channel chan = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
static atomic_int bad_stamps;

static void send(uint64_t *b) {
  mxr_mutex_lock(&chan.mu);
  while (chan.count == CHANNEL) mxr_cond_wait(&chan.cv, &chan.mu);
  chan.slot[(chan.head + chan.count++) % CHANNEL] = b;
  mxr_cond_broadcast(&chan.cv);
  mxr_mutex_unlock(&chan.mu);
}

static uint64_t *receive(void) {
  mxr_mutex_lock(&chan.mu);
  while (chan.count == 0 && !chan.done) mxr_cond_wait(&chan.cv, &chan.mu);
  uint64_t *b = NULL;
  if (chan.count > 0) {
    b = chan.slot[chan.head];
    chan.head = (chan.head + 1) % CHANNEL;
    chan.count--;
    mxr_cond_broadcast(&chan.cv);
  }
  mxr_mutex_unlock(&chan.mu);
  return b;
}

static void stamp(uint64_t *b, uint64_t v) {
  for (size_t i = 0; i < BLOCK / sizeof *b; i++) b[i] = v + i;
}

static bool stamped(const uint64_t *b, uint64_t v) {
  for (size_t i = 0; i < BLOCK / sizeof *b; i++)
    if (b[i] != v + i) return false;
  return true;
}

static void *pusher(void *unused) {
  (void)unused;
  for (uint64_t k = 0; k < HANDOFFS; k++) {
    uint64_t *b = mxr__recycler_take(&shared);
    if (!b) break;
    stamp(b, k << 8);
    send(b);
  }
  mxr_mutex_lock(&chan.mu);
  chan.done = true;
  mxr_cond_broadcast(&chan.cv);
  mxr_mutex_unlock(&chan.mu);
  return NULL;
}

static void *completer(void *unused) {
  (void)unused;
  uint64_t *b;
  while ((b = receive())) {
    if (!stamped(b, b[0])) atomic_fetch_add(&bad_stamps, 1);
    mxr__recycler_give(&shared, b);
  }
  return NULL;
}

static void *bystander(void *unused) {
  (void)unused;
  for (uint64_t k = 0; k < HANDOFFS / 4; k++) {
    uint64_t *b = mxr__recycler_take(&shared);
    if (!b) break;
    stamp(b, ~k << 8);
    if (!stamped(b, ~k << 8)) atomic_fetch_add(&bad_stamps, 1);
    mxr__recycler_give(&shared, b);
  }
  return NULL;
}

START_TEST(test_blocks_travel_between_threads) {
  mxr__recycler_init(&shared, BLOCK, 256);
  pthread_t t[3];
  void *(*fn[3])(void *) = {pusher, completer, bystander};
  for (int i = 0; i < 3; i++) ck_assert_int_eq(pthread_create(&t[i], NULL, fn[i], NULL), 0);
  for (int i = 0; i < 3; i++) ck_assert_int_eq(pthread_join(t[i], NULL), 0);
  ck_assert_int_eq(atomic_load(&bad_stamps), 0);
  ck_assert_int_le(atomic_load(&shared.given_count), 256 + 2);
  mxr__recycler_drain(&shared);
}
END_TEST

int main(void) {
  Suite *s = suite_create("recycle");
  TCase *tc = tcase_create("recycle");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_blocks_are_whole_and_distinct);
  tcase_add_test(tc, test_a_given_block_comes_back);
  tcase_add_test(tc, test_waiting_blocks_are_bounded);
  tcase_add_test(tc, test_blocks_travel_between_threads);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
