/*
 * mxref/op.h: the operator registry.
 *
 * Ops are registered under MXNet's canonical names with MXNet's aliases
 * ("reverse", alias "flip").  Parameters arrive as string key/value pairs,
 * exactly as MXNet's C API and symbol JSON carry them ("axis" = "0",
 * "no_bias" = "True"), and are parsed the way MXNet parses them.
 *
 * Ownership: mxr_op pointers are static (valid for the life of the
 * process).  mxr_op_params_parse() returns a params object with one
 * reference; mxr_op_params_retain() adds one and mxr_op_params_free() drops
 * one (the last frees it).  A params object never changes after parsing, so
 * it may be shared between threads.  Strings read from it live as long as
 * it does.
 */
#ifndef MXREF_OP_H
#define MXREF_OP_H

#include <stddef.h>

#include "mxref/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mxr_op mxr_op;
typedef struct mxr_op_params mxr_op_params;

/* Look an op up by canonical name or alias.  MXR_ENOTFOUND ("unknown
 * operator 'foo'") if there is none. */
int mxr_op_find(const char *name, const mxr_op **out);

/* The canonical name ("reverse" for "flip"). */
const char *mxr_op_name(const mxr_op *op);

/* 1 when libmxref implements the op, 0 for a name MXNet 1.9.1 registers
 * that is listed only so that frontends find it: every use of such an op
 * (parsing its params, and so creating, invoking or loading it) fails
 * with MXR_ENOTIMPL, "operator X is not implemented by libmxref". */
int mxr_op_is_implemented(const mxr_op *op);

/* What frontends show of an op (MXSymbolGetAtomicSymbolInfo): its name,
 * its arguments, inputs first ("data", type "NDArray-or-Symbol"; a variadic
 * op has one list of type "NDArray-or-Symbol[]" and names its count
 * parameter in key_var_num_args, "" when it has none), then its parameters
 * ("num_hidden", "int, required"; "flatten", "boolean, optional,
 * default=1").  Names, types and key_var_num_args are MXNet 1.9.1's report
 * for the op (dmlc's type strings), where the op's parameter table agrees
 * with it; otherwise they are built from the table.  A not-implemented op
 * says so in its description.  Static: built once, valid for the life of
 * the process. */
struct mxr_op_info {
  const char *name; /* as MXNet 1.9.1 reports it: an alias's real op */
  const char *description;
  int num_args;
  const char *const *arg_names, *const *arg_types, *const *arg_descs;
  const char *key_var_num_args;
};
int mxr_op_info(const mxr_op *op, const struct mxr_op_info **out);

/* Every registered name, aliases included, sorted (MXListAllOpNames). */
size_t mxr_op_name_count(void);
const char *mxr_op_name_at(size_t i); /* NULL when out of range */

/* Parse parameters.  Unknown keys, unparsable values and missing required
 * parameters fail with MXR_EINVAL naming the op, the key and the value.
 * Keys starting with "__" (MXNet's graph attributes such as __shape__) are
 * kept but not parsed. */
int mxr_op_params_parse(const mxr_op *op, int num, const char *const *keys,
                        const char *const *vals, mxr_op_params **out);
mxr_op_params *mxr_op_params_retain(mxr_op_params *p);
void mxr_op_params_free(mxr_op_params *p);

/* The key/value pairs as given (for saving symbols); valid while p lives. */
int mxr_op_params_count(const mxr_op_params *p);
const char *mxr_op_params_key(const mxr_op_params *p, int i);
const char *mxr_op_params_value(const mxr_op_params *p, int i);

/* Counts for an op with these params. */
int mxr_op_num_inputs(const mxr_op *op, const mxr_op_params *p);
int mxr_op_num_outputs(const mxr_op *op, const mxr_op_params *p);        /* all */
int mxr_op_num_visible_outputs(const mxr_op *op, const mxr_op_params *p);
int mxr_op_num_aux(const mxr_op *op, const mxr_op_params *p);

/* Argument and aux-state names ("data", "weight", "moving_mean"); static. */
const char *mxr_op_input_name(const mxr_op *op, const mxr_op_params *p, int i);
const char *mxr_op_aux_name(const mxr_op *op, const mxr_op_params *p, int i);

#ifdef __cplusplus
}
#endif
#endif /* MXREF_OP_H */
