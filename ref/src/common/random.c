/* The process seed of random ops (common/random.h, mxr_random_seed). */
#include <stdatomic.h>

#include "common/random.h"
#include "mxref/imperative.h"

static _Atomic uint64_t global_seed;
static _Atomic uint64_t call_counter;

int mxr_random_seed(int seed) {
  atomic_store(&global_seed, (uint64_t)(uint32_t)seed * 0x9e3779b97f4a7c15ull);
  atomic_store(&call_counter, 0);
  return 0;
}

uint64_t mxr__random_seed_base(void) { return atomic_load(&global_seed); }

uint64_t mxr__random_next_call_seed(void) {
  return (atomic_fetch_add(&call_counter, 1) * 0x9e3779b97f4a7c15ull + 1) ^ atomic_load(&global_seed);
}
