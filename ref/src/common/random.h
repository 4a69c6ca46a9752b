/*
 * Internal: the process seed of random ops (MXRandomSeed).  Ops draw from
 * ctx->seed, which the callers derive from here: imperative calls from a
 * call counter (reset by the seed), executor nodes from their identity and
 * run count mixed with the seed.
 */
#ifndef MXR_COMMON_RANDOM_H
#define MXR_COMMON_RANDOM_H

#include <stdint.h>

/* The seed set last (0 before any). */
uint64_t mxr__random_seed_base(void);

/* A fresh seed for the next imperative call. */
uint64_t mxr__random_next_call_seed(void);

#endif /* MXR_COMMON_RANDOM_H */
