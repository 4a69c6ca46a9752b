/* Exact binomial tails (against values computed
 * exactly with Python's fractions and math.comb, e.g.
 *   sum(comb(25, i) for i in range(19, 26)) = 245506, over 2**25) and the
 * SPRT (common/common.h): its steps, and its error rates and mean rounds by
 * simulation against the exact walk. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_tap.h"
#include "common/common.h"

#define REL(a, b) (fabs((a) - (b)) <= 1e-10 * fabs(b))

START_TEST(test_exact_tails) {
  ck_assert(REL(mxcts_binom_sf(25, 19, 0.5), 245506.0 / 33554432.0)); /* 0.0073166... */
  ck_assert(REL(mxcts_binom_sf(25, 19, 0.5), 0.007316648960113525));
  ck_assert(REL(mxcts_binom_sf(25, 18, 0.5), 363103.0 / 16777216.0));
  ck_assert(REL(mxcts_binom_sf(25, 13, 0.5), 0.5));
  ck_assert(REL(mxcts_binom_sf(25, 25, 0.5), 1.0 / 33554432.0));
  ck_assert(REL(mxcts_binom_sf(10, 8, 0.5), 7.0 / 128.0));
  ck_assert(REL(mxcts_binom_sf(100, 60, 0.5), 0.028443966820490395));
  ck_assert(REL(mxcts_binom_sf(200, 120, 0.5), 0.0028425779983751527));
  ck_assert(REL(mxcts_binom_sf(200, 140, 0.5), 7.53530778676306e-09));
  ck_assert(REL(mxcts_binom_sf(50, 20, 0.3), 0.08480259855382563));
  ck_assert(REL(mxcts_binom_cdf(50, 10, 0.3), 0.07885062482305641));
  ck_assert(REL(mxcts_binom_pmf(25, 19, 0.5), 177100.0 / 33554432.0));
}
END_TEST

START_TEST(test_edges) {
  ck_assert(mxcts_binom_sf(25, 0, 0.5) == 1.0);
  ck_assert(mxcts_binom_sf(25, -3, 0.5) == 1.0);
  ck_assert(mxcts_binom_sf(25, 26, 0.5) == 0.0);
  ck_assert(mxcts_binom_cdf(25, -1, 0.5) == 0.0);
  ck_assert(mxcts_binom_cdf(25, 25, 0.5) == 1.0);
  ck_assert(mxcts_binom_pmf(5, 0, 0.0) == 1.0);
  ck_assert(mxcts_binom_pmf(5, 5, 1.0) == 1.0);
  ck_assert(mxcts_binom_sf(5, 3, 0.0) == 0.0);
  ck_assert(isnan(mxcts_binom_sf(-1, 0, 0.5)));
  ck_assert(isnan(mxcts_binom_sf(10, 3, 1.5)));
  ck_assert(isnan(mxcts_binom_sf(MXCTS_BINOM_MAX + 1, 3, 0.5)));
  /* complementary tails add to one, for every k */
  for (int k = 0; k <= 200; k++)
    ck_assert(fabs(mxcts_binom_sf(200, k, 0.5) + mxcts_binom_cdf(200, k - 1, 0.5) - 1.0) < 1e-12);
}
END_TEST

/* The shipped settings, and the same with pf = p1: Wald's single test. */
static const struct mxcts_sprt_params defaults = {0.5, 0.8, 0.001, 0.001, 0.6};
static const struct mxcts_sprt_params wald = {0.5, 0.8, 0.001, 0.001, 0.8};

START_TEST(test_sprt_steps_and_bounds) {
  struct mxcts_sprt t;
  mxcts_sprt_init(&t, &defaults);
  ck_assert(REL(t.upper, log(999.0)));
  ck_assert(REL(t.fail_upper, log(999.0)));
  ck_assert(REL(t.win_step, log(1.6)));
  ck_assert(REL(t.loss_step, log(0.4)));
  ck_assert(REL(t.fail_win_step, log(0.5 / 0.6)));
  ck_assert(REL(t.fail_loss_step, log(1.25)));
  /* 14 wins are not enough (14 ln 1.6 = 6.58 < 6.91), the 15th is */
  for (int i = 0; i < 14; i++) ck_assert_int_eq(mxcts_sprt_step(&t, true, true), MXCTS_SPRT_CONTINUE);
  ck_assert_int_eq(mxcts_sprt_step(&t, true, true), MXCTS_SPRT_ACCEPT_H1);
  ck_assert_int_eq(t.decided_at, 15);
  /* the first crossing decides: later losses change nothing */
  ck_assert_int_eq(mxcts_sprt_step(&t, false, true), MXCTS_SPRT_ACCEPT_H1);
  ck_assert_int_eq(t.counted, 15);
  /* a fail needs 31 losses in a row (31 ln 1.25 = 6.92; 30 give 6.69) */
  mxcts_sprt_init(&t, &defaults);
  for (int i = 0; i < 30; i++) ck_assert_int_eq(mxcts_sprt_step(&t, false, true), MXCTS_SPRT_CONTINUE);
  ck_assert_int_eq(mxcts_sprt_step(&t, false, true), MXCTS_SPRT_ACCEPT_H0);
  ck_assert_int_eq(t.decided_at, 31);
  ck_assert_str_eq(mxcts_sprt_decision_name(t.decision), "fail");
  /* Wald's single test (pf = p1): the fail walk is the pass walk negated,
   * and 8 losses fail (8 ln 0.4 = -7.33) */
  mxcts_sprt_init(&t, &wald);
  for (int i = 0; i < 7; i++) mxcts_sprt_step(&t, false, true);
  ck_assert(REL(t.fail_llr, -t.llr));
  ck_assert_int_eq(t.decision, MXCTS_SPRT_CONTINUE);
  mxcts_sprt_step(&t, false, true);
  ck_assert_int_eq(t.decision, MXCTS_SPRT_ACCEPT_H0);
  /* a ratio equal to 1 + margin is not a win */
  double tie[8] = {1.05, 1.05, 1.05, 1.05, 1.05, 1.05, 1.05, 1.05};
  mxcts_sprt_init(&t, &wald);
  mxcts_sprt_rounds(&t, tie, NULL, 8, 0.05);
  ck_assert_int_eq(t.wins, 0);
  ck_assert_int_eq(t.decision, MXCTS_SPRT_ACCEPT_H0);
}
END_TEST

/* 60 % wins -- a real ordering that a busy machine has blurred -- keep
 * both walks away from their bounds for the whole budget, where Wald's
 * single test would fail them: 60 wins of 100 */
START_TEST(test_sprt_blurred_ordering_is_not_failed) {
  struct mxcts_sprt t, w;
  mxcts_sprt_init(&t, &defaults);
  mxcts_sprt_init(&w, &wald);
  for (int i = 0; i < 100; i++) {
    bool win = i % 5 < 3;
    mxcts_sprt_step(&t, win, true);
    mxcts_sprt_step(&w, win, true);
  }
  ck_assert_int_eq(t.decision, MXCTS_SPRT_CONTINUE);
  ck_assert_int_eq(t.wins, 60);
  ck_assert_int_eq(w.decision, MXCTS_SPRT_ACCEPT_H0);
}
END_TEST

START_TEST(test_sprt_contended_rounds_never_count) {
  /* contended rounds all win, uncontended ones all lose: H0, from the
   * uncontended rounds alone */
  double ratio[40];
  bool counted[40];
  for (int i = 0; i < 40; i++) {
    counted[i] = i % 3 == 2;
    ratio[i] = counted[i] ? 1.0 : 3.0;
  }
  struct mxcts_sprt t;
  mxcts_sprt_init(&t, &wald);
  mxcts_sprt_rounds(&t, ratio, counted, 40, 0.05);
  ck_assert_int_eq(t.decision, MXCTS_SPRT_ACCEPT_H0);
  ck_assert_int_eq(t.wins, 0);
  ck_assert_int_eq(t.counted, 8);
  ck_assert_int_eq(t.left_out, 16);
  ck_assert_int_eq(t.decided_at, 24);
  /* all contended: nothing is decided */
  mxcts_sprt_init(&t, &wald);
  memset(counted, 0, sizeof counted);
  mxcts_sprt_rounds(&t, ratio, counted, 40, 0.05);
  ck_assert_int_eq(t.decision, MXCTS_SPRT_CONTINUE);
  ck_assert_int_eq(t.counted, 0);
  ck_assert(t.llr == 0);
}
END_TEST

START_TEST(test_sprt_rejects_bad_params) {
  struct mxcts_sprt_params p = defaults;
  ck_assert_int_eq(mxcts_sprt_check(&p), 0);
  p.p1 = 0.5;
  ck_assert_int_ne(mxcts_sprt_check(&p), 0);
  ck_assert_ptr_nonnull(strstr(mxcts_last_error(), "p1 = 0.5"));
  p = defaults, p.p0 = 0;
  ck_assert_int_ne(mxcts_sprt_check(&p), 0);
  p = defaults, p.alpha = 0.5;
  ck_assert_int_ne(mxcts_sprt_check(&p), 0);
  p = defaults, p.beta = 0;
  ck_assert_int_ne(mxcts_sprt_check(&p), 0);
  p = defaults, p.pf = 0.5; /* not above p0 */
  ck_assert_int_ne(mxcts_sprt_check(&p), 0);
  ck_assert_ptr_nonnull(strstr(mxcts_last_error(), "pf = 0.5"));
  p = defaults, p.pf = 0.9; /* above p1 */
  ck_assert_int_ne(mxcts_sprt_check(&p), 0);
  p = defaults, p.pf = p.p1;
  ck_assert_int_eq(mxcts_sprt_check(&p), 0);
}
END_TEST

/* Simulated assertions: each a seeded Bernoulli(p) stream of rounds, one in
 * five contended (a random ratio that must not count), judged like the
 * harness judges a pair, up to a budget of rounds. */
struct sim {
  int pass, fail, undecided;
  double mean_counted;
};

static struct sim simulate(const struct mxcts_sprt_params *params, double p, int budget, int n,
                           uint64_t seed) {
  struct sim r = {0};
  uint64_t state = seed;
  double *ratio = malloc((size_t)budget * sizeof *ratio);
  bool *counted = malloc((size_t)budget * sizeof *counted);
  long total = 0;
  for (int a = 0; a < n; a++) {
    for (int i = 0; i < budget; i++) {
      counted[i] = mxcts_rng_uniform(&state) >= 0.2;
      bool win = counted[i] ? mxcts_rng_uniform(&state) < p : mxcts_rng_uniform(&state) < 0.5;
      ratio[i] = win ? 1.3 : 0.97;
    }
    struct mxcts_sprt t;
    mxcts_sprt_init(&t, params);
    mxcts_sprt_rounds(&t, ratio, counted, budget, 0.05);
    r.pass += t.decision == MXCTS_SPRT_ACCEPT_H1;
    r.fail += t.decision == MXCTS_SPRT_ACCEPT_H0;
    r.undecided += t.decision == MXCTS_SPRT_CONTINUE;
    total += t.counted;
  }
  r.mean_counted = (double)total / n;
  free(ratio);
  free(counted);
  return r;
}

/* k events of n trials fit probability q: at most 4 standard deviations
 * (plus 3, for tiny q) away. */
static bool fits(int k, int n, double q) {
  return fabs(k - n * q) <= 4 * sqrt(n * q * (1 - q)) + 3;
}

/* Simulated and exact error rates of one parameter set: false passes at
 * p0, false fails at pf, and the mean rounds of both, with a budget of
 * rounds that almost never binds (a fifth of the simulated rounds are
 * contended and do not count, so the exact walk's budget is their 80 %). */
static void check_error_rates(const struct mxcts_sprt_params *params, int budget, uint64_t seed) {
  const int n = 10000;
  struct sim h0 = simulate(params, params->p0, budget, n, seed);
  struct sim hf = simulate(params, params->pf, budget, n, seed + 1);
  fprintf(stderr, "# SPRT simulation (pf %g), %d assertions each: p=%g %d false passes (alpha %g), "
          "mean %.1f rounds; p=%g %d false fails (beta %g), mean %.1f rounds\n",
          params->pf, n, params->p0, h0.pass, params->alpha, h0.mean_counted, params->pf, hf.fail,
          params->beta, hf.mean_counted);
  ck_assert(fits(h0.pass, n, params->alpha) || h0.pass < n * params->alpha);
  ck_assert(fits(hf.fail, n, params->beta) || hf.fail < n * params->beta);
  struct mxcts_sprt_oc x0, xf;
  mxcts_sprt_exact(params, params->p0, budget * 4 / 5, &x0);
  mxcts_sprt_exact(params, params->pf, budget * 4 / 5, &xf);
  ck_assert(x0.pass <= params->alpha && xf.fail <= params->beta);
  ck_assert(fits(h0.pass, n, x0.pass) && fits(hf.fail, n, xf.fail));
  /* the ASN: the simulation's mean near the exact expectation */
  ck_assert(fabs(h0.mean_counted - x0.mean_rounds) < 0.03 * x0.mean_rounds);
  ck_assert(fabs(hf.mean_counted - xf.mean_rounds) < 0.03 * xf.mean_rounds);
}

START_TEST(test_sprt_error_rates_by_simulation) {
  check_error_rates(&wald, 500, 1);
  /* near p0 the fail walk drifts slowly (about 340 rounds to its bound) */
  check_error_rates(&defaults, 3000, 3);
  /* Wald's single test's ASN near his approximation (which ignores the
   * overshoot) */
  struct mxcts_sprt_oc x0;
  mxcts_sprt_exact(&wald, 0.5, 500, &x0);
  double a = log(999.0), ez0 = 0.5 * log(1.6) + 0.5 * log(0.4);
  double wald0 = ((1 - wald.alpha) * -a + wald.alpha * a) / ez0; /* 30.9 */
  ck_assert(x0.mean_rounds > wald0 && x0.mean_rounds < 1.15 * wald0);
}
END_TEST

START_TEST(test_sprt_truncation_gives_undecided) {
  /* at Wald's indifference point p = ln(2.5) / ln(4) = 0.661 the walk
   * drifts nowhere: a budget of 20 rounds leaves most assertions undecided */
  struct sim mid = simulate(&wald, 0.661, 25, 2000, 3); /* 25 rounds, ~20 counted */
  ck_assert_int_gt(mid.undecided, 1000);
  ck_assert_int_eq(mid.pass + mid.fail + mid.undecided, 2000);
  struct mxcts_sprt_oc x;
  mxcts_sprt_exact(&wald, 0.661, 20, &x);
  ck_assert(x.undecided > 0.5);
  ck_assert(fabs(x.pass + x.fail + x.undecided - 1) < 1e-12);
  /* the shipped settings and budget: an ordering at p1 passes, one at p0
   * does not, one that wins a fifth of its rounds (an engine without the
   * effect, on an idle machine) fails, and one blurred to pf fails with
   * probability below beta, mostly staying undecided */
  mxcts_sprt_exact(&defaults, 0.8, 100, &x);
  ck_assert(x.undecided < 0.01 && x.fail < defaults.beta);
  mxcts_sprt_exact(&defaults, 0.5, 100, &x);
  ck_assert(x.pass < defaults.alpha);
  mxcts_sprt_exact(&defaults, 0.2, 100, &x);
  ck_assert(x.fail > 0.99);
  mxcts_sprt_exact(&defaults, 0.6, 100, &x);
  ck_assert(x.fail < defaults.beta && x.undecided > 0.9);
}
END_TEST

START_TEST(test_quantiles) {
  double x[] = {5, 1, 4, 2, 3};
  ck_assert(mxcts_median(x, 5) == 3);
  ck_assert(mxcts_median(x, 4) == 3); /* {5,1,4,2} -> (2+4)/2 */
  ck_assert(mxcts_quantile(x, 5, 0.25) == 2);
  ck_assert(mxcts_quantile(x, 5, 1.0) == 5);
  ck_assert(isnan(mxcts_median(x, 0)));
  ck_assert(x[0] == 5); /* untouched */
}
END_TEST

START_TEST(test_median_ci_order_statistics) {
  double x[20], lo, hi;
  for (int i = 0; i < 20; i++) x[i] = (double)(19 - i); /* 19..0, unsorted */
  ck_assert(!mxcts_median_ci(x, 5, 0.95, &lo, &hi)); /* 2 * 2^-5 > 0.05 */
  ck_assert(isnan(lo) && isnan(hi));
  ck_assert(mxcts_median_ci(x + 14, 6, 0.95, &lo, &hi)); /* 5..0 */
  ck_assert(lo == 0.0 && hi == 5.0);
  /* n = 20: P(B <= 5) = 0.0207 <= 0.025 < P(B <= 6) = 0.0577, so x_(6), x_(15) */
  ck_assert(mxcts_median_ci(x, 20, 0.95, &lo, &hi));
  ck_assert(lo == 5.0 && hi == 14.0);
  ck_assert(!mxcts_median_ci(x, 20, 1.0, &lo, &hi));
}
END_TEST

/* Coverage by simulation: 4000 samples of 15 exponential values; the true
 * median ln 2 lies inside at least 95 % of the intervals (exactly: 96.5 %). */
START_TEST(test_median_ci_coverage) {
  uint64_t rng = 7;
  int covered = 0, trials = 4000;
  for (int t = 0; t < trials; t++) {
    double x[15], lo, hi;
    for (int i = 0; i < 15; i++) x[i] = -log(1.0 - mxcts_rng_uniform(&rng));
    ck_assert(mxcts_median_ci(x, 15, 0.95, &lo, &hi));
    covered += lo <= M_LN2 && M_LN2 <= hi;
  }
  ck_assert_int_ge(covered, (int)(0.95 * trials));
  ck_assert_int_le(covered, (int)(0.98 * trials));
}
END_TEST

int main(void) {
  Suite *s = suite_create("stats");
  TCase *tc = tcase_create("stats");
  tcase_set_timeout(tc, 60); /* the simulations, under sanitizers on a busy machine */
  tcase_add_test(tc, test_exact_tails);
  tcase_add_test(tc, test_edges);
  tcase_add_test(tc, test_sprt_steps_and_bounds);
  tcase_add_test(tc, test_sprt_blurred_ordering_is_not_failed);
  tcase_add_test(tc, test_sprt_contended_rounds_never_count);
  tcase_add_test(tc, test_sprt_rejects_bad_params);
  tcase_add_test(tc, test_sprt_error_rates_by_simulation);
  tcase_add_test(tc, test_sprt_truncation_gives_undecided);
  tcase_add_test(tc, test_quantiles);
  tcase_add_test(tc, test_median_ci_order_statistics);
  tcase_add_test(tc, test_median_ci_coverage);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
