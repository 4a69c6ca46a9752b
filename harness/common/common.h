/*
 * harness/common/common.h: what every part of the harness shares (mxcts,
 * mxcts-probe and the oracle): the per-thread last error, allocation,
 * growable strings and string lists, files and directories, shell quoting,
 * names, a seeded PRNG, the monotonic clock, and the statistics of the
 * ordering test (the SPRT).  Nothing here needs Jansson; the JSON helpers are in
 * common/jsonv.h.
 *
 * Errors.  A function that can fail returns an int: 0 on success, a negative
 * status code of mxref/error.h (MXR_EINVAL, MXR_ESYS, MXR_ENOTFOUND) on
 * failure, after storing a message with mxcts_set_error().  The codes are
 * the library's table, used as a header only: the harness never links an
 * implementation.  Messages name the input that was wrong: the file, the
 * JSON path or line, the value.  Success never clears the message.
 *
 * Allocation.  mxcts_xmalloc and friends never return NULL: running out of
 * memory prints "mxcts: out of memory" and exits with status 2 (the harness'
 * "internal error" status).  Bad input never gets that far.
 *
 * Ownership.  A returned `char *` or a filled struct is the caller's, freed
 * with the matching *_free (or free() for plain strings); `const char *`
 * results point into the object they came from and live as long as it.
 */
#ifndef MXCTS_COMMON_H
#define MXCTS_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mxref/error.h"

/* The calling thread's last error ("" if none).  Valid until the next
 * failing mxcts_* call on this thread. */
const char *mxcts_last_error(void);
/* Store a message (whole, whatever its length) and return `status`. */
int mxcts_set_error(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prefix the current message: "<prefix>: <old message>"; returns status. */
int mxcts_prefix_error(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* --- allocation (never NULL; exits 2 when memory runs out) --------------- */
void *mxcts_xmalloc(size_t n);
void *mxcts_xcalloc(size_t count, size_t size);
void *mxcts_xrealloc(void *p, size_t n);
char *mxcts_xstrdup(const char *s);            /* NULL -> NULL */
char *mxcts_xstrndup(const char *s, size_t n);
char *mxcts_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Grow *arr (of *cap elements of `size` bytes) to hold at least `need`. */
void mxcts_grow(void *arr, size_t *cap, size_t need, size_t size);

/* --- growable string --------------------------------------------------- */
struct mxcts_buf {
  char *s;    /* always NUL-terminated once anything was added; may be NULL */
  size_t len;
  size_t cap;
};
void mxcts_buf_puts(struct mxcts_buf *b, const char *s);
void mxcts_buf_printf(struct mxcts_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void mxcts_buf_vprintf(struct mxcts_buf *b, const char *fmt, va_list ap);
/* The contents ("" when empty); the buffer keeps ownership. */
const char *mxcts_buf_str(const struct mxcts_buf *b);
/* Hand the string to the caller (never NULL) and reset the buffer. */
char *mxcts_buf_take(struct mxcts_buf *b);
void mxcts_buf_free(struct mxcts_buf *b);

/* --- string list: owns its strings ------------------------------------- */
struct mxcts_strv {
  char **v;   /* NULL-terminated when n > 0 or after mxcts_strv_terminate */
  size_t n;
  size_t cap;
};
void mxcts_strv_push(struct mxcts_strv *l, const char *s);      /* copies */
void mxcts_strv_pushf(struct mxcts_strv *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void mxcts_strv_push_take(struct mxcts_strv *l, char *s);       /* takes s */
bool mxcts_strv_contains(const struct mxcts_strv *l, const char *s);
void mxcts_strv_free(struct mxcts_strv *l);

/* Text from outside (an implementation's error, a file) made safe to show:
 * valid UTF-8 is kept whole; each byte that is not part of valid UTF-8, and
 * each control character but newline and tab (a terminal escape), becomes
 * the four characters \xNN.  Nothing is dropped.  The caller frees. */
char *mxcts_clean_text(const char *s);

/* --- files ------------------------------------------------------------- */
/* Open a regular file to read; NULL, with the error set, for anything else
 * (a FIFO, a directory, a device): nothing mxcts reads may block or hang
 * it.  The caller fcloses. */
FILE *mxcts_open_regular(const char *path);
/* Read a whole regular file; *out is the caller's (NUL-terminated), *len
 * optional. */
int mxcts_read_file(const char *path, char **out, size_t *len);
/* Write `data` to path atomically enough (tmp + rename). */
int mxcts_write_file(const char *path, const char *data, size_t len);
/* mkdir -p. */
int mxcts_mkdirs(const char *path);
/* Absolute form of path (the file need not exist); caller frees. */
char *mxcts_abspath(const char *path);
/* The directory of the running executable (from /proc/self/exe), or NULL. */
char *mxcts_self_dir(void);
bool mxcts_is_executable(const char *path);
/* The last `max` bytes of a file as printable text (caller frees; "" if the
 * file is missing). */
char *mxcts_file_tail(const char *path, size_t max);

/* --- shell quoting ------------------------------------------------------- */
/* Append `s` quoted for a POSIX shell (bare when it is safe). */
void mxcts_shell_quote(struct mxcts_buf *b, const char *s);

/* --- names ----------------------------------------------------------------- */
/* [A-Za-z0-9][A-Za-z0-9_.-]* of at most 64 characters. */
bool mxcts_valid_id(const char *s);
/* A POSIX environment variable name: [A-Za-z_][A-Za-z0-9_]*. */
bool mxcts_valid_env_name(const char *s);

/* --- PRNG ---------------------------------------------------------------- */
/* splitmix64: a seeded, portable generator (the same stream everywhere). */
uint64_t mxcts_mix64(uint64_t x);
uint64_t mxcts_rng_next(uint64_t *state);
/* Uniform in [0, 1), 53 bits. */
double mxcts_rng_uniform(uint64_t *state);
/* Uniform in [0, n) without modulo bias; n > 0. */
uint64_t mxcts_rng_below(uint64_t *state, uint64_t n);
/* A 64-bit hash of a string (FNV-1a), for deriving seeds from names. */
uint64_t mxcts_hash_str(uint64_t h, const char *s);
/* A fresh seed from /dev/urandom (or the clock). */
uint64_t mxcts_random_seed(void);

/* Monotonic time in seconds. */
double mxcts_now(void);
/* Sleep `s` seconds (nothing for s <= 0), resuming after signals. */
void mxcts_sleep(double s);

/*
 * Statistics: exact binomial tails and Wald's sequential probability ratio
 * test (SPRT) that judges orderings (docs/harness.md derives all of this).
 *
 * Binomial probabilities are sums of exact terms C(n,i) p^i (1-p)^(n-i),
 * each computed in log space with lgamma (about 1e-12 relative for n up to
 * MXCTS_BINOM_MAX).
 *
 * The SPRT: rounds, in the order they ran, each give a ratio
 * r = slower / faster; a round counts only when it ran uncontended, and a
 * counted round is a *win* when r > 1 + margin.  H0: P(win) <= p0 (no
 * ordering beyond the margin); H1: P(win) >= p1.  Two walks run over the
 * counted rounds, each a Wald test:
 *   pass walk  LLR = wins * ln(p1/p0) + losses * ln((1-p1)/(1-p0)),
 *              H1 accepted (pass) at or above ln((1-beta)/alpha);
 *   fail walk  LLR_f = wins * ln(p0/pf) + losses * ln((1-p0)/(1-pf)),
 *              H0 accepted (fail) at or above ln((1-alpha)/beta);
 * in between the test continues.  The first crossing decides; rounds after
 * it change nothing.  alpha bounds the false pass (accepting H1 when
 * p <= p0) and beta the false fail (accepting H0 when p >= pf), whatever
 * the batching, since only the order of rounds matters.  pf (p0 < pf <= p1)
 * is the win rate a correct implementation keeps on a busy machine: noise
 * pulls a real ordering's win rate down from p1 towards 1/2, and a fail
 * must stay rare wherever it lands above pf.  pf = p1 is Wald's single
 * test (the fail walk is the pass walk negated).
 *
 * No function here allocates memory that outlives the call.
 */

/* The largest n the binomial functions accept (larger n returns NaN). */
#define MXCTS_BINOM_MAX 100000

/* P(X = k) for X ~ Bin(n, p); 0 outside [0, n]; NaN for bad n or p. */
double mxcts_binom_pmf(int n, int k, double p);
/* P(X >= k) (upper tail, k included): 1 for k <= 0, 0 for k > n. */
double mxcts_binom_sf(int n, int k, double p);
/* P(X <= k): 0 for k < 0, 1 for k >= n. */
double mxcts_binom_cdf(int n, int k, double p);

struct mxcts_sprt_params {
  double p0, p1;        /* 0 < p0 < p1 < 1 */
  double alpha, beta;   /* each in (0, 0.5) */
  double pf;            /* p0 < pf <= p1: the fail walk's alternative */
};
/* MXR_EINVAL (with a message naming the value) unless the params fit. */
int mxcts_sprt_check(const struct mxcts_sprt_params *p);

enum mxcts_sprt_decision { MXCTS_SPRT_CONTINUE, MXCTS_SPRT_ACCEPT_H1, MXCTS_SPRT_ACCEPT_H0 };

struct mxcts_sprt {
  struct mxcts_sprt_params params;
  double win_step, loss_step;   /* pass walk: ln(p1/p0) > 0, ln((1-p1)/(1-p0)) < 0 */
  double fail_win_step, fail_loss_step; /* fail walk: ln(p0/pf) < 0, ln((1-p0)/(1-pf)) > 0 */
  double upper, fail_upper;     /* the walks' bounds */
  double llr, fail_llr;         /* after the counted rounds up to the decision */
  int wins, counted;            /* up to the decision */
  int left_out;                 /* contended rounds seen before the decision */
  int decided_at;               /* 1-based round of the decision; 0 while undecided */
  enum mxcts_sprt_decision decision;
};

void mxcts_sprt_init(struct mxcts_sprt *t, const struct mxcts_sprt_params *p);
/* One round: `counted` false (contended) leaves the LLR alone.  Nothing
 * changes once decided.  Returns the decision. */
enum mxcts_sprt_decision mxcts_sprt_step(struct mxcts_sprt *t, bool win, bool counted);
/* All rounds of a pair in the order they ran: round i is a win when
 * ratios[i] > 1 + margin, and counts when counted[i] (NULL: all count). */
void mxcts_sprt_rounds(struct mxcts_sprt *t, const double *ratios, const bool *counted, int n,
                       double margin);
/* "pass", "fail" or "continue". */
const char *mxcts_sprt_decision_name(enum mxcts_sprt_decision d);

/* Exact operating figures of the SPRT truncated after `max_rounds` counted
 * rounds when each round wins with probability p (a walk over (wins,
 * losses)): probabilities of pass, fail and undecided, and the expected
 * number of counted rounds. */
struct mxcts_sprt_oc {
  double pass, fail, undecided, mean_rounds;
};
void mxcts_sprt_exact(const struct mxcts_sprt_params *p, double win_p, int max_rounds,
                      struct mxcts_sprt_oc *out);

/* The median of n values (the mean of the middle two for even n); NaN for
 * n == 0.  Does not modify x. */
double mxcts_median(const double *x, size_t n);
/* The q-quantile (0 <= q <= 1) by linear interpolation between order
 * statistics (type 7); NaN for n == 0. */
double mxcts_quantile(const double *x, size_t n, double q);
/* A distribution-free confidence interval for the median of n values (the
 * sign test's): the order statistics x_(k) and x_(n+1-k), k the largest with
 * P(Binomial(n, 1/2) <= k - 1) <= (1 - conf) / 2, so that it covers the true
 * median with probability at least conf.  false, with NaN bounds, when n is
 * too small for that confidence (n < 6 at 0.95). */
bool mxcts_median_ci(const double *x, size_t n, double conf, double *lo, double *hi);

#endif /* MXCTS_COMMON_H */
