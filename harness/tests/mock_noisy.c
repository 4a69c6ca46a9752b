/*
 * Mock: right results, noisy timings, the way a shared CI machine is noisy.
 * Each symbolic forward and backward call gets
 *   - jitter: 0-20 us of spinning, uniformly at random;
 *   - a stall: once in 50 calls, a 2 ms sleep;
 *   - in one process out of 20, chosen at random at load, 300 us more of
 *     spinning per call (a neighbour taking the CPU for a whole process).
 * Under this noise a single measurement per config compared with `<` (seed
 * 000's test) fails often; mxcts must report no failure.  A slow process
 * says so on stderr, so the test can tell that the noise really happened.
 */
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"
#include "mock.h"

static uint64_t rng_state;
static int slow_process;

static uint64_t next_random(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1DULL;
}

static void spin_us(double us) {
  double until = mxcts_now() * 1e6 + us;
  while (mxcts_now() * 1e6 < until) {
  }
}

static uint64_t uniform(uint64_t n) { return (next_random() >> 32) % n; }

__attribute__((constructor)) static void choose_noise(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  /* splitmix64's mixer: neighbouring pids give unrelated streams. */
  rng_state = mxcts_mix64(((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec);
  if (!rng_state) rng_state = 1;
  slow_process = uniform(20) == 0;
  if (slow_process) fprintf(stderr, "mock_noisy: slow process\n");
}

static void noise(void) {
  spin_us((double)uniform(2001) / 100.0);
  if (uniform(50) == 0) {
    struct timespec stall = {0, 2000000};
    nanosleep(&stall, NULL);
  }
  if (slow_process) spin_us(300);
}

int MXExecutorForward(ExecutorHandle handle, int is_train) {
  noise();
  return MOCK_REAL(MXExecutorForward)(handle, is_train);
}

int MXExecutorBackwardEx(ExecutorHandle handle, uint32_t len, NDArrayHandle *head_grads,
                         int is_train) {
  noise();
  return MOCK_REAL(MXExecutorBackwardEx)(handle, len, head_grads, is_train);
}
