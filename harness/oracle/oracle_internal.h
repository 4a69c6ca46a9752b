/*
 * harness/oracle/oracle_internal.h: what the files of harness/oracle share:
 * how an op of the oracle is defined, the op groups and the case table, and
 * the helpers of the prepare functions.
 */
#ifndef MXCTS_ORACLE_INTERNAL_H
#define MXCTS_ORACLE_INTERNAL_H

#include <stdint.h>

#include "oracle/oracle.h"

struct mxcts_oracle_field {
  const char *name;
  int type;                   /* enum mxcts_oracle_ptype */
  const char *def;            /* default text; NULL: required */
  const char *const *choices; /* ENUM: NULL-terminated */
};

struct mxcts_oracle_opdef {
  const char *name;
  const char *aliases[6]; /* NULL-terminated */
  const struct mxcts_oracle_field *fields;
  int nfields;
  /* Check call->pv, call->nin and call->in_shape; set nout, out_shape, naux,
   * aux_shape, nmutated, mutated and grad (the caller zeroed them). */
  int (*prepare)(struct mxcts_oracle_call *c, struct mxcts_oracle_error *err);
  /* aux, aux_out, mutated and their entries may be NULL. */
  void (*forward)(const struct mxcts_oracle_call *c, const double *const *in,
                  const double *const *aux, double *const *out, double *const *aux_out,
                  double *const *mutated);
  /* GRAD_DIRECT ops only; grad entries may be NULL. */
  void (*backward)(const struct mxcts_oracle_call *c, const double *const *in,
                   const double *const *aux, const double *const *head, double *const *grad);
};

/* NULL-terminated op groups, one per file. */
extern const struct mxcts_oracle_opdef *const mxcts__oracle_ops_elemwise[]; /* oracle_elemwise.c */
extern const struct mxcts_oracle_opdef *const mxcts__oracle_ops_tensor[];   /* oracle_tensor.c */
extern const struct mxcts_oracle_opdef *const mxcts__oracle_ops_nn[];       /* oracle_nn.c */
extern const struct mxcts_oracle_opdef *const mxcts__oracle_ops_conv[];     /* oracle_conv.c */
extern const struct mxcts_oracle_case mxcts__oracle_cases[];                /* oracle_cases.c */
extern const int mxcts__oracle_ncases;

/* Write "<op>: <message>" into err (may be NULL); returns code. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
int mxcts__oracle_fail(struct mxcts_oracle_error *err, int code, const char *op, const char *fmt,
                       ...);

/* Parameters of `c->def` from key/value text into c->pv (oracle_params.c). */
int mxcts__oracle_parse_params(struct mxcts_oracle_call *c, int nparams, const char *const *keys,
                               const char *const *vals, struct mxcts_oracle_error *err);

/* Checks for prepare functions; each fails with EINVAL naming the op. */
int mxcts__oracle_want_nin(const struct mxcts_oracle_call *c, int nin, struct mxcts_oracle_error *err);
int mxcts__oracle_want_same(const struct mxcts_oracle_call *c, int i, int j,
                            struct mxcts_oracle_error *err); /* in_shape[i] == in_shape[j] */
/* Normalise axis a of an ndim array (negative counts from the end). */
int mxcts__oracle_axis(const struct mxcts_oracle_call *c, const char *what, int64_t a, int ndim,
                       int *out, struct mxcts_oracle_error *err);
/* Row-major strides of s into st. */
void mxcts__oracle_strides(const struct mxcts_oracle_shape *s, int64_t *st);
/* Product of s->dim[from..to). */
int64_t mxcts__oracle_prod(const struct mxcts_oracle_shape *s, int from, int to);
/* float(v): MXNet keeps many parameters as float. */
double mxcts__oracle_f32(double v);

/* How the op files (oracle_elemwise.c, oracle_tensor.c, oracle_nn.c,
 * oracle_conv.c) write an op: PREP, FWD and BWD open functions of the
 * opdef's prepare, forward and backward types, whose arguments keep the
 * names below (FAIL and FWD_UNUSED use them); OP defines one opdef. */
#define PREP(fn) static int fn(struct mxcts_oracle_call *c, struct mxcts_oracle_error *err)
#define FWD(fn)                                                                          \
  static void fn(const struct mxcts_oracle_call *c, const double *const *in,            \
                 const double *const *aux, double *const *out, double *const *aux_out, \
                 double *const *mutated)
#define FWD_UNUSED ((void)c, (void)in, (void)aux, (void)out, (void)aux_out, (void)mutated)
#define BWD(fn)                                                               \
  static void fn(const struct mxcts_oracle_call *c, const double *const *in, \
                 const double *const *aux, const double *const *head, double *const *grad)
/* Fail a prepare function with `code` and a message naming the op. */
#define FAIL(code, ...) mxcts__oracle_fail(err, code, c->op, __VA_ARGS__)
#define NOF(a) ((int)(sizeof(a) / sizeof((a)[0])))
/* OP(var, "name", fields, nfields, prepare, forward, backward, aliases..., NULL) */
#define OP(var, NAME, FIELDS, NF, PREPARE, FORWARD, BACKWARD, ...)                     \
  static const struct mxcts_oracle_opdef var = {.name = NAME, .aliases = {__VA_ARGS__}, \
                                                .fields = FIELDS, .nfields = NF,        \
                                                .prepare = PREPARE, .forward = FORWARD, \
                                                .backward = BACKWARD}

/* ------------------------------------------------------------ generated cases */

/* A parameter space (oracle_gen.c, oracle_gen_nn.c): `ndims` dimensions of
 * radix[k] values each; point d (one digit per dimension) is made into a
 * case by `make`, which returns false for a combination that is no case
 * (prepare then also rejects what it lets through).  Quick depth takes a
 * pairwise subset of the points where `pairwise`, else every point. */
#define MXCTS__GEN_MAX_DIMS 10
struct mxcts__oracle_space {
  const char *op;
  int kind; /* enum mxcts_oracle_gen_kind */
  bool (*make)(const int *d, const char *op, struct mxcts_oracle_gen_case *g);
  int ndims;
  int radix[MXCTS__GEN_MAX_DIMS];
  bool pairwise;
};
extern const struct mxcts__oracle_space mxcts__oracle_spaces_nn[]; /* oracle_gen_nn.c */
extern const int mxcts__oracle_nspaces_nn;

/* Helpers of the make functions (oracle_gen.c). */
void mxcts__gen_param(struct mxcts_oracle_gen_case *g, const char *key, const char *val);
void mxcts__gen_int_param(struct mxcts_oracle_gen_case *g, const char *key, int64_t val);
/* "(v,)" "(v,v)" or "(v,v,v)" for n spatial axes. */
void mxcts__gen_tuple_param(struct mxcts_oracle_gen_case *g, const char *key, int n, int64_t v);
/* Input i of shape s filled as `fill`; nin grows to i + 1. */
void mxcts__gen_input(struct mxcts_oracle_gen_case *g, int i, const struct mxcts_oracle_shape *s,
                      struct mxcts_oracle_fill fill);
/* name = "<kind>:<what>:<shape of input 0>". */
void mxcts__gen_name(struct mxcts_oracle_gen_case *g, const char *what);

typedef struct mxcts_oracle_shape shape_t;

static inline int64_t size_of(const shape_t *s) { return mxcts_oracle_shape_size(s); }

#endif /* MXCTS_ORACLE_INTERNAL_H */
