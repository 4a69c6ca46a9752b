/* Exact binomial tails and quantiles (common/common.h). */
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


bool mxcts_median_ci(const double *x, size_t n, double conf, double *lo, double *hi) {
  *lo = *hi = NAN;
  if (n == 0 || n > MXCTS_BINOM_MAX || !(conf > 0.0 && conf < 1.0)) return false;
  double tail = (1.0 - conf) / 2.0;
  /* The largest k with P(B <= k - 1) <= tail, B ~ Binomial(n, 1/2): the
   * interval [x_(k), x_(n+1-k)] then misses the median with probability
   * 2 P(B <= k - 1) <= 1 - conf. */
  int k = 0;
  while (k + 1 <= (int)(n + 1) / 2 && mxcts_binom_cdf((int)n, k, 0.5) <= tail) k++;
  if (k == 0) return false;
  double *s = sorted_copy(x, n);
  *lo = s[k - 1];
  *hi = s[n - (size_t)k];
  free(s);
  return true;
}
