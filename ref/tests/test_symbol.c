/* Symbols: variables, compose, canonical order, name lists, shape
 * inference, group, errors. */
#include <stdio.h>
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

START_TEST(test_long_chain_builds) {
  mxr_symbol *s = flip_chain(1000, NULL);
  ck_assert_int_eq(s->num_nodes, 1001);
  mxr_symbol_free(s);
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
  tcase_add_test(tc, test_long_chain_builds);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
