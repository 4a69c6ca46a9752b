/*
 * harness/oracle/oracle.h: the float64 oracle of mxcts's numerics suite.
 *
 * For every op of the reference registry (MXNet 1.9.1 names, parameters and
 * gradient conventions) the oracle gives
 *   - a description table of test cases: parameters as MXNet-style strings,
 *     input shapes, how to fill each input, which inputs get a gradient
 *     check, tolerances per dtype, and whether the op's gradient is the
 *     derivative of its forward (else the oracle states it directly, as for
 *     loss ops);
 *   - the forward in float64 with plain loops (no BLAS), with updated aux
 *     states and mutated inputs where the op has them;
 *   - the stated gradient of ops whose backward is not a derivative
 *     (SoftmaxOutput, the regression outputs, LeakyReLU selu);
 *   - central finite differences of sum(out * head_grad) in float64;
 *   - its own parser for the parameter strings, a seeded input generator,
 *     and the comparison routine (NaN and Inf pass only where the oracle
 *     expects the same non-finite value).
 * It shares no code with ref/ (docs/oracle.md says how it was checked).
 *
 * Typical use (the probe's numerics workload):
 *
 *   const struct mxcts_oracle_case *cs; int n;
 *   cs = mxcts_oracle_cases_for(listed_name, &n);        // aliases resolve
 *   struct mxcts_oracle_call call; struct mxcts_oracle_error err;
 *   mxcts_oracle_prepare_case(&call, &cs[k], &err);     // shapes, counts
 *   // fill inputs (mxcts_oracle_fill_values, rounded to the dtype used),
 *   // run the implementation, then:
 *   mxcts_oracle_forward(&call, in, aux, out, aux_out, mutated, &err);
 *   mxcts_oracle_expected_grad(&call, in, aux, head, cs[k].grad_inputs, grad, &err);
 *   mxcts_oracle_compare(got, want, n, tol.rtol, tol.atol, &cmp);
 *
 * Ownership and lifetime: nothing here allocates memory that outlives a
 * call, and there is no global or static mutable state, so every function
 * is thread-safe.  Arrays of values (double *) are always the caller's:
 * the oracle reads inputs and writes outputs of the sizes the prepared call
 * states (mxcts_oracle_shape_size of each shape), row-major.  The case
 * table and the strings in it are static constants that live for the whole
 * program.  A prepared call is a plain value (no pointers into the caller's
 * data; parameter strings are copied into it): copy it freely.
 *
 * Errors: functions that can fail return 0 or one of the negative
 * MXCTS_ORACLE_E* codes and, when `err` is not NULL, write a message that
 * names the op, the parameter or input, and the bad value.
 */
#ifndef MXCTS_ORACLE_H
#define MXCTS_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MXCTS_ORACLE_MAX_NDIM 8
#define MXCTS_ORACLE_MAX_INPUTS 8
#define MXCTS_ORACLE_MAX_OUTPUTS 4
#define MXCTS_ORACLE_MAX_AUX 2
#define MXCTS_ORACLE_MAX_FIELDS 12     /* parameters an op declares */
#define MXCTS_ORACLE_MAX_CASE_PARAMS 8 /* key/value pairs of one case */
#define MXCTS_ORACLE_STRING_MAX 64     /* STRING parameter values */

/* Status codes. */
#define MXCTS_ORACLE_EINVAL (-1)  /* bad parameter, shape or input count */
#define MXCTS_ORACLE_ENOTSUP (-2) /* valid for MXNet, not modelled (random, unsupported mode) */
#define MXCTS_ORACLE_ENOMEM (-3)
#define MXCTS_ORACLE_EUNKNOWN (-4) /* no such op */

/* dtypes, with MXNet's codes; the oracle computes in float64 whatever the
 * implementation uses, the dtype picks tolerances, the rounding of inputs
 * and the conversion of expected values (mxcts_oracle_round_to). */
#define MXCTS_ORACLE_FLOAT32 0
#define MXCTS_ORACLE_FLOAT64 1
#define MXCTS_ORACLE_FLOAT16 2
#define MXCTS_ORACLE_UINT8 3
#define MXCTS_ORACLE_INT32 4
#define MXCTS_ORACLE_INT8 5
#define MXCTS_ORACLE_NUM_DTYPES 6 /* the codes above are 0 .. NUM_DTYPES - 1 */
#define MXCTS_ORACLE_SAME_DTYPE (-1) /* an output of its inputs' dtype */

struct mxcts_oracle_error {
  char msg[256];
};

struct mxcts_oracle_shape {
  int ndim;
  int64_t dim[MXCTS_ORACLE_MAX_NDIM];
};

/* "float32", "float64", "float16", "uint8", "int32", "int8"; NULL for
 * any other code. */
const char *mxcts_oracle_dtype_name(int dtype);
/* The code of a dtype name above, or -1. */
int mxcts_oracle_dtype_code(const char *name);
/* v as an element of `dtype` holds it: float32 and float16 round to
 * nearest even (float16 overflows to Inf), float64 keeps it, an integer
 * type converts as C does, toward zero, and keeps the value modulo 2^bits
 * (two's complement), so that integer arithmetic that overflows wraps as
 * MXNet's kernels do; NaN and Inf into an integer type give 0 (undefined in
 * C: no case asks for it). */
double mxcts_oracle_round_to(int dtype, double v);
/* float16 bits of v (rounded as mxcts_oracle_round_to), and back. */
uint16_t mxcts_oracle_f16_bits(double v);
double mxcts_oracle_f16_value(uint16_t bits);

/* Number of elements (1 for a 0-d shape). */
int64_t mxcts_oracle_shape_size(const struct mxcts_oracle_shape *s);
bool mxcts_oracle_shape_equal(const struct mxcts_oracle_shape *a, const struct mxcts_oracle_shape *b);
/* "(2,3)" into buf (truncated to size); returns buf. */
const char *mxcts_oracle_shape_str(const struct mxcts_oracle_shape *s, char *buf, size_t size);

/* ------------------------------------------------------------ parameters */

/* How the oracle reads a parameter's text (its own parser, independent of
 * ref/src/op/params.c). */
enum mxcts_oracle_ptype {
  MXCTS_ORACLE_P_INT,        /* "3", " -2 " */
  MXCTS_ORACLE_P_FLOAT,      /* anything strtod reads entirely; finite */
  MXCTS_ORACLE_P_BOOL,       /* True False true false 1 0 */
  MXCTS_ORACLE_P_ENUM,       /* one of the field's choices, exactly */
  MXCTS_ORACLE_P_TUPLE,      /* "(2,2)" "[2, 2]" "2" "(2,)" "()" */
  MXCTS_ORACLE_P_OPT_INT,    /* "None" or INT */
  MXCTS_ORACLE_P_OPT_FLOAT,  /* "None" or FLOAT */
  MXCTS_ORACLE_P_OPT_TUPLE,  /* "None" or TUPLE */
  MXCTS_ORACLE_P_OPT_BOOL,   /* "None" or BOOL */
  MXCTS_ORACLE_P_STRING,     /* any text shorter than MXCTS_ORACLE_STRING_MAX */
};

/* One parsed parameter (defaults applied). */
struct mxcts_oracle_value {
  bool given; /* set by the caller (else the default) */
  bool none;  /* "None" for the OPT_* types */
  int64_t i;  /* INT, OPT_INT, BOOL and OPT_BOOL (0 or 1), ENUM (index of the choice) */
  double f;   /* FLOAT, OPT_FLOAT */
  int n;      /* TUPLE, OPT_TUPLE: entries in t */
  int64_t t[MXCTS_ORACLE_MAX_NDIM];
  char s[MXCTS_ORACLE_STRING_MAX]; /* the text as given (every type) */
};

/* The parsers; each returns 0 or MXCTS_ORACLE_EINVAL and leaves *out
 * unchanged on failure.  Surrounding blanks are allowed. */
int mxcts_oracle_parse_int(const char *text, int64_t *out);
int mxcts_oracle_parse_float(const char *text, double *out);
int mxcts_oracle_parse_bool(const char *text, bool *out);
/* Up to MXCTS_ORACLE_MAX_NDIM integers into v; *n gets their count. */
int mxcts_oracle_parse_tuple(const char *text, int *n, int64_t *v);
/* `text` as type `type` (choices: the NULL-terminated names of an ENUM). */
int mxcts_oracle_parse_value(int type, const char *const *choices, const char *text,
                             struct mxcts_oracle_value *out);

/* ------------------------------------------------------------ ops */

/* How an op's gradient is checked. */
enum mxcts_oracle_grad {
  MXCTS_ORACLE_GRAD_NONE = 0, /* no gradient (fillers, optimizer updates) */
  MXCTS_ORACLE_GRAD_FD,       /* the derivative of the forward: finite differences */
  MXCTS_ORACLE_GRAD_DIRECT,   /* not a derivative; mxcts_oracle_backward states it */
};

struct mxcts_oracle_opdef; /* an op of the oracle (internal) */

/* One op with parsed parameters and known shapes: made by
 * mxcts_oracle_prepare, read by the other functions. */
struct mxcts_oracle_call {
  const struct mxcts_oracle_opdef *def;
  const char *op; /* canonical name (static) */
  bool is_train;  /* training mode (BatchNorm batch statistics, Dropout) */
  int grad;       /* enum mxcts_oracle_grad for these parameters */
  int nin;        /* inputs (not counting aux states) */
  int nout;       /* visible outputs: what MXImperativeInvokeEx returns */
  int naux;       /* aux states (BatchNorm's moving_mean, moving_var) */
  int out_dtype;  /* the outputs' dtype (Cast, _zeros, _ones), or MXCTS_ORACLE_SAME_DTYPE */
  int nmutated;   /* inputs the op also writes (optimizer states) */
  int mutated[MXCTS_ORACLE_MAX_INPUTS]; /* their input indices */
  struct mxcts_oracle_shape in_shape[MXCTS_ORACLE_MAX_INPUTS];
  struct mxcts_oracle_shape out_shape[MXCTS_ORACLE_MAX_OUTPUTS];
  struct mxcts_oracle_shape aux_shape[MXCTS_ORACLE_MAX_AUX];
  struct mxcts_oracle_value pv[MXCTS_ORACLE_MAX_FIELDS]; /* in the op's parameter order */
};

/* Parse `nparams` key/value strings for `op` (a name or alias), check them
 * and the `nin` input shapes as MXNet would, and infer output and aux
 * shapes.  Unknown keys, missing required keys, repeated keys, bad values,
 * a wrong input count or inconsistent shapes fail with EINVAL; parameters
 * that MXNet accepts but the oracle cannot model (Dropout in training,
 * output_mean_var, channel-last layouts ...) with ENOTSUP; an unknown op
 * with EUNKNOWN.  `call` is fully written on success. */
int mxcts_oracle_prepare(struct mxcts_oracle_call *call, const char *op, int nparams,
                         const char *const *keys, const char *const *vals, int nin,
                         const struct mxcts_oracle_shape *in_shapes, bool is_train,
                         struct mxcts_oracle_error *err);

/* The forward.  in[i]: call->in_shape[i]; aux[j]: call->aux_shape[j] (NULL
 * when naux is 0); out[k]: call->out_shape[k].  aux_out (may be NULL, as may
 * its entries) gets the aux states after one training step of the op, i.e.
 * after its forward and backward: BatchNorm in training mode with batch
 * statistics moves moving_mean/moving_var by `momentum` (MXNet 1.9.1's CPU
 * kernel does this in the backward pass; read them after the backward),
 * otherwise a copy of aux.  mutated[k] (may be NULL) gets the new value of
 * input call->mutated[k] (sgd_mom_update's mom, adam_update's mean and
 * var).  Never fails for a prepared call (returns 0). */
int mxcts_oracle_forward(const struct mxcts_oracle_call *call, const double *const *in,
                         const double *const *aux, double *const *out, double *const *aux_out,
                         double *const *mutated, struct mxcts_oracle_error *err);

/* The gradient an op states when it is not the derivative of its forward
 * (call->grad == MXCTS_ORACLE_GRAD_DIRECT; else ENOTSUP).  head_grad[k] has
 * out_shape[k] (loss ops ignore it, as MXNet's do).  grad[i] (NULL entries
 * are skipped) gets the gradient of input i; labels get zeros. */
int mxcts_oracle_backward(const struct mxcts_oracle_call *call, const double *const *in,
                          const double *const *aux, const double *const *head_grad,
                          double *const *grad, struct mxcts_oracle_error *err);

/* Central finite differences in float64: for each input i with bit i of
 * `which`, grad[i][j] = d/d in[i][j] of sum_k sum_e out_k[e] * head_grad[k][e],
 * with a step of 2^-17 * max(1, |x|) (the case fillers keep inputs further
 * than that from every kink).  Works for any prepared call whose forward
 * is deterministic; allocates scratch memory (ENOMEM) and frees it. */
int mxcts_oracle_fd_grad(const struct mxcts_oracle_call *call, const double *const *in,
                         const double *const *aux, const double *const *head_grad,
                         unsigned which, double *const *grad, struct mxcts_oracle_error *err);

/* The expected gradient of the inputs in `which`: mxcts_oracle_backward for
 * GRAD_DIRECT ops, finite differences for GRAD_FD; ENOTSUP for GRAD_NONE. */
int mxcts_oracle_expected_grad(const struct mxcts_oracle_call *call, const double *const *in,
                               const double *const *aux, const double *const *head_grad,
                               unsigned which, double *const *grad,
                               struct mxcts_oracle_error *err);

/* The ops the oracle knows, by canonical name (i in [0, num_ops)). */
int mxcts_oracle_num_ops(void);
const char *mxcts_oracle_op_name(int i);
/* The canonical name of an op name or alias ("flip" -> "reverse"), or NULL. */
const char *mxcts_oracle_canonical(const char *name);

/* ------------------------------------------------------------ test cases */

struct mxcts_oracle_kv {
  const char *key, *val;
};

/* How to fill an input.  lo = hi = 0 selects the kind's default range. */
enum mxcts_oracle_fill_kind {
  MXCTS_ORACLE_FILL_UNIFORM = 0, /* uniform in [lo, hi); default [-1, 1) */
  MXCTS_ORACLE_FILL_AWAY,        /* |x| uniform in [lo, hi), random sign; default [0.1, 1):
                                    keeps inputs away from kinks at 0 (relu, leaky ...) */
  MXCTS_ORACLE_FILL_INT,         /* integers in [lo, hi) (class labels) */
  MXCTS_ORACLE_FILL_DISTINCT,    /* a shuffled set of values in [lo, hi), default [-1, 1),
                                    pairwise at least (hi - lo) / (2n) apart (max pooling) */
  MXCTS_ORACLE_FILL_CONST,       /* every value lo (ties, zeros) */
  MXCTS_ORACLE_FILL_SPECIAL,     /* x[i] = the (i mod 8)-th of NaN, +Inf, -Inf, -0.0, +d, -d,
                                    0.5, -1.5, d the dtype's denormal 2^-140 (float32) or
                                    2^-1070 (float64) */
};

struct mxcts_oracle_fill {
  int kind;
  double lo, hi;
};

struct mxcts_oracle_tol {
  double rtol, atol;
};

/* Input 0 of a case as the op sees it: its own array, or a view that
 * shares a larger array's memory at an offset (the probe builds the larger
 * array, with other values around the input's). */
enum mxcts_oracle_view {
  MXCTS_ORACLE_VIEW_NONE = 0,
  MXCTS_ORACLE_VIEW_SLICE, /* rows [1, 1 + d0) of a (d0 + 2, ...) array: MXNDArraySlice */
  MXCTS_ORACLE_VIEW_AT,    /* entry 1 of a (3, shape...) array: MXNDArrayAt */
};

/* One test case.  Shapes of outputs and aux states, and the input count
 * checks, come from mxcts_oracle_prepare_case. */
struct mxcts_oracle_case {
  const char *op;   /* canonical op name */
  const char *name; /* what the case covers; unique within the op */
  struct mxcts_oracle_kv params[MXCTS_ORACLE_MAX_CASE_PARAMS]; /* up to the first NULL key */
  int nin;
  struct mxcts_oracle_shape in_shapes[MXCTS_ORACLE_MAX_INPUTS];
  struct mxcts_oracle_fill in_fill[MXCTS_ORACLE_MAX_INPUTS];
  struct mxcts_oracle_fill aux_fill[MXCTS_ORACLE_MAX_AUX];
  struct mxcts_oracle_fill head_fill; /* head gradients */
  bool is_train; /* run (and record) in training mode */
  bool random;   /* the forward is random (Dropout in training): check it with
                    mxcts_oracle_dropout_check, not mxcts_oracle_forward */
  int grad;      /* enum mxcts_oracle_grad (equals the prepared call's) */
  unsigned grad_inputs; /* bit i: check the gradient of input i */
  /* Bit d: the case runs in dtype d (its inputs' dtype); 0: in float32 and
   * float64, as the run asks. */
  unsigned dtypes;
  bool exact;    /* the expected values are exact: tolerance 0 in every dtype */
  int view;      /* enum mxcts_oracle_view: how input 0 reaches the op */
  /* Tolerances by dtype (index MXCTS_ORACLE_FLOAT32 or _FLOAT64); entries
   * left 0 take the defaults of mxcts_oracle_case_tol. */
  struct mxcts_oracle_tol fwd_tol[2], bwd_tol[2];
};

/* The table: every case of every op, grouped by op in table order. */
int mxcts_oracle_num_cases(void);
const struct mxcts_oracle_case *mxcts_oracle_case_at(int i);
/* The cases of one op (name or alias): a pointer to the first of *count
 * consecutive cases, or NULL with *count = 0. */
const struct mxcts_oracle_case *mxcts_oracle_cases_for(const char *op, int *count);
/* Number of key/value pairs; keys/vals (room for MXCTS_ORACLE_MAX_CASE_PARAMS,
 * either may be NULL) get pointers to the static strings. */
int mxcts_oracle_case_params(const struct mxcts_oracle_case *c, const char **keys,
                             const char **vals);
/* mxcts_oracle_prepare with the case's parameters, shapes and mode. */
int mxcts_oracle_prepare_case(struct mxcts_oracle_call *call, const struct mxcts_oracle_case *c,
                              struct mxcts_oracle_error *err);
/* The case's tolerance for dtype for the forward or the backward, defaults
 * filled in:
 *   forward  float32 rtol 1e-4 atol 1e-5,  float64 rtol 1e-9 atol 1e-12
 *   backward float32 rtol 1e-3 atol 1e-4,  float64 rtol 1e-6 atol 1e-8
 * and 0 (exact) for an exact case, for float16 and for the integer types,
 * whose cases are built so that the op's result is exact in the dtype. */
struct mxcts_oracle_tol mxcts_oracle_case_tol(const struct mxcts_oracle_case *c, int dtype,
                                              bool backward);

/* ------------------------------------------------------------ generated cases */

/* Cases generated from the parameter spaces of ops (oracle_gen.c,
 * oracle_gen_nn.c, docs/oracle.md "Generated cases"): shapes of rank 1 to
 * 4, every axis, each parameter's values in products, edge inputs, special
 * values, dtypes beyond float32/float64, inputs that are views.  Point i of
 * [0, mxcts_oracle_num_gen_points()) is either a case or a combination the
 * op rejects.  A generated case keeps its strings in its own struct, which
 * out->c points into: fill it in place and do not copy it. */
enum mxcts_oracle_gen_kind {
  MXCTS_ORACLE_GEN_SPACE = 0, /* a parameter space: values checked forward and backward */
  MXCTS_ORACLE_GEN_SPECIAL,   /* NaN, Inf, -0.0 and denormal inputs; forward only */
  MXCTS_ORACLE_GEN_DTYPE,     /* float16 and the integer dtypes MXNet 1.9.1 handles; forward only */
  MXCTS_ORACLE_GEN_VIEW,      /* input 0 a view into a larger array (case.view) */
  MXCTS_ORACLE_GEN_NUM_KINDS
};
/* "spaces", "special", "dtypes", "views"; NULL for any other kind. */
const char *mxcts_oracle_gen_kind_name(int kind);

struct mxcts_oracle_gen_case {
  struct mxcts_oracle_case c;
  int kind; /* enum mxcts_oracle_gen_kind */
  char name[128];
  char keys[MXCTS_ORACLE_MAX_CASE_PARAMS][24];
  char vals[MXCTS_ORACLE_MAX_CASE_PARAMS][MXCTS_ORACLE_STRING_MAX];
};
int mxcts_oracle_num_gen_points(void);
/* Point i into *out: true when it is a case (mxcts_oracle_prepare_case
 * accepts it; out->c.grad is then the prepared call's), false when it is
 * not (out then holds nothing usable). */
int mxcts_oracle_gen_case_at(int i, struct mxcts_oracle_gen_case *out);
/* Point i into *out with what the oracle says of it: 0 for a case (as
 * mxcts_oracle_gen_case_at); the status of mxcts_oracle_prepare_case when
 * the op refuses the point, out->c then holding its parameters and shapes
 * (MXCTS_ORACLE_EINVAL: MXNet refuses the call too; MXCTS_ORACLE_ENOTSUP:
 * valid, not modelled); 1 when the space's product holds no such point (an
 * axis digit beyond the rank: nothing usable in out). */
int mxcts_oracle_gen_point_status(int i, struct mxcts_oracle_gen_case *out);
/* The points a run takes, ascending, each a case: with `full` every case;
 * else (quick depth) every case of the small spaces and, of each space too
 * big for the default run, a pairwise subset: every pair of values of two
 * of its dimensions that some case holds is held by a chosen case, chosen
 * greedily (the case covering the most pairs not yet covered, the lowest
 * point on ties), so the subset is the same on every run.  `points` has
 * room for mxcts_oracle_num_gen_points() entries; returns their count, or
 * MXCTS_ORACLE_ENOMEM. */
int mxcts_oracle_gen_select(bool full, int *points);

/* ------------------------------------------------------------ random inputs */

/* splitmix64 (mxcts_rng_next of common/common.h): the same seed gives the
 * same values on every platform. */
struct mxcts_oracle_rng {
  uint64_t state;
};
void mxcts_oracle_rng_seed(struct mxcts_oracle_rng *r, uint64_t seed);

/* Fill x[0..n) as `f` says, each value rounded to `dtype` (FLOAT32: to
 * float, so the implementation and the oracle see the same numbers). */
void mxcts_oracle_fill_values(const struct mxcts_oracle_fill *f, double *x, int64_t n, int dtype,
                              struct mxcts_oracle_rng *r);

/* ------------------------------------------------------------ comparison */

struct mxcts_oracle_cmp {
  int64_t n;      /* elements compared */
  int64_t nbad;   /* elements outside the tolerance, or of the wrong kind of non-finite */
  int64_t worst;  /* index of the worst element: the first bad one with a non-finite value,
                     else the largest |got - want| / (atol + rtol |want|); -1 when n is 0 */
  double got, want; /* the values there */
  double max_abs;   /* max |got - want| over finite pairs */
  double max_rel;   /* max |got - want| / |want| over finite pairs (Inf when want is 0
                       and got differs) */
  bool pass;
};

/* Element i passes when want[i] is finite, got[i] is finite and
 * |got[i] - want[i]| <= atol + rtol * |want[i]|; or when want[i] is not
 * finite (the op's MXNet semantics give NaN or an infinity there) and
 * got[i] is the same kind: NaN for NaN, the infinity of the same sign.
 * So NaN never passes where a finite value is expected, and a finite value
 * never where NaN or Inf is.  Fills *r (may be NULL); returns r->pass. */
bool mxcts_oracle_compare(const double *got, const double *want, int64_t n, double rtol,
                          double atol, struct mxcts_oracle_cmp *r);

/* ------------------------------------------------------------ Dropout in training */

struct mxcts_oracle_dropout_report {
  int64_t n, kept;   /* elements, and those not dropped (y != 0) */
  double expected;   /* n * (1 - p) */
  double z;          /* (kept - expected) / sqrt(n p (1 - p)) */
  int64_t bad;       /* first element that is neither 0 nor x / (1 - p); -1 if none */
  double got, want;  /* y and x / (1 - p) there */
  bool pass;
};

/* Training-mode Dropout cannot be compared with an oracle, only checked:
 * every y[i] is 0 or x[i] / (1 - p) (within rtol/atol; x must have no
 * zeros), and the kept count is within max_z standard deviations of
 * n (1 - p).  Fills *r (may be NULL); returns r->pass. */
bool mxcts_oracle_dropout_check(double p, const double *x, const double *y, int64_t n,
                                double rtol, double atol, double max_z,
                                struct mxcts_oracle_dropout_report *r);
/* The gradient that training-mode Dropout must give for the mask it drew:
 * grad[i] = head[i] / (1 - p) where y[i] != 0, else 0. */
void mxcts_oracle_dropout_grad(double p, const double *y, const double *head, double *grad,
                               int64_t n);

#ifdef __cplusplus
}
#endif

#endif /* MXCTS_ORACLE_H */
