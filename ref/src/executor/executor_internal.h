/*
 * Internal: the executor's plan.
 *
 * bind (executor.c) = gradient graph (gradient.c) + shapes and dtypes + one
 * array per value + per-node records + segments (segments.c).  forward and
 * backward walk the node range of their pass and push each segment, or each
 * node outside segments, as one engine op whose parameters were prepared at
 * bind, so the run loop neither allocates nor looks anything up.
 */
#ifndef MXR_EXECUTOR_INTERNAL_H
#define MXR_EXECUTOR_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "cuda/graph.h"
#include "graph/graph.h"
#include "mxref/executor.h"
#include "op/op_internal.h"

/* The forward graph with the gradient graph appended. */
struct full_graph {
  mxr_symbol *g;          /* nodes [0, num_fwd) are the forward graph; heads = forward heads */
  int num_fwd;
  int num_args, num_aux;
  int *arg_nodes;         /* variable node of each argument (list_arguments order) */
  int *aux_nodes;         /* variable node of each aux state */
  int *head_grad_nodes;   /* variable node of each head's gradient; -1 without gradients */
  struct mxr_entry *arg_grads; /* gradient value of each argument; node -1: none requested */
  /* A gradient has the shape and dtype of what it is the gradient of:
   * mirror_of[k] gives, for gradient value grads[k], the forward value.
   * Backward ops cannot always infer that themselves (Flatten's gradient is
   * a _backward_copy that only knows the flattened shape). */
  struct mxr_entry *mirror_grad, *mirror_of;
  int num_mirrors, cap_mirrors;
};

/* Build the full graph for gradients requested by grad_req (per argument);
 * all-NULL requests give the forward graph alone. */
int mxr__gradient_graph(const mxr_symbol *fwd, const int *grad_req, bool head_identity,
                        struct full_graph *out);
void mxr__full_graph_free(struct full_graph *fg);

/* One op node, ready to run. */
struct exec_node {
  const mxr_op *op;
  const char *name;       /* the graph node's name, for error messages */
  const void *params;     /* the op's parsed params struct */
  struct mxr_tensor *in, *out, *aux; /* point into the executor's tensor pool */
  int nin, nout, naux;
  int *req;               /* per output */
  int *val;               /* value index of each input, aux, then output slot */
  mxr_var **reads, **writes; /* deduplicated, reads minus writes */
  int nreads, nwrites;
  void *workspace;       /* the executor's scratch when workspace_size > 0 */
  size_t workspace_size;
  uint64_t seed;          /* from the node's identity */
  uint64_t runs;          /* counts runs: varies the random seed per run */
  uint64_t repointed;     /* the arrays_epoch at which its arrays last changed */
  int segment;            /* index of the segment holding it, or -1 */
};

/* What an engine op of the executor runs: a range of nodes. */
struct exec_call {
  struct mxr_executor *exec;
  int first, end;         /* op nodes in [first, end) */
  bool is_train;
  bool graph_safe;        /* a bulked segment a CUDA graph may replay */
  struct mxr_cuda_graph graph; /* its graph state (MXNET_ENABLE_CUDA_GRAPHS) */
};

/* A segment: nodes [start, end) of the full graph pushed as one engine op. */
struct exec_segment {
  int start, end;
  char *name;             /* "[op1,op2,...]" */
  mxr_var **reads, **writes;
  int nreads, nwrites;
  int num_ops;
  uint64_t remerged;      /* the arrays_epoch at which its var sets were last merged */
  struct exec_call call[2]; /* [is_train] */
};

/* A node slot (input, aux state, then output, as exec_node.val counts them)
 * that a value fills. */
struct value_use {
  int node, slot;
};

struct mxr_executor {
  mxr_engine *eng;
  struct mxr_context ctx;
  struct mxr_exec_opts opts;
  struct full_graph fg;
  int num_nodes;
  struct exec_node *nodes;       /* per graph node (variables: op NULL) */
  struct exec_call *node_calls;  /* per graph node, [2 * i + is_train] */
  struct exec_segment **seg_at;  /* per graph node: the segment starting there, or NULL */
  struct exec_segment *segments;
  int num_segments;
  /* one array per value: values[row[i] + k] is output k of node i */
  int *row;
  mxr_ndarray **values;
  bool *owned;                   /* values the executor created */
  int num_values;
  /* The slots value v fills: uses[use_start[v] .. use_start[v + 1]). */
  int *use_start;
  struct value_use *uses;
  int num_arrays;                /* arrays the executor created (after sharing) */
  size_t bytes_allocated;        /* bytes of the op outputs among them (head
                                    gradients not counted): MXNet's
                                    storage_allocated_bytes */
  struct mxr_tensor *tensors;    /* pool the exec_nodes point into */
  mxr_ndarray **outputs;
  int num_outputs;
  mxr_ndarray **head_grads;      /* arrays of the head-gradient variables */
  /* The CPU kernels' scratch, one for all nodes (the largest any needs):
   * every node that uses it writes its var, so they take turns. */
  mxr_ndarray *scratch;
  int num_heads;
  bool has_backward;
  /* Bumped whenever an array is rebound: CUDA graphs captured before it
   * hold the old addresses and are recaptured (cuda/graph.h). */
  uint64_t arrays_epoch;
  /* pass plans for mxr_executor_pass_ops */
  int *pass_sizes[2];
  const char **pass_names[2];
  int pass_len[2];
};

/* Arrays a cached op binds anew on each call (cached_op.c). */
enum exec_slot {
  EXEC_ARG,       /* argument i */
  EXEC_ARG_GRAD,  /* gradient of argument i (with its request) */
  EXEC_HEAD_GRAD, /* gradient given for output i */
  EXEC_AUX,       /* aux state i */
};

/* Make `arr` the array of a slot.  Free when it already is; otherwise waits
 * until the executor's pushed ops are done, then repoints every node.  The
 * array must have the slot's shape and dtype. */
int mxr__executor_bind_array(struct mxr_executor *e, enum exec_slot slot, int i, mxr_ndarray *arr,
                             int grad_req);
/* Give every output array that someone besides the executor still holds
 * (a caller of an earlier call) a new array in its place, so the next
 * forward does not write over what that holder reads.  Waits for the
 * executor's pushed ops first when there is one to renew; free otherwise.
 * Outputs that are bound arrays (an argument passed through) stay. */
int mxr__executor_renew_held_outputs(struct mxr_executor *e);
/* Push the backward pass with the head gradients as bound (no copies). */
int mxr__executor_backward_bound(struct mxr_executor *e);

/* Cut the full graph into segments per the bulking rules (segments.c). */
int mxr__exec_make_segments(struct mxr_executor *exec);
/* Run nodes [first, end) (the body of every executor engine op). */
int mxr__exec_run_nodes(const struct mxr_run_ctx *rctx, void *call);
/* Merge the var sets of nodes [first, end) into reads/writes (malloc'd). */
int mxr__exec_merge_vars(const struct mxr_executor *exec, int first, int end, mxr_var ***reads,
                         int *nreads, mxr_var ***writes, int *nwrites);

#endif /* MXR_EXECUTOR_INTERNAL_H */
