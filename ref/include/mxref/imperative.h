/*
 * mxref/imperative.h: running ops one call at a time, autograd, cached ops.
 *
 * Imperative calls push one engine op each on the library's default engine
 * (named after the op, profiled as IMPERATIVE); with an engine bulk size set
 * on the calling thread they are bulked into "ImperativeBulk" ops.
 *
 * Autograd (per thread, as MXNet's): while recording, every imperative call
 * with an input that needs a gradient is recorded; backward() walks the
 * record from the heads, running each op's backward op imperatively with the
 * engine bulk size set to the backward bulk size (MXNET_EXEC_BULK_EXEC_*),
 * and writes the gradients of the marked variables into their gradient
 * arrays.  Without retain_graph the record behind the heads is dropped.
 *
 * Cached ops (MXNet's CachedOp, what hybridized Gluon blocks run): a symbol
 * planned once per (input shapes, recording) and run as op segments of
 * forward_bulk_size / backward_bulk_size nodes, named "op1,op2,...".  Under
 * autograd a cached op call is recorded as one node whose backward runs the
 * plan's backward pass.
 *
 * Ownership: arrays created for outputs belong to the caller (one
 * reference each).  mark_variables retains the gradient arrays.  A cached
 * op call returns its output arrays with a new reference each; an output
 * that the caller still holds from an earlier call is never written again
 * (that call's outputs are replaced by new arrays first), while outputs the
 * caller has freed are reused.
 */
#ifndef MXREF_IMPERATIVE_H
#define MXREF_IMPERATIVE_H

#include "mxref/ndarray.h"
#include "mxref/op.h"
#include "mxref/symbol.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Run `op` on `inputs` (op inputs then aux states).  If *num_outputs is 0
 * the visible outputs are created and returned in outputs[] (room for
 * mxr_op_num_visible_outputs entries) with *num_outputs set; otherwise
 * *num_outputs must equal that count and outputs[] are written. */
int mxr_imperative_invoke(const mxr_op *op, const mxr_op_params *params, int num_inputs,
                          mxr_ndarray *const *inputs, int *num_outputs, mxr_ndarray **outputs);

/* Seed the random ops (Dropout, ...) of imperative calls and executors
 * (MXRandomSeed): imperative calls made after it draw a reproducible
 * sequence; an executor's nodes mix the seed in at every run. */
int mxr_random_seed(int seed);

/* Autograd state of the calling thread; *prev (may be NULL) gets the old value. */
int mxr_autograd_set_recording(int on, int *prev);
int mxr_autograd_set_training(int on, int *prev);
int mxr_autograd_is_recording(void);
int mxr_autograd_is_training(void);

/* Mark arrays as variables whose gradients backward() computes into
 * grads[i] with grad_reqs[i] (0 null, 1 write, 3 add). */
int mxr_autograd_mark_variables(int num, mxr_ndarray *const *vars, const int *grad_reqs,
                                mxr_ndarray *const *grads);

/* A marked variable's gradient array (a new reference), or NULL when the
 * array is not a marked variable. */
mxr_ndarray *mxr_autograd_get_grad(mxr_ndarray *arr);

/* MXNet's fresh_out_grad: set when a backward() computes a marked
 * variable's gradient; 0 for arrays that are not marked.  Setting it on an
 * array that is not marked fails (MXR_EINVAL). */
int mxr_autograd_fresh_grad(mxr_ndarray *arr);
int mxr_autograd_set_fresh_grad(mxr_ndarray *arr, int fresh);

/* Gradients of the heads with respect to the marked variables.
 * head_grads NULL (or a NULL entry) means ones. */
int mxr_autograd_backward(int num_heads, mxr_ndarray *const *heads,
                          mxr_ndarray *const *head_grads, int retain_graph, int is_train);

typedef struct mxr_cached_op mxr_cached_op;

/* Flags as MXCreateCachedOpEx takes them: static_alloc, static_shape,
 * forward_bulk_size, backward_bulk_size (defaults: the ..._MAX_NODE_TRAIN_FWD
 * and _BWD values), inline_limit, data_indices, param_indices (accepted). */
int mxr_cached_op_create(const mxr_symbol *sym, int num_flags, const char *const *keys,
                         const char *const *vals, mxr_cached_op **out);

/* Inputs are the symbol's variables in its order (arguments and aux states
 * as they appear).  Outputs as for mxr_imperative_invoke (*num_outputs 0:
 * returned with a reference each). */
int mxr_cached_op_invoke(mxr_cached_op *cop, int num_inputs, mxr_ndarray *const *inputs,
                         int *num_outputs, mxr_ndarray **outputs);

void mxr_cached_op_free(mxr_cached_op *cop);

#ifdef __cplusplus
}
#endif
#endif /* MXREF_IMPERATIVE_H */
