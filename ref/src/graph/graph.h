/*
 * Internal: the graph behind a symbol.
 *
 * A flat array of nodes in topological order (every node after its
 * inputs), edges stored in the consumer as (node index, output index)
 * entries, plus the list of head entries that are the symbol's outputs.
 * After every change the array is put into depth-first post-order from the
 * heads (mxr__graph_canonicalize), which is the order MXNet's indexed graph
 * uses: argument lists, JSON node order and the executor's node ids all
 * follow it.
 */
#ifndef MXR_GRAPH_GRAPH_H
#define MXR_GRAPH_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "mxref/symbol.h"
#include "op/op_internal.h"

struct mxr_entry {
  int node;  /* index into nodes; -1: not bound yet (atomic symbol) */
  int index; /* output of that node */
};

struct mxr_node {
  uint64_t uid;          /* identity, kept by copies; shared nodes merge on it */
  const mxr_op *op;      /* NULL: a variable */
  mxr_op_params *params; /* owned; NULL for variables */
  char *name;            /* owned */
  struct mxr_entry *inputs; /* op inputs, then aux-state inputs; owned */
  int nin;
  /* Other attributes (a variable's __shape__, __dtype__, ...), owned. */
  char **attr_keys, **attr_vals;
  int nattr;
};

struct mxr_symbol {
  struct mxr_node *nodes;
  int num_nodes, cap_nodes;
  struct mxr_entry *heads;
  int num_heads;
  /* Name lists, built on demand, dropped on change. */
  char **args, **outputs, **auxs, **inputs;
  int num_args, num_outputs, num_auxs, num_inputs;
  bool lists_valid;
};

/* Node helpers. */
static inline bool mxr__node_is_var(const struct mxr_node *n) { return n->op == NULL; }
int mxr__node_num_inputs(const struct mxr_node *n);  /* op inputs without aux */
int mxr__node_num_aux(const struct mxr_node *n);
int mxr__node_num_outputs(const struct mxr_node *n); /* all outputs */
int mxr__node_num_visible(const struct mxr_node *n);

/* Construction (symbol.c).  mxr__symbol_new returns an empty symbol. */
int mxr__symbol_new(mxr_symbol **out);
/* Append a node (takes ownership of name/params/inputs/attrs on success). */
int mxr__symbol_add_node(mxr_symbol *s, const struct mxr_node *n, int *index);
int mxr__symbol_set_heads(mxr_symbol *s, const struct mxr_entry *heads, int num);
/* A fresh node identity. */
uint64_t mxr__node_uid(void);
/* Deep-copy a node. */
int mxr__node_copy(const struct mxr_node *src, struct mxr_node *dst);
void mxr__node_clear(struct mxr_node *n);
/* Put nodes in DFS post-order from the heads, dropping unreachable ones;
 * fails (MXR_EINVAL) on a cycle or a dangling entry. */
int mxr__graph_canonicalize(mxr_symbol *s);
/* Add an attribute to a node (copied). */
int mxr__node_set_attr(struct mxr_node *n, const char *key, const char *val);
const char *mxr__node_attr(const struct mxr_node *n, const char *key);
/* Is variable node i used as an aux state by some op? */
bool mxr__symbol_var_is_aux(const mxr_symbol *s, int i);

/* Shape and type inference over a whole graph, per entry.  `shapes` has
 * one array per node (num outputs entries), initialised by the caller
 * (ndim -1 unknown; variables may be preset); likewise `dtypes` (-1
 * unknown).  Errors name the node. */
int mxr__graph_infer_shapes(const mxr_symbol *s, struct mxr_shape **shapes);
int mxr__graph_infer_types(const mxr_symbol *s, int **dtypes);
/* The same over op nodes [from, to) only. */
int mxr__graph_infer_shapes_range(const mxr_symbol *s, struct mxr_shape **shapes, int from, int to);
int mxr__graph_infer_types_range(const mxr_symbol *s, int **dtypes, int from, int to);

#endif /* MXR_GRAPH_GRAPH_H */
