/*
 * Generated cases of the layers (oracle_gen.c has the machinery):
 * Convolution and Pooling, whose full products are too big for the default
 * run (pairwise at quick depth), BatchNorm on every axis, Concat on every
 * axis with inputs of differing sizes, FullyConnected with and without
 * flatten, and Cast into the integer and float types.
 */
#include <stdio.h>
#include <string.h>

#include "oracle/oracle_internal.h"

#define FILL(kind, lo, hi) ((struct mxcts_oracle_fill){MXCTS_ORACLE_FILL_##kind, lo, hi})
#define SHAPE(...) \
  ((struct mxcts_oracle_shape){(int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}})

/* ------------------------------------------------------------ Convolution */

/* 1-D/2-D x batch 1/2 x groups 1/2/depthwise x kernel 1/3 x stride 1/2 x
 * dilate 1/2 x pad 0/1 x bias/no_bias x layout (default, or named).  Four
 * channels; 6 filters (4 depthwise).  A batch of 2 takes the kernels'
 * batched paths, which a batch of 1 does not; channel-last layouts are
 * left out: MXNet 1.9.1's CPU convolution refuses them. */
static bool gen_conv(const int *d, const char *op, struct mxcts_oracle_gen_case *g) {
  static const int64_t group_of[] = {1, 2, 4};
  const int nsp = 1 + d[0];
  const int64_t batch = 1 + d[1], groups = group_of[d[2]], nf = d[2] == 2 ? 4 : 6, k = d[3] ? 3 : 1;
  const int64_t stride = 1 + d[4], dilate = 1 + d[5], pad = d[6];
  const bool no_bias = d[7], named = d[8];
  const struct mxcts_oracle_shape x = nsp == 1 ? SHAPE(batch, 4, 7) : SHAPE(batch, 4, 4, 5);
  struct mxcts_oracle_shape w = {nsp + 2, {nf, 4 / groups, k, k}};
  g->c.op = op;
  mxcts__gen_input(g, 0, &x, FILL(UNIFORM, 0, 0));
  mxcts__gen_input(g, 1, &w, FILL(UNIFORM, 0, 0));
  if (!no_bias) mxcts__gen_input(g, 2, &SHAPE(nf), FILL(UNIFORM, 0, 0));
  g->c.grad_inputs = (1u << g->c.nin) - 1u;
  mxcts__gen_tuple_param(g, "kernel", nsp, k);
  mxcts__gen_tuple_param(g, "stride", nsp, stride);
  mxcts__gen_tuple_param(g, "dilate", nsp, dilate);
  mxcts__gen_tuple_param(g, "pad", nsp, pad);
  mxcts__gen_int_param(g, "num_filter", nf);
  if (groups > 1) mxcts__gen_int_param(g, "num_group", groups);
  if (no_bias) mxcts__gen_param(g, "no_bias", "True");
  if (named) mxcts__gen_param(g, "layout", nsp == 1 ? "NCW" : "NCHW");
  char what[64];
  snprintf(what, sizeof what, "k%lld:s%lld:d%lld:p%lld:g%s%s%s", (long long)k, (long long)stride,
           (long long)dilate, (long long)pad, d[2] == 2 ? "dw" : d[2] ? "2" : "1", no_bias ? ":no_bias" : "",
           named ? (nsp == 1 ? ":NCW" : ":NCHW") : "");
  mxcts__gen_name(g, what);
  return true;
}

/* ------------------------------------------------------------ Pooling */

/* 1-D/2-D x channel first/last x max/avg/sum/lp with p_value 1, 2, 3 x
 * kernel 2/3 x stride 1/2 x pad 0/1 x valid/full x global (one global case
 * per layout and type: it ignores the window's parameters).  Max pooling
 * reads all-negative distinct values (the padding must never win), lp
 * positive values (the p-th root stays smooth). */
static bool gen_pool(const int *d, const char *op, struct mxcts_oracle_gen_case *g) {
  static const char *const types[] = {"max", "avg", "sum", "lp", "lp", "lp"};
  static const char *const layouts[2][2] = {{"NCW", "NWC"}, {"NCHW", "NHWC"}};
  const int nsp = 1 + d[0], type = d[2];
  const bool last = d[1], full = d[6], global = d[7];
  const int64_t k = 2 + d[3], stride = 1 + d[4], pad = d[5];
  if (global && (d[3] || d[4] || d[5] || d[6])) return false;
  const struct mxcts_oracle_shape x = nsp == 1 ? (last ? SHAPE(2, 7, 3) : SHAPE(2, 3, 7))
                                               : (last ? SHAPE(2, 5, 4, 3) : SHAPE(2, 3, 5, 4));
  const struct mxcts_oracle_fill fill = type == 0 ? FILL(DISTINCT, -2, -1) : type >= 3 ? FILL(UNIFORM, 0.5, 2)
                                                                              : FILL(UNIFORM, -2, 2);
  g->c.op = op;
  mxcts__gen_input(g, 0, &x, fill);
  g->c.grad_inputs = 1u;
  mxcts__gen_param(g, "pool_type", types[type]);
  if (type >= 3) mxcts__gen_int_param(g, "p_value", type - 2);
  mxcts__gen_param(g, "layout", layouts[nsp - 1][last]);
  char what[64], kind[8];
  snprintf(kind, sizeof kind, type >= 3 ? "%s%d" : "%s", types[type], type - 2);
  if (global) {
    mxcts__gen_param(g, "global_pool", "True");
    snprintf(what, sizeof what, "%s:global:%s", kind, layouts[nsp - 1][last]);
  } else {
    mxcts__gen_tuple_param(g, "kernel", nsp, k);
    mxcts__gen_tuple_param(g, "stride", nsp, stride);
    mxcts__gen_tuple_param(g, "pad", nsp, pad);
    if (full) mxcts__gen_param(g, "pooling_convention", "full");
    snprintf(what, sizeof what, "%s:k%lld:s%lld:p%lld%s:%s", kind, (long long)k, (long long)stride, (long long)pad,
             full ? ":full" : "", layouts[nsp - 1][last]);
  }
  mxcts__gen_name(g, what);
  return true;
}

/* ------------------------------------------------------------ BatchNorm */

/* rank 2/3/4 x every axis -r..r-1 x fix_gamma x use_global_stats x
 * training/inference; gradients of data, gamma and beta, and the moving
 * statistics after the step. */
static bool gen_batchnorm(const int *d, const char *op, struct mxcts_oracle_gen_case *g) {
  static const struct mxcts_oracle_shape data[] = {{2, {4, 3}}, {3, {2, 3, 4}}, {4, {2, 3, 2, 4}}};
  const struct mxcts_oracle_shape *x = &data[d[0]];
  const int axis = d[1] - x->ndim;
  const bool fix_gamma = d[2], global = d[3], train = d[4];
  if (d[1] >= 2 * x->ndim) return false;
  const struct mxcts_oracle_shape ch = {1, {x->dim[axis < 0 ? axis + x->ndim : axis]}};
  g->c.op = op;
  mxcts__gen_input(g, 0, x, FILL(UNIFORM, 0, 0));
  mxcts__gen_input(g, 1, &ch, FILL(UNIFORM, 0.5, 1.5));
  mxcts__gen_input(g, 2, &ch, FILL(UNIFORM, 0, 0));
  g->c.aux_fill[0] = FILL(UNIFORM, 0, 0);
  g->c.aux_fill[1] = FILL(UNIFORM, 0.5, 2);
  g->c.grad_inputs = 7u;
  g->c.is_train = train;
  mxcts__gen_int_param(g, "axis", axis);
  mxcts__gen_param(g, "fix_gamma", fix_gamma ? "True" : "False");
  if (global) mxcts__gen_param(g, "use_global_stats", "True");
  char what[64];
  snprintf(what, sizeof what, "axis%d%s%s:%s", axis, fix_gamma ? ":fix_gamma" : "", global ? ":global_stats" : "",
           train ? "train" : "infer");
  mxcts__gen_name(g, what);
  return true;
}

/* ------------------------------------------------------------ Concat */

/* rank 1..4 x every axis -r..r-1 x 2/3 inputs; input i is i + 1 long along
 * the axis, so the parts differ in size. */
static bool gen_concat(const int *d, const char *op, struct mxcts_oracle_gen_case *g) {
  static const struct mxcts_oracle_shape base[] = {{1, {1}}, {2, {2, 3}}, {3, {2, 3, 2}}, {4, {2, 1, 3, 2}}};
  const struct mxcts_oracle_shape *b = &base[d[0]];
  const int axis = d[1] - b->ndim, nargs = 2 + d[2];
  if (d[1] >= 2 * b->ndim) return false;
  g->c.op = op;
  for (int i = 0; i < nargs; i++) {
    struct mxcts_oracle_shape s = *b;
    s.dim[axis < 0 ? axis + b->ndim : axis] = i + 1;
    mxcts__gen_input(g, i, &s, FILL(UNIFORM, 0, 0));
  }
  g->c.grad_inputs = (1u << nargs) - 1u;
  mxcts__gen_int_param(g, "num_args", nargs);
  mxcts__gen_int_param(g, "dim", axis);
  char what[32];
  snprintf(what, sizeof what, "dim%d:%d_inputs", axis, nargs);
  mxcts__gen_name(g, what);
  return true;
}

/* ------------------------------------------------------------ FullyConnected */

/* rank 2/3/4 x flatten x bias/no_bias x num_hidden 1/3: without flatten
 * every leading axis counts as rows. */
static bool gen_fc(const int *d, const char *op, struct mxcts_oracle_gen_case *g) {
  static const struct mxcts_oracle_shape data[] = {{2, {3, 4}}, {3, {2, 3, 4}}, {4, {2, 3, 2, 3}}};
  const struct mxcts_oracle_shape *x = &data[d[0]];
  const bool flatten = !d[1], no_bias = d[2];
  const int64_t nh = d[3] ? 3 : 1;
  int64_t k = x->dim[x->ndim - 1];
  if (flatten)
    for (int i = 1; i < x->ndim - 1; i++) k *= x->dim[i];
  g->c.op = op;
  mxcts__gen_input(g, 0, x, FILL(UNIFORM, 0, 0));
  mxcts__gen_input(g, 1, &SHAPE(nh, k), FILL(UNIFORM, 0, 0));
  if (!no_bias) mxcts__gen_input(g, 2, &SHAPE(nh), FILL(UNIFORM, 0, 0));
  g->c.grad_inputs = (1u << g->c.nin) - 1u;
  mxcts__gen_int_param(g, "num_hidden", nh);
  if (!flatten) mxcts__gen_param(g, "flatten", "False");
  if (no_bias) mxcts__gen_param(g, "no_bias", "True");
  char what[48];
  snprintf(what, sizeof what, "hidden%lld%s%s", (long long)nh, flatten ? "" : ":no_flatten", no_bias ? ":no_bias" : "");
  mxcts__gen_name(g, what);
  return true;
}

/* ------------------------------------------------------------ Cast */

/* float32/float64 (the run's dtypes) into int32, int8, uint8, float32 and
 * float64, with fractional values of both signs inside the target's range
 * (a conversion that rounds instead of truncating is off by one); forward
 * only, exact. */
static bool gen_cast(const int *d, const char *op, struct mxcts_oracle_gen_case *g) {
  static const struct {
    const char *dtype;
    double lo, hi;
  } to[] = {{"int32", -1e5, 1e5}, {"int8", -127.875, 127.875}, {"uint8", -0.875, 255.875},
            {"float32", -2, 2},   {"float64", -2, 2}};
  g->c.op = op;
  mxcts__gen_input(g, 0, &SHAPE(2, 3, 4), FILL(UNIFORM, to[d[0]].lo, to[d[0]].hi));
  g->c.exact = true;
  mxcts__gen_param(g, "dtype", to[d[0]].dtype);
  mxcts__gen_name(g, to[d[0]].dtype);
  return true;
}

/* ------------------------------------------------------------ the table */

#define SPACE(OP, MAKE, PAIRWISE, ...)                                                                     \
  {OP, MXCTS_ORACLE_GEN_SPACE, MAKE, (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), {__VA_ARGS__}, \
   PAIRWISE}

const struct mxcts__oracle_space mxcts__oracle_spaces_nn[] = {
    SPACE("Convolution", gen_conv, true, 2, 2, 3, 2, 2, 2, 2, 2, 2),
    SPACE("Pooling", gen_pool, true, 2, 2, 6, 2, 2, 2, 2, 2),
    SPACE("BatchNorm", gen_batchnorm, false, 3, 8, 2, 2, 2),
    SPACE("Concat", gen_concat, false, 4, 8, 2),
    SPACE("FullyConnected", gen_fc, false, 3, 2, 2, 2),
    SPACE("Cast", gen_cast, false, 5),
};
const int mxcts__oracle_nspaces_nn = (int)(sizeof mxcts__oracle_spaces_nn / sizeof mxcts__oracle_spaces_nn[0]);
