/* Internal: a monotonic clock in nanoseconds. */
#ifndef MXR_COMMON_TIMER_H
#define MXR_COMMON_TIMER_H

#include <stdint.h>
#include <time.h>

static inline uint64_t mxr__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif /* MXR_COMMON_TIMER_H */
