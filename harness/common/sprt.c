/* Wald's sequential probability ratio test on the per-round win indicator
 * of an ordering (common/common.h). */
#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int mxcts_sprt_check(const struct mxcts_sprt_params *p) {
  if (!(p->p0 > 0 && p->p0 < 1))
    return mxcts_set_error(MXR_EINVAL, "SPRT: p0 = %g (need 0 < p0 < 1)", p->p0);
  if (!(p->p1 > p->p0 && p->p1 < 1))
    return mxcts_set_error(MXR_EINVAL, "SPRT: p1 = %g (need p0 = %g < p1 < 1)", p->p1, p->p0);
  if (!(p->alpha > 0 && p->alpha < 0.5))
    return mxcts_set_error(MXR_EINVAL, "SPRT: alpha = %g (need 0 < alpha < 0.5)", p->alpha);
  if (!(p->beta > 0 && p->beta < 0.5))
    return mxcts_set_error(MXR_EINVAL, "SPRT: beta = %g (need 0 < beta < 0.5)", p->beta);
  if (!(p->pf > p->p0 && p->pf <= p->p1))
    return mxcts_set_error(MXR_EINVAL, "SPRT: pf = %g (need p0 = %g < pf <= p1 = %g)", p->pf,
                           p->p0, p->p1);
  return 0;
}

void mxcts_sprt_init(struct mxcts_sprt *t, const struct mxcts_sprt_params *p) {
  memset(t, 0, sizeof *t);
  t->params = *p;
  t->win_step = log(p->p1 / p->p0);
  t->loss_step = log((1 - p->p1) / (1 - p->p0));
  t->fail_win_step = log(p->p0 / p->pf);
  t->fail_loss_step = log((1 - p->p0) / (1 - p->pf));
  t->upper = log((1 - p->beta) / p->alpha);
  t->fail_upper = log((1 - p->alpha) / p->beta);
}

/* Both walks after `wins` of `counted` rounds. */
static void walk(struct mxcts_sprt *t, int wins, int counted) {
  t->llr = wins * t->win_step + (counted - wins) * t->loss_step;
  t->fail_llr = wins * t->fail_win_step + (counted - wins) * t->fail_loss_step;
}

/* Crossing tests with a little slack, so that a walk that lands exactly on
 * a bound (as 15 wins of ln 1.6 nearly do) is not undone by rounding.  The
 * walks move in opposite directions with each round, so at most one of
 * them can be at its bound. */
static enum mxcts_sprt_decision decide(const struct mxcts_sprt *t) {
  if (t->llr >= t->upper - 1e-9) return MXCTS_SPRT_ACCEPT_H1;
  if (t->fail_llr >= t->fail_upper - 1e-9) return MXCTS_SPRT_ACCEPT_H0;
  return MXCTS_SPRT_CONTINUE;
}

enum mxcts_sprt_decision mxcts_sprt_step(struct mxcts_sprt *t, bool win, bool counted) {
  if (t->decision != MXCTS_SPRT_CONTINUE) return t->decision;
  int round = t->counted + t->left_out + 1;
  if (!counted) {
    t->left_out++;
    return t->decision;
  }
  t->counted++;
  t->wins += win;
  walk(t, t->wins, t->counted);
  t->decision = decide(t);
  if (t->decision != MXCTS_SPRT_CONTINUE) t->decided_at = round;
  return t->decision;
}

void mxcts_sprt_rounds(struct mxcts_sprt *t, const double *ratios, const bool *counted, int n,
                       double margin) {
  for (int i = 0; i < n; i++)
    mxcts_sprt_step(t, ratios[i] > 1.0 + margin, counted ? counted[i] : true);
}

const char *mxcts_sprt_decision_name(enum mxcts_sprt_decision d) {
  switch (d) {
  case MXCTS_SPRT_ACCEPT_H1: return "pass";
  case MXCTS_SPRT_ACCEPT_H0: return "fail";
  case MXCTS_SPRT_CONTINUE: break;
  }
  return "continue";
}

/* One counted round of the exact walk: mass[w] is the probability of being
 * undecided after n rounds with w wins; moves it to n + 1, moving what
 * crosses a bound into out->pass / out->fail. */
static void exact_step(const struct mxcts_sprt *t, double p, int n, double *mass, double *next,
                       struct mxcts_sprt_oc *out) {
  memset(next, 0, (size_t)(n + 2) * sizeof *next);
  for (int w = 0; w <= n; w++) {
    if (mass[w] == 0) continue;
    next[w + 1] += mass[w] * p;
    next[w] += mass[w] * (1 - p);
  }
  for (int w = 0; w <= n + 1; w++) {
    struct mxcts_sprt s = *t;
    walk(&s, w, n + 1);
    enum mxcts_sprt_decision d = decide(&s);
    if (d == MXCTS_SPRT_CONTINUE || next[w] == 0) continue;
    out->mean_rounds += (n + 1) * next[w];
    *(d == MXCTS_SPRT_ACCEPT_H1 ? &out->pass : &out->fail) += next[w];
    next[w] = 0;
  }
}

void mxcts_sprt_exact(const struct mxcts_sprt_params *p, double win_p, int max_rounds,
                      struct mxcts_sprt_oc *out) {
  struct mxcts_sprt t;
  mxcts_sprt_init(&t, p);
  memset(out, 0, sizeof *out);
  double *mass = mxcts_xcalloc((size_t)max_rounds + 2, sizeof *mass);
  double *next = mxcts_xcalloc((size_t)max_rounds + 2, sizeof *next);
  mass[0] = 1;
  for (int n = 0; n < max_rounds; n++) {
    exact_step(&t, win_p, n, mass, next, out);
    double *swap = mass;
    mass = next;
    next = swap;
  }
  for (int w = 0; w <= max_rounds; w++) out->undecided += mass[w];
  out->mean_rounds += max_rounds * out->undecided;
  free(mass);
  free(next);
}
