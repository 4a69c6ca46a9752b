/* Exact binomial tails and the sign test (common/common.h). */
#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


static bool bad_args(int n, double p) {
  return n < 0 || n > MXCTS_BINOM_MAX || !(p >= 0.0 && p <= 1.0);
}

/* log C(n, k) + k log p + (n - k) log(1 - p), for 0 < p < 1. */
static double log_term(int n, int k, double p) {
  double lc = lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma((double)(n - k) + 1.0);
  return lc + k * log(p) + (n - k) * log1p(-p);
}

double mxcts_binom_pmf(int n, int k, double p) {
  if (bad_args(n, p)) return NAN;
  if (k < 0 || k > n) return 0.0;
  if (p == 0.0) return k == 0 ? 1.0 : 0.0;
  if (p == 1.0) return k == n ? 1.0 : 0.0;
  return exp(log_term(n, k, p));
}

/* Sum of pmf over [lo, hi], smallest terms first (they are all positive, so
 * the sum has no cancellation; order only trims rounding). */
static double pmf_sum(int n, int lo, int hi, double p) {
  int mode = (int)floor((n + 1) * p);
  double s = 0.0;
  if (mode <= lo) {
    for (int i = hi; i >= lo; i--) s += mxcts_binom_pmf(n, i, p);
  } else if (mode >= hi) {
    for (int i = lo; i <= hi; i++) s += mxcts_binom_pmf(n, i, p);
  } else {
    for (int i = lo; i < mode; i++) s += mxcts_binom_pmf(n, i, p);
    for (int i = hi; i >= mode; i--) s += mxcts_binom_pmf(n, i, p);
  }
  return s > 1.0 ? 1.0 : s;
}

double mxcts_binom_sf(int n, int k, double p) {
  if (bad_args(n, p)) return NAN;
  if (k <= 0) return 1.0;
  if (k > n) return 0.0;
  return pmf_sum(n, k, n, p);
}

double mxcts_binom_cdf(int n, int k, double p) {
  if (bad_args(n, p)) return NAN;
  if (k < 0) return 0.0;
  if (k >= n) return 1.0;
  return pmf_sum(n, 0, k, p);
}

int mxcts_sign_test_min_k(int rounds, double alpha) {
  if (rounds < 1 || rounds > MXCTS_BINOM_MAX || !(alpha > 0.0 && alpha < 1.0)) return -1;
  /* The tail shrinks as k grows: walk down from k = rounds. */
  int k = rounds + 1;
  while (k - 1 >= 0 && mxcts_binom_sf(rounds, k - 1, 0.5) <= alpha) k--;
  return k;
}

static double sign_test_p(int rounds, int wins) { return mxcts_binom_sf(rounds, wins, 0.5); }

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double *sorted_copy(const double *x, size_t n) {
  double *s = mxcts_xmalloc(n * sizeof *s);
  memcpy(s, x, n * sizeof *s);
  qsort(s, n, sizeof *s, cmp_double);
  return s;
}

double mxcts_median(const double *x, size_t n) { return mxcts_quantile(x, n, 0.5); }

double mxcts_quantile(const double *x, size_t n, double q) {
  if (n == 0 || !(q >= 0.0 && q <= 1.0)) return NAN;
  double *s = sorted_copy(x, n);
  double h = (double)(n - 1) * q;
  size_t lo = (size_t)floor(h);
  size_t hi = lo + 1 < n ? lo + 1 : lo;
  double v = s[lo] + (h - (double)lo) * (s[hi] - s[lo]);
  free(s);
  return v;
}

int mxcts_sign_test(const double *ratios, int n, int k, double margin,
                    struct mxcts_sign_test *out) {
  if (n < 1 || n > MXCTS_BINOM_MAX)
    return mxcts_set_error(MXR_EINVAL, "sign test: %d rounds (need 1..%d)", n, MXCTS_BINOM_MAX);
  if (2 * k <= n || k > n)
    return mxcts_set_error(MXR_EINVAL, "sign test: k = %d for %d rounds (need %d/2 < k <= %d)",
                           k, n, n, n);
  if (!(margin > -1.0))
    return mxcts_set_error(MXR_EINVAL, "sign test: margin %g (need > -1)", margin);
  memset(out, 0, sizeof *out);
  out->rounds = n;
  out->k = k;
  out->margin = margin;
  for (int i = 0; i < n; i++)
    if (ratios[i] > 1.0 + margin) out->wins++;
  out->pass = out->wins >= k;
  out->p_value = sign_test_p(n, out->wins);
  out->false_pass = sign_test_p(n, k);
  out->confidence = 1.0 - out->false_pass;
  double *s = sorted_copy(ratios, (size_t)n);
  out->lower_bound = s[n - k]; /* r_(R-k+1), 1-based */
  out->ratio_median = mxcts_median(ratios, (size_t)n);
  free(s);
  return 0;
}
