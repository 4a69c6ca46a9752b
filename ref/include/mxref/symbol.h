/*
 * mxref/symbol.h: symbolic graphs (MXNet's Symbol).
 *
 * A symbol is a set of outputs of a graph of nodes; a node is a variable or
 * an op with its parameters.  Symbols are values: composing copies the
 * argument symbols' nodes into the composed one (shared nodes stay shared:
 * every node has an identity that copies keep).
 *
 * Ownership: every function returning a symbol returns a new one that the
 * caller frees with mxr_symbol_free().  String arrays returned by the list
 * functions belong to the symbol and stay valid until the symbol is freed
 * or changed (composed).  mxr_symbol_to_json() returns a malloc'd string the
 * caller frees with free().
 */
#ifndef MXREF_SYMBOL_H
#define MXREF_SYMBOL_H

#include "mxref/base.h"
#include "mxref/op.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mxr_symbol mxr_symbol;

/* A variable (an argument or aux state once composed). */
int mxr_symbol_variable(const char *name, mxr_symbol **out);

/* An op node whose inputs are not bound yet (MXSymbolCreateAtomicSymbol).
 * The params are copied. */
int mxr_symbol_atomic(const mxr_op *op, const mxr_op_params *params, mxr_symbol **out);

/* Bind an atomic symbol's inputs (MXSymbolCompose), in place.  A symbol
 * that is already a graph is composed by replacing its variables: keys[k]
 * names the variable args[k] replaces (keys NULL: the k-th argument), and
 * `name` is not used.  For an atomic symbol, `keys` NULL:
 * args are positional; otherwise keys[i] names the input (e.g. "data",
 * "weight").  Inputs left unbound become new variables named
 * "<name>_<input name>" (aux states too).  `name` names the op node; NULL
 * gives "<op lower-case><counter>" as MXNet's name manager does. */
int mxr_symbol_compose(mxr_symbol *sym, const char *name, int num_args, const char *const *keys,
                       mxr_symbol *const *args);

/* A copy of a symbol.  mxr_symbol_copy keeps the nodes' identities
 * (MXShallowCopySymbol): grouped or composed with the original, the nodes
 * they share stay one node.  mxr_symbol_deep_copy gives every node a new
 * identity (MXSymbolCopy, nnvm's Symbol::Copy): composed with the original,
 * each keeps its own nodes, so a graph can be stacked on a copy of itself
 * (Python's net(x=net)).  Composing a symbol with itself, or with anything
 * that reads it, fails: it would be its own input. */
int mxr_symbol_copy(const mxr_symbol *sym, mxr_symbol **out);
int mxr_symbol_deep_copy(const mxr_symbol *sym, mxr_symbol **out);

/* A symbol with the outputs of all the given symbols (MXSymbolCreateGroup). */
int mxr_symbol_group(int num, mxr_symbol *const *syms, mxr_symbol **out);

void mxr_symbol_free(mxr_symbol *sym);

/* Names, in MXNet's order: arguments (variables that are not aux states, in
 * depth-first order of first use), outputs ("<node>_output", or
 * "<node>_<i>" style names for several outputs), aux states. */
int mxr_symbol_list_arguments(const mxr_symbol *sym, int *num, const char *const **names);
int mxr_symbol_list_outputs(const mxr_symbol *sym, int *num, const char *const **names);
int mxr_symbol_list_auxiliary_states(const mxr_symbol *sym, int *num, const char *const **names);
/* Every variable, arguments and aux states as they appear in the graph
 * (nnvm's ListInputNames; a cached op's inputs). */
int mxr_symbol_list_inputs(const mxr_symbol *sym, int *num, const char *const **names);

/* Shape inference from known argument shapes (by name; others unknown).
 * Shapes may be partial: a 0 dimension is an unknown size (MXNet's legacy
 * shapes), given or in a variable's __shape__, and inference fills
 * dimensions forward and backward through the ops.  On success fills the
 * arrays (sized by the list_* counts; ndim -1 where still unknown, 0 in
 * dimensions still unknown) and *complete = 1 when every shape is known
 * whole.  A contradiction (a rank, or a size known on both sides, that
 * differs) fails with MXR_EINVAL naming the node.  A variable's __shape__
 * is read where no whole shape is given for it (replacing a partial one,
 * as MXNet does), as MXNet reads a TShape: "None", one integer, or a tuple
 * in () or [] of integers from -1 (unknown, as 0) to 2^31 - 1, an L suffix
 * and a trailing comma allowed, text after it ignored; "()" is an unknown
 * shape.  Other text fails naming the variable and the text. */
int mxr_symbol_infer_shape(const mxr_symbol *sym, int num_known, const char *const *names,
                           const struct mxr_shape *shapes, struct mxr_shape *arg_shapes,
                           struct mxr_shape *out_shapes, struct mxr_shape *aux_shapes,
                           int *complete);

/* Type inference, as shape inference: known dtypes by argument name (and
 * variables' __dtype__ attributes, read where none is given as an int the
 * way a C++ stream reads one: other text fails naming the variable); -1
 * where still unknown. */
int mxr_symbol_infer_type(const mxr_symbol *sym, int num_known, const char *const *names,
                          const int *known, int *arg_types, int *out_types, int *aux_types,
                          int *complete);

/* The node behind a symbol with one output: its name, or NULL for a
 * symbol with several outputs (valid while the symbol lives, unchanged). */
const char *mxr_symbol_name(const mxr_symbol *sym);

/* An attribute of that node: its own (__shape__, __lr_mult__, a
 * variable's user attributes), else for an op one of its parameters as
 * given.  NULL when there is none or the symbol has several outputs. */
const char *mxr_symbol_attr(const mxr_symbol *sym, const char *key);

/* Set an attribute on every output's node.  On an op node a key that is
 * not __dunder__ must be one of the op's parameters (it is parsed again
 * with the new value), as in MXNet. */
int mxr_symbol_set_attr(mxr_symbol *sym, const char *key, const char *val);

/* Attributes as 2 * *num strings, key then value: the head node's own
 * (recursive 0) or every node's, keys "<node>$<key>" (recursive 1), both
 * with an op's parameters.  One malloc'd block the caller frees with
 * free(). */
int mxr_symbol_list_attrs(const mxr_symbol *sym, int recursive, int *num, char ***kv);

/* New symbols made from parts of one: output `index` alone; every output
 * of every node, variables included, in graph order (MXNet's
 * get_internals); the inputs of the head nodes (a symbol with no outputs
 * when they have none, as for a variable). */
int mxr_symbol_output(const mxr_symbol *sym, int index, mxr_symbol **out);
int mxr_symbol_internals(const mxr_symbol *sym, mxr_symbol **out);
int mxr_symbol_children(const mxr_symbol *sym, mxr_symbol **out);

/* MXNet's symbol JSON (as 1.9.1 writes it; legacy variants are read too). */
int mxr_symbol_from_json(const char *json, mxr_symbol **out);
int mxr_symbol_to_json(const mxr_symbol *sym, char **out);

#ifdef __cplusplus
}
#endif
#endif /* MXREF_SYMBOL_H */
