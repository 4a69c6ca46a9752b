/*
 * Symbol JSON: MXNet 1.9.1's format (nnvm's SaveJSON / LoadJSON passes plus
 * MXNet's LoadLegacyJSON upgrades).
 *
 * Loading parses the text with jansson, checks every field before it is
 * used, applies the legacy upgrades MXNet applies for the file's
 * mxnet_version, and builds the graph in the file's node order, then
 * canonicalises it.  Every problem is an error that names the node (index
 * and name) or the field; nothing in the text can make the loader crash,
 * recurse without bound or allocate more than a small multiple of the text.
 *
 * Saving reproduces dmlc::JSONWriter's layout byte for byte (the same
 * multi-line rules, two-space indent, ", " separators), so the text equals
 * what MXNet 1.9.1's Symbol.tojson() writes for the same graph.
 *
 * The format, what is accepted and the limits: docs/symbol-json.md.
 */
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

#define MXNET_VERSION 10901 /* what we write, and the version we are */
#define LEGACY_VERSION 800  /* files without mxnet_version: MXNet 0.8.0 */

/* Limits (docs/symbol-json.md). */
#define MAX_TEXT_BYTES ((size_t)1 << 30)
#define MAX_NODES 10000000
#define MAX_HEADS 10000000
#define MAX_DEPTH 32         /* the format needs 6 levels of nesting */
#define MAX_OP_SLOTS 65536   /* inputs plus aux states of one op node */
#define MAX_FILLED 8         /* inputs a pre-0.9 file may omit per node */
#define LABEL_NAME_MAX 64    /* node names are cut to this in messages */

/* ------------------------------------------------------------ errors */

static int fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Every loader and writer message starts with "symbol JSON: ".  The text is
 * formatted locally first, so arguments may point into the last-error
 * buffer. */
static int fail(int status, const char *fmt, ...) {
  char msg[MXR_ERROR_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return mxr_set_error(status, "symbol JSON: %s", msg);
}

static int oom(void) { return fail(MXR_ENOMEM, "out of memory"); }

/* "node 3 (fc1)", or "node 3" while the name is not known yet. */
struct label {
  char s[LABEL_NAME_MAX + 48];
};

static struct label node_label(size_t i, const char *name) {
  struct label l;
  if (!name)
    snprintf(l.s, sizeof l.s, "node %zu", i);
  else if (strlen(name) > LABEL_NAME_MAX)
    snprintf(l.s, sizeof l.s, "node %zu (%.*s...)", i, LABEL_NAME_MAX, name);
  else
    snprintf(l.s, sizeof l.s, "node %zu (%s)", i, name);
  return l;
}

static const char *json_kind(const json_t *v) {
  switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE: return "true";
    case JSON_FALSE: return "false";
    case JSON_NULL: return "null";
  }
  return "an unknown value";
}

/* ------------------------------------------------------ nesting check */

/* Reject nesting deeper than MAX_DEPTH before jansson sees the text: old
 * jansson versions recurse once per level with no limit.  Strings are
 * skipped (brackets inside them do not count); anything else malformed is
 * left to jansson to report. */
static int check_nesting(const char *text, size_t len) {
  int depth = 0, line = 1, col = 0;
  bool in_string = false;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    col++;
    if (c == '\n') {
      line++;
      col = 0;
    }
    if (in_string) {
      if (c == '\\' && i + 1 < len && text[i + 1] != '\n') {
        i++;
        col++;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > MAX_DEPTH)
        return fail(MXR_EINVAL, "nesting deeper than %d levels at line %d, column %d", MAX_DEPTH,
                    line, col);
    } else if (c == ']' || c == '}') {
      if (depth > 0) depth--;
    }
  }
  return 0;
}

/* ------------------------------------------------------ attribute dicts */

/* A node's attribute dictionary while loading: owned strings, unique keys,
 * in the order they were found. */
struct kv {
  char *k, *v;
};

struct dict {
  struct kv *a;
  int n, cap;
};

static void dict_free(struct dict *d) {
  for (int i = 0; i < d->n; i++) {
    free(d->a[i].k);
    free(d->a[i].v);
  }
  free(d->a);
  memset(d, 0, sizeof *d);
}

static int dict_find(const struct dict *d, const char *k) {
  for (int i = 0; i < d->n; i++)
    if (strcmp(d->a[i].k, k) == 0) return i;
  return -1;
}

/* Append a pair whose key is known not to be there yet. */
static int dict_append(struct dict *d, const char *k, const char *v) {
  if (d->n == d->cap) {
    if (d->cap > INT_MAX / 2) return oom();
    int ncap = d->cap ? d->cap * 2 : 8;
    struct kv *a = realloc(d->a, (size_t)ncap * sizeof *a);
    if (!a) return oom();
    d->a = a;
    d->cap = ncap;
  }
  char *kc = strdup(k), *vc = strdup(v);
  if (!kc || !vc) {
    free(kc);
    free(vc);
    return oom();
  }
  d->a[d->n++] = (struct kv){kc, vc};
  return 0;
}

/* Set a key (replacing its value when present). */
static int dict_set(struct dict *d, const char *k, const char *v) {
  int i = dict_find(d, k);
  if (i < 0) return dict_append(d, k, v);
  char *vc = strdup(v);
  if (!vc) return oom();
  free(d->a[i].v);
  d->a[i].v = vc;
  return 0;
}

static void dict_remove(struct dict *d, int i) {
  free(d->a[i].k);
  free(d->a[i].v);
  memmove(&d->a[i], &d->a[i + 1], (size_t)(d->n - i - 1) * sizeof d->a[0]);
  d->n--;
}

static int dict_copy(const struct dict *src, struct dict *dst) {
  memset(dst, 0, sizeof *dst);
  for (int i = 0; i < src->n; i++) {
    int st = dict_append(dst, src->a[i].k, src->a[i].v);
    if (st) {
      dict_free(dst);
      return st;
    }
  }
  return 0;
}

/* Parse the dict as the op's params (hidden __keys__ are kept unparsed by
 * the parser).  Errors carry the parser's message behind the node label. */
static int dict_parse(const struct dict *d, const mxr_op *op, const struct label *where,
                      mxr_op_params **out) {
  const char **keys = malloc(((size_t)d->n + 1) * sizeof *keys);
  const char **vals = malloc(((size_t)d->n + 1) * sizeof *vals);
  if (!keys || !vals) {
    free(keys);
    free(vals);
    return oom();
  }
  for (int i = 0; i < d->n; i++) {
    keys[i] = d->a[i].k;
    vals[i] = d->a[i].v;
  }
  int st = mxr_op_params_parse(op, d->n, keys, vals, out);
  free(keys);
  free(vals);
  if (st) return fail(st, "%s: %s", where->s, mxr_last_error());
  return 0;
}

/* Move the dict into a node's attribute arrays (keys are unique already). */
static int dict_to_node_attrs(struct dict *d, struct mxr_node *n) {
  if (d->n == 0) return 0;
  n->attr_keys = malloc((size_t)d->n * sizeof *n->attr_keys);
  n->attr_vals = malloc((size_t)d->n * sizeof *n->attr_vals);
  if (!n->attr_keys || !n->attr_vals) {
    free(n->attr_keys);
    free(n->attr_vals);
    n->attr_keys = n->attr_vals = NULL;
    return oom();
  }
  for (int i = 0; i < d->n; i++) {
    n->attr_keys[i] = d->a[i].k;
    n->attr_vals[i] = d->a[i].v;
  }
  n->nattr = d->n;
  free(d->a);
  memset(d, 0, sizeof *d);
  return 0;
}

/* ------------------------------------------------------------ loading */

struct loader {
  mxr_symbol *s;
  int version;  /* the file's mxnet_version */
  size_t nodes; /* nodes in the file */
  int *map;     /* file node index -> graph node index */
};

/* A JSON integer in [lo, hi]. */
static bool int_in(const json_t *v, long long lo, long long hi, long long *out) {
  if (!json_is_integer(v)) return false;
  long long x = json_integer_value(v);
  if (x < lo || x > hi) return false;
  *out = x;
  return true;
}

/* One [node, index] or [node, index, version] entry, structure only. */
static int read_entry(const json_t *e, const char *where, const char *what, long long *node,
                      long long *index) {
  if (!json_is_array(e) || json_array_size(e) < 2 || json_array_size(e) > 3)
    return fail(MXR_EINVAL, "%s: %s must be [node, index] or [node, index, version], got %s%s",
                where, what, json_kind(e),
                json_is_array(e) ? (json_array_size(e) < 2 ? " that is too short" : " that is too long")
                                 : "");
  static const char *const part[] = {"node", "output index", "version"};
  for (size_t k = 0; k < json_array_size(e); k++) {
    const json_t *x = json_array_get(e, k);
    long long v;
    long long hi = k == 2 ? (long long)UINT32_MAX : INT_MAX;
    if (!int_in(x, 0, hi, &v)) {
      if (json_is_integer(x))
        return fail(MXR_EINVAL, "%s: %s has %s %lld, outside 0..%lld", where, what, part[k],
                    (long long)json_integer_value(x), hi);
      return fail(MXR_EINVAL, "%s: %s has %s %s; it must be an integer", where, what, part[k],
                  json_kind(x));
    }
    if (k == 0) *node = v;
    if (k == 1) *index = v;
  }
  return 0;
}

/* Check that an entry names an output that exists; `before`: the number of
 * file nodes the entry may point at. */
static int check_entry_target(const struct loader *L, const char *where, const char *what,
                              long long node, long long index, size_t before) {
  if ((unsigned long long)node >= L->nodes)
    return fail(MXR_EINVAL, "%s: %s refers to node %lld, but the file has %zu nodes", where, what,
                node, L->nodes);
  if ((unsigned long long)node >= before)
    return fail(MXR_EINVAL,
                "%s: %s refers to node %lld, which does not come before it (inputs must refer to "
                "earlier nodes; a cycle?)",
                where, what, node);
  const struct mxr_node *src = &L->s->nodes[L->map[node]];
  int nout = mxr__node_num_outputs(src);
  if (index >= nout) {
    struct label l = node_label((size_t)node, src->name);
    return fail(MXR_EINVAL, "%s: %s refers to output %lld of %s, which has %d output%s", where,
                what, index, l.s, nout, nout == 1 ? "" : "s");
  }
  return 0;
}

/* Read a string -> string object ("attrs", "attr", "param") into the dict;
 * keys already in `skip` (a JSON object, may be NULL) are left out. */
static int read_string_map(const json_t *obj, const char *field, const char *where,
                           const json_t *skip, struct dict *d) {
  if (!json_is_object(obj))
    return fail(MXR_EINVAL, "%s: field '%s' must be an object of strings, got %s", where, field,
                json_kind(obj));
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)obj, key, val) {
    if (!json_is_string(val))
      return fail(MXR_EINVAL, "%s: %s '%s' must be a string, got %s", where, field, key,
                  json_kind(val));
    if (skip && json_object_get(skip, key)) continue;
    int st = dict_append(d, key, json_string_value(val));
    if (st) return st;
  }
  return 0;
}

static const char *const node_fields[] = {
    "op", "name", "inputs", "attrs", "attr", "param", "control_deps", "subgraphs",
    "backward_source_id", NULL,
};

static bool known_field(const char *const *fields, const char *key) {
  for (int i = 0; fields[i]; i++)
    if (strcmp(fields[i], key) == 0) return true;
  return false;
}

/* MXNet's kHiddenKeys: attribute names that old files carry without the
 * double underscores. */
static const char *const hidden_keys[] = {
    "ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage", "profiler_scope", NULL,
};

/* std::string::rfind: the last position of `sub` in `s`, or -1. */
static long rfind(const char *s, const char *sub) {
  size_t n = strlen(s), m = strlen(sub);
  if (m > n) return -1;
  for (size_t p = n - m + 1; p-- > 0;)
    if (memcmp(s + p, sub, m) == 0) return (long)p;
  return -1;
}

/* The name of input slot i (op inputs, then aux states). */
static const char *slot_name(const mxr_op *op, const mxr_op_params *p, int i) {
  int nin = mxr_op_num_inputs(op, p);
  return i < nin ? mxr_op_input_name(op, p, i) : mxr_op_aux_name(op, p, i - nin);
}

/* UpgradeJSON_FixParsing (files older than 1.9.1): attributes named like a
 * hidden key become "__key__"; "<input>_<key>" on an op moves to that input
 * when it is a variable; anything else stays as it was (and then fails to
 * parse as MXNet's does). `inputs` are the node's entries as graph indices. */
static int fix_hidden_keys(struct loader *L, const struct label *where, const mxr_op *op,
                           struct dict *d, const int *inputs, int ninputs) {
  /* Split the dict into the pairs that stay and the hidden ones (one pass:
   * a node may carry very many keys). */
  struct dict hidden = {0};
  int st = 0, kept = 0;
  for (int i = 0; i < d->n; i++) {
    bool is_hidden = false;
    for (int h = 0; hidden_keys[h] && !is_hidden; h++) {
      long pos = rfind(d->a[i].k, hidden_keys[h]);
      is_hidden = pos == 0 ||
                  (pos > 0 && (size_t)pos == strlen(d->a[i].k) - strlen(hidden_keys[h]));
    }
    if (is_hidden && !st) st = dict_append(&hidden, d->a[i].k, d->a[i].v);
    if (is_hidden) {
      free(d->a[i].k);
      free(d->a[i].v);
    } else {
      d->a[kept++] = d->a[i];
    }
  }
  d->n = kept;
  mxr_op_params *p = NULL; /* parsed without the hidden keys, for input names */
  for (int i = 0; i < hidden.n && !st; i++) {
    const char *k = hidden.a[i].k, *v = hidden.a[i].v;
    bool placed = false;
    for (int h = 0; hidden_keys[h]; h++) {
      size_t klen = strlen(k), hlen = strlen(hidden_keys[h]);
      long pos = rfind(k, hidden_keys[h]);
      if (pos == 0 && klen == hlen) {
        char name[64];
        snprintf(name, sizeof name, "__%s__", hidden_keys[h]);
        st = dict_set(d, name, v);
        placed = true;
        break;
      }
      if (pos > 1 && (size_t)pos == klen - hlen) {
        if (!op) break; /* variables keep "<x>_lr_mult" as it is */
        if (!p && (st = dict_parse(d, op, where, &p))) break;
        int nslots = mxr_op_num_inputs(op, p) + mxr_op_num_aux(op, p);
        for (int s = 0; s < nslots && s < ninputs; s++) {
          const char *sname = slot_name(op, p, s);
          if (!sname || strlen(sname) != (size_t)pos - 1 || strncmp(sname, k, (size_t)pos - 1) != 0)
            continue;
          struct mxr_node *in = &L->s->nodes[inputs[s]];
          if (mxr__node_is_var(in)) {
            char name[64];
            snprintf(name, sizeof name, "__%s__", hidden_keys[h]);
            st = mxr__node_set_attr(in, name, v);
            placed = true;
          }
          break;
        }
        break;
      }
    }
    if (!st && !placed) st = dict_append(d, k, v); /* it was removed, so it is unique */
  }
  mxr_op_params_free(p);
  dict_free(&hidden);
  return st;
}

/* UpgradeJSON_000903_000904: ops with FSetInputVarAttrOnCompose give their
 * variable inputs an __init__ attribute. */
static const struct {
  const char *op;
  int slot;
  const char *init;
} input_inits[] = {
    {"BatchNorm", 3, "[\"zero\", {}]"},
    {"BatchNorm", 4, "[\"one\", {}]"},
    {"_contrib_SyncBatchNorm", 3, "[\"zero\", {}]"},
    {"_contrib_SyncBatchNorm", 4, "[\"one\", {}]"},
    {"LeakyReLU", 1, "[\"Constant\", {\"value\": 0.25}]"},
    {"IdentityAttachKLSparseReg", 1, "[\"zero\", {}]"},
};

static int set_input_inits(struct loader *L, const struct mxr_node *n) {
  for (size_t t = 0; t < sizeof input_inits / sizeof input_inits[0]; t++) {
    if (strcmp(input_inits[t].op, mxr_op_name(n->op)) != 0) continue;
    if (input_inits[t].slot >= n->nin) continue;
    struct mxr_node *in = &L->s->nodes[n->inputs[input_inits[t].slot].node];
    if (!mxr__node_is_var(in) || mxr__node_attr(in, "__init__")) continue;
    int st = mxr__node_set_attr(in, "__init__", input_inits[t].init);
    if (st) return st;
  }
  return 0;
}

/* Add a variable node owning `name` (malloc'd) and `attrs`. */
static int add_variable(struct loader *L, char *name, struct dict *attrs, int *index) {
  struct mxr_node n;
  memset(&n, 0, sizeof n);
  n.uid = mxr__node_uid();
  n.name = name;
  int st = dict_to_node_attrs(attrs, &n);
  if (!st) st = mxr__symbol_add_node(L->s, &n, index);
  if (st) mxr__node_clear(&n);
  return st;
}

/* UpgradeJSON_000800_000900: inputs missing from files older than 0.9.0
 * (aux states were not stored) become variables "<node>_<input>" carrying a
 * copy of the node's attributes. */
static int fill_missing_inputs(struct loader *L, const struct label *where, const char *node_name,
                               const mxr_op *op, const mxr_op_params *p, const struct dict *d,
                               int *inputs, int given, int want) {
  for (int s = given; s < want; s++) {
    const char *sname = slot_name(op, p, s);
    if (!sname)
      return fail(MXR_EINVAL, "%s: %s takes %d inputs, the file gives %d, and input %d has no name",
                  where->s, mxr_op_name(op), want, given, s);
    size_t len = strlen(node_name) + strlen(sname) + 2;
    char *vname = malloc(len);
    if (!vname) return oom();
    if (*node_name) snprintf(vname, len, "%s_%s", node_name, sname);
    else snprintf(vname, len, "%s", sname);
    struct dict attrs;
    int st = dict_copy(d, &attrs);
    if (st) {
      free(vname);
      return st;
    }
    st = add_variable(L, vname, &attrs, &inputs[s]);
    dict_free(&attrs);
    if (st) return st;
  }
  return 0;
}

/* Gather a node's attributes: "attrs"/"attr" (the later one in the object
 * replaces the earlier, as MXNet's reader clears the map), then "param" for
 * keys not set there. */
static int read_node_dict(const json_t *jn, const char *where, struct dict *d) {
  const json_t *attrs = NULL, *param = NULL;
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)jn, key, val) {
    if (strcmp(key, "attrs") == 0 || strcmp(key, "attr") == 0) attrs = val;
    if (strcmp(key, "param") == 0) param = val;
  }
  int st = 0;
  if (attrs) {
    const char *field = attrs == json_object_get(jn, "attrs") ? "attrs" : "attr";
    st = read_string_map(attrs, field, where, NULL, d);
  }
  if (!st && param) st = read_string_map(param, "param", where, attrs, d);
  return st;
}

/* Fields other than op, name, inputs and the attribute maps. */
static int check_extra_fields(const json_t *jn, const char *where) {
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)jn, key, val) {
    if (!known_field(node_fields, key))
      return fail(MXR_EINVAL,
                  "%s: unknown field '%s' (a node has op, name, inputs, attrs, attr, param, "
                  "control_deps, subgraphs, backward_source_id)",
                  where, key);
    if (strcmp(key, "control_deps") == 0 || strcmp(key, "subgraphs") == 0) {
      if (!json_is_array(val))
        return fail(MXR_EINVAL, "%s: field '%s' must be an array, got %s", where, key,
                    json_kind(val));
      if (json_array_size(val) != 0)
        return fail(MXR_EINVAL, "%s: %s are not supported (the field must be empty)", where, key);
    }
    if (strcmp(key, "backward_source_id") == 0 && !json_is_integer(val))
      return fail(MXR_EINVAL, "%s: field 'backward_source_id' must be an integer, got %s", where,
                  json_kind(val));
  }
  return 0;
}

static const json_t *required(const json_t *obj, const char *field, const char *where, int *st) {
  const json_t *v = json_object_get(obj, field);
  if (!v) *st = fail(MXR_EINVAL, "%s: missing field '%s'", where, field);
  return v;
}

static int load_variable(struct loader *L, size_t i, const char *name, const struct label *where,
                         const json_t *inputs, struct dict *d) {
  if (json_array_size(inputs) != 0)
    return fail(MXR_EINVAL, "%s: a variable (op \"null\") has no inputs, the file gives %zu",
                where->s, json_array_size(inputs));
  int st = L->version < MXNET_VERSION ? fix_hidden_keys(L, where, NULL, d, NULL, 0) : 0;
  char *copy = st ? NULL : strdup(name);
  if (!st && !copy) st = oom();
  if (!st) st = add_variable(L, copy, d, &L->map[i]);
  return st;
}

static int load_op(struct loader *L, size_t i, const char *name, const struct label *where,
                   const mxr_op *op, const json_t *jinputs, struct dict *d) {
  size_t given = json_array_size(jinputs);
  if (given > MAX_OP_SLOTS)
    return fail(MXR_EINVAL, "%s: %zu inputs; at most %d are accepted", where->s, given,
                MAX_OP_SLOTS);
  int *inputs = malloc((given + 1) * sizeof *inputs);
  int *outputs = malloc((given + 1) * sizeof *outputs);
  struct mxr_node n;
  memset(&n, 0, sizeof n);
  int st = inputs && outputs ? 0 : oom();
  for (size_t k = 0; k < given && !st; k++) {
    char what[32];
    snprintf(what, sizeof what, "input %zu", k);
    long long node = 0, index = 0;
    st = read_entry(json_array_get(jinputs, k), where->s, what, &node, &index);
    if (!st) st = check_entry_target(L, where->s, what, node, index, i);
    if (!st) {
      inputs[k] = L->map[node];
      outputs[k] = (int)index;
    }
  }
  if (!st && L->version < MXNET_VERSION) st = fix_hidden_keys(L, where, op, d, inputs, (int)given);
  if (!st) st = dict_parse(d, op, where, &n.params);
  int want = 0;
  if (!st) {
    long long w = (long long)mxr_op_num_inputs(op, n.params) + mxr_op_num_aux(op, n.params);
    if (w < 0 || w > MAX_OP_SLOTS)
      st = fail(MXR_EINVAL, "%s: %s would take %lld inputs; at most %d are accepted", where->s,
                mxr_op_name(op), w, MAX_OP_SLOTS);
    want = (int)w;
  }
  if (!st && (size_t)want != given && !(L->version < 900 && given < (size_t)want))
    st = fail(MXR_EINVAL, "%s: %s takes %d input%s (aux states included), the file gives %zu",
              where->s, mxr_op_name(op), want, want == 1 ? "" : "s", given);
  if (!st && given < (size_t)want && want - (int)given > MAX_FILLED)
    st = fail(MXR_EINVAL,
              "%s: %s takes %d inputs and the file gives %zu; a legacy file may omit at most %d",
              where->s, mxr_op_name(op), want, given, MAX_FILLED);
  if (!st && given < (size_t)want) {
    int *grown = realloc(inputs, ((size_t)want + 1) * sizeof *inputs);
    int *grown_out = grown ? realloc(outputs, ((size_t)want + 1) * sizeof *outputs) : NULL;
    if (grown) inputs = grown;
    if (grown_out) outputs = grown_out;
    if (!grown || !grown_out) st = oom();
    for (int k = (int)given; k < want && !st; k++) outputs[k] = 0;
    if (!st) st = fill_missing_inputs(L, where, name, op, n.params, d, inputs, (int)given, want);
  }
  if (!st) {
    n.uid = mxr__node_uid();
    n.op = op;
    n.name = strdup(name);
    n.nin = want;
    n.inputs = malloc(((size_t)want + 1) * sizeof *n.inputs);
    if (!n.name || !n.inputs) st = oom();
    for (int k = 0; k < want && !st; k++) n.inputs[k] = (struct mxr_entry){inputs[k], outputs[k]};
  }
  if (!st && L->version < 904) st = set_input_inits(L, &n);
  /* UpgradeJSON_000904_000905: argmax/argmin's axis=-1 meant "no axis". */
  if (!st && L->version < 905 &&
      (strcmp(mxr_op_name(op), "argmax") == 0 || strcmp(mxr_op_name(op), "argmin") == 0)) {
    int a = dict_find(d, "axis");
    if (a >= 0 && strcmp(d->a[a].v, "-1") == 0) {
      dict_remove(d, a);
      mxr_op_params_free(n.params);
      n.params = NULL;
      st = dict_parse(d, op, where, &n.params);
    }
  }
  if (!st) st = mxr__symbol_add_node(L->s, &n, &L->map[i]);
  if (st) mxr__node_clear(&n);
  free(inputs);
  free(outputs);
  return st;
}

static int load_node(struct loader *L, size_t i, const json_t *jn) {
  struct label where = node_label(i, NULL);
  if (!json_is_object(jn))
    return fail(MXR_EINVAL, "%s: expected an object, got %s", where.s, json_kind(jn));
  int st = 0;
  const json_t *jname = required(jn, "name", where.s, &st);
  if (st) return st;
  if (!json_is_string(jname))
    return fail(MXR_EINVAL, "%s: field 'name' must be a string, got %s", where.s, json_kind(jname));
  const char *name = json_string_value(jname);
  where = node_label(i, name);
  st = check_extra_fields(jn, where.s);
  const json_t *jop = st ? NULL : required(jn, "op", where.s, &st);
  if (!st && !json_is_string(jop))
    st = fail(MXR_EINVAL, "%s: field 'op' must be a string, got %s", where.s, json_kind(jop));
  const json_t *jinputs = st ? NULL : required(jn, "inputs", where.s, &st);
  if (!st && !json_is_array(jinputs))
    st = fail(MXR_EINVAL, "%s: field 'inputs' must be an array, got %s", where.s,
              json_kind(jinputs));
  if (st) return st;
  const char *opname = json_string_value(jop);
  const mxr_op *op = NULL;
  if (strcmp(opname, "null") != 0 && mxr_op_find(opname, &op) != 0)
    return fail(MXR_ENOTFOUND, "%s: unknown operator '%s'", where.s, opname);
  struct dict d = {0};
  st = read_node_dict(jn, where.s, &d);
  if (!st) st = op ? load_op(L, i, name, &where, op, jinputs, &d)
                   : load_variable(L, i, name, &where, jinputs, &d);
  dict_free(&d);
  return st;
}

/* Graph attributes: [type, value] pairs as dmlc's `any` writes them. */
static int check_typed_value(const char *key, const char *type, const json_t *v) {
  long long x;
  bool ok;
  if (strcmp(type, "int") == 0) {
    ok = int_in(v, INT_MIN, INT_MAX, &x);
  } else if (strcmp(type, "size_t") == 0) {
    ok = int_in(v, 0, LLONG_MAX, &x);
  } else if (strcmp(type, "str") == 0) {
    ok = json_is_string(v);
  } else if (strcmp(type, "list_int") == 0 || strcmp(type, "list_str") == 0 ||
             strcmp(type, "list_shape") == 0) {
    ok = json_is_array(v);
    for (size_t i = 0; ok && i < json_array_size(v); i++) {
      const json_t *e = json_array_get(v, i);
      if (type[5] == 'i') ok = int_in(e, INT_MIN, INT_MAX, &x);
      else if (type[5] == 's' && type[6] == 't') ok = json_is_string(e);
      else {
        ok = json_is_array(e);
        for (size_t k = 0; ok && k < json_array_size(e); k++)
          ok = int_in(json_array_get(e, k), LLONG_MIN, LLONG_MAX, &x);
      }
    }
  } else {
    return fail(MXR_EINVAL,
                "graph attribute '%s' has unknown type '%s' (int, size_t, str, list_int, "
                "list_str, list_shape are known)",
                key, type);
  }
  if (!ok)
    return fail(MXR_EINVAL, "graph attribute '%s': %s is not a valid '%s' value", key,
                json_kind(v), type);
  return 0;
}

static int read_graph_attrs(const json_t *attrs, int *version) {
  if (!json_is_object(attrs))
    return fail(MXR_EINVAL, "field 'attrs' must be an object, got %s", json_kind(attrs));
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)attrs, key, val) {
    if (!json_is_array(val) || json_array_size(val) != 2 || !json_is_string(json_array_get(val, 0)))
      return fail(MXR_EINVAL,
                  "graph attribute '%s' must be a [type, value] pair such as [\"int\", %d], got %s",
                  key, MXNET_VERSION, json_kind(val));
    const char *type = json_string_value(json_array_get(val, 0));
    const json_t *v = json_array_get(val, 1);
    int st = check_typed_value(key, type, v);
    if (st) return st;
    if (strcmp(key, "mxnet_version") == 0) {
      if (strcmp(type, "int") != 0)
        return fail(MXR_EINVAL, "graph attribute 'mxnet_version' must have type 'int', not '%s'",
                    type);
      *version = (int)json_integer_value(v);
    }
  }
  return 0;
}

static const char *const graph_fields[] = {"nodes", "arg_nodes", "node_row_ptr", "heads", "attrs",
                                           NULL};

static int check_arg_nodes(const struct loader *L, const json_t *args) {
  if (!json_is_array(args))
    return fail(MXR_EINVAL, "field 'arg_nodes' must be an array, got %s", json_kind(args));
  for (size_t k = 0; k < json_array_size(args); k++) {
    const json_t *e = json_array_get(args, k);
    long long v;
    if (!json_is_integer(e))
      return fail(MXR_EINVAL, "arg_nodes[%zu] must be a node index, got %s", k, json_kind(e));
    if (!int_in(e, 0, LLONG_MAX, &v) || (unsigned long long)v >= L->nodes)
      return fail(MXR_EINVAL, "arg_nodes[%zu] refers to node %lld, but the file has %zu nodes", k,
                  (long long)json_integer_value(e), L->nodes);
    const struct mxr_node *n = &L->s->nodes[L->map[v]];
    if (!mxr__node_is_var(n)) {
      struct label l = node_label((size_t)v, n->name);
      return fail(MXR_EINVAL, "arg_nodes[%zu] is %s, which is not a variable (op %s)", k, l.s,
                  mxr_op_name(n->op));
    }
  }
  return 0;
}

static int read_heads(const struct loader *L, const json_t *jheads) {
  if (!json_is_array(jheads))
    return fail(MXR_EINVAL, "field 'heads' must be an array, got %s", json_kind(jheads));
  size_t nh = json_array_size(jheads);
  if (nh == 0) return fail(MXR_EINVAL, "'heads' is empty: a symbol needs at least one output");
  if (nh > MAX_HEADS)
    return fail(MXR_EINVAL, "%zu heads; at most %d are accepted", nh, MAX_HEADS);
  struct mxr_entry *heads = malloc(nh * sizeof *heads);
  if (!heads) return oom();
  int st = 0;
  for (size_t k = 0; k < nh && !st; k++) {
    char what[48];
    snprintf(what, sizeof what, "head %zu", k);
    long long node = 0, index = 0;
    st = read_entry(json_array_get(jheads, k), "heads", what, &node, &index);
    if (!st) st = check_entry_target(L, "heads", what, node, index, L->nodes);
    if (!st) heads[k] = (struct mxr_entry){L->map[node], (int)index};
  }
  if (!st) st = mxr__symbol_set_heads(L->s, heads, (int)nh);
  free(heads);
  return st;
}

/* node_row_ptr is derived data; MXNet ignores it when loading, and so do
 * we, after checking that it is an array of non-negative integers. */
static int check_row_ptr(const json_t *rows) {
  if (!json_is_array(rows))
    return fail(MXR_EINVAL, "field 'node_row_ptr' must be an array, got %s", json_kind(rows));
  for (size_t k = 0; k < json_array_size(rows); k++) {
    long long v;
    if (!int_in(json_array_get(rows, k), 0, LLONG_MAX, &v))
      return fail(MXR_EINVAL, "node_row_ptr[%zu] must be a non-negative integer", k);
  }
  return 0;
}

static int load_graph(struct loader *L, const json_t *root) {
  if (!json_is_object(root))
    return fail(MXR_EINVAL, "the top level must be an object, got %s", json_kind(root));
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)root, key, val) {
    if (!known_field(graph_fields, key))
      return fail(MXR_EINVAL,
                  "unknown top-level field '%s' (expected nodes, arg_nodes, node_row_ptr, heads, "
                  "attrs)",
                  key);
  }
  int st = 0;
  const json_t *nodes = required(root, "nodes", "top level", &st);
  const json_t *args = st ? NULL : required(root, "arg_nodes", "top level", &st);
  const json_t *heads = st ? NULL : required(root, "heads", "top level", &st);
  if (st) return st;
  const json_t *rows = json_object_get(root, "node_row_ptr");
  const json_t *attrs = json_object_get(root, "attrs");
  L->version = LEGACY_VERSION;
  if (attrs && (st = read_graph_attrs(attrs, &L->version))) return st;
  if (rows && (st = check_row_ptr(rows))) return st;
  if (!json_is_array(nodes))
    return fail(MXR_EINVAL, "field 'nodes' must be an array, got %s", json_kind(nodes));
  L->nodes = json_array_size(nodes);
  if (L->nodes > MAX_NODES)
    return fail(MXR_EINVAL, "%zu nodes; at most %d are accepted", L->nodes, MAX_NODES);
  L->map = malloc((L->nodes + 1) * sizeof *L->map);
  if (!L->map) return oom();
  for (size_t i = 0; i < L->nodes && !st; i++) st = load_node(L, i, json_array_get(nodes, i));
  if (!st) st = check_arg_nodes(L, args);
  if (!st) st = read_heads(L, heads);
  if (!st) st = mxr__graph_canonicalize(L->s);
  return st;
}

int mxr_symbol_from_json(const char *json, mxr_symbol **out) {
  if (!json || !out) return mxr_set_error(MXR_EINVAL, "mxr_symbol_from_json: NULL argument");
  size_t len = strnlen(json, MAX_TEXT_BYTES + 1);
  if (len > MAX_TEXT_BYTES)
    return fail(MXR_EINVAL, "the text is longer than %zu bytes", MAX_TEXT_BYTES);
  int st = check_nesting(json, len);
  if (st) return st;
  json_error_t jerr;
  json_t *root = json_loadb(json, len, 0, &jerr);
  if (!root)
    return fail(MXR_EINVAL, "malformed JSON at line %d, column %d: %s", jerr.line, jerr.column,
                jerr.text);
  struct loader L = {0};
  st = mxr__symbol_new(&L.s);
  if (!st) st = load_graph(&L, root);
  json_decref(root);
  free(L.map);
  if (st) {
    mxr_symbol_free(L.s);
    return st;
  }
  *out = L.s;
  return 0;
}

/* ------------------------------------------------------------- saving */

/* dmlc::JSONWriter, as far as SaveJSON uses it: a stack of scopes, each
 * multi-line or not, counting its items. */
#define WRITER_DEPTH 8

struct writer {
  char *buf;
  size_t len, cap;
  bool oom;
  int depth;
  bool multi[WRITER_DEPTH];
  size_t count[WRITER_DEPTH];
};

static void put(struct writer *w, const char *s, size_t n) {
  if (w->oom) return;
  if (w->len + n + 1 > w->cap) {
    size_t ncap = w->cap ? w->cap : 4096;
    while (ncap < w->len + n + 1) ncap *= 2;
    char *b = realloc(w->buf, ncap);
    if (!b) {
      w->oom = true;
      return;
    }
    w->buf = b;
    w->cap = ncap;
  }
  memcpy(w->buf + w->len, s, n);
  w->len += n;
  w->buf[w->len] = '\0';
}

static void put_s(struct writer *w, const char *s) { put(w, s, strlen(s)); }

static void put_uint(struct writer *w, unsigned long long v) {
  char b[32];
  put(w, b, (size_t)snprintf(b, sizeof b, "%llu", v));
}

/* WriteString: \r \n \\ \t \" escaped as dmlc does; other control
 * characters (which dmlc writes raw, making the text invalid JSON) as
 * \u00XX. */
static void put_string(struct writer *w, const char *s) {
  put(w, "\"", 1);
  const char *run = s;
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    const char *esc = NULL;
    char u[8];
    switch (c) {
      case '\r': esc = "\\r"; break;
      case '\n': esc = "\\n"; break;
      case '\\': esc = "\\\\"; break;
      case '\t': esc = "\\t"; break;
      case '"': esc = "\\\""; break;
      default:
        if (c < 0x20) {
          snprintf(u, sizeof u, "\\u%04x", c);
          esc = u;
        }
    }
    if (!esc) continue;
    put(w, run, (size_t)(s - run));
    put_s(w, esc);
    run = s + 1;
  }
  put(w, run, (size_t)(s - run));
  put(w, "\"", 1);
}

static void w_separator(struct writer *w) {
  if (w->depth == 0 || w->multi[w->depth - 1]) {
    put(w, "\n", 1);
    for (int i = 0; i < w->depth; i++) put(w, "  ", 2);
  }
}

static void w_begin(struct writer *w, char open, bool multi_line) {
  put(w, &open, 1);
  w->multi[w->depth] = multi_line;
  w->count[w->depth] = 0;
  w->depth++;
}

static void w_end(struct writer *w, char close) {
  w->depth--;
  if (w->multi[w->depth] && w->count[w->depth] != 0) w_separator(w);
  put(w, &close, 1);
}

static void w_key(struct writer *w, const char *key) {
  if (w->count[w->depth - 1] != 0) put(w, ", ", 2);
  w_separator(w);
  put_string(w, key);
  put(w, ": ", 2);
  w->count[w->depth - 1]++;
}

static void w_item(struct writer *w) {
  if (w->count[w->depth - 1] != 0) put(w, ", ", 2);
  w->count[w->depth - 1]++;
  w_separator(w);
}

static void w_entry(struct writer *w, int node, int index) {
  w_item(w);
  w_begin(w, '[', false);
  w_item(w);
  put_uint(w, (unsigned)node);
  w_item(w);
  put_uint(w, (unsigned)index);
  w_item(w);
  put_uint(w, 0); /* version: always 0 here */
  w_end(w, ']');
}

/* Is `s` valid UTF-8 (what jansson accepts)? */
static bool utf8_ok(const char *str) {
  const unsigned char *s = (const unsigned char *)str;
  while (*s) {
    unsigned c = *s;
    int n;
    unsigned cp;
    if (c < 0x80) {
      s++;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    for (int k = 1; k <= n; k++) {
      if ((s[k] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (s[k] & 0x3f);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    s += n + 1;
  }
  return true;
}

/* One attribute for the writer: op params and node attributes merged. */
struct attr_ref {
  const char *k, *v;
  int rank; /* later ranks win for equal keys */
};

static int cmp_attr(const void *a, const void *b) {
  const struct attr_ref *x = a, *y = b;
  int c = strcmp(x->k, y->k);
  return c ? c : (x->rank > y->rank) - (x->rank < y->rank);
}

/* The node's dictionary as MXNet writes it: sorted by key (std::map),
 * params first, node attributes replacing params of the same key. */
static int node_attrs(const struct mxr_node *n, struct attr_ref **out, int *count) {
  int np = mxr_op_params_count(n->params), total = np + n->nattr;
  *out = NULL;
  *count = 0;
  if (total == 0) return 0;
  struct attr_ref *a = malloc((size_t)total * sizeof *a);
  if (!a) return oom();
  for (int i = 0; i < np; i++)
    a[i] = (struct attr_ref){mxr_op_params_key(n->params, i), mxr_op_params_value(n->params, i), i};
  for (int i = 0; i < n->nattr; i++)
    a[np + i] = (struct attr_ref){n->attr_keys[i], n->attr_vals[i], np + i};
  qsort(a, (size_t)total, sizeof *a, cmp_attr);
  int m = 0;
  for (int i = 0; i < total; i++) {
    if (m > 0 && strcmp(a[m - 1].k, a[i].k) == 0) a[m - 1] = a[i];
    else a[m++] = a[i];
  }
  *out = a;
  *count = m;
  return 0;
}

static int check_node_strings(const struct mxr_node *n, int i, const struct attr_ref *a, int na) {
  struct label l = node_label((size_t)i, n->name);
  if (!utf8_ok(n->name)) return fail(MXR_EINVAL, "%s: the name is not valid UTF-8", l.s);
  for (int k = 0; k < na; k++)
    if (!utf8_ok(a[k].k) || !utf8_ok(a[k].v))
      return fail(MXR_EINVAL, "%s: attribute '%s' is not valid UTF-8", l.s, a[k].k);
  return 0;
}

static int write_node(struct writer *w, const mxr_symbol *s, int i) {
  const struct mxr_node *n = &s->nodes[i];
  for (int k = 0; k < n->nin; k++)
    if (n->inputs[k].node >= i) {
      struct label l = node_label((size_t)i, n->name);
      return fail(MXR_EINVAL, "%s: input %d refers to node %d, not an earlier one", l.s, k,
                  n->inputs[k].node);
    }
  struct attr_ref *a;
  int na;
  int st = node_attrs(n, &a, &na);
  if (!st) st = check_node_strings(n, i, a, na);
  if (st) {
    free(a);
    return st;
  }
  w_item(w);
  w_begin(w, '{', true);
  w_key(w, "op");
  put_string(w, n->op ? mxr_op_name(n->op) : "null");
  w_key(w, "name");
  put_string(w, n->name);
  if (na > 0) {
    w_key(w, "attrs");
    w_begin(w, '{', na > 1);
    for (int k = 0; k < na; k++) {
      w_key(w, a[k].k);
      put_string(w, a[k].v);
    }
    w_end(w, '}');
  }
  /* Unbound inputs of an atomic symbol are not written (nnvm's atomic
   * symbols have none). */
  int bound = 0;
  for (int k = 0; k < n->nin; k++) bound += n->inputs[k].node >= 0;
  w_key(w, "inputs");
  w_begin(w, '[', bound > 10);
  for (int k = 0; k < n->nin; k++)
    if (n->inputs[k].node >= 0) w_entry(w, n->inputs[k].node, n->inputs[k].index);
  w_end(w, ']');
  w_end(w, '}');
  free(a);
  return 0;
}

int mxr_symbol_to_json(const mxr_symbol *sym, char **out) {
  if (!sym || !out) return mxr_set_error(MXR_EINVAL, "mxr_symbol_to_json: NULL argument");
  for (int h = 0; h < sym->num_heads; h++)
    if (sym->heads[h].node < 0 || sym->heads[h].node >= sym->num_nodes)
      return fail(MXR_EINVAL, "head %d refers to node %d of %d", h, sym->heads[h].node,
                  sym->num_nodes);
  struct writer w;
  memset(&w, 0, sizeof w);
  int st = 0;
  w_begin(&w, '{', true);
  w_key(&w, "nodes");
  w_begin(&w, '[', true);
  for (int i = 0; i < sym->num_nodes && !st; i++) st = write_node(&w, sym, i);
  w_end(&w, ']');
  int nargs = 0;
  for (int i = 0; i < sym->num_nodes; i++) nargs += mxr__node_is_var(&sym->nodes[i]);
  w_key(&w, "arg_nodes");
  w_begin(&w, '[', nargs > 10);
  for (int i = 0; i < sym->num_nodes; i++)
    if (mxr__node_is_var(&sym->nodes[i])) {
      w_item(&w);
      put_uint(&w, (unsigned)i);
    }
  w_end(&w, ']');
  w_key(&w, "node_row_ptr");
  w_begin(&w, '[', sym->num_nodes + 1 > 10);
  unsigned long long row = 0;
  w_item(&w);
  put_uint(&w, 0);
  for (int i = 0; i < sym->num_nodes; i++) {
    row += (unsigned)mxr__node_num_outputs(&sym->nodes[i]);
    w_item(&w);
    put_uint(&w, row);
  }
  w_end(&w, ']');
  w_key(&w, "heads");
  w_begin(&w, '[', sym->num_heads > 10);
  for (int h = 0; h < sym->num_heads; h++) w_entry(&w, sym->heads[h].node, sym->heads[h].index);
  w_end(&w, ']');
  w_key(&w, "attrs");
  w_begin(&w, '{', false);
  w_key(&w, "mxnet_version");
  w_begin(&w, '[', false);
  w_item(&w);
  put_string(&w, "int");
  w_item(&w);
  put_uint(&w, MXNET_VERSION);
  w_end(&w, ']');
  w_end(&w, '}');
  w_end(&w, '}');
  if (!st && w.oom) st = oom();
  if (st) {
    free(w.buf);
    return st;
  }
  *out = w.buf;
  return 0;
}
