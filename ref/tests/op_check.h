/*
 * Test support for operators: run an op's CPU kernels on fresh random inputs
 * and compare them with a float64 reference written in the test.
 *
 *   oc_check_forward   outputs of the kernel vs the reference's outputs
 *   oc_check_backward  the op's backward kernel vs central finite
 *                      differences of the reference (or, for loss ops, vs a
 *                      reference gradient the test supplies), for write and
 *                      for add requests
 *
 * Inputs are drawn uniformly from [lo, hi) (default [-1, 1)) for every check
 * with the given seed, rounded to float32, and the same rounded values are
 * given to the reference, so only the kernel's arithmetic differs.  A
 * mismatch fails the test with the op, the tensor, the element index and
 * both values.  NaN never passes.
 */
#ifndef MXR_TESTS_OP_CHECK_H
#define MXR_TESTS_OP_CHECK_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>

#include "mxref/mxref.h"
#include "op/op_internal.h"

#define OC_MAX_TENSORS 8
#define OC_MAX_PARAMS 12

/* The float64 reference of an op's forward.  in[i] has in_shapes[i];
 * out[k] has out_shapes[k] (the visible outputs, shapes from the op's own
 * shape inference); aux as given (may be updated, as BatchNorm's moving
 * statistics are).  `user` is the case's user pointer. */
typedef void (*oc_forward_ref)(const void *user, const double *const *in,
                               const struct mxr_shape *in_shapes, int nin, double *const *out,
                               const struct mxr_shape *out_shapes, int nout, double *const *aux,
                               int naux);

/* A reference gradient, for ops whose backward is not the derivative of
 * their forward (loss ops).  Fills grad[i] (shape of input i) given ograd
 * of each visible output. */
typedef void (*oc_backward_ref)(const void *user, const double *const *in,
                                const struct mxr_shape *in_shapes, int nin,
                                const double *const *ograd, const struct mxr_shape *out_shapes,
                                int nout, double *const *grad);

/* The parameter lists of the two reference types, for writing references
 * as `static void x_ref(REF_ARGS) { REF_UNUSED; ... }`; REF_UNUSED marks
 * every forward parameter used. */
#define REF_ARGS                                                                          \
  const void *user, const double *const *in, const struct mxr_shape *in_shapes, int nin, \
      double *const *out, const struct mxr_shape *out_shapes, int nout, double *const *aux, int naux
#define REF_UNUSED \
  ((void)user, (void)in, (void)in_shapes, (void)nin, (void)out, (void)out_shapes, (void)nout, (void)aux, (void)naux)
#define BREF_ARGS                                                                          \
  const void *user, const double *const *in, const struct mxr_shape *in_shapes, int nin, \
      const double *const *ograd, const struct mxr_shape *out_shapes, int nout, double *const *grad

/* Fills input `i` (n elements) with values the op accepts (labels,
 * positive numbers ...); NULL: uniform [lo, hi). */
typedef void (*oc_fill_input)(const void *user, int i, double *x, int64_t n, uint64_t *rng);

struct oc_case {
  const char *op;
  int nparams;
  const char *keys[OC_MAX_PARAMS];
  const char *vals[OC_MAX_PARAMS];
  int nin;
  struct mxr_shape in_shapes[OC_MAX_TENSORS];
  int naux;
  struct mxr_shape aux_shapes[OC_MAX_TENSORS];
  int dtype;          /* MXR_FLOAT32 (default 0) or MXR_FLOAT64 */
  bool is_train;
  double lo, hi;      /* input range; both 0 means [-1, 1) */
  double rtol, atol;  /* forward tolerances; 0 means 1e-5 / 1e-6 */
  double grad_rtol, grad_atol; /* backward tolerances; 0 means 1e-3 / 1e-4 */
  unsigned no_grad_inputs; /* bit i: input i gets no gradient check (labels) */
  oc_forward_ref forward_ref;
  oc_backward_ref backward_ref; /* NULL: finite differences of forward_ref */
  oc_fill_input fill;
  const void *user;
};

void oc_check_forward(const struct oc_case *c, uint64_t seed);
void oc_check_backward(const struct oc_case *c, uint64_t seed);

/* Both, for `rounds` seeds derived from `seed`. */
void oc_check(const struct oc_case *c, uint64_t seed, int rounds);

/* Shape literals: OC_SHAPE(2, 3). */
#define OC_SHAPE(...)                                                            \
  ((struct mxr_shape){(int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
                      {__VA_ARGS__}})
#define OC_SCALAR ((struct mxr_shape){0, {0}})

/* A uniform double in [0, 1) from the test's generator. */
double oc_uniform(uint64_t *rng);

/* Row-major index helpers for references. */
static inline int64_t oc_size(const struct mxr_shape *s) { return mxr_shape_size(s); }

#endif /* MXR_TESTS_OP_CHECK_H */
