/*
 * mxref/executor.h: the symbolic graph executor (MXNet's GraphExecutor).
 *
 * Binding plans everything once: the gradient graph appended after the
 * forward nodes, shapes and dtypes, one array per value, and the op
 * segments: runs of nodes pushed to the engine as one op each ("bulking").
 * Forward and backward then only push prepared engine ops.
 *
 * Segments follow MXNet 1.9.1 (BulkOpSegs): variables do not count towards
 * a segment; a segment ends at a node that cannot be bulked, at the last
 * node of its region, or when it holds the cap.  Training graphs (bound with
 * gradients) are cut into a forward region capped by max_node_train_fwd and
 * a backward region capped by max_node_train_bwd, when bulk_train is on and
 * aggregate profiling is off at bind; inference graphs into one segment when
 * bulk_inference is on.  A segment is one engine op named "[op1,op2,...]";
 * a node outside segments is an engine op named after its op.
 *
 * Ownership: bind retains the arrays it is given (args, grads, aux); the
 * executor owns its internal arrays.  Output arrays are the executor's:
 * mxr_executor_outputs() returns them without a reference (retain to keep
 * one beyond the executor).  mxr_executor_free() returns at once; the
 * executor's memory is released through the engine after its pending ops.
 */
#ifndef MXREF_EXECUTOR_H
#define MXREF_EXECUTOR_H

#include <stdbool.h>

#include "mxref/engine.h"
#include "mxref/ndarray.h"
#include "mxref/symbol.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mxr_executor mxr_executor;

/* Bulking settings; mxr_exec_opts_from_config() gives the process's
 * (MXNET_EXEC_BULK_EXEC_* variables). */
struct mxr_exec_opts {
  mxr_engine *engine;           /* NULL: the default engine */
  bool bulk_train;              /* MXNET_EXEC_BULK_EXEC_TRAIN */
  bool bulk_inference;          /* MXNET_EXEC_BULK_EXEC_INFERENCE */
  int max_node_train_fwd;       /* MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD */
  int max_node_train_bwd;       /* MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD */
  bool aggregate_profiling;     /* as if aggregate profiling were on at bind */
  bool plain_segment_names;     /* "op1,op2" instead of "[op1,op2]" (cached ops) */
  bool enable_inplace;          /* MXNET_EXEC_ENABLE_INPLACE: honour in-place hints */
  int match_range;              /* MXNET_EXEC_MATCH_RANGE: a dead value's memory goes to a
                                   later value that needs at least 1/match_range of it;
                                   0: never reused */
  bool plain_head_grads;        /* feed head gradients straight to the backward
                                   nodes, without MXNet's executor's
                                   _identity_with_attr_like_rhs (cached ops) */
  bool cuda_graphs;             /* MXNET_ENABLE_CUDA_GRAPHS: replay bulked GPU
                                   segments as CUDA graphs */
  bool own_outputs;             /* the graph's outputs get arrays that share
                                   memory with no other value, so renewing
                                   one touches only its own slots (cached
                                   ops hand outputs out and renew them) */
};

int mxr_exec_opts_from_config(struct mxr_exec_opts *opts);

/* Gradient requests, with MXNet's numbering (OpReqType). */
enum mxr_grad_req { MXR_GRAD_NULL = 0, MXR_GRAD_WRITE = 1, MXR_GRAD_ADD = 3 };

/* Bind `sym` on `ctx`.  args[i] holds argument i (list_arguments order);
 * arg_grads[i] receives its gradient when grad_req[i] is WRITE or ADD (it
 * may be NULL when grad_req[i] is NULL; grad_req NULL means all NULL);
 * aux[i] holds aux state i.  Shapes and dtypes come from the arrays (a
 * variable's __shape__ is a hint the array overrides, as in MXNet); a
 * mismatch with what the graph infers fails with a message naming the
 * node.  Kernels use the arrays directly, so an argument or aux state must
 * have exactly its inferred shape and dtype (one whose 0 dimension
 * inference fills is refused) and a gradient array the dtype and number
 * of elements of its gradient; a refusal names the array and both shapes
 * and dtypes.  `opts` NULL means mxr_exec_opts_from_config(). */
int mxr_executor_bind(const mxr_symbol *sym, struct mxr_context ctx, int num_args,
                      mxr_ndarray *const *args, mxr_ndarray *const *arg_grads,
                      const int *grad_req, int num_aux, mxr_ndarray *const *aux,
                      const struct mxr_exec_opts *opts, mxr_executor **out);

/* Push the forward pass.  is_train selects training behaviour of ops
 * (Dropout, BatchNorm). */
int mxr_executor_forward(mxr_executor *exec, bool is_train);

/* Push the backward pass, its ops in training mode.  head_grads: one
 * array per output, or NULL (num 0) to use ones (what loss outputs expect). */
int mxr_executor_backward(mxr_executor *exec, int num_head_grads, mxr_ndarray *const *head_grads);
/* The same with is_train selecting the backward ops' mode, as MXNet's
 * MXExecutorBackwardEx: BatchNorm's gradient without training uses the
 * moving statistics. */
int mxr_executor_backward_ex(mxr_executor *exec, int num_head_grads, mxr_ndarray *const *head_grads,
                             bool is_train);

/* The outputs (valid while the executor lives; see Ownership). */
int mxr_executor_outputs(mxr_executor *exec, int *num, mxr_ndarray *const **outs);

void mxr_executor_free(mxr_executor *exec);

/* Plan facts, for tests and the harness. */
struct mxr_exec_info {
  int num_forward_nodes;  /* including variables */
  int num_nodes;          /* forward + backward, including variables */
  int forward_engine_ops; /* engine ops one forward pass pushes */
  int backward_engine_ops;/* engine ops one backward pass pushes (head-grad copy not counted) */
  int num_segments;
  int num_arrays;         /* arrays the plan allocated itself, after sharing */
  size_t bytes_allocated; /* bytes of the op outputs among them (not head gradients) */
};
int mxr_executor_info(const mxr_executor *exec, struct mxr_exec_info *out);

/* The engine ops of one pass, in push order: op counts per engine op (1 for
 * an unsegmented node) and names.  *num set to the count; arrays live while
 * the executor does.  pass 0 forward, 1 backward. */
int mxr_executor_pass_ops(const mxr_executor *exec, int pass, int *num, const int **sizes,
                          const char *const **names);

#ifdef __cplusplus
}
#endif
#endif /* MXREF_EXECUTOR_H */
