/*
 * Looking into a symbol as MXNet's frontends do: the head node's name and
 * attributes, attribute lists, and new symbols made of a symbol's parts
 * (one output, the internals, the children).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

static const struct mxr_node *single_head(const mxr_symbol *s) {
  return s && s->num_heads == 1 ? &s->nodes[s->heads[0].node] : NULL;
}

const char *mxr_symbol_name(const mxr_symbol *sym) {
  const struct mxr_node *n = single_head(sym);
  return n ? n->name : NULL;
}

static const char *param_value(const struct mxr_node *n, const char *key) {
  for (int i = 0; n->params && i < mxr_op_params_count(n->params); i++)
    if (strcmp(mxr_op_params_key(n->params, i), key) == 0) return mxr_op_params_value(n->params, i);
  return NULL;
}

const char *mxr_symbol_attr(const mxr_symbol *sym, const char *key) {
  const struct mxr_node *n = single_head(sym);
  if (!n || !key) return NULL;
  const char *v = mxr__node_attr(n, key);
  return v ? v : param_value(n, key);
}

static bool is_dunder(const char *key) {
  size_t n = strlen(key);
  return n > 4 && strncmp(key, "__", 2) == 0 && strcmp(key + n - 2, "__") == 0;
}

/* Parse an op node's params again with key=val added or replaced. */
static int reparse(struct mxr_node *n, const char *key, const char *val) {
  int count = mxr_op_params_count(n->params);
  const char **keys = malloc((size_t)(count + 1) * sizeof *keys);
  const char **vals = malloc((size_t)(count + 1) * sizeof *vals);
  int st = keys && vals ? 0 : mxr_set_error(MXR_ENOMEM, "set_attr: out of memory");
  int k = 0;
  for (int i = 0; !st && i < count; i++) {
    if (strcmp(mxr_op_params_key(n->params, i), key) == 0) continue;
    keys[k] = mxr_op_params_key(n->params, i);
    vals[k++] = mxr_op_params_value(n->params, i);
  }
  mxr_op_params *p = NULL;
  if (!st) {
    keys[k] = key;
    vals[k++] = val;
    st = mxr_op_params_parse(n->op, k, keys, vals, &p);
  }
  free(keys);
  free(vals);
  if (st) return st;
  mxr_op_params_free(n->params);
  n->params = p;
  return 0;
}

int mxr_symbol_set_attr(mxr_symbol *sym, const char *key, const char *val) {
  if (!sym || !key || !val) return mxr_set_error(MXR_EINVAL, "mxr_symbol_set_attr: NULL argument");
  for (int h = 0; h < sym->num_heads; h++) {
    struct mxr_node *n = &sym->nodes[sym->heads[h].node];
    int st = mxr__node_is_var(n) || is_dunder(key) ? mxr__node_set_attr(n, key, val)
                                                   : reparse(n, key, val);
    if (st) return st;
  }
  return 0;
}

/* ---------------------------------------------------------- attr lists */

/* Visit every (key, value) of node n: its attributes, then its params. */
typedef void (*attr_fn)(void *ctx, const struct mxr_node *n, const char *key, const char *val);

static void each_attr(const struct mxr_node *n, attr_fn fn, void *ctx) {
  for (int i = 0; i < n->nattr; i++) fn(ctx, n, n->attr_keys[i], n->attr_vals[i]);
  for (int i = 0; n->params && i < mxr_op_params_count(n->params); i++)
    fn(ctx, n, mxr_op_params_key(n->params, i), mxr_op_params_value(n->params, i));
}

struct attr_list {
  bool prefixed;  /* "<node>$<key>" */
  int num;        /* pairs */
  size_t chars;   /* bytes of text */
  char **kv;      /* NULL while counting */
  char *text;
};

static void add_pair(void *ctx, const struct mxr_node *n, const char *key, const char *val) {
  struct attr_list *l = ctx;
  size_t klen = (l->prefixed ? strlen(n->name) + 1 : 0) + strlen(key) + 1;
  size_t vlen = strlen(val) + 1;
  if (l->kv) {
    l->kv[2 * l->num] = l->text;
    if (l->prefixed) snprintf(l->text, klen, "%s$%s", n->name, key);
    else memcpy(l->text, key, klen);
    l->text += klen;
    l->kv[2 * l->num + 1] = memcpy(l->text, val, vlen);
    l->text += vlen;
  }
  l->chars += klen + vlen;
  l->num++;
}

static void walk(const mxr_symbol *s, struct attr_list *l) {
  if (l->prefixed)
    for (int i = 0; i < s->num_nodes; i++) each_attr(&s->nodes[i], add_pair, l);
  else if (single_head(s))
    each_attr(single_head(s), add_pair, l);
}

int mxr_symbol_list_attrs(const mxr_symbol *sym, int recursive, int *num, char ***kv) {
  if (!sym || !num || !kv) return mxr_set_error(MXR_EINVAL, "mxr_symbol_list_attrs: NULL argument");
  struct attr_list l = {.prefixed = recursive != 0};
  walk(sym, &l); /* count */
  size_t ptrs = (size_t)(2 * l.num + 1) * sizeof(char *);
  char **block = malloc(ptrs + l.chars + 1);
  if (!block) return mxr_set_error(MXR_ENOMEM, "list_attrs: out of memory");
  l = (struct attr_list){.prefixed = recursive != 0, .kv = block, .text = (char *)block + ptrs};
  walk(sym, &l);
  *num = l.num;
  *kv = block;
  return 0;
}

/* ------------------------------------------------------------ selection */

/* A copy of sym with the given heads, pruned to what they reach. */
static int with_heads(const mxr_symbol *sym, const struct mxr_entry *heads, int num, mxr_symbol **out) {
  mxr_symbol *r;
  int st = mxr_symbol_copy(sym, &r);
  if (st) return st;
  st = mxr__symbol_set_heads(r, heads, num);
  if (!st) st = mxr__graph_canonicalize(r);
  if (st) {
    mxr_symbol_free(r);
    return st;
  }
  *out = r;
  return 0;
}

int mxr_symbol_output(const mxr_symbol *sym, int index, mxr_symbol **out) {
  if (!sym || !out) return mxr_set_error(MXR_EINVAL, "mxr_symbol_output: NULL argument");
  if (index < 0 || index >= sym->num_heads)
    return mxr_set_error(MXR_EINVAL, "symbol output %d: the symbol has %d outputs", index, sym->num_heads);
  return with_heads(sym, &sym->heads[index], 1, out);
}

int mxr_symbol_internals(const mxr_symbol *sym, mxr_symbol **out) {
  if (!sym || !out) return mxr_set_error(MXR_EINVAL, "mxr_symbol_internals: NULL argument");
  int total = 0;
  for (int i = 0; i < sym->num_nodes; i++) {
    const struct mxr_node *n = &sym->nodes[i];
    total += mxr__node_is_var(n) ? 1 : mxr__node_num_visible(n);
  }
  struct mxr_entry *heads = malloc((size_t)(total > 0 ? total : 1) * sizeof *heads);
  if (!heads) return mxr_set_error(MXR_ENOMEM, "internals: out of memory");
  int k = 0;
  for (int i = 0; i < sym->num_nodes; i++) {
    const struct mxr_node *n = &sym->nodes[i];
    int nout = mxr__node_is_var(n) ? 1 : mxr__node_num_visible(n);
    for (int o = 0; o < nout; o++) heads[k++] = (struct mxr_entry){i, o};
  }
  int st = with_heads(sym, heads, k, out);
  free(heads);
  return st;
}

int mxr_symbol_children(const mxr_symbol *sym, mxr_symbol **out) {
  if (!sym || !out) return mxr_set_error(MXR_EINVAL, "mxr_symbol_children: NULL argument");
  int total = 0;
  for (int h = 0; h < sym->num_heads; h++) total += sym->nodes[sym->heads[h].node].nin;
  struct mxr_entry *heads = malloc((size_t)(total > 0 ? total : 1) * sizeof *heads);
  if (!heads) return mxr_set_error(MXR_ENOMEM, "children: out of memory");
  int k = 0;
  for (int h = 0; h < sym->num_heads; h++) {
    const struct mxr_node *n = &sym->nodes[sym->heads[h].node];
    for (int i = 0; i < n->nin; i++) heads[k++] = n->inputs[i];
  }
  int st = with_heads(sym, heads, k, out);
  free(heads);
  return st;
}
