/* Symbols: variables, compose, canonical order, name lists, shape
 * inference (whole and partial shapes), group, errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_tap.h"
#include "graph/graph.h"

static mxr_symbol *atomic(const char *opname, int n, const char *const *k, const char *const *v) {
  const mxr_op *op;
  ck_assert_int_eq(mxr_op_find(opname, &op), 0);
  mxr_op_params *p;
  ck_assert_msg(mxr_op_params_parse(op, n, k, v, &p) == 0, "%s", mxr_last_error());
  mxr_symbol *s;
  ck_assert_int_eq(mxr_symbol_atomic(op, p, &s), 0);
  mxr_op_params_free(p);
  return s;
}

/* flip(flip(...flip(X))) with n ops, named by the name manager or given. */
static mxr_symbol *flip_chain(int n, const char *prefix) {
  static const char *const k[] = {"axis"}, *const v[] = {"0"};
  mxr_symbol *x;
  ck_assert_int_eq(mxr_symbol_variable("X", &x), 0);
  for (int i = 0; i < n; i++) {
    mxr_symbol *f = atomic("flip", 1, k, v);
    char name[64];
    snprintf(name, sizeof name, "%s%d", prefix ? prefix : "", i);
    ck_assert_msg(mxr_symbol_compose(f, prefix ? name : NULL, 1, NULL, &x) == 0, "%s", mxr_last_error());
    mxr_symbol_free(x);
    x = f;
  }
  return x;
}

START_TEST(test_chain_structure_and_lists) {
  mxr_symbol *s = flip_chain(3, "f");
  ck_assert_int_eq(s->num_nodes, 4);
  ck_assert_ptr_null(s->nodes[0].op); /* X first: depth-first post-order */
  for (int i = 1; i < 4; i++) {
    ck_assert_str_eq(mxr_op_name(s->nodes[i].op), "reverse");
    ck_assert_int_eq(s->nodes[i].inputs[0].node, i - 1);
  }
  int n;
  const char *const *names;
  ck_assert_int_eq(mxr_symbol_list_arguments(s, &n, &names), 0);
  ck_assert_int_eq(n, 1);
  ck_assert_str_eq(names[0], "X");
  ck_assert_int_eq(mxr_symbol_list_outputs(s, &n, &names), 0);
  ck_assert_int_eq(n, 1);
  ck_assert_str_eq(names[0], "f2_output");
  ck_assert_int_eq(mxr_symbol_list_auxiliary_states(s, &n, &names), 0);
  ck_assert_int_eq(n, 0);
  mxr_symbol_free(s);
}
END_TEST

START_TEST(test_auto_names_count_per_op) {
  mxr_symbol *a = flip_chain(2, NULL);
  int n;
  const char *const *names;
  ck_assert_int_eq(mxr_symbol_list_outputs(a, &n, &names), 0);
  /* names are reverse<k>, k growing through the process */
  ck_assert_int_eq(strncmp(names[0], "reverse", 7), 0);
  ck_assert_int_eq(strcmp(a->nodes[1].name, a->nodes[2].name) != 0, 1);
  mxr_symbol_free(a);
}
END_TEST

START_TEST(test_unbound_inputs_become_variables) {
  static const char *const k[] = {"axis"}, *const v[] = {"0"};
  mxr_symbol *f = atomic("reverse", 1, k, v);
  ck_assert_int_eq(mxr_symbol_compose(f, "rev", 0, NULL, NULL), 0);
  int n;
  const char *const *names;
  ck_assert_int_eq(mxr_symbol_list_arguments(f, &n, &names), 0);
  ck_assert_int_eq(n, 1);
  ck_assert_str_eq(names[0], "rev_data");
  mxr_symbol_free(f);
}
END_TEST

START_TEST(test_compose_by_keyword_and_errors) {
  static const char *const k[] = {"axis"}, *const v[] = {"0"};
  mxr_symbol *x;
  ck_assert_int_eq(mxr_symbol_variable("X", &x), 0);
  mxr_symbol *f = atomic("reverse", 1, k, v);
  const char *bad[] = {"input"};
  ck_assert_int_eq(mxr_symbol_compose(f, "r", 1, bad, &x), MXR_EINVAL);
  ck_assert_str_eq(mxr_last_error(), "compose: reverse has no input named 'input'");
  mxr_symbol *two[2] = {x, x};
  ck_assert_int_eq(mxr_symbol_compose(f, "r", 2, NULL, two), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "takes 1 inputs, 2 were given"));
  const char *good[] = {"data"};
  ck_assert_int_eq(mxr_symbol_compose(f, "r", 1, good, &x), 0);
  ck_assert_int_eq(mxr_symbol_compose(f, "again", 1, good, &x), MXR_EINVAL); /* not atomic any more */
  mxr_symbol_free(f);
  mxr_symbol_free(x);
}
END_TEST

START_TEST(test_infer_shape_through_chain) {
  mxr_symbol *s = flip_chain(5, "f");
  const char *names[] = {"X"};
  struct mxr_shape known = {1, {10}}, args[1], outs[1], auxs[1];
  int complete = 0;
  ck_assert_int_eq(mxr_symbol_infer_shape(s, 1, names, &known, args, outs, auxs, &complete), 0);
  ck_assert_int_eq(complete, 1);
  ck_assert_int_eq(outs[0].ndim, 1);
  ck_assert_int_eq(outs[0].dim[0], 10);
  /* nothing known: not complete, no error */
  ck_assert_int_eq(mxr_symbol_infer_shape(s, 0, NULL, NULL, args, outs, auxs, &complete), 0);
  ck_assert_int_eq(complete, 0);
  const char *wrong[] = {"Y"};
  ck_assert_int_eq(mxr_symbol_infer_shape(s, 1, wrong, &known, args, outs, auxs, &complete), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "no argument named 'Y'"));
  mxr_symbol_free(s);
}
END_TEST

START_TEST(test_infer_shape_error_names_node) {
  static const char *const k[] = {"axis"}, *const v[] = {"3"};
  mxr_symbol *x;
  ck_assert_int_eq(mxr_symbol_variable("X", &x), 0);
  mxr_symbol *f = atomic("flip", 1, k, v);
  ck_assert_int_eq(mxr_symbol_compose(f, "badflip", 1, NULL, &x), 0);
  const char *names[] = {"X"};
  struct mxr_shape known = {2, {2, 3}}, args[1], outs[1], auxs[1];
  int complete;
  ck_assert_int_eq(mxr_symbol_infer_shape(f, 1, names, &known, args, outs, auxs, &complete), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "Error in operator badflip (reverse)"));
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "axis 3 is out of range"));
  mxr_symbol_free(f);
  mxr_symbol_free(x);
}
END_TEST

START_TEST(test_group_shares_nodes) {
  mxr_symbol *a = flip_chain(2, "a");
  mxr_symbol *b;
  ck_assert_int_eq(mxr_symbol_copy(a, &b), 0);
  mxr_symbol *both[2] = {a, b};
  mxr_symbol *g;
  ck_assert_int_eq(mxr_symbol_group(2, both, &g), 0);
  /* b is a copy of a: same node identities, so nothing is duplicated */
  ck_assert_int_eq(g->num_nodes, 3);
  ck_assert_int_eq(g->num_heads, 2);
  int n;
  const char *const *names;
  ck_assert_int_eq(mxr_symbol_list_outputs(g, &n, &names), 0);
  ck_assert_int_eq(n, 2);
  ck_assert_str_eq(names[0], "a1_output");
  mxr_symbol_free(a);
  mxr_symbol_free(b);
  mxr_symbol_free(g);
}
END_TEST

/* A symbol that is, or reads, the symbol being composed cannot be one of
 * its inputs: the graph would be a cycle (MXNet 1.9.1 builds it, and its
 * JSON then fails to save or to load).  Refused naming the symbol; the
 * symbol is left as it was. */
START_TEST(test_compose_with_itself_refused) {
  static const char *const k[] = {"axis"}, *const v[] = {"0"};
  mxr_symbol *a = atomic("flip", 1, k, v);
  ck_assert_int_eq(mxr_symbol_compose(a, "self", 1, NULL, &a), MXR_EINVAL);
  ck_assert_msg(strstr(mxr_last_error(), "compose: argument 0 reads 'self', the symbol being composed"),
                "%s", mxr_last_error());
  /* through another symbol: b = flip(a) while a is still atomic */
  mxr_symbol *b = atomic("flip", 1, k, v);
  ck_assert_int_eq(mxr_symbol_compose(b, "b", 1, NULL, &a), 0);
  const char *data[] = {"data"};
  ck_assert_int_eq(mxr_symbol_compose(a, "a", 1, data, &b), MXR_EINVAL);
  ck_assert_msg(strstr(mxr_last_error(), "compose: argument 'data' reads 'a', the symbol being composed"),
                "%s", mxr_last_error());
  /* a graph: its variable X replaced by the graph's own output */
  mxr_symbol *g = flip_chain(2, "g");
  const char *x_key[] = {"X"};
  ck_assert_int_eq(mxr_symbol_compose(g, NULL, 1, x_key, &g), MXR_EINVAL);
  ck_assert_msg(strstr(mxr_last_error(), "compose: argument 'X' reads 'g0', which reads the variable 'X' it replaces"),
                "%s", mxr_last_error());
  ck_assert_int_eq(g->num_nodes, 3);
  /* a refused compose changed nothing: a composes normally afterwards */
  mxr_symbol *x;
  ck_assert_int_eq(mxr_symbol_variable("X", &x), 0);
  ck_assert_int_eq(mxr_symbol_compose(a, "a", 1, NULL, &x), 0);
  char *json;
  ck_assert_int_eq(mxr_symbol_to_json(a, &json), 0);
  mxr_symbol *back;
  ck_assert_msg(mxr_symbol_from_json(json, &back) == 0, "%s", mxr_last_error());
  free(json);
  mxr_symbol *syms[] = {a, b, g, x, back};
  for (int i = 0; i < 5; i++) mxr_symbol_free(syms[i]);
}
END_TEST

/* A deep copy has nodes of its own: the original composed into it as its
 * X stacks the two (MXNet's net(x=net)), where a copy that keeps the
 * identities would read itself and is refused. */
START_TEST(test_stack_on_deep_copy) {
  mxr_symbol *s = flip_chain(1, "f"), *same, *deep;
  ck_assert_int_eq(mxr_symbol_copy(s, &same), 0);
  ck_assert_int_eq(mxr_symbol_deep_copy(s, &deep), 0);
  const char *x_key[] = {"X"};
  ck_assert_int_eq(mxr_symbol_compose(same, NULL, 1, x_key, &s), MXR_EINVAL);
  ck_assert_msg(mxr_symbol_compose(deep, NULL, 1, x_key, &s) == 0, "%s", mxr_last_error());
  ck_assert_int_eq(deep->num_nodes, 3); /* X, f0 (the original), f0 (the copy's) */
  ck_assert_ptr_null(deep->nodes[0].op);
  ck_assert_int_eq(deep->nodes[2].inputs[0].node, 1);
  ck_assert_uint_ne(deep->nodes[1].uid, deep->nodes[2].uid);
  int n;
  const char *const *names;
  ck_assert_int_eq(mxr_symbol_list_arguments(deep, &n, &names), 0);
  ck_assert_int_eq(n, 1);
  ck_assert_str_eq(names[0], "X");
  mxr_symbol_free(s);
  mxr_symbol_free(same);
  mxr_symbol_free(deep);
}
END_TEST

START_TEST(test_long_chain_builds) {
  mxr_symbol *s = flip_chain(1000, NULL);
  ck_assert_int_eq(s->num_nodes, 1001);
  mxr_symbol_free(s);
}
END_TEST

/* ------------------------------------------------ partial shape inference */

/* opname(args...) named `name`, with params k=v (n of them). */
static mxr_symbol *apply(const char *opname, const char *name, int n, const char *const *k,
                         const char *const *v, int nargs, mxr_symbol **args) {
  mxr_symbol *f = atomic(opname, n, k, v);
  ck_assert_msg(mxr_symbol_compose(f, name, nargs, NULL, args) == 0, "%s", mxr_last_error());
  return f;
}

static mxr_symbol *var(const char *name, const char *shape_attr) {
  mxr_symbol *x;
  ck_assert_int_eq(mxr_symbol_variable(name, &x), 0);
  if (shape_attr) ck_assert_int_eq(mxr_symbol_set_attr(x, "__shape__", shape_attr), 0);
  return x;
}

/* Shapes of every argument and output, after inference from the given ones. */
struct inferred {
  int nargs, complete, status;
  const char *const *names;
  struct mxr_shape args[16], outs[4], auxs[4];
};

static struct inferred infer(const mxr_symbol *s, int nknown, const char *const *names,
                             const struct mxr_shape *known) {
  struct inferred r;
  ck_assert_int_eq(mxr_symbol_list_arguments(s, &r.nargs, &r.names), 0);
  ck_assert_int_le(r.nargs, 16);
  r.status = mxr_symbol_infer_shape(s, nknown, names, known, r.args, r.outs, r.auxs, &r.complete);
  return r;
}

static const struct mxr_shape *arg_shape(const struct inferred *r, const char *name) {
  for (int i = 0; i < r->nargs; i++)
    if (strcmp(r->names[i], name) == 0) return &r->args[i];
  ck_abort_msg("no argument %s", name);
  return NULL;
}

static void assert_shape(const struct mxr_shape *s, int ndim, const int64_t *dims) {
  char buf[96];
  ck_assert_msg(s->ndim == ndim, "ndim %d, want %d (%s)", s->ndim, ndim,
                mxr_shape_str(s, buf, sizeof buf));
  for (int d = 0; d < ndim; d++)
    ck_assert_msg(s->dim[d] == dims[d], "dim %d of %s, want %lld", d, mxr_shape_str(s, buf, sizeof buf),
                  (long long)dims[d]);
}

#define ASSERT_SHAPE(s, ...) \
  assert_shape((s), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

/* relu(FC(data) + FC(prev)): the sum's shape comes from one side; the other
 * FullyConnected's weight stays unknown, and the whole is incomplete. */
START_TEST(test_partial_one_side_of_a_sum) {
  static const char *const k[] = {"num_hidden"}, *const v[] = {"128"};
  mxr_symbol *data = var("data", NULL), *prev = var("prev", NULL);
  mxr_symbol *a = apply("FullyConnected", "x2h", 1, k, v, 1, &data);
  mxr_symbol *b = apply("FullyConnected", "h2h", 1, k, v, 1, &prev);
  mxr_symbol *ab[2] = {a, b};
  mxr_symbol *sum = apply("elemwise_add", "sum", 0, NULL, NULL, 2, ab);
  const char *names[] = {"data"};
  struct mxr_shape known = {2, {10, 64}};
  struct inferred r = infer(sum, 1, names, &known);
  ck_assert_int_eq(r.status, 0);
  ck_assert_int_eq(r.complete, 0);
  ASSERT_SHAPE(&r.outs[0], 10, 128);
  ASSERT_SHAPE(arg_shape(&r, "x2h_weight"), 128, 64);
  ck_assert_int_eq(arg_shape(&r, "h2h_weight")->ndim, -1);
  ck_assert_int_eq(arg_shape(&r, "prev")->ndim, -1);
  mxr_symbol *syms[] = {data, prev, a, b, sum};
  for (int i = 0; i < 5; i++) mxr_symbol_free(syms[i]);
}
END_TEST

/* A __shape__ of (1,0,0,0) is partial: the Convolution's weight gets what
 * num_filter and kernel say, (64,0,7,7), through a cast in between. */
START_TEST(test_partial_conv_weight_from_partial_data) {
  static const char *const ck[] = {"kernel", "num_filter", "pad", "stride", "no_bias"},
                           *const cv[] = {"(7,7)", "64", "(3,3)", "(2,2)", "True"};
  static const char *const tk[] = {"dtype"}, *const tv[] = {"float16"};
  mxr_symbol *data = var("data", "(1, 0, 0, 0)"), *weight = var("weight", NULL);
  mxr_symbol *cd = apply("Cast", "cd", 1, tk, tv, 1, &data);
  mxr_symbol *cw = apply("Cast", "cw", 1, tk, tv, 1, &weight);
  mxr_symbol *in[2] = {cd, cw};
  mxr_symbol *conv = apply("Convolution", "conv", 5, ck, cv, 2, in);
  struct inferred r = infer(conv, 0, NULL, NULL);
  ck_assert_msg(r.status == 0, "%s", mxr_last_error());
  ck_assert_int_eq(r.complete, 0);
  ASSERT_SHAPE(arg_shape(&r, "data"), 1, 0, 0, 0);
  ASSERT_SHAPE(arg_shape(&r, "weight"), 64, 0, 7, 7);
  ASSERT_SHAPE(&r.outs[0], 1, 64, 0, 0);
  /* "[1, 0, 3]" (Python's list form) presets a partial shape too */
  mxr_symbol *d1 = var("d1", "[1, 0, 9]");
  static const char *const k1[] = {"kernel", "num_filter"}, *const v1[] = {"(3,)", "5"};
  mxr_symbol *c1 = apply("Convolution", "c1", 2, k1, v1, 1, &d1);
  r = infer(c1, 0, NULL, NULL);
  ck_assert_int_eq(r.status, 0);
  ASSERT_SHAPE(arg_shape(&r, "c1_weight"), 5, 0, 3);
  ASSERT_SHAPE(&r.outs[0], 1, 5, 7);
  mxr_symbol *syms[] = {data, weight, cd, cw, conv, d1, c1};
  for (int i = 0; i < 7; i++) mxr_symbol_free(syms[i]);
}
END_TEST

/* A known input size is completed from the other side: data given with one
 * 0 dimension, reshaped with 0 and -1, added to ones((2,75)). */
START_TEST(test_partial_reshape_filled_backward) {
  static const char *const rk[] = {"shape"}, *const rv[] = {"(0,-1)"};
  static const char *const ok[] = {"shape"}, *const ov[] = {"(2,75)"};
  mxr_symbol *data = var("data", NULL);
  mxr_symbol *rs = apply("Reshape", "rs", 1, rk, rv, 1, &data);
  mxr_symbol *ones = apply("_ones", "ones", 1, ok, ov, 0, NULL);
  mxr_symbol *two[2] = {rs, ones};
  mxr_symbol *sum = apply("elemwise_add", "sum", 0, NULL, NULL, 2, two);
  const char *names[] = {"data"};
  for (int hole = 0; hole < 4; hole++) {
    struct mxr_shape known = {4, {2, 3, 5, 5}};
    known.dim[hole] = 0;
    struct inferred r = infer(sum, 1, names, &known);
    ck_assert_msg(r.status == 0, "%s", mxr_last_error());
    ck_assert_int_eq(r.complete, 1);
    ASSERT_SHAPE(arg_shape(&r, "data"), 2, 3, 5, 5);
    ASSERT_SHAPE(&r.outs[0], 2, 75);
  }
  mxr_symbol *syms[] = {data, rs, ones, sum};
  for (int i = 0; i < 4; i++) mxr_symbol_free(syms[i]);
}
END_TEST

/* ones((2,-1)) + transpose(ones((3,-1))): each side lends the other its
 * known dimension, through the transpose both ways. */
START_TEST(test_partial_ones_completed_by_consumer) {
  static const char *const k[] = {"shape"}, *const v2[] = {"(2,-1)"}, *const v3[] = {"(3,-1)"};
  mxr_symbol *o1 = apply("_ones", "o1", 1, k, v2, 0, NULL);
  mxr_symbol *o2 = apply("_ones", "o2", 1, k, v3, 0, NULL);
  mxr_symbol *t = apply("transpose", "t", 0, NULL, NULL, 1, &o2);
  mxr_symbol *two[2] = {o1, t};
  mxr_symbol *sum = apply("elemwise_add", "sum", 0, NULL, NULL, 2, two);
  struct inferred r = infer(sum, 0, NULL, NULL);
  ck_assert_msg(r.status == 0, "%s", mxr_last_error());
  ck_assert_int_eq(r.complete, 1);
  ASSERT_SHAPE(&r.outs[0], 2, 3);
  struct inferred rt = infer(t, 0, NULL, NULL); /* alone, it stays partial */
  ck_assert_int_eq(rt.status, 0);
  ck_assert_int_eq(rt.complete, 0);
  ASSERT_SHAPE(&rt.outs[0], 0, 3);
  mxr_symbol *syms[] = {o1, o2, t, sum};
  for (int i = 0; i < 4; i++) mxr_symbol_free(syms[i]);
}
END_TEST

/* Partial shapes merge where they agree; two known sizes that differ fail
 * naming the node and both shapes. */
START_TEST(test_partial_merge_and_conflict) {
  mxr_symbol *a = var("a", NULL), *b = var("b", NULL);
  mxr_symbol *ab[2] = {a, b};
  mxr_symbol *sum = apply("elemwise_add", "sum", 0, NULL, NULL, 2, ab);
  const char *names[] = {"a", "b"};
  struct mxr_shape fit[2] = {{2, {2, 0}}, {2, {0, 4}}};
  struct inferred r = infer(sum, 2, names, fit);
  ck_assert_int_eq(r.status, 0);
  ck_assert_int_eq(r.complete, 1);
  ASSERT_SHAPE(arg_shape(&r, "a"), 2, 4);
  ASSERT_SHAPE(arg_shape(&r, "b"), 2, 4);
  struct mxr_shape clash[2] = {{2, {2, 0}}, {2, {3, 4}}};
  r = infer(sum, 2, names, clash);
  ck_assert_int_eq(r.status, MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "Error in operator sum"));
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "(3,4)"));
  struct mxr_shape rank[2] = {{2, {2, 0}}, {3, {2, 4, 1}}};
  ck_assert_int_eq(infer(sum, 2, names, rank).status, MXR_EINVAL);
  mxr_symbol *syms[] = {a, b, sum};
  for (int i = 0; i < 3; i++) mxr_symbol_free(syms[i]);
}
END_TEST

/* A variable's __shape__ is read as MXNet reads a TShape: None, one
 * integer, or a tuple in () or [] of integers (an L suffix and a trailing
 * comma allowed; text after the closing bracket ignored); -1 and 0 are
 * unknown sizes, () an unknown shape.  Anything else fails the inference
 * naming the variable and the text. */
static const struct {
  const char *text;
  int ndim; /* -1: unknown; -2: refused */
  int64_t dim[3];
} shape_texts[] = {
    {"(2,3)", 2, {2, 3}},      {"[2, 3]", 2, {2, 3}},      {"(2,3,)", 2, {2, 3}},
    {" ( 2 , 3 ) ", 2, {2, 3}}, {"5", 1, {5}},             {"(2L,3L)", 2, {2, 3}},
    {"(-1,3)", 2, {0, 3}},     {"(0,3)", 2, {0, 3}},       {"(+2,3)", 2, {2, 3}},
    {"(010,)", 1, {10}},       {"(2,3) and more", 2, {2, 3}}, {"None", -1, {0}},
    {"()", -1, {0}},           {"( )", -1, {0}},           {"(2147483647,)", 1, {2147483647}},
    {"banana", -2, {0}},       {"(1e11, 1e11)", -2, {0}},  {"(99999999999999999999,3)", -2, {0}},
    {"(2147483648,)", -2, {0}}, {"(-2,3)", -2, {0}},       {"(2,3", -2, {0}},
    {"(2,,3)", -2, {0}},       {"", -2, {0}},              {"(2 3)", -2, {0}},
    {"(2.5,3)", -2, {0}},      {"(0x10,)", -2, {0}},       {"(-,3)", -2, {0}},
    {"(,)", -2, {0}},          {"(2;3)", -2, {0}},         {"Nonesuch", -2, {0}},
    {"(1,2,3,4,5,6,7,8,9)", -2, {0}},
};

START_TEST(test_shape_attr_parsed_strictly) {
  const char *text = shape_texts[_i].text;
  mxr_symbol *x = var("x", text);
  static const char *const k[] = {"axis"}, *const v[] = {"0"};
  mxr_symbol *f = apply("flip", "f", 1, k, v, 1, &x);
  struct inferred r = infer(f, 0, NULL, NULL);
  if (shape_texts[_i].ndim == -2) {
    ck_assert_msg(r.status == MXR_EINVAL, "'%s' was accepted", text);
    char want[160];
    snprintf(want, sizeof want, "the __shape__ of variable 'x' is \"%s\"", text);
    ck_assert_msg(strstr(mxr_last_error(), want), "%s", mxr_last_error());
  } else {
    ck_assert_msg(r.status == 0, "'%s': %s", text, mxr_last_error());
    assert_shape(arg_shape(&r, "x"), shape_texts[_i].ndim, shape_texts[_i].dim);
  }
  mxr_symbol_free(f);
  mxr_symbol_free(x);
}
END_TEST

/* __dtype__ is an integer as C++ streams read one (a prefix; text after
 * it ignored, as MXNet); no integer, or one out of range, fails. */
START_TEST(test_dtype_attr_parsed_strictly) {
  static const struct {
    const char *text;
    int dtype; /* -2: refused */
  } cases[] = {{"1", MXR_FLOAT64}, {" 0", MXR_FLOAT32}, {"6 and more", MXR_INT64}, {"-1", -1},
               {"banana", -2},     {"", -2},           {"99999999999", -2},       {"+", -2}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    mxr_symbol *x = var("x", NULL);
    ck_assert_int_eq(mxr_symbol_set_attr(x, "__dtype__", cases[c].text), 0);
    int arg = 0, out = 0, aux = 0, complete;
    int st = mxr_symbol_infer_type(x, 0, NULL, NULL, &arg, &out, &aux, &complete);
    if (cases[c].dtype == -2) {
      ck_assert_msg(st == MXR_EINVAL, "'%s' was accepted", cases[c].text);
      char want[160];
      snprintf(want, sizeof want, "the __dtype__ of variable 'x' is \"%s\"", cases[c].text);
      ck_assert_msg(strstr(mxr_last_error(), want), "%s", mxr_last_error());
    } else {
      ck_assert_msg(st == 0, "'%s': %s", cases[c].text, mxr_last_error());
      ck_assert_int_eq(arg, cases[c].dtype);
    }
    mxr_symbol_free(x);
  }
}
END_TEST

/* Concat: one input's unknown size along the axis is what the output's
 * leaves; the other dims pass between all of them. */
START_TEST(test_partial_concat_fills_one_input) {
  static const char *const k[] = {"num_args", "dim"}, *const v[] = {"2", "0"};
  static const char *const ok[] = {"shape"}, *const ov[] = {"(7,3)"};
  mxr_symbol *a = var("a", NULL), *b = var("b", NULL);
  mxr_symbol *ab[2] = {a, b};
  mxr_symbol *cat = apply("Concat", "cat", 2, k, v, 2, ab);
  mxr_symbol *ones = apply("_ones", "ones", 1, ok, ov, 0, NULL);
  mxr_symbol *two[2] = {cat, ones};
  mxr_symbol *sum = apply("elemwise_add", "sum", 0, NULL, NULL, 2, two);
  const char *names[] = {"a", "b"};
  struct mxr_shape known[2] = {{2, {0, 0}}, {2, {4, 0}}};
  struct inferred r = infer(sum, 2, names, known);
  ck_assert_msg(r.status == 0, "%s", mxr_last_error());
  ck_assert_int_eq(r.complete, 1);
  ASSERT_SHAPE(arg_shape(&r, "a"), 3, 3);
  ASSERT_SHAPE(arg_shape(&r, "b"), 4, 3);
  struct mxr_shape wide[2] = {{2, {0, 0}}, {2, {8, 0}}}; /* more than the output holds */
  ck_assert_int_eq(infer(sum, 2, names, wide).status, MXR_EINVAL);
  mxr_symbol *syms[] = {a, b, cat, ones, sum};
  for (int i = 0; i < 5; i++) mxr_symbol_free(syms[i]);
}
END_TEST

int main(void) {
  Suite *s = suite_create("symbol");
  TCase *tc = tcase_create("symbol");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_chain_structure_and_lists);
  tcase_add_test(tc, test_auto_names_count_per_op);
  tcase_add_test(tc, test_unbound_inputs_become_variables);
  tcase_add_test(tc, test_compose_by_keyword_and_errors);
  tcase_add_test(tc, test_infer_shape_through_chain);
  tcase_add_test(tc, test_infer_shape_error_names_node);
  tcase_add_test(tc, test_group_shares_nodes);
  tcase_add_test(tc, test_compose_with_itself_refused);
  tcase_add_test(tc, test_stack_on_deep_copy);
  tcase_add_test(tc, test_long_chain_builds);
  tcase_add_test(tc, test_partial_one_side_of_a_sum);
  tcase_add_test(tc, test_partial_conv_weight_from_partial_data);
  tcase_add_test(tc, test_partial_reshape_filled_backward);
  tcase_add_test(tc, test_partial_ones_completed_by_consumer);
  tcase_add_test(tc, test_partial_merge_and_conflict);
  tcase_add_test(tc, test_partial_concat_fills_one_input);
  tcase_add_loop_test(tc, test_shape_attr_parsed_strictly, 0, (int)(sizeof shape_texts / sizeof shape_texts[0]));
  tcase_add_test(tc, test_dtype_attr_parsed_strictly);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
