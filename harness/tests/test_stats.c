/* Exact binomial tails and the sign test (common/common.h), against values computed
 * exactly with Python's fractions and math.comb, e.g.
 *   sum(comb(25, i) for i in range(19, 26)) = 245506, over 2**25. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

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

START_TEST(test_min_k) {
  ck_assert_int_eq(mxcts_sign_test_min_k(25, 0.01), 19);
  ck_assert_int_eq(mxcts_sign_test_min_k(25, 0.05), 18);
  ck_assert_int_eq(mxcts_sign_test_min_k(10, 0.01), 10);
  ck_assert_int_eq(mxcts_sign_test_min_k(9, 0.01), 9);
  ck_assert_int_eq(mxcts_sign_test_min_k(7, 0.01), 7);
  ck_assert_int_eq(mxcts_sign_test_min_k(6, 0.01), 7); /* too few rounds */
  ck_assert_int_eq(mxcts_sign_test_min_k(200, 0.01), 117);
  ck_assert_int_eq(mxcts_sign_test_min_k(50, 0.001), 37);
  ck_assert_int_eq(mxcts_sign_test_min_k(0, 0.01), -1);
  ck_assert_int_eq(mxcts_sign_test_min_k(25, 0.0), -1);
}
END_TEST

START_TEST(test_sign_test_and_lower_bound) {
  double r[25];
  for (int i = 0; i < 25; i++) r[i] = 1.0 + 0.01 * (i + 1); /* 1.01 .. 1.25 */
  struct mxcts_sign_test t;
  ck_assert_int_eq(mxcts_sign_test(r, 25, 19, 0.05, &t), 0);
  ck_assert_int_eq(t.wins, 20); /* 1.06 .. 1.25 */
  ck_assert(t.pass);
  ck_assert(REL(t.p_value, mxcts_binom_sf(25, 20, 0.5)));
  ck_assert(REL(t.false_pass, 0.007316648960113525));
  ck_assert(REL(t.confidence, 1 - 0.007316648960113525));
  ck_assert(REL(t.lower_bound, 1.07)); /* r_(7) = r_(R-k+1) */
  ck_assert(REL(t.ratio_median, 1.13));
  /* duality: passes exactly when the lower bound exceeds 1 + margin */
  for (double m = 0.0; m < 0.3; m += 0.005) {
    ck_assert_int_eq(mxcts_sign_test(r, 25, 19, m, &t), 0);
    ck_assert_int_eq(t.pass, t.lower_bound > 1.0 + m);
  }
  /* a tie with 1 + margin is not a win */
  double tie[3] = {1.05, 1.05, 1.05};
  ck_assert_int_eq(mxcts_sign_test(tie, 3, 3, 0.05, &t), 0);
  ck_assert_int_eq(t.wins, 0);
}
END_TEST

START_TEST(test_sign_test_rejects_bad_arguments) {
  double r[5] = {1, 2, 3, 4, 5};
  struct mxcts_sign_test t;
  ck_assert_int_ne(mxcts_sign_test(r, 0, 1, 0.05, &t), 0);
  ck_assert_int_ne(mxcts_sign_test(r, 5, 2, 0.05, &t), 0); /* k <= R/2 */
  ck_assert_int_ne(mxcts_sign_test(r, 5, 6, 0.05, &t), 0);
  ck_assert_int_ne(mxcts_sign_test(r, 5, 5, -1.0, &t), 0);
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

int main(void) {
  Suite *s = suite_create("stats");
  TCase *tc = tcase_create("stats");
  tcase_add_test(tc, test_exact_tails);
  tcase_add_test(tc, test_edges);
  tcase_add_test(tc, test_min_k);
  tcase_add_test(tc, test_sign_test_and_lower_bound);
  tcase_add_test(tc, test_sign_test_rejects_bad_arguments);
  tcase_add_test(tc, test_quantiles);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
