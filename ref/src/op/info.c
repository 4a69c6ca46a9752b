/*
 * What frontends show of an op (mxr_op_info, MXSymbolGetAtomicSymbolInfo):
 * its name, argument names, MXNet-style type strings, key_var_num_args and
 * a description, built for one op on its first query and kept for the
 * life of the process.  The entries are found by a linear scan: a frontend
 * asks once per op.
 *
 * The arguments are MXNet 1.9.1's own report (mxnet_op_info.h, generated
 * from its library): type strings in dmlc's spelling, which follows C++
 * types libmxref's parameter tables do not have (float or double, int or
 * unsigned), and argument lists as MXNet registers them (none for most
 * backward ops).  An implemented op gets them only when they describe what
 * it accepts (agrees_with_mxnet): its inputs, and every parameter MXNet
 * lists, by name, with the same required-ness and default.  Otherwise,
 * and for a name MXNet does not list, the report is built from the op's
 * own tables, so a parameter table that drifts from MXNet shows.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/threads.h"
#include "op/op_internal.h"

#define INFO_TEXT_MAX 512

/* MXNet's report of one name. */
struct mxnet_arg {
  const char *name, *type;
};
struct mxnet_info {
  const char *name, *real, *kvar;
  int nargs;
  const struct mxnet_arg *args;
};
#include "op/mxnet_op_info.h"

static const char ND_TYPE[] = "NDArray-or-Symbol";
static const char ND_LIST_TYPE[] = "NDArray-or-Symbol[]";

/* One op's info and the strings it points at. */
struct info_entry {
  const mxr_op *op;
  struct mxr_op_info info;
  char **names, **types, **descs, *kvar; /* owned, as every string they hold */
};

static pthread_mutex_t info_mu = PTHREAD_MUTEX_INITIALIZER;
static struct info_entry **entries; /* grows; entries are never freed */
static size_t num_entries, cap_entries;

static bool variadic(const mxr_op *op) { return op->get_nin && !op->input_names; }

static bool has_field(const mxr_op *op, const char *name) {
  for (int i = 0; i < op->num_fields; i++)
    if (strcmp(op->fields[i].name, name) == 0) return true;
  return false;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char *type_base(const struct mxr_param_field *f, char *buf, size_t size) {
  switch (f->type) {
    case MXR_PARAM_INT: return "int";
    case MXR_PARAM_FLOAT: return "float";
    case MXR_PARAM_BOOL: return "boolean";
    case MXR_PARAM_TUPLE: return "Shape(tuple)";
    case MXR_PARAM_OPT_INT: return "int or None";
    case MXR_PARAM_OPT_TUPLE: return "Shape or None";
    case MXR_PARAM_OPT_FLOAT: return "float or None";
    case MXR_PARAM_STRING: return "string";
    case MXR_PARAM_ENUM: break;
  }
  /* Sorted, as dmlc::Parameter lists an enum's names. */
  const char *sorted[64];
  int k = 0;
  for (int i = 0; f->choices && f->choices[i] && k < 64; i++) sorted[k++] = f->choices[i];
  qsort(sorted, (size_t)k, sizeof *sorted, cmp_str);
  size_t n = (size_t)snprintf(buf, size, "{");
  for (int i = 0; i < k && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%s'%s'", i ? ", " : "", sorted[i]);
  if (n < size) snprintf(buf + n, size - n, "}");
  return buf;
}

static void field_type(const struct mxr_param_field *f, char *text, size_t size) {
  char base[INFO_TEXT_MAX / 2];
  const char *b = type_base(f, base, sizeof base);
  if (f->def)
    snprintf(text, size, "%s, optional, default=%s", b, f->def);
  else
    snprintf(text, size, "%s, required", b);
}

/* Append one argument (copies of the strings); 0 or MXR_ENOMEM. */
static int add_arg(struct info_entry *e, int cap, const char *name, size_t name_len,
                   const char *type, const char *desc) {
  int i = e->info.num_args;
  if (i >= cap) return MXR_ENOMEM; /* sized by the caller; cannot happen */
  e->names[i] = strndup(name, name_len);
  e->types[i] = strdup(type);
  e->descs[i] = strdup(desc);
  e->info.num_args++;
  return e->names[i] && e->types[i] && e->descs[i] ? 0 : MXR_ENOMEM;
}

static int add_word(struct info_entry *e, int cap, const char *word, size_t len, bool input) {
  if (!input) return add_arg(e, cap, word, len, "string, optional", "a parameter (not implemented)");
  bool list = word[0] == '*';
  return add_arg(e, cap, word + list, len - list, list ? ND_LIST_TYPE : ND_TYPE,
                 "an input (not implemented)");
}

/* A not-implemented op takes MXNet's arguments: "inputs|params|kvar". */
static int fill_from_signature(struct info_entry *e, int cap, const char *sig) {
  int st = 0, part = 0;
  const char *p = sig;
  while (!st && part < 2 && *p) {
    size_t len = strcspn(p, " |");
    if (len) st = add_word(e, cap, p, len, part == 0);
    p += len;
    if (*p == '|') part++;
    if (*p) p++;
  }
  e->kvar = strdup(part == 2 ? p : "");
  return st || !e->kvar ? MXR_ENOMEM : 0;
}

/* ---- MXNet's report, and whether it describes an implemented op --------- */

static int cmp_info_name(const void *key, const void *elem) {
  return strcmp(key, ((const struct mxnet_info *)elem)->name);
}

static const struct mxnet_info *mxnet_info_of(const char *name) {
  return bsearch(name, mxnet_infos, sizeof mxnet_infos / sizeof mxnet_infos[0], sizeof mxnet_infos[0],
                 cmp_info_name);
}

static bool is_input_arg(const struct mxnet_arg *a) {
  return strncmp(a->type, "NDArray", 7) == 0 || strncmp(a->type, "Symbol", 6) == 0;
}

static bool ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), m = strlen(tail);
  return n >= m && strcmp(s + n - m, tail) == 0;
}

/* Input i of the op's inputs then aux states. */
static const char *input_or_aux(const mxr_op *op, int i) {
  if (i < op->nin) return mxr__op_input_name_at(op, op->nin, i);
  return op->aux_names ? op->aux_names[i - op->nin] : "";
}

/* MXNet lists no inputs (most backward ops, which no frontend calls); one
 * list ("[]") for an op whose input count its parameters set; or the op's
 * inputs and aux states by name, in order -- the first of them only when
 * the count depends on the parameters (MXNet's log_softmax lists data,
 * libmxref's also takes softmax's length). */
static bool inputs_agree(const mxr_op *op, const struct mxnet_info *m) {
  int k = 0;
  const struct mxnet_arg *in[16];
  for (int i = 0; i < m->nargs; i++)
    if (is_input_arg(&m->args[i])) {
      if (k == 16) return false;
      in[k++] = &m->args[i];
    }
  if (k == 0) return true;
  bool list = k == 1 && ends_with(in[0]->type, "[]");
  if (list || variadic(op)) return list && op->get_nin;
  if (k > op->nin + op->naux || (k < op->nin + op->naux && !op->get_nin)) return false;
  for (int i = 0; i < k; i++)
    if (strcmp(in[i]->name, input_or_aux(op, i)) != 0) return false;
  return true;
}

static const struct mxr_param_field *field_named(const mxr_op *op, const char *name) {
  for (int i = 0; i < op->num_fields; i++)
    if (strcmp(op->fields[i].name, name) == 0) return &op->fields[i];
  return NULL;
}

/* The default a dmlc type string shows ("..., optional, default='X'"),
 * without its quotes; NULL for a required argument. */
static const char *shown_default(const char *type, char *buf, size_t size) {
  static const char key[] = "optional, default=";
  const char *d = strstr(type, key);
  if (!d) return NULL;
  d += sizeof key - 1;
  size_t len = strlen(d);
  if (len >= 2 && d[0] == '\'' && d[len - 1] == '\'') d++, len -= 2;
  snprintf(buf, size, "%.*s", (int)len, d);
  /* dmlc shows an unknown TShape as None and an empty one as []: both are
   * libmxref's empty tuple */
  if (strcmp(buf, "None") == 0 && strncmp(type, "Shape(tuple)", 12) == 0) snprintf(buf, size, "()");
  return buf;
}

/* Whether two parsed values of field f are equal; a C++ float (`single`)
 * is compared in float, as MXNet holds it. */
static bool same_value(const struct mxr_param_field *f, const void *a, const void *b, bool single) {
  a = (const char *)a + f->offset;
  b = (const char *)b + f->offset;
  switch (f->type) {
    case MXR_PARAM_INT:
    case MXR_PARAM_ENUM: return *(const int *)a == *(const int *)b;
    case MXR_PARAM_BOOL: return *(const bool *)a == *(const bool *)b;
    case MXR_PARAM_FLOAT: {
      double x = *(const double *)a, y = *(const double *)b;
      return single ? (float)x == (float)y : x == y;
    }
    case MXR_PARAM_TUPLE: {
      const struct mxr_tuple *x = a, *y = b;
      return x->n == y->n && memcmp(x->v, y->v, (size_t)x->n * sizeof x->v[0]) == 0;
    }
    case MXR_PARAM_OPT_INT: {
      const struct mxr_opt_int *x = a, *y = b;
      return x->has == y->has && (!x->has || x->value == y->value);
    }
    case MXR_PARAM_OPT_TUPLE: {
      const struct mxr_opt_tuple *x = a, *y = b;
      return x->has == y->has && (!x->has || (x->t.n == y->t.n && memcmp(x->t.v, y->t.v, (size_t)x->t.n * sizeof x->t.v[0]) == 0));
    }
    case MXR_PARAM_OPT_FLOAT: {
      const struct mxr_opt_float *x = a, *y = b;
      return x->has == y->has && (!x->has || (single ? (float)x->value == (float)y->value : x->value == y->value));
    }
    case MXR_PARAM_STRING: return strcmp(((const struct mxr_param_str *)a)->s, ((const struct mxr_param_str *)b)->s) == 0;
  }
  return false;
}

/* Both defaults parsed by the op's own parser, then compared; scratch holds
 * two params structs. */
static bool same_default(const mxr_op *op, const struct mxr_param_field *f, const char *shown, bool single,
                         char *scratch) {
  char *a = scratch, *b = scratch + op->params_size;
  memset(scratch, 0, 2 * op->params_size);
  return mxr__param_parse_value(op->name, f, f->def, a) == 0 &&
         mxr__param_parse_value(op->name, f, shown, b) == 0 && same_value(f, a, b, single);
}

/* Every parameter MXNet lists is a field of the op, required alike and with
 * an equal default; and when MXNet lists any, the op has no others. */
static bool params_agree(const mxr_op *op, const struct mxnet_info *m, char *scratch) {
  int listed = 0;
  char shown[INFO_TEXT_MAX];
  for (int i = 0; i < m->nargs; i++) {
    const struct mxnet_arg *a = &m->args[i];
    if (is_input_arg(a)) continue;
    listed++;
    const struct mxr_param_field *f = field_named(op, a->name);
    const char *d = shown_default(a->type, shown, sizeof shown);
    if (!f || !d != !f->def) return false;
    if (d && !same_default(op, f, d, strncmp(a->type, "float", 5) == 0, scratch)) return false;
  }
  return listed == 0 || listed == op->num_fields;
}

/* A parse failure while comparing must not become the caller's error
 * message: the query itself succeeds. */
static bool agrees_with_mxnet(const mxr_op *op, const struct mxnet_info *m) {
  char saved[MXR_ERROR_MAX];
  snprintf(saved, sizeof saved, "%s", mxr_last_error());
  char *scratch = calloc(2, op->params_size ? op->params_size : 1);
  bool same = scratch && inputs_agree(op, m) && params_agree(op, m, scratch);
  free(scratch);
  mxr_set_error(0, "%s", saved);
  return same;
}

static int fill_from_mxnet(struct info_entry *e, int cap, const struct mxnet_info *m) {
  int st = 0;
  for (int i = 0; !st && i < m->nargs; i++) {
    const struct mxnet_arg *a = &m->args[i];
    st = add_arg(e, cap, a->name, strlen(a->name), a->type, is_input_arg(a) ? "an input" : "a parameter");
  }
  e->kvar = strdup(m->kvar);
  return st || !e->kvar ? MXR_ENOMEM : 0;
}

/* ---- the op's own tables --------------------------------------------------- */

static int fill_implemented(struct info_entry *e, int cap) {
  const mxr_op *op = e->op;
  int st = 0;
  char type[INFO_TEXT_MAX];
  if (variadic(op)) st = add_arg(e, cap, "data", 4, ND_LIST_TYPE, "the input arrays");
  for (int i = 0; !variadic(op) && !st && i < op->nin; i++) {
    const char *name = mxr__op_input_name_at(op, op->nin, i);
    st = add_arg(e, cap, name, strlen(name), ND_TYPE, "an input array");
  }
  for (int i = 0; !variadic(op) && !st && i < op->naux; i++)
    st = add_arg(e, cap, op->aux_names[i], strlen(op->aux_names[i]), ND_TYPE, "an auxiliary state");
  for (int i = 0; !st && i < op->num_fields; i++) {
    field_type(&op->fields[i], type, sizeof type);
    st = add_arg(e, cap, op->fields[i].name, strlen(op->fields[i].name), type, "a parameter");
  }
  e->kvar = strdup(variadic(op) && has_field(op, "num_args") ? "num_args" : "");
  return st || !e->kvar ? MXR_ENOMEM : 0;
}

static char *describe(const mxr_op *op) {
  char text[INFO_TEXT_MAX];
  if (op->not_implemented)
    snprintf(text, sizeof text,
             "operator %s is not implemented by libmxref: it is listed because MXNet 1.9.1 "
             "registers it, and every use of it fails.\n",
             op->name);
  else
    snprintf(text, sizeof text, "%s, as implemented by libmxref (MXNet 1.9.1's semantics).\n",
             op->name);
  return strdup(text);
}

/* Fill e's arguments and description; 0 or MXR_ENOMEM (the caller frees). */
static int fill_args(struct info_entry *e) {
  const mxr_op *op = e->op;
  const struct mxnet_info *m = mxnet_info_of(op->name);
  if (m && !op->not_implemented && !agrees_with_mxnet(op, m)) m = NULL;
  /* Enough room for MXNet's arguments, every word of a signature, or every
   * input, aux state and field. */
  int cap = m ? m->nargs + 1
              : op->not_implemented ? (int)strlen(op->mxnet_signature) + 1
                                    : op->nin + op->naux + op->num_fields + 1;
  e->names = calloc((size_t)cap, sizeof *e->names);
  e->types = calloc((size_t)cap, sizeof *e->types);
  e->descs = calloc((size_t)cap, sizeof *e->descs);
  if (!e->names || !e->types || !e->descs) return MXR_ENOMEM;
  int st = m                     ? fill_from_mxnet(e, cap, m)
           : op->not_implemented ? fill_from_signature(e, cap, op->mxnet_signature)
                                 : fill_implemented(e, cap);
  e->info.name = m ? m->real : op->name;
  e->info.description = describe(op);
  e->info.arg_names = (const char *const *)e->names;
  e->info.arg_types = (const char *const *)e->types;
  e->info.arg_descs = (const char *const *)e->descs;
  e->info.key_var_num_args = e->kvar;
  return st || !e->info.description ? MXR_ENOMEM : 0;
}

static void free_args(struct info_entry *e) {
  for (int i = 0; i < e->info.num_args; i++) {
    free(e->names[i]);
    free(e->types[i]);
    free(e->descs[i]);
  }
  free(e->names);
  free(e->types);
  free(e->descs);
  free(e->kvar);
  free((void *)e->info.description);
}

static const struct info_entry *find_locked(const mxr_op *op) {
  for (size_t i = 0; i < num_entries; i++)
    if (entries[i]->op == op) return entries[i];
  return NULL;
}

static int add_locked(const mxr_op *op, const struct info_entry **out) {
  if (num_entries == cap_entries) {
    size_t cap = cap_entries ? 2 * cap_entries : 256;
    struct info_entry **grown = realloc(entries, cap * sizeof *grown);
    if (!grown) return MXR_ENOMEM;
    entries = grown;
    cap_entries = cap;
  }
  struct info_entry *e = calloc(1, sizeof *e);
  if (!e) return MXR_ENOMEM;
  e->op = op;
  if (fill_args(e)) {
    free_args(e);
    free(e);
    return MXR_ENOMEM;
  }
  entries[num_entries++] = e;
  *out = e;
  return 0;
}

int mxr_op_info(const mxr_op *op, const struct mxr_op_info **out) {
  if (!op || !out) return mxr_set_error(MXR_EINVAL, "mxr_op_info: NULL argument");
  MXR_PTHREAD_CHECK(pthread_mutex_lock(&info_mu));
  const struct info_entry *e = find_locked(op);
  int st = e ? 0 : add_locked(op, &e);
  MXR_PTHREAD_CHECK(pthread_mutex_unlock(&info_mu));
  if (st) return mxr_set_error(MXR_ENOMEM, "mxr_op_info: out of memory");
  *out = &e->info;
  return 0;
}
