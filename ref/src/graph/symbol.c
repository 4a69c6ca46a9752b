/*
 * Symbols: construction (variables, atomic ops, compose, group), the
 * canonical node order, name lists.  JSON lives in json.c, inference in
 * infer.c.
 */
#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/threads.h"
#include "graph/graph.h"

static atomic_uint_fast64_t next_uid = 1;

uint64_t mxr__node_uid(void) { return atomic_fetch_add(&next_uid, 1); }

/* ------------------------------------------------------------- nodes */

int mxr__node_num_inputs(const struct mxr_node *n) {
  return n->op ? mxr_op_num_inputs(n->op, n->params) : 0;
}
int mxr__node_num_aux(const struct mxr_node *n) {
  return n->op ? mxr_op_num_aux(n->op, n->params) : 0;
}
int mxr__node_num_outputs(const struct mxr_node *n) {
  return n->op ? mxr_op_num_outputs(n->op, n->params) : 1;
}
int mxr__node_num_visible(const struct mxr_node *n) {
  return n->op ? mxr_op_num_visible_outputs(n->op, n->params) : 1;
}

void mxr__node_clear(struct mxr_node *n) {
  mxr_op_params_free(n->params);
  free(n->name);
  free(n->inputs);
  for (int i = 0; i < n->nattr; i++) {
    free(n->attr_keys[i]);
    free(n->attr_vals[i]);
  }
  free(n->attr_keys);
  free(n->attr_vals);
  memset(n, 0, sizeof *n);
}

static int oom(const char *what) { return mxr_set_error(MXR_ENOMEM, "symbol: out of memory (%s)", what); }

/* Parse a fresh params object with the same key/value pairs. */
static int copy_params(const mxr_op *op, const mxr_op_params *src, mxr_op_params **dst) {
  int n = mxr_op_params_count(src);
  const char **keys = calloc((size_t)n + 1, sizeof *keys), **vals = calloc((size_t)n + 1, sizeof *vals);
  if (!keys || !vals) {
    free(keys);
    free(vals);
    return oom("params");
  }
  for (int i = 0; i < n; i++) {
    keys[i] = mxr_op_params_key(src, i);
    vals[i] = mxr_op_params_value(src, i);
  }
  int st = mxr_op_params_parse(op, n, keys, vals, dst);
  free(keys);
  free(vals);
  return st;
}

int mxr__node_set_attr(struct mxr_node *n, const char *key, const char *val) {
  for (int i = 0; i < n->nattr; i++)
    if (strcmp(n->attr_keys[i], key) == 0) {
      char *v = strdup(val);
      if (!v) return oom("attribute");
      free(n->attr_vals[i]);
      n->attr_vals[i] = v;
      return 0;
    }
  char **k = realloc(n->attr_keys, (size_t)(n->nattr + 1) * sizeof *k);
  if (!k) return oom("attribute");
  n->attr_keys = k;
  char **v = realloc(n->attr_vals, (size_t)(n->nattr + 1) * sizeof *v);
  if (!v) return oom("attribute");
  n->attr_vals = v;
  n->attr_keys[n->nattr] = strdup(key);
  n->attr_vals[n->nattr] = strdup(val);
  if (!n->attr_keys[n->nattr] || !n->attr_vals[n->nattr]) {
    free(n->attr_keys[n->nattr]);
    free(n->attr_vals[n->nattr]);
    return oom("attribute");
  }
  n->nattr++;
  return 0;
}

const char *mxr__node_attr(const struct mxr_node *n, const char *key) {
  for (int i = 0; i < n->nattr; i++)
    if (strcmp(n->attr_keys[i], key) == 0) return n->attr_vals[i];
  return NULL;
}

int mxr__node_copy(const struct mxr_node *src, struct mxr_node *dst) {
  memset(dst, 0, sizeof *dst);
  dst->uid = src->uid;
  dst->op = src->op;
  dst->nin = src->nin;
  dst->name = strdup(src->name);
  if (!dst->name) return oom("name");
  int st = src->params ? copy_params(src->op, src->params, &dst->params) : 0;
  if (!st && src->nin) {
    dst->inputs = malloc((size_t)src->nin * sizeof *dst->inputs);
    if (!dst->inputs) st = oom("inputs");
    else memcpy(dst->inputs, src->inputs, (size_t)src->nin * sizeof *dst->inputs);
  }
  for (int i = 0; i < src->nattr && !st; i++)
    st = mxr__node_set_attr(dst, src->attr_keys[i], src->attr_vals[i]);
  if (st) mxr__node_clear(dst);
  return st;
}

/* ----------------------------------------------------------- symbols */

static void drop_lists(mxr_symbol *s) {
  char **lists[4] = {s->args, s->outputs, s->auxs, s->inputs};
  int counts[4] = {s->num_args, s->num_outputs, s->num_auxs, s->num_inputs};
  for (int k = 0; k < 4; k++) {
    for (int i = 0; i < counts[k]; i++) free(lists[k][i]);
    free(lists[k]);
  }
  s->args = s->outputs = s->auxs = s->inputs = NULL;
  s->num_args = s->num_outputs = s->num_auxs = s->num_inputs = 0;
  s->lists_valid = false;
}

int mxr__symbol_new(mxr_symbol **out) {
  *out = calloc(1, sizeof **out);
  return *out ? 0 : oom("symbol");
}

void mxr_symbol_free(mxr_symbol *s) {
  if (!s) return;
  for (int i = 0; i < s->num_nodes; i++) mxr__node_clear(&s->nodes[i]);
  free(s->nodes);
  free(s->heads);
  drop_lists(s);
  free(s);
}

int mxr__symbol_add_node(mxr_symbol *s, const struct mxr_node *n, int *index) {
  if (s->num_nodes == s->cap_nodes) {
    int ncap = s->cap_nodes ? s->cap_nodes * 2 : 8;
    struct mxr_node *nn = realloc(s->nodes, (size_t)ncap * sizeof *nn);
    if (!nn) return oom("nodes");
    s->nodes = nn;
    s->cap_nodes = ncap;
  }
  s->nodes[s->num_nodes] = *n;
  if (index) *index = s->num_nodes;
  s->num_nodes++;
  drop_lists(s);
  return 0;
}

int mxr__symbol_set_heads(mxr_symbol *s, const struct mxr_entry *heads, int num) {
  struct mxr_entry *h = malloc((size_t)(num > 0 ? num : 1) * sizeof *h);
  if (!h) return oom("heads");
  memcpy(h, heads, (size_t)num * sizeof *h);
  free(s->heads);
  s->heads = h;
  s->num_heads = num;
  drop_lists(s);
  return 0;
}

/* A node that owns nothing yet; *n is filled and owns `name`. */
static int make_node(const mxr_op *op, const char *name, struct mxr_node *n) {
  memset(n, 0, sizeof *n);
  n->uid = mxr__node_uid();
  n->op = op;
  n->name = strdup(name);
  return n->name ? 0 : oom("name");
}

int mxr_symbol_variable(const char *name, mxr_symbol **out) {
  if (!name || !out) return mxr_set_error(MXR_EINVAL, "mxr_symbol_variable: NULL argument");
  if (!*name) return mxr_set_error(MXR_EINVAL, "a variable needs a non-empty name");
  mxr_symbol *s;
  int st = mxr__symbol_new(&s);
  if (st) return st;
  struct mxr_node n;
  st = make_node(NULL, name, &n);
  if (!st) st = mxr__symbol_add_node(s, &n, NULL);
  else mxr__node_clear(&n);
  struct mxr_entry head = {0, 0};
  if (!st) st = mxr__symbol_set_heads(s, &head, 1);
  if (st) {
    mxr_symbol_free(s);
    return st;
  }
  *out = s;
  return 0;
}

int mxr_symbol_atomic(const mxr_op *op, const mxr_op_params *params, mxr_symbol **out) {
  if (!op || !params || !out) return mxr_set_error(MXR_EINVAL, "mxr_symbol_atomic: NULL argument");
  mxr_symbol *s;
  int st = mxr__symbol_new(&s);
  if (st) return st;
  struct mxr_node n;
  st = make_node(op, mxr_op_name(op), &n);
  if (!st) st = copy_params(op, params, &n.params);
  if (!st) {
    n.nin = mxr_op_num_inputs(op, n.params) + mxr_op_num_aux(op, n.params);
    n.inputs = malloc((size_t)(n.nin > 0 ? n.nin : 1) * sizeof *n.inputs);
    if (!n.inputs) st = oom("inputs");
    for (int i = 0; i < n.nin && !st; i++) n.inputs[i] = (struct mxr_entry){-1, 0};
  }
  if (!st) st = mxr__symbol_add_node(s, &n, NULL);
  else mxr__node_clear(&n);
  int nvis = st ? 0 : mxr__node_num_visible(&s->nodes[0]);
  struct mxr_entry heads[MXR_MAX_NDIM];
  for (int i = 0; i < nvis && i < MXR_MAX_NDIM; i++) heads[i] = (struct mxr_entry){0, i};
  if (!st) st = mxr__symbol_set_heads(s, heads, nvis < MXR_MAX_NDIM ? nvis : MXR_MAX_NDIM);
  if (st) {
    mxr_symbol_free(s);
    return st;
  }
  *out = s;
  return 0;
}

/* ------------------------------------------------------- name manager */

/* MXNet names unnamed op nodes "<op in lower case><n>", counting per name
 * for the life of the process. */
static pthread_mutex_t names_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
  char *hint;
  int count;
} *name_counts;
static int num_name_counts;

static int auto_name(const char *opname, char *buf, size_t size) {
  char hint[128];
  size_t i = 0;
  for (; opname[i] && i < sizeof hint - 1; i++) hint[i] = (char)tolower((unsigned char)opname[i]);
  hint[i] = '\0';
  int st = 0, n = -1;
  mxr_mutex_lock(&names_mu);
  for (int k = 0; k < num_name_counts && n < 0; k++)
    if (strcmp(name_counts[k].hint, hint) == 0) n = name_counts[k].count++;
  if (n < 0) {
    void *grown = realloc(name_counts, (size_t)(num_name_counts + 1) * sizeof *name_counts);
    char *copy = strdup(hint);
    if (!grown || !copy) {
      free(copy);
      if (grown) name_counts = grown;
      st = oom("name manager");
    } else {
      name_counts = grown;
      name_counts[num_name_counts].hint = copy;
      name_counts[num_name_counts++].count = 1;
      n = 0;
    }
  }
  mxr_mutex_unlock(&names_mu);
  if (!st) snprintf(buf, size, "%s%d", hint, n);
  return st;
}

/* ---------------------------------------------------------- compose */

/* Map node identities to indices while merging graphs: open addressing. */
struct uid_map {
  uint64_t *keys;
  int *vals;
  size_t cap;
};

static int uid_map_init(struct uid_map *m, size_t n) {
  m->cap = 16;
  while (m->cap < 2 * n + 16) m->cap *= 2;
  m->keys = calloc(m->cap, sizeof *m->keys);
  m->vals = calloc(m->cap, sizeof *m->vals);
  return m->keys && m->vals ? 0 : oom("compose");
}

static void uid_map_free(struct uid_map *m) {
  free(m->keys);
  free(m->vals);
}

static int *uid_map_slot(struct uid_map *m, uint64_t uid, bool *found) {
  size_t i = (size_t)(uid * 0x9e3779b97f4a7c15ull) & (m->cap - 1);
  while (m->keys[i] && m->keys[i] != uid) i = (i + 1) & (m->cap - 1);
  *found = m->keys[i] == uid;
  m->keys[i] = uid;
  return &m->vals[i];
}

/* Copy `arg`'s nodes into `dst` (skipping ones already there); return the
 * index in dst of arg's single head node. */
static int merge_symbol(mxr_symbol *dst, struct uid_map *map, const mxr_symbol *arg,
                        struct mxr_entry *head) {
  if (arg->num_heads != 1)
    return mxr_set_error(MXR_EINVAL, "compose: an argument symbol has %d outputs; use one output",
                         arg->num_heads);
  int *local = malloc((size_t)(arg->num_nodes > 0 ? arg->num_nodes : 1) * sizeof *local);
  if (!local) return oom("compose");
  int st = 0;
  for (int i = 0; i < arg->num_nodes && !st; i++) {
    bool found;
    int *slot = uid_map_slot(map, arg->nodes[i].uid, &found);
    if (found) {
      local[i] = *slot;
      continue;
    }
    struct mxr_node copy;
    st = mxr__node_copy(&arg->nodes[i], &copy);
    for (int k = 0; k < copy.nin && !st; k++)
      if (copy.inputs[k].node >= 0) copy.inputs[k].node = local[copy.inputs[k].node];
    if (!st) st = mxr__symbol_add_node(dst, &copy, &local[i]);
    else mxr__node_clear(&copy);
    if (!st) *slot = local[i];
  }
  if (!st) *head = (struct mxr_entry){local[arg->heads[0].node], arg->heads[0].index};
  free(local);
  return st;
}

static const char *slot_name(const struct mxr_node *n, int i) {
  int nin = mxr__node_num_inputs(n);
  return i < nin ? mxr_op_input_name(n->op, n->params, i)
                 : mxr_op_aux_name(n->op, n->params, i - nin);
}

/* The argument bound to input slot i, or NULL. */
static int find_arg(const struct mxr_node *n, int i, int num_args, const char *const *keys,
                    mxr_symbol *const *args, const mxr_symbol **out) {
  *out = NULL;
  if (!keys) {
    if (i < num_args) *out = args[i];
    return 0;
  }
  const char *want = slot_name(n, i);
  for (int k = 0; k < num_args; k++)
    if (want && strcmp(keys[k], want) == 0) *out = args[k];
  return 0;
}

static int check_keys(const struct mxr_node *n, int num_args, const char *const *keys) {
  if (!keys) {
    if (num_args > n->nin)
      return mxr_set_error(MXR_EINVAL, "compose: %s takes %d inputs, %d were given",
                           mxr_op_name(n->op), n->nin, num_args);
    return 0;
  }
  for (int k = 0; k < num_args; k++) {
    bool known = false;
    for (int i = 0; i < n->nin && !known; i++) known = slot_name(n, i) && strcmp(slot_name(n, i), keys[k]) == 0;
    if (!known)
      return mxr_set_error(MXR_EINVAL, "compose: %s has no input named '%s'", mxr_op_name(n->op),
                           keys[k]);
  }
  return 0;
}

static int add_variable(mxr_symbol *s, const char *name, int *index) {
  struct mxr_node v;
  int st = make_node(NULL, name, &v);
  if (!st) st = mxr__symbol_add_node(s, &v, index);
  else mxr__node_clear(&v);
  return st;
}

/* Build the composed graph into `r`. */
static int compose_into(mxr_symbol *r, const struct mxr_node *atom, const char *name, int num_args,
                        const char *const *keys, mxr_symbol *const *args) {
  size_t total = 1;
  for (int k = 0; k < num_args; k++) total += (size_t)args[k]->num_nodes;
  struct uid_map map;
  int st = uid_map_init(&map, total);
  struct mxr_node op;
  if (!st) st = mxr__node_copy(atom, &op);
  if (st) {
    uid_map_free(&map);
    return st;
  }
  free(op.name);
  op.name = strdup(name);
  if (!op.name) st = oom("name");
  for (int i = 0; i < op.nin && !st; i++) {
    const mxr_symbol *arg;
    st = find_arg(&op, i, num_args, keys, args, &arg);
    if (!st && arg) {
      st = merge_symbol(r, &map, arg, &op.inputs[i]);
    } else if (!st) {
      char vname[512];
      snprintf(vname, sizeof vname, "%s_%s", name, slot_name(&op, i) ? slot_name(&op, i) : "arg");
      op.inputs[i].index = 0;
      st = add_variable(r, vname, &op.inputs[i].node);
    }
  }
  int at = -1;
  if (!st) st = mxr__symbol_add_node(r, &op, &at);
  else mxr__node_clear(&op);
  uid_map_free(&map);
  if (st) return st;
  int nvis = mxr__node_num_visible(&r->nodes[at]);
  struct mxr_entry heads[16];
  if (nvis > 16) nvis = 16;
  for (int i = 0; i < nvis; i++) heads[i] = (struct mxr_entry){at, i};
  st = mxr__symbol_set_heads(r, heads, nvis);
  return st ? st : mxr__graph_canonicalize(r);
}

/* Point every use of node `from` (output 0), heads included, at `to`. */
static void redirect(mxr_symbol *r, int from, struct mxr_entry to) {
  for (int j = 0; j < r->num_nodes; j++)
    for (int i = 0; i < r->nodes[j].nin; i++)
      if (r->nodes[j].inputs[i].node == from) r->nodes[j].inputs[i] = to;
  for (int h = 0; h < r->num_heads; h++)
    if (r->heads[h].node == from) r->heads[h] = to;
}

static int find_var(const mxr_symbol *s, const char *name) {
  for (int i = 0; i < s->num_nodes; i++)
    if (mxr__node_is_var(&s->nodes[i]) && strcmp(s->nodes[i].name, name) == 0) return i;
  return -1;
}

/* The first node reachable from `from` (itself included) that reads
 * node v directly, or -1: replacing v by `from` would make it a cycle. */
static int reader_of(const mxr_symbol *s, int from, int v, char *seen, int *stack) {
  int top = 0, found = -1;
  stack[top++] = from;
  seen[from] = 1;
  while (top > 0 && found < 0) {
    const struct mxr_node *n = &s->nodes[stack[--top]];
    for (int i = 0; i < n->nin && found < 0; i++) {
      int in = n->inputs[i].node;
      if (in == v) found = (int)(n - s->nodes);
      else if (in >= 0 && !seen[in]) seen[in] = 1, stack[top++] = in;
    }
  }
  return found;
}

/* Fail when the argument replacing variable v (node `arg`) reads v: the
 * symbol would be its own input (MXNet 1.9.1 builds that cycle). */
static int refuse_cycle(const mxr_symbol *r, int arg, int v, const char *var_name) {
  char *seen = calloc((size_t)r->num_nodes + 1, 1);
  int *stack = malloc(((size_t)r->num_nodes + 1) * sizeof *stack);
  int reader = seen && stack ? reader_of(r, arg, v, seen, stack) : -1;
  int st = !seen || !stack ? oom("compose") : 0;
  free(seen);
  free(stack);
  if (st || reader < 0) return st;
  return mxr_set_error(MXR_EINVAL,
                       "compose: argument '%s' reads '%s', which reads the variable '%s' it replaces: "
                       "a symbol cannot be its own input",
                       var_name, r->nodes[reader].name, var_name);
}

/* Compose a whole graph (MXNet's Symbol.__call__ on a composed symbol):
 * each variable named by keys[k] (without keys: the k-th argument) is
 * replaced by args[k]'s output, into the copy *out. */
static int substitute(const mxr_symbol *sym, int num_args, const char *const *keys,
                      mxr_symbol *const *args, mxr_symbol **out) {
  const char *const *arg_names;
  int nargs, st = mxr_symbol_list_arguments(sym, &nargs, &arg_names);
  if (!st && !keys && num_args > nargs)
    st = mxr_set_error(MXR_EINVAL, "compose: %d arguments for a symbol of %d", num_args, nargs);
  mxr_symbol *r = NULL;
  if (!st) st = mxr_symbol_copy(sym, &r);
  size_t total = r ? (size_t)r->num_nodes : 0;
  for (int k = 0; k < num_args; k++) total += (size_t)args[k]->num_nodes;
  struct uid_map map = {0};
  if (!st) st = uid_map_init(&map, total);
  for (int i = 0; !st && i < r->num_nodes; i++) {
    bool found;
    *uid_map_slot(&map, r->nodes[i].uid, &found) = i;
  }
  for (int k = 0; !st && k < num_args; k++) {
    const char *name = keys ? keys[k] : arg_names[k];
    int v = find_var(r, name);
    struct mxr_entry e;
    if (v < 0) st = mxr_set_error(MXR_EINVAL, "compose: the symbol has no variable named '%s'", name);
    if (!st) st = merge_symbol(r, &map, args[k], &e);
    if (!st && e.node != v) st = refuse_cycle(r, e.node, v, name);
    if (!st) redirect(r, v, e);
  }
  uid_map_free(&map);
  if (!st) st = mxr__graph_canonicalize(r);
  if (st) {
    mxr_symbol_free(r);
    return st;
  }
  *out = r;
  return 0;
}

/* Fail when an argument is, or reads, the atomic symbol being composed:
 * its op node would read itself (MXNet 1.9.1 builds that cycle). */
static int refuse_self(const struct mxr_node *atom, const char *name, int num_args,
                       const char *const *keys, mxr_symbol *const *args) {
  for (int k = 0; k < num_args; k++)
    for (int i = 0; i < args[k]->num_nodes; i++) {
      if (args[k]->nodes[i].uid != atom->uid) continue;
      char which[160];
      if (keys) snprintf(which, sizeof which, "'%s'", keys[k]);
      else snprintf(which, sizeof which, "%d", k);
      return mxr_set_error(MXR_EINVAL,
                           "compose: argument %s reads '%s', the symbol being composed: "
                           "a symbol cannot be its own input",
                           which, name && *name ? name : mxr_op_name(atom->op));
    }
  return 0;
}

int mxr_symbol_compose(mxr_symbol *sym, const char *name, int num_args, const char *const *keys,
                       mxr_symbol *const *args) {
  if (!sym || num_args < 0 || (num_args > 0 && !args))
    return mxr_set_error(MXR_EINVAL, "mxr_symbol_compose: bad arguments");
  for (int k = 0; k < num_args; k++)
    if (!args[k] || (keys && !keys[k]))
      return mxr_set_error(MXR_EINVAL, "compose: argument %d is NULL", k);
  if (sym->num_nodes == 1 && mxr__node_is_var(&sym->nodes[0]))
    return mxr_set_error(MXR_EINVAL, "compose: a variable cannot be composed");
  bool atomic = sym->num_nodes == 1;
  for (int i = 0; atomic && i < sym->nodes[0].nin; i++) atomic = sym->nodes[0].inputs[i].node < 0;
  mxr_symbol *r = NULL;
  int st = 0;
  if (!atomic) { /* a graph: its variables are replaced; the name is not used */
    st = substitute(sym, num_args, keys, args, &r);
    if (st) return st;
    mxr_symbol tmp = *sym;
    *sym = *r;
    *r = tmp;
    mxr_symbol_free(r);
    return 0;
  }
  const struct mxr_node *atom = &sym->nodes[0];
  st = check_keys(atom, num_args, keys);
  if (!st) st = refuse_self(atom, name, num_args, keys, args);
  if (st) return st;
  char generated[160];
  if (!name || !*name) {
    st = auto_name(mxr_op_name(atom->op), generated, sizeof generated);
    if (st) return st;
    name = generated;
  }
  st = mxr__symbol_new(&r);
  if (!st) st = compose_into(r, atom, name, num_args, keys, args);
  if (st) {
    mxr_symbol_free(r);
    return st;
  }
  /* Swap the result into sym. */
  mxr_symbol tmp = *sym;
  *sym = *r;
  *r = tmp;
  mxr_symbol_free(r);
  return 0;
}

int mxr_symbol_copy(const mxr_symbol *sym, mxr_symbol **out) {
  if (!sym || !out) return mxr_set_error(MXR_EINVAL, "mxr_symbol_copy: NULL argument");
  mxr_symbol *r;
  int st = mxr__symbol_new(&r);
  for (int i = 0; i < sym->num_nodes && !st; i++) {
    struct mxr_node n;
    st = mxr__node_copy(&sym->nodes[i], &n);
    if (!st) st = mxr__symbol_add_node(r, &n, NULL);
    else break;
  }
  if (!st) st = mxr__symbol_set_heads(r, sym->heads, sym->num_heads);
  if (st) {
    mxr_symbol_free(r);
    return st;
  }
  *out = r;
  return 0;
}

int mxr_symbol_deep_copy(const mxr_symbol *sym, mxr_symbol **out) {
  int st = mxr_symbol_copy(sym, out);
  for (int i = 0; !st && i < (*out)->num_nodes; i++) (*out)->nodes[i].uid = mxr__node_uid();
  return st;
}

int mxr_symbol_group(int num, mxr_symbol *const *syms, mxr_symbol **out) {
  if (num <= 0 || !syms || !out) return mxr_set_error(MXR_EINVAL, "mxr_symbol_group: bad arguments");
  size_t total = 0;
  for (int k = 0; k < num; k++) {
    if (!syms[k]) return mxr_set_error(MXR_EINVAL, "group: symbol %d is NULL", k);
    total += (size_t)syms[k]->num_nodes;
  }
  mxr_symbol *r;
  int st = mxr__symbol_new(&r);
  if (st) return st;
  struct uid_map map;
  st = uid_map_init(&map, total);
  struct mxr_entry *heads = NULL;
  int nheads = 0;
  for (int k = 0; k < num && !st; k++) {
    /* merge each head separately: merge_symbol wants one head */
    for (int h = 0; h < syms[k]->num_heads && !st; h++) {
      mxr_symbol view = *syms[k];
      view.heads = &syms[k]->heads[h];
      view.num_heads = 1;
      struct mxr_entry e;
      st = merge_symbol(r, &map, &view, &e);
      struct mxr_entry *grown = st ? NULL : realloc(heads, (size_t)(nheads + 1) * sizeof *heads);
      if (!st && !grown) st = oom("group");
      if (!st) {
        heads = grown;
        heads[nheads++] = e;
      }
    }
  }
  uid_map_free(&map);
  if (!st) st = mxr__symbol_set_heads(r, heads, nheads);
  free(heads);
  if (!st) st = mxr__graph_canonicalize(r);
  if (st) {
    mxr_symbol_free(r);
    return st;
  }
  *out = r;
  return 0;
}

/* ----------------------------------------------------- canonical order */

struct dfs_frame {
  int node;
  int next;
};

/* Depth-first post-order from the heads: order[k] = old index. */
static int dfs_order(const mxr_symbol *s, int *order, int *count) {
  enum { UNSEEN, ACTIVE, DONE };
  char *state = calloc((size_t)s->num_nodes + 1, 1);
  struct dfs_frame *stack = malloc(((size_t)s->num_nodes + 1) * sizeof *stack);
  if (!state || !stack) {
    free(state);
    free(stack);
    return oom("graph order");
  }
  int n = 0, st = 0;
  for (int h = 0; h < s->num_heads && !st; h++) {
    int root = s->heads[h].node;
    if (root < 0 || root >= s->num_nodes) {
      st = mxr_set_error(MXR_EINVAL, "graph: head %d points at node %d of %d", h, root, s->num_nodes);
      break;
    }
    if (state[root] == DONE) continue;
    int top = 0;
    stack[top] = (struct dfs_frame){root, 0};
    state[root] = ACTIVE;
    while (top >= 0 && !st) {
      struct dfs_frame *f = &stack[top];
      const struct mxr_node *node = &s->nodes[f->node];
      if (f->next < node->nin) {
        int in = node->inputs[f->next++].node;
        if (in < 0) continue; /* unbound input of an atomic symbol */
        if (in >= s->num_nodes) {
          st = mxr_set_error(MXR_EINVAL, "graph: node '%s' reads node %d of %d", node->name, in, s->num_nodes);
        } else if (state[in] == ACTIVE) {
          st = mxr_set_error(MXR_EINVAL, "graph: cycle through node '%s'", s->nodes[in].name);
        } else if (state[in] == UNSEEN) {
          state[in] = ACTIVE;
          stack[++top] = (struct dfs_frame){in, 0};
        }
        continue;
      }
      state[f->node] = DONE;
      order[n++] = f->node;
      top--;
    }
  }
  free(state);
  free(stack);
  *count = n;
  return st;
}

int mxr__graph_canonicalize(mxr_symbol *s) {
  int *order = malloc(((size_t)s->num_nodes + 1) * sizeof *order);
  int *where = malloc(((size_t)s->num_nodes + 1) * sizeof *where);
  struct mxr_node *nodes = malloc(((size_t)s->num_nodes + 1) * sizeof *nodes);
  int count = 0, st = (!order || !where || !nodes) ? oom("graph order") : 0;
  if (!st) st = dfs_order(s, order, &count);
  if (st) {
    free(order);
    free(where);
    free(nodes);
    return st;
  }
  for (int i = 0; i < s->num_nodes; i++) where[i] = -1;
  for (int k = 0; k < count; k++) where[order[k]] = k;
  for (int k = 0; k < count; k++) {
    nodes[k] = s->nodes[order[k]];
    for (int i = 0; i < nodes[k].nin; i++)
      if (nodes[k].inputs[i].node >= 0) nodes[k].inputs[i].node = where[nodes[k].inputs[i].node];
  }
  for (int i = 0; i < s->num_nodes; i++)
    if (where[i] < 0) mxr__node_clear(&s->nodes[i]); /* unreachable */
  for (int h = 0; h < s->num_heads; h++) s->heads[h].node = where[s->heads[h].node];
  free(s->nodes);
  s->nodes = nodes;
  s->num_nodes = count;
  s->cap_nodes = s->num_nodes + 1;
  free(order);
  free(where);
  drop_lists(s);
  return 0;
}

/* -------------------------------------------------------------- lists */

bool mxr__symbol_var_is_aux(const mxr_symbol *s, int v) {
  for (int i = 0; i < s->num_nodes; i++) {
    const struct mxr_node *n = &s->nodes[i];
    if (mxr__node_is_var(n)) continue;
    int nin = mxr__node_num_inputs(n);
    for (int k = nin; k < n->nin; k++)
      if (n->inputs[k].node == v) return true;
  }
  return false;
}

static int push_name(char ***list, int *count, const char *name) {
  char **grown = realloc(*list, (size_t)(*count + 1) * sizeof **list);
  if (!grown) return oom("names");
  *list = grown;
  grown[*count] = strdup(name);
  if (!grown[*count]) return oom("names");
  (*count)++;
  return 0;
}

static int output_name(const mxr_symbol *s, int h, char *buf, size_t size) {
  const struct mxr_node *n = &s->nodes[s->heads[h].node];
  if (mxr__node_is_var(n)) snprintf(buf, size, "%s", n->name);
  else if (mxr__node_num_visible(n) == 1) snprintf(buf, size, "%s_output", n->name);
  else snprintf(buf, size, "%s_output%d", n->name, s->heads[h].index);
  return 0;
}

static int build_lists(mxr_symbol *s) {
  if (s->lists_valid) return 0;
  drop_lists(s);
  int st = 0;
  char buf[600];
  for (int i = 0; i < s->num_nodes && !st; i++) {
    if (!mxr__node_is_var(&s->nodes[i])) continue;
    if (mxr__symbol_var_is_aux(s, i)) st = push_name(&s->auxs, &s->num_auxs, s->nodes[i].name);
    else st = push_name(&s->args, &s->num_args, s->nodes[i].name);
    if (!st) st = push_name(&s->inputs, &s->num_inputs, s->nodes[i].name);
  }
  for (int h = 0; h < s->num_heads && !st; h++) {
    output_name(s, h, buf, sizeof buf);
    st = push_name(&s->outputs, &s->num_outputs, buf);
  }
  if (st) drop_lists(s);
  else s->lists_valid = true;
  return st;
}

static int list(const mxr_symbol *cs, int which, int *num, const char *const **names) {
  if (!cs || !num || !names) return mxr_set_error(MXR_EINVAL, "symbol list: NULL argument");
  mxr_symbol *s = (mxr_symbol *)cs; /* the lists are a cache */
  int st = build_lists(s);
  if (st) return st;
  char **l[4] = {s->args, s->outputs, s->auxs, s->inputs};
  int n[4] = {s->num_args, s->num_outputs, s->num_auxs, s->num_inputs};
  *num = n[which];
  *names = (const char *const *)l[which];
  return 0;
}

int mxr_symbol_list_arguments(const mxr_symbol *s, int *num, const char *const **names) {
  return list(s, 0, num, names);
}
int mxr_symbol_list_outputs(const mxr_symbol *s, int *num, const char *const **names) {
  return list(s, 1, num, names);
}
int mxr_symbol_list_auxiliary_states(const mxr_symbol *s, int *num, const char *const **names) {
  return list(s, 2, num, names);
}
int mxr_symbol_list_inputs(const mxr_symbol *s, int *num, const char *const **names) {
  return list(s, 3, num, names);
}
