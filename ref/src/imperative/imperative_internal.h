/*
 * Internal: what invoke.c, autograd.c and cached_op.c share.
 */
#ifndef MXR_IMPERATIVE_INTERNAL_H
#define MXR_IMPERATIVE_INTERNAL_H

#include <stdbool.h>

#include "executor/executor_internal.h"
#include "mxref/imperative.h"
#include "op/op_internal.h"

/* Push one engine op running `op` on arrays: inputs, every output (hidden
 * ones too) with its request, aux states.  The op gets its own reference
 * to params and arrays until it has run. */
int mxr__imperative_push(const mxr_op *op, mxr_op_params *params, int nin,
                         mxr_ndarray *const *in, int nout, mxr_ndarray *const *out,
                         const int *req, int naux, mxr_ndarray *const *aux, bool is_train);

/* Create the outputs of `op` for these inputs (all of them, hidden too).
 * given (NULL, or nout entries that may be NULL or none arrays): outputs
 * the caller supplies, whose shapes and dtypes inference starts from. */
int mxr__imperative_make_outputs(const mxr_op *op, const mxr_op_params *params, int nin,
                                 mxr_ndarray *const *in, int naux, mxr_ndarray *const *aux,
                                 int nout, mxr_ndarray *const *given, mxr_ndarray **out);

/* Does any input carry autograd information (a marked variable or the
 * output of a recorded op)? */
bool mxr__autograd_any_tracked(int n, mxr_ndarray *const *arrays);

/* Record an op call: inputs, aux states, visible and hidden outputs. */
int mxr__autograd_record_op(const mxr_op *op, mxr_op_params *params, int nin,
                            mxr_ndarray *const *in, int naux, mxr_ndarray *const *aux,
                            int nvis, mxr_ndarray *const *vis, int nhidden,
                            mxr_ndarray *const *hidden);

/* A cached op's plan for one mode (cached_op.c). */
struct cop_state;

/* Record a cached op call. */
int mxr__autograd_record_cached(mxr_cached_op *cop, struct cop_state *st, int nin,
                                mxr_ndarray *const *in, int nout, mxr_ndarray *const *out);

/* Backward of a recorded cached op call: ograds[nout]; for each input i,
 * direct[i] (may be NULL) is a gradient array to write straight into with
 * direct_req[i]; otherwise *contrib[i] receives an array holding input i's
 * gradient (a new reference) or NULL when the input needs none. */
int mxr__cached_op_backward(mxr_cached_op *cop, struct cop_state *st, int nout,
                            mxr_ndarray *const *ograds, int nin, mxr_ndarray *const *direct,
                            const int *direct_req, const bool *needs, mxr_ndarray **contrib);

mxr_cached_op *mxr__cached_op_retain(mxr_cached_op *cop);

#endif /* MXR_IMPERATIVE_INTERNAL_H */
