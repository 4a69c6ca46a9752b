/*
 * Internal: the counter-based random numbers of the ops that draw them
 * (Dropout's mask, LeakyReLU's rrelu slopes, the random fills), shared by the CPU kernels and
 * the CUDA kernels so that both devices draw the same numbers for the same
 * call seed (mxr_op_ctx.seed).  Draw i is splitmix64's i-th output (from
 * 0): the generator adds a constant per step, so any draw can be computed
 * on its own, one per GPU thread.
 */
#ifndef MXR_OP_RANDOM_FN_H
#define MXR_OP_RANDOM_FN_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define MXR_RANDOM_HD __host__ __device__
#else
#define MXR_RANDOM_HD
#endif

static inline MXR_RANDOM_HD uint64_t mxr__splitmix_at(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Draw i as a double in [0, 1) (53 bits). */
static inline MXR_RANDOM_HD double mxr__uniform_at(uint64_t seed, uint64_t i) {
  return (double)(mxr__splitmix_at(seed, i) >> 11) * (1.0 / 9007199254740992.0);
}

/* Draw i as a float in [0, 1) (24 bits). */
static inline MXR_RANDOM_HD float mxr__uniformf_at(uint64_t seed, uint64_t i) {
  return (float)(mxr__splitmix_at(seed, i) >> 40) * (1.0f / 16777216.0f);
}

/* Sample i of the random fills (op/random.c): uniform on [a, b), or
 * normal with mean a and standard deviation b from draws 2i and 2i + 1
 * (Box-Muller). */
static inline MXR_RANDOM_HD double mxr__random_sample_at(uint64_t seed, uint64_t i, int normal,
                                                         double a, double b) {
  if (!normal) return a + (b - a) * mxr__uniform_at(seed, i);
  double u1 = 1.0 - mxr__uniform_at(seed, 2 * i), u2 = mxr__uniform_at(seed, 2 * i + 1);
  return a + b * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#endif /* MXR_OP_RANDOM_FN_H */
