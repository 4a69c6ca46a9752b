/*
 * harness/stats.h: exact binomial tails, the one-sided sign test that judges
 * orderings, and the distribution-free lower confidence bound of a ratio.
 *
 * No normal approximation anywhere: binomial probabilities are sums of exact
 * terms C(n,i) p^i (1-p)^(n-i), each computed in log space with lgamma, so
 * they are accurate to about 1e-12 relative for n up to MXCTS_BINOM_MAX.
 *
 * The sign test (docs/harness.md derives all of this):
 *   R rounds, one ratio r_i = slower_i / faster_i per round.  Under the null
 *   hypothesis "the slower side is not more than (1 + margin) times slower",
 *   P(r_i > 1 + margin) <= 1/2 for every round independently, so the number of
 *   wins W = #{i : r_i > 1 + margin} is stochastically at most Bin(R, 1/2).
 *   The test passes when W >= k; its false-pass probability is at most
 *   P(Bin(R, 1/2) >= k) (0.0073 for the defaults R = 25, k = 19).
 *   The p-value of an observed W is P(Bin(R, 1/2) >= W).
 *
 * The lower confidence bound:
 *   With r_(1) <= ... <= r_(R) sorted and m the median of the ratio's
 *   distribution, r_(j) <= m exactly when at least j rounds are <= m, so
 *   P(r_(j) <= m) = P(Bin(R, 1/2) >= j).  Taking j = R - k + 1 gives
 *   P(r_(j) <= m) = P(Bin(R, 1/2) <= k - 1) = 1 - P(Bin(R, 1/2) >= k):
 *   r_(R-k+1) is a lower bound of the median ratio at confidence
 *   1 - P(Bin(R,1/2) >= k) (99.27 % for R = 25, k = 19).  It is dual to the
 *   test: W >= k exactly when r_(R-k+1) > 1 + margin.
 *
 * No function here allocates memory that outlives the call.
 */
#ifndef MXCTS_STATS_H
#define MXCTS_STATS_H

#include <stdbool.h>
#include <stddef.h>

/* The largest n the binomial functions accept (larger n returns NaN). */
#define MXCTS_BINOM_MAX 100000

/* P(X = k) for X ~ Bin(n, p); 0 outside [0, n]; NaN for bad n or p. */
double mxcts_binom_pmf(int n, int k, double p);
/* P(X >= k) (upper tail, k included): 1 for k <= 0, 0 for k > n. */
double mxcts_binom_sf(int n, int k, double p);
/* P(X <= k): 0 for k < 0, 1 for k >= n. */
double mxcts_binom_cdf(int n, int k, double p);

/* The smallest k with P(Bin(rounds, 1/2) >= k) <= alpha, or rounds + 1 when
 * even k = rounds is not rare enough (too few rounds for alpha).
 * rounds in [1, MXCTS_BINOM_MAX], alpha in (0, 1); otherwise -1. */
int mxcts_sign_test_min_k(int rounds, double alpha);

/* The sign test's p-value for `wins` of `rounds`: P(Bin(rounds, 1/2) >= wins). */
double mxcts_sign_test_p(int rounds, int wins);

struct mxcts_sign_test {
  int rounds;           /* R: ratios given */
  int k;                /* wins needed */
  double margin;        /* a round is a win when its ratio > 1 + margin */
  int wins;             /* W */
  bool pass;            /* W >= k */
  double p_value;       /* P(Bin(R, 1/2) >= W) */
  double false_pass;    /* P(Bin(R, 1/2) >= k): the test's size */
  double ratio_median;  /* median of the ratios */
  double lower_bound;   /* r_(R-k+1): the distribution-free lower bound */
  double confidence;    /* 1 - false_pass: the bound's confidence */
};

/* Run the test on `n` ratios (each finite and > 0; the caller checks).
 * Returns MXCTS_EINVAL (with a message) for n < 1, k outside
 * (n/2, n], or margin <= -1. */
int mxcts_sign_test(const double *ratios, int n, int k, double margin,
                    struct mxcts_sign_test *out);

/* The median of n values (the mean of the middle two for even n); NaN for
 * n == 0.  Does not modify x. */
double mxcts_median(const double *x, size_t n);
/* The q-quantile (0 <= q <= 1) by linear interpolation between order
 * statistics (type 7); NaN for n == 0. */
double mxcts_quantile(const double *x, size_t n, double q);

#endif /* MXCTS_STATS_H */
