/* Symbol JSON: MXNet 1.9.1's exact text, round trips, sample files in
 * ref/tests/data/symbol_json/, the legacy upgrades, and every kind of bad
 * input failing with a message that names the node and the problem.
 *
 * The sample files' text is what MXNet 1.9.1 writes (dmlc::JSONWriter's
 * layout); a few tests need ops other engineers are adding
 * (FullyConnected, Activation, SoftmaxOutput, BatchNorm, argmax) and say so
 * when one is missing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_tap.h"
#include "graph/graph.h"

/* ------------------------------------------------------------ helpers */

/* Test JSON is written with ' for " to keep the C strings readable. */
static char *q(const char *text) {
  char *s = strdup(text);
  ck_assert_ptr_nonnull(s);
  for (char *p = s; *p; p++)
    if (*p == '\'') *p = '"';
  return s;
}

static bool file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* A file under ref/tests/data/symbol_json: $srcdir (set by automake), else
 * the source tree seen from _build (".."), else the current directory. */
static char *read_data(const char *name) {
  const char *env = getenv("srcdir");
  const char *roots[] = {env ? env : "..", "..", ".", "../.."};
  char path[1024];
  bool found = false;
  for (size_t i = 0; i < sizeof roots / sizeof roots[0] && !found; i++) {
    snprintf(path, sizeof path, "%s/ref/tests/data/symbol_json/%s", roots[i], name);
    found = file_exists(path);
  }
  ck_assert_msg(found, "data file %s not found (set srcdir to the source tree)", name);
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)size + 1);
  ck_assert_ptr_nonnull(text);
  ck_assert_int_eq((long)fread(text, 1, (size_t)size, f), size);
  fclose(f);
  text[size] = '\0';
  /* MXNet writes no trailing newline; the files end with one. */
  while (size > 0 && (text[size - 1] == '\n' || text[size - 1] == '\r')) text[--size] = '\0';
  return text;
}

static mxr_symbol *load_ok(const char *text) {
  mxr_symbol *s = NULL;
  int st = mxr_symbol_from_json(text, &s);
  ck_assert_msg(st == 0, "load failed (%d): %s", st, mxr_last_error());
  ck_assert_ptr_nonnull(s);
  return s;
}

static char *save_ok(const mxr_symbol *s) {
  char *text = NULL;
  int st = mxr_symbol_to_json(s, &text);
  ck_assert_msg(st == 0, "save failed (%d): %s", st, mxr_last_error());
  ck_assert_ptr_nonnull(text);
  return text;
}

static void expect_fail(const char *text, int status, const char *fragment) {
  mxr_symbol *s = NULL;
  int st = mxr_symbol_from_json(text, &s);
  ck_assert_msg(st == status, "expected status %d, got %d (%s) for:\n%s", status, st,
                st ? mxr_last_error() : "loaded", text);
  ck_assert_ptr_null(s);
  ck_assert_msg(strstr(mxr_last_error(), fragment) != NULL, "message '%s' lacks '%s'",
                mxr_last_error(), fragment);
}

/* Ops that other files are adding: fail with a clear message until they
 * are registered. */
static void require_op(const char *name) {
  const mxr_op *op;
  if (mxr_op_find(name, &op) != 0)
    ck_abort_msg("operator %s is not registered yet (this test passes once it is)", name);
}

static const char *attr_of(const mxr_symbol *s, const char *node, const char *key) {
  for (int i = 0; i < s->num_nodes; i++) {
    const struct mxr_node *n = &s->nodes[i];
    if (strcmp(n->name, node) != 0) continue;
    const char *v = mxr__node_attr(n, key);
    for (int k = 0; v == NULL && k < mxr_op_params_count(n->params); k++)
      if (strcmp(mxr_op_params_key(n->params, k), key) == 0) v = mxr_op_params_value(n->params, k);
    return v;
  }
  ck_abort_msg("no node named %s", node);
  return NULL;
}

static void expect_names(int (*list)(const mxr_symbol *, int *, const char *const **),
                         const mxr_symbol *s, int n, const char *const *want) {
  int num;
  const char *const *names;
  ck_assert_int_eq(list(s, &num, &names), 0);
  ck_assert_int_eq(num, n);
  for (int i = 0; i < n; i++) ck_assert_str_eq(names[i], want[i]);
}

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

static mxr_symbol *apply(const char *opname, const char *name, int n, const char *const *k,
                         const char *const *v, mxr_symbol *arg) {
  mxr_symbol *f = atomic(opname, n, k, v);
  ck_assert_msg(mxr_symbol_compose(f, name, arg ? 1 : 0, NULL, arg ? &arg : NULL) == 0, "%s",
                mxr_last_error());
  return f;
}

/* flip(flip(...flip(X))) with n ops named f0.. (flip is reverse's alias). */
static mxr_symbol *flip_chain(int n) {
  static const char *const k[] = {"axis"}, *const v[] = {"0"};
  mxr_symbol *x;
  ck_assert_int_eq(mxr_symbol_variable("X", &x), 0);
  for (int i = 0; i < n; i++) {
    char name[32];
    snprintf(name, sizeof name, "f%d", i);
    mxr_symbol *f = apply("flip", name, 1, k, v, x);
    mxr_symbol_free(x);
    x = f;
  }
  return x;
}

/* Same graph: ops, names, params, attributes, edges, heads. */
static void expect_same_graph(const mxr_symbol *a, const mxr_symbol *b) {
  ck_assert_int_eq(a->num_nodes, b->num_nodes);
  ck_assert_int_eq(a->num_heads, b->num_heads);
  for (int h = 0; h < a->num_heads; h++) {
    ck_assert_int_eq(a->heads[h].node, b->heads[h].node);
    ck_assert_int_eq(a->heads[h].index, b->heads[h].index);
  }
  for (int i = 0; i < a->num_nodes; i++) {
    const struct mxr_node *x = &a->nodes[i], *y = &b->nodes[i];
    ck_assert_ptr_eq(x->op, y->op);
    ck_assert_str_eq(x->name, y->name);
    ck_assert_int_eq(x->nin, y->nin);
    for (int k = 0; k < x->nin; k++) {
      ck_assert_int_eq(x->inputs[k].node, y->inputs[k].node);
      ck_assert_int_eq(x->inputs[k].index, y->inputs[k].index);
    }
    /* the same pairs, in any order (saving sorts them) */
    ck_assert_int_eq(mxr_op_params_count(x->params), mxr_op_params_count(y->params));
    for (int k = 0; k < mxr_op_params_count(x->params); k++) {
      const char *key = mxr_op_params_key(x->params, k), *v = NULL;
      for (int m = 0; m < mxr_op_params_count(y->params) && !v; m++)
        if (strcmp(mxr_op_params_key(y->params, m), key) == 0) v = mxr_op_params_value(y->params, m);
      ck_assert_msg(v != NULL, "node %s lost parameter %s", x->name, key);
      ck_assert_str_eq(v, mxr_op_params_value(x->params, k));
    }
    ck_assert_int_eq(x->nattr, y->nattr);
    for (int k = 0; k < x->nattr; k++) {
      const char *v = mxr__node_attr(y, x->attr_keys[k]);
      ck_assert_ptr_nonnull(v);
      ck_assert_str_eq(v, x->attr_vals[k]);
    }
  }
}

/* ---------------------------------------------------------- saving */

START_TEST(test_save_writes_mxnet_text) {
  /* The graph of basic-1.9.1.json built through the API. */
  mxr_symbol *x;
  ck_assert_int_eq(mxr_symbol_variable("X", &x), 0);
  ck_assert_int_eq(mxr__node_set_attr(&x->nodes[0], "__shape__", "(2, 3)"), 0);
  ck_assert_int_eq(mxr__node_set_attr(&x->nodes[0], "__dtype__", "0"), 0);
  static const char *const ak[] = {"axis"}, *const a0[] = {"0"}, *const a01[] = {"(0, 1)"};
  mxr_symbol *f0 = apply("flip", "f0", 1, ak, a0, x);
  mxr_symbol *f1 = apply("reverse", "f1", 1, ak, a01, f0);
  mxr_symbol *c = apply("_copy", "c", 0, NULL, NULL, f1);
  static const char *const ok[] = {"shape", "dtype"}, *const ov[] = {"(2, 3)", "float32"};
  mxr_symbol *ones = apply("_ones", "ones", 2, ok, ov, NULL);
  mxr_symbol *parts[2] = {c, ones}, *g;
  ck_assert_int_eq(mxr_symbol_group(2, parts, &g), 0);
  char *text = save_ok(g);
  char *want = read_data("basic-1.9.1.json");
  ck_assert_str_eq(text, want);
  free(text);
  free(want);
  mxr_symbol *all[] = {x, f0, f1, c, ones, g};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mxr_symbol_free(all[i]);
}
END_TEST

START_TEST(test_save_multi_line_lists) {
  /* More than ten entries: arg_nodes, node_row_ptr and heads go one per line. */
  mxr_symbol *vars[11], *g;
  for (int i = 0; i < 11; i++) {
    char name[8];
    snprintf(name, sizeof name, "v%d", i);
    ck_assert_int_eq(mxr_symbol_variable(name, &vars[i]), 0);
  }
  ck_assert_int_eq(mxr_symbol_group(11, vars, &g), 0);
  char *text = save_ok(g), *want = read_data("group11-1.9.1.json");
  ck_assert_str_eq(text, want);
  mxr_symbol *back = load_ok(text);
  expect_same_graph(g, back);
  free(text);
  free(want);
  mxr_symbol_free(back);
  mxr_symbol_free(g);
  for (int i = 0; i < 11; i++) mxr_symbol_free(vars[i]);
}
END_TEST

START_TEST(test_roundtrip_flip_chain_1000) {
  mxr_symbol *s = flip_chain(1000);
  char *text = save_ok(s);
  ck_assert_ptr_null(strstr(text, "\"flip\"")); /* the registered name is written */
  ck_assert_ptr_nonnull(strstr(text, "\"op\": \"reverse\""));
  ck_assert_ptr_nonnull(strstr(text, "\"mxnet_version\": [\"int\", 10901]"));
  mxr_symbol *back = load_ok(text);
  char *again = save_ok(back);
  ck_assert_str_eq(text, again);
  expect_same_graph(s, back);
  static const char *const args[] = {"X"}, *const outs[] = {"f999_output"};
  expect_names(mxr_symbol_list_arguments, back, 1, args);
  expect_names(mxr_symbol_list_outputs, back, 1, outs);
  expect_names(mxr_symbol_list_auxiliary_states, back, 0, NULL);
  /* the loaded chain still infers shapes */
  struct mxr_shape known = {2, {4, 5}}, a[1], o[1], x[1];
  int complete;
  const char *names[] = {"X"};
  ck_assert_int_eq(mxr_symbol_infer_shape(back, 1, names, &known, a, o, x, &complete), 0);
  ck_assert_int_eq(complete, 1);
  ck_assert_int_eq(o[0].dim[1], 5);
  free(text);
  free(again);
  mxr_symbol_free(back);
  mxr_symbol_free(s);
}
END_TEST

START_TEST(test_roundtrip_escapes_and_unicode) {
  const char *name = "a\"b\\c\nd\te\rf\x01g/\xc3\xa9\xe2\x82\xac";
  mxr_symbol *v;
  ck_assert_int_eq(mxr_symbol_variable(name, &v), 0);
  ck_assert_int_eq(mxr__node_set_attr(&v->nodes[0], "k\"ey", "v\nal"), 0);
  char *text = save_ok(v);
  /* dmlc's escapes, and \u00XX for other control characters */
  ck_assert_ptr_nonnull(strstr(text, "\"a\\\"b\\\\c\\nd\\te\\rf\\u0001g/\xc3\xa9\xe2\x82\xac\""));
  mxr_symbol *back = load_ok(text);
  ck_assert_str_eq(back->nodes[0].name, name);
  ck_assert_str_eq(attr_of(back, name, "k\"ey"), "v\nal");
  char *again = save_ok(back);
  ck_assert_str_eq(text, again);
  free(text);
  free(again);
  mxr_symbol_free(back);
  mxr_symbol_free(v);
}
END_TEST

START_TEST(test_save_rejects_invalid_utf8) {
  mxr_symbol *v;
  ck_assert_int_eq(mxr_symbol_variable("bad\xff", &v), 0);
  char *text = NULL;
  ck_assert_int_eq(mxr_symbol_to_json(v, &text), MXR_EINVAL);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "node 0"));
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "not valid UTF-8"));
  ck_assert_ptr_null(text);
  mxr_symbol_free(v);
}
END_TEST

START_TEST(test_save_atomic_symbol) {
  /* nnvm's atomic symbols have no inputs: MXNet writes "inputs": [] and so
   * do we; such text does not load back (the op lacks its input). */
  static const char *const k[] = {"axis"}, *const v[] = {"0"};
  mxr_symbol *a = atomic("reverse", 1, k, v);
  char *text = save_ok(a);
  ck_assert_ptr_nonnull(strstr(text, "\"inputs\": []"));
  expect_fail(text, MXR_EINVAL, "reverse takes 1 input (aux states included), the file gives 0");
  free(text);
  mxr_symbol_free(a);
}
END_TEST

START_TEST(test_null_arguments) {
  mxr_symbol *s;
  char *text;
  ck_assert_int_eq(mxr_symbol_from_json(NULL, &s), MXR_EINVAL);
  ck_assert_int_eq(mxr_symbol_from_json("{}", NULL), MXR_EINVAL);
  ck_assert_int_eq(mxr_symbol_to_json(NULL, &text), MXR_EINVAL);
  s = flip_chain(1);
  ck_assert_int_eq(mxr_symbol_to_json(s, NULL), MXR_EINVAL);
  mxr_symbol_free(s);
}
END_TEST

/* ------------------------------------------------------- sample files */

START_TEST(test_load_basic_file) {
  char *text = read_data("basic-1.9.1.json");
  mxr_symbol *s = load_ok(text);
  ck_assert_int_eq(s->num_nodes, 5);
  ck_assert_str_eq(mxr_op_name(s->nodes[1].op), "reverse");
  ck_assert_str_eq(attr_of(s, "X", "__shape__"), "(2, 3)");
  ck_assert_str_eq(attr_of(s, "f1", "axis"), "(0, 1)");
  static const char *const args[] = {"X"}, *const outs[] = {"c_output", "ones_output"};
  expect_names(mxr_symbol_list_arguments, s, 1, args);
  expect_names(mxr_symbol_list_outputs, s, 2, outs);
  char *again = save_ok(s);
  ck_assert_str_eq(again, text);
  free(again);
  free(text);
  mxr_symbol_free(s);
}
END_TEST

START_TEST(test_load_mlp_file) {
  require_op("FullyConnected");
  require_op("Activation");
  require_op("SoftmaxOutput");
  char *text = read_data("mlp-1.9.1.json");
  mxr_symbol *s = load_ok(text);
  static const char *const args[] = {"data",     "fc1_weight", "fc1_bias",
                                     "fc2_weight", "fc2_bias", "softmax_label"};
  static const char *const outs[] = {"softmax_output"};
  expect_names(mxr_symbol_list_arguments, s, 6, args);
  expect_names(mxr_symbol_list_outputs, s, 1, outs);
  expect_names(mxr_symbol_list_auxiliary_states, s, 0, NULL);
  ck_assert_str_eq(attr_of(s, "fc2", "no_bias"), "False");
  ck_assert_str_eq(attr_of(s, "fc1_weight", "num_hidden"), "128");
  char *again = save_ok(s);
  ck_assert_str_eq(again, text); /* byte for byte what MXNet 1.9.1 writes */
  /* shapes flow through the loaded graph */
  const char *names[] = {"data"};
  struct mxr_shape known = {2, {32, 784}}, a[6], o[1], x[1];
  int complete;
  ck_assert_msg(mxr_symbol_infer_shape(s, 1, names, &known, a, o, x, &complete) == 0, "%s",
                mxr_last_error());
  ck_assert_int_eq(complete, 1);
  ck_assert_int_eq(a[1].dim[0], 128);
  ck_assert_int_eq(a[1].dim[1], 784);
  ck_assert_int_eq(o[0].dim[1], 10);
  free(again);
  free(text);
  mxr_symbol_free(s);
}
END_TEST

/* ------------------------------------------------------------ legacy */

START_TEST(test_legacy_0_8_file) {
  /* "param" and "attr", [node, index] entries, backward_source_id, no
   * node_row_ptr or version: upgraded as MXNet does it (hidden keys renamed
   * or moved to the input variable, the missing input created). */
  char *text = read_data("legacy-0.8.json"), *want = read_data("legacy-0.8.upgraded.json");
  mxr_symbol *s = load_ok(text);
  static const char *const args[] = {"X", "f1_data"};
  expect_names(mxr_symbol_list_arguments, s, 2, args);
  ck_assert_str_eq(attr_of(s, "X", "__lr_mult__"), "2"); /* f0's data_lr_mult wins */
  ck_assert_str_eq(attr_of(s, "X", "__ctx_group__"), "dev1");
  ck_assert_ptr_null(attr_of(s, "X", "lr_mult"));
  ck_assert_str_eq(attr_of(s, "f1_data", "axis"), "1"); /* copy of its op's attributes */
  char *again = save_ok(s);
  ck_assert_str_eq(again, want);
  mxr_symbol *back = load_ok(again);
  expect_same_graph(s, back);
  free(again);
  free(text);
  free(want);
  mxr_symbol_free(back);
  mxr_symbol_free(s);
}
END_TEST

START_TEST(test_legacy_1_0_file) {
  /* "attr" replaces "param" for the same key; hidden keys get their
   * underscores. */
  char *text = read_data("legacy-1.0.json");
  mxr_symbol *s = load_ok(text);
  ck_assert_str_eq(attr_of(s, "r", "axis"), "0");
  ck_assert_str_eq(attr_of(s, "r", "__mirror_stage__"), "True");
  ck_assert_str_eq(attr_of(s, "a", "__wd_mult__"), "0");
  ck_assert_str_eq(attr_of(s, "a", "__shape__"), "[2]");
  char *again = save_ok(s);
  ck_assert_ptr_nonnull(strstr(again, "\"attrs\": {\n        \"__mirror_stage__\": \"True\", \n"
                                      "        \"axis\": \"0\"\n      }"));
  free(again);
  free(text);
  mxr_symbol_free(s);
}
END_TEST

START_TEST(test_legacy_batchnorm_aux_states) {
  require_op("BatchNorm");
  char *text = read_data("legacy-0.8-batchnorm.json");
  mxr_symbol *s = load_ok(text);
  static const char *const aux[] = {"bn_moving_mean", "bn_moving_var"};
  expect_names(mxr_symbol_list_auxiliary_states, s, 2, aux);
  ck_assert_str_eq(attr_of(s, "bn_moving_mean", "__init__"), "[\"zero\", {}]");
  ck_assert_str_eq(attr_of(s, "bn_moving_var", "__init__"), "[\"one\", {}]");
  ck_assert_str_eq(attr_of(s, "bn_moving_var", "momentum"), "0.9");
  ck_assert_ptr_null(attr_of(s, "bn_gamma", "__init__"));
  char *again = save_ok(s);
  mxr_symbol *back = load_ok(again);
  expect_same_graph(s, back);
  free(again);
  free(text);
  mxr_symbol_free(back);
  mxr_symbol_free(s);
}
END_TEST

START_TEST(test_legacy_prelu_gamma) {
  /* 0.8: prelu's missing gamma is created (with the op's attributes);
   * before 0.9.4 it also gets LeakyReLU's __init__. */
  require_op("LeakyReLU");
  char *t = q("{'nodes': [{'op': 'null', 'name': 'x', 'inputs': []},"
              "{'op': 'LeakyReLU', 'name': 'lr', 'param': {'act_type': 'prelu'}, 'inputs': [[0, 0]]}],"
              "'arg_nodes': [0], 'heads': [[1, 0]]}");
  mxr_symbol *s = load_ok(t);
  static const char *const args[] = {"x", "lr_gamma"};
  expect_names(mxr_symbol_list_arguments, s, 2, args);
  ck_assert_str_eq(attr_of(s, "lr_gamma", "act_type"), "prelu");
  ck_assert_str_eq(attr_of(s, "lr_gamma", "__init__"), "[\"Constant\", {\"value\": 0.25}]");
  mxr_symbol_free(s);
  free(t);
  /* 0.9.4 and later: no __init__ */
  t = q("{'nodes': [{'op': 'null', 'name': 'x', 'inputs': []}, {'op': 'null', 'name': 'g', 'inputs': []},"
        "{'op': 'LeakyReLU', 'name': 'lr', 'attrs': {'act_type': 'prelu'}, 'inputs': [[0, 0], [1, 0]]}],"
        "'arg_nodes': [0, 1], 'heads': [[2, 0]], 'attrs': {'mxnet_version': ['int', 904]}}");
  s = load_ok(t);
  ck_assert_ptr_null(attr_of(s, "g", "__init__"));
  mxr_symbol_free(s);
  free(t);
}
END_TEST

START_TEST(test_legacy_argmax_axis) {
  /* Before 0.9.5 argmax/argmin's axis=-1 meant "no axis" and is dropped.
   * While argmax is listed but not implemented this checks only that the
   * refusal names the node. */
  char *text = q("{'nodes': [{'op': 'null', 'name': 'x', 'inputs': []},"
                 "{'op': 'argmax', 'name': 'am', 'attrs': {'axis': '-1'}, 'inputs': [[0, 0, 0]]}],"
                 "'arg_nodes': [0], 'heads': [[1, 0, 0]], 'attrs': {'mxnet_version': ['int', 904]}}");
  const mxr_op *op;
  ck_assert_int_eq(mxr_op_find("argmax", &op), 0);
  if (!mxr_op_is_implemented(op)) {
    expect_fail(text, MXR_ENOTIMPL, "node 1 (am): operator argmax is not implemented by libmxref");
    free(text);
    return;
  }
  mxr_symbol *s = load_ok(text);
  ck_assert_ptr_null(attr_of(s, "am", "axis"));
  mxr_symbol_free(s);
  char *version = strstr(text, "904");
  ck_assert_ptr_nonnull(version);
  version[2] = '5'; /* 905 and later: kept */
  s = load_ok(text);
  ck_assert_str_eq(attr_of(s, "am", "axis"), "-1");
  mxr_symbol_free(s);
  free(text);
}
END_TEST

START_TEST(test_current_version_keeps_names) {
  /* Files of 1.9.1 and later are not upgraded: a variable's "lr_mult"
   * stays as it is; on an op it is an unknown parameter. */
  char *v = q("{'nodes': [{'op': 'null', 'name': 'x', 'attrs': {'lr_mult': '2'}, 'inputs': []}],"
              "'arg_nodes': [0], 'heads': [[0, 0, 0]], 'attrs': {'mxnet_version': ['int', 20000]}}");
  mxr_symbol *s = load_ok(v);
  ck_assert_str_eq(attr_of(s, "x", "lr_mult"), "2");
  ck_assert_ptr_null(attr_of(s, "x", "__lr_mult__"));
  mxr_symbol_free(s);
  free(v);
  char *op = q("{'nodes': [{'op': 'null', 'name': 'x', 'inputs': []},"
               "{'op': 'reverse', 'name': 'r', 'attrs': {'axis': '0', 'lr_mult': '2'}, "
               "'inputs': [[0, 0, 0]]}], 'arg_nodes': [0], 'heads': [[1, 0, 0]], "
               "'attrs': {'mxnet_version': ['int', 10901]}}");
  expect_fail(op, MXR_EINVAL, "node 1 (r): reverse: unknown parameter 'lr_mult'");
  free(op);
}
END_TEST

/* --------------------------------------------------- accepted oddities */

START_TEST(test_duplicate_names_load) {
  /* MXNet does not reject duplicate names when loading; neither do we. */
  char *t = q("{'nodes': [{'op': 'null', 'name': 'x', 'inputs': []},"
              "{'op': 'null', 'name': 'x', 'inputs': []}],"
              "'arg_nodes': [0, 1], 'heads': [[0, 0, 0], [1, 0, 0]]}");
  mxr_symbol *s = load_ok(t);
  static const char *const args[] = {"x", "x"};
  expect_names(mxr_symbol_list_arguments, s, 2, args);
  mxr_symbol_free(s);
  free(t);
}
END_TEST

START_TEST(test_unreachable_nodes_dropped) {
  char *t = q("{'nodes': [{'op': 'null', 'name': 'unused', 'inputs': []},"
              "{'op': 'null', 'name': 'x', 'inputs': []},"
              "{'op': 'flip', 'name': 'r', 'attrs': {'axis': '0'}, 'inputs': [[1, 0]]}],"
              "'arg_nodes': [0, 1], 'node_row_ptr': [0, 1, 2, 3], 'heads': [[2, 0]],"
              "'attrs': {'mxnet_version': ['int', 10901], 'is_np_shape': ['int', 0],"
              "'extra': ['list_shape', [[1, 2], []]], 'names': ['list_str', ['a']]}}");
  mxr_symbol *s = load_ok(t);
  ck_assert_int_eq(s->num_nodes, 2);
  static const char *const args[] = {"x"};
  expect_names(mxr_symbol_list_arguments, s, 1, args);
  mxr_symbol_free(s);
  free(t);
}
END_TEST

START_TEST(test_attrs_and_param_merge) {
  /* Later of "attrs"/"attr" replaces the earlier (MXNet's reader clears the
   * map); "param" only fills keys they do not set. */
  char *t = q("{'nodes': [{'op': 'null', 'name': 'x', 'inputs': []},"
              "{'op': 'reverse', 'name': 'r', 'attr': {'axis': '5'}, 'attrs': {'axis': '0'},"
              "'param': {'axis': '9', '__p__': 'kept'}, 'inputs': [[0, 0, 0]]}],"
              "'arg_nodes': [0], 'heads': [[1, 0, 0]], 'attrs': {'mxnet_version': ['int', 10901]}}");
  mxr_symbol *s = load_ok(t);
  ck_assert_str_eq(attr_of(s, "r", "axis"), "0");
  ck_assert_str_eq(attr_of(s, "r", "__p__"), "kept");
  mxr_symbol_free(s);
  free(t);
}
END_TEST

/* ---------------------------------------------------------- rejection */

struct bad_case {
  const char *json; /* ' for " */
  int status;
  const char *fragment;
};

#define GOOD_TAIL "'arg_nodes': [0], 'heads': [[1, 0, 0]]}"
#define X_NODE "{'op': 'null', 'name': 'x', 'inputs': []}"
#define R_NODE(attrs, inputs) \
  "{'op': 'reverse', 'name': 'r', 'attrs': {" attrs "}, 'inputs': [" inputs "]}"
#define DOC(second) "{'nodes': [" X_NODE ", " second "], " GOOD_TAIL
#define DOC_V(second, version)                                                          \
  "{'nodes': [" X_NODE ", " second "], 'arg_nodes': [0], 'heads': [[1, 0, 0]], "         \
  "'attrs': {'mxnet_version': ['int', " version "]}}"

static const struct bad_case bad_cases[] = {
    /* not JSON */
    {"", MXR_EINVAL, "malformed JSON at line 1, column"},
    {"{", MXR_EINVAL, "malformed JSON at line 1"},
    {"{'nodes': [], 'arg_nodes': [], 'heads': []} x", MXR_EINVAL, "malformed JSON"},
    {"{'nodes': [\n{'op': 'null',, }]}", MXR_EINVAL, "malformed JSON at line 2"},
    {"{'nodes': ['\xff']}", MXR_EINVAL, "malformed JSON"},
    {"{'nodes': [{'op': 'null', 'name': 'a\\u0000b', 'inputs': []}]}", MXR_EINVAL,
     "malformed JSON"},
    /* the top level */
    {"[1]", MXR_EINVAL, "the top level must be an object, got an array"},
    {"{'arg_nodes': [], 'heads': [[0, 0]]}", MXR_EINVAL, "top level: missing field 'nodes'"},
    {"{'nodes': [" X_NODE "], 'heads': [[0, 0]]}", MXR_EINVAL, "missing field 'arg_nodes'"},
    {"{'nodes': [" X_NODE "], 'arg_nodes': [0]}", MXR_EINVAL, "missing field 'heads'"},
    {"{'nodes': [" X_NODE "], 'arg_nodes': [0], 'heads': [[0, 0]], 'foo': 1}", MXR_EINVAL,
     "unknown top-level field 'foo'"},
    {"{'nodes': {}, 'arg_nodes': [0], 'heads': [[0, 0]]}", MXR_EINVAL,
     "field 'nodes' must be an array, got an object"},
    /* node structure */
    {"{'nodes': [1], " GOOD_TAIL, MXR_EINVAL, "node 0: expected an object, got an integer"},
    {"{'nodes': [{'op': 'null', 'inputs': []}], " GOOD_TAIL, MXR_EINVAL,
     "node 0: missing field 'name'"},
    {"{'nodes': [{'op': 'null', 'name': 7, 'inputs': []}], " GOOD_TAIL, MXR_EINVAL,
     "node 0: field 'name' must be a string, got an integer"},
    {"{'nodes': [{'name': 'x', 'inputs': []}], " GOOD_TAIL, MXR_EINVAL,
     "node 0 (x): missing field 'op'"},
    {"{'nodes': [{'op': null, 'name': 'x', 'inputs': []}], " GOOD_TAIL, MXR_EINVAL,
     "node 0 (x): field 'op' must be a string, got null"},
    {"{'nodes': [{'op': 'null', 'name': 'x'}], " GOOD_TAIL, MXR_EINVAL,
     "node 0 (x): missing field 'inputs'"},
    {"{'nodes': [{'op': 'null', 'name': 'x', 'inputs': {}}], " GOOD_TAIL, MXR_EINVAL,
     "node 0 (x): field 'inputs' must be an array, got an object"},
    {"{'nodes': [{'op': 'null', 'name': 'x', 'inputs': [], 'extra': 1}], " GOOD_TAIL,
     MXR_EINVAL, "node 0 (x): unknown field 'extra'"},
    {DOC("{'op': 'reverse', 'name': 'r', 'inputs': [[0, 0, 0]], 'control_deps': [0]}"),
     MXR_EINVAL, "node 1 (r): control_deps are not supported"},
    {DOC("{'op': 'reverse', 'name': 'r', 'inputs': [[0, 0, 0]], 'subgraphs': [{}]}"),
     MXR_EINVAL, "node 1 (r): subgraphs are not supported"},
    {DOC("{'op': 'reverse', 'name': 'r', 'inputs': [[0, 0, 0]], 'backward_source_id': 'a'}"),
     MXR_EINVAL, "node 1 (r): field 'backward_source_id' must be an integer, got a string"},
    /* ops and params */
    {DOC("{'op': 'foo', 'name': 'foo0', 'inputs': [[0, 0, 0]]}"), MXR_ENOTFOUND,
     "node 1 (foo0): unknown operator 'foo'"},
    {DOC(R_NODE("'axis': 'x'", "[0, 0, 0]")), MXR_EINVAL,
     "node 1 (r): reverse: parameter axis='x' is not valid"},
    {DOC("{'op': 'reverse', 'name': 'r', 'inputs': [[0, 0, 0]]}"), MXR_EINVAL,
     "node 1 (r): reverse: required parameter 'axis' is missing"},
    {DOC(R_NODE("'axis': '0', 'bogus': '1'", "[0, 0, 0]")), MXR_EINVAL,
     "node 1 (r): reverse: unknown parameter 'bogus'"},
    {DOC(R_NODE("'axis': 0", "[0, 0, 0]")), MXR_EINVAL,
     "node 1 (r): attrs 'axis' must be a string, got an integer"},
    {DOC("{'op': 'reverse', 'name': 'r', 'attrs': [], 'inputs': [[0, 0, 0]]}"), MXR_EINVAL,
     "node 1 (r): field 'attrs' must be an object of strings, got an array"},
    {DOC("{'op': 'reverse', 'name': 'r', 'param': {'axis': true}, 'inputs': [[0, 0, 0]]}"),
     MXR_EINVAL, "node 1 (r): param 'axis' must be a string, got true"},
    /* input entries */
    {DOC(R_NODE("'axis': '0'", "0")), MXR_EINVAL,
     "node 1 (r): input 0 must be [node, index] or [node, index, version], got an integer"},
    {DOC(R_NODE("'axis': '0'", "[0]")), MXR_EINVAL, "input 0 must be [node, index] or"},
    {DOC(R_NODE("'axis': '0'", "[0, 0, 0, 0]")), MXR_EINVAL, "got an array that is too long"},
    {DOC(R_NODE("'axis': '0'", "[0, 'a']")), MXR_EINVAL,
     "node 1 (r): input 0 has output index a string; it must be an integer"},
    {DOC(R_NODE("'axis': '0'", "[-1, 0, 0]")), MXR_EINVAL,
     "node 1 (r): input 0 has node -1, outside 0..2147483647"},
    {DOC(R_NODE("'axis': '0'", "[99999999999, 0, 0]")), MXR_EINVAL,
     "input 0 has node 99999999999, outside"},
    {DOC(R_NODE("'axis': '0'", "[0.0, 0, 0]")), MXR_EINVAL, "input 0 has node a real number"},
    {DOC(R_NODE("'axis': '0'", "[0, 0, -1]")), MXR_EINVAL, "input 0 has version -1, outside"},
    {DOC(R_NODE("'axis': '0'", "[1, 0, 0]")), MXR_EINVAL,
     "node 1 (r): input 0 refers to node 1, which does not come before it"},
    {DOC(R_NODE("'axis': '0'", "[5, 0, 0]")), MXR_EINVAL,
     "node 1 (r): input 0 refers to node 5, but the file has 2 nodes"},
    {DOC(R_NODE("'axis': '0'", "[0, 1, 0]")), MXR_EINVAL,
     "node 1 (r): input 0 refers to output 1 of node 0 (x), which has 1 output"},
    {DOC(R_NODE("'axis': '0'", "[0, 0, 0], [0, 0, 0]")), MXR_EINVAL,
     "node 1 (r): reverse takes 1 input (aux states included), the file gives 2"},
    {DOC_V(R_NODE("'axis': '0'", ""), "10901"), MXR_EINVAL,
     "node 1 (r): reverse takes 1 input (aux states included), the file gives 0"},
    {DOC("{'op': 'null', 'name': 'y', 'inputs': [[0, 0, 0]]}"), MXR_EINVAL,
     "node 1 (y): a variable (op \"null\") has no inputs, the file gives 1"},
    /* heads */
    {"{'nodes': [" X_NODE "], 'arg_nodes': [0], 'heads': [[5, 0, 0]]}", MXR_EINVAL,
     "heads: head 0 refers to node 5, but the file has 1 nodes"},
    {"{'nodes': [" X_NODE "], 'arg_nodes': [0], 'heads': [[0, 3, 0]]}", MXR_EINVAL,
     "heads: head 0 refers to output 3 of node 0 (x), which has 1 output"},
    {"{'nodes': [" X_NODE "], 'arg_nodes': [0], 'heads': []}", MXR_EINVAL, "'heads' is empty"},
    {"{'nodes': [" X_NODE "], 'arg_nodes': [0], 'heads': 0}", MXR_EINVAL,
     "field 'heads' must be an array, got an integer"},
    {"{'nodes': [" X_NODE "], 'arg_nodes': [0], 'heads': [0]}", MXR_EINVAL,
     "heads: head 0 must be [node, index] or [node, index, version]"},
    /* arg_nodes, node_row_ptr, graph attributes */
    {"{'nodes': [" X_NODE ", " R_NODE("'axis': '0'", "[0, 0, 0]") "], 'arg_nodes': [1], "
     "'heads': [[1, 0, 0]]}",
     MXR_EINVAL, "arg_nodes[0] is node 1 (r), which is not a variable (op reverse)"},
    {"{'nodes': [" X_NODE "], 'arg_nodes': [7], 'heads': [[0, 0, 0]]}", MXR_EINVAL,
     "arg_nodes[0] refers to node 7, but the file has 1 nodes"},
    {"{'nodes': [" X_NODE "], 'arg_nodes': ['a'], 'heads': [[0, 0, 0]]}", MXR_EINVAL,
     "arg_nodes[0] must be a node index, got a string"},
    {"{'nodes': [" X_NODE "], 'arg_nodes': 0, 'heads': [[0, 0, 0]]}", MXR_EINVAL,
     "field 'arg_nodes' must be an array"},
    {"{'nodes': [" X_NODE "], 'arg_nodes': [0], 'heads': [[0, 0]], 'node_row_ptr': 1}",
     MXR_EINVAL, "field 'node_row_ptr' must be an array, got an integer"},
    {"{'nodes': [" X_NODE "], 'arg_nodes': [0], 'heads': [[0, 0]], 'node_row_ptr': [-1]}",
     MXR_EINVAL, "node_row_ptr[0] must be a non-negative integer"},
    {"{'nodes': [" X_NODE "], 'arg_nodes': [0], 'heads': [[0, 0]], 'attrs': []}", MXR_EINVAL,
     "field 'attrs' must be an object, got an array"},
    {"{'nodes': [" X_NODE "], 'arg_nodes': [0], 'heads': [[0, 0]], "
     "'attrs': {'mxnet_version': 10901}}",
     MXR_EINVAL, "graph attribute 'mxnet_version' must be a [type, value] pair"},
    {"{'nodes': [" X_NODE "], 'arg_nodes': [0], 'heads': [[0, 0]], "
     "'attrs': {'mxnet_version': ['str', '10901']}}",
     MXR_EINVAL, "graph attribute 'mxnet_version' must have type 'int', not 'str'"},
    {"{'nodes': [" X_NODE "], 'arg_nodes': [0], 'heads': [[0, 0]], "
     "'attrs': {'mxnet_version': ['int', 'x']}}",
     MXR_EINVAL, "graph attribute 'mxnet_version': a string is not a valid 'int' value"},
    {"{'nodes': [" X_NODE "], 'arg_nodes': [0], 'heads': [[0, 0]], "
     "'attrs': {'foo': ['blob', 1]}}",
     MXR_EINVAL, "graph attribute 'foo' has unknown type 'blob'"},
    {"{'nodes': [" X_NODE "], 'arg_nodes': [0], 'heads': [[0, 0]], "
     "'attrs': {'foo': ['list_int', [1, 'a']]}}",
     MXR_EINVAL, "graph attribute 'foo': an array is not a valid 'list_int' value"},
    /* legacy upgrades that cannot help */
    {"{'nodes': [" X_NODE ", " R_NODE("'axis': '0'", "[0, 0], [0, 0]") "], 'arg_nodes': [0], "
     "'heads': [[1, 0]]}",
     MXR_EINVAL, "node 1 (r): reverse takes 1 input (aux states included), the file gives 2"},
    {"{'nodes': [{'op': 'add_n', 'name': 's', 'param': {'num_args': '9'}, 'inputs': []}], "
     "'arg_nodes': [], 'heads': [[0, 0]]}",
     MXR_EINVAL, "node 0 (s): add_n takes 9 inputs and the file gives 0; a legacy file may omit at most 8"},
    {DOC_V(R_NODE("'axis': '0', 'foo_lr_mult': '2'", "[0, 0, 0]"), "1000"), MXR_EINVAL,
     "node 1 (r): reverse: unknown parameter 'foo_lr_mult'"},
    {DOC_V(R_NODE("'axis': 'q', 'data_lr_mult': '2'", "[0, 0, 0]"), "1000"), MXR_EINVAL,
     "node 1 (r): reverse: parameter axis='q' is not valid"},
};

START_TEST(test_rejects_bad_input) {
  const struct bad_case *c = &bad_cases[_i];
  char *text = q(c->json);
  expect_fail(text, c->status, c->fragment);
  ck_assert_ptr_nonnull(strstr(mxr_last_error(), "symbol JSON: "));
  free(text);
}
END_TEST

START_TEST(test_rejects_deep_nesting) {
  size_t n = 1000000;
  char *text = malloc(2 * n + 64);
  ck_assert_ptr_nonnull(text);
  strcpy(text, "{'nodes': ");
  size_t len = strlen(text);
  memset(text + len, '[', n);
  text[len + n] = '\0';
  for (char *p = text; *p; p++)
    if (*p == '\'') *p = '"';
  expect_fail(text, MXR_EINVAL, "nesting deeper than 32 levels at line 1, column 42");
  /* brackets inside strings do not count */
  char *ok = q("{'nodes': [{'op': 'null', 'name': '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[',"
               " 'inputs': []}], 'arg_nodes': [0], 'heads': [[0, 0, 0]]}");
  mxr_symbol *s = load_ok(ok);
  mxr_symbol_free(s);
  free(ok);
  free(text);
}
END_TEST

START_TEST(test_loaded_valid_variants) {
  /* the valid documents the bad cases are built from load */
  char *t = q(DOC(R_NODE("'axis': '0'", "[0, 0, 0]")));
  mxr_symbol *s = load_ok(t);
  mxr_symbol_free(s);
  free(t);
  t = q(DOC_V(R_NODE("'axis': '0', 'data_lr_mult': '2'", "[0, 0, 0]"), "1000"));
  s = load_ok(t);
  ck_assert_str_eq(attr_of(s, "x", "__lr_mult__"), "2");
  mxr_symbol_free(s);
  free(t);
}
END_TEST

int main(void) {
  Suite *s = suite_create("symbol_json");
  TCase *tc = tcase_create("symbol_json");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_save_writes_mxnet_text);
  tcase_add_test(tc, test_save_multi_line_lists);
  tcase_add_test(tc, test_roundtrip_flip_chain_1000);
  tcase_add_test(tc, test_roundtrip_escapes_and_unicode);
  tcase_add_test(tc, test_save_rejects_invalid_utf8);
  tcase_add_test(tc, test_save_atomic_symbol);
  tcase_add_test(tc, test_null_arguments);
  tcase_add_test(tc, test_load_basic_file);
  tcase_add_test(tc, test_load_mlp_file);
  tcase_add_test(tc, test_legacy_0_8_file);
  tcase_add_test(tc, test_legacy_1_0_file);
  tcase_add_test(tc, test_legacy_batchnorm_aux_states);
  tcase_add_test(tc, test_legacy_prelu_gamma);
  tcase_add_test(tc, test_legacy_argmax_axis);
  tcase_add_test(tc, test_current_version_keeps_names);
  tcase_add_test(tc, test_duplicate_names_load);
  tcase_add_test(tc, test_unreachable_nodes_dropped);
  tcase_add_test(tc, test_attrs_and_param_merge);
  tcase_add_loop_test(tc, test_rejects_bad_input, 0, (int)(sizeof bad_cases / sizeof bad_cases[0]));
  tcase_add_test(tc, test_rejects_deep_nesting);
  tcase_add_test(tc, test_loaded_valid_variants);
  suite_add_tcase(s, tc);
  return mxr_test_run(s);
}
