/*
 * What frontends show of an op (mxr_op_info, MXSymbolGetAtomicSymbolInfo):
 * argument names, MXNet-style type strings and a description, built for
 * for one op on its first query and kept for the life of the process.
 * The entries are found by a linear scan: a frontend asks once per op.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/threads.h"
#include "op/op_internal.h"

#define INFO_TEXT_MAX 512

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
  /* Enough room for every word of a signature, or every input, aux state
   * and field. */
  int cap = op->not_implemented ? (int)strlen(op->mxnet_signature) + 1
                                : op->nin + op->naux + op->num_fields + 1;
  e->names = calloc((size_t)cap, sizeof *e->names);
  e->types = calloc((size_t)cap, sizeof *e->types);
  e->descs = calloc((size_t)cap, sizeof *e->descs);
  if (!e->names || !e->types || !e->descs) return MXR_ENOMEM;
  int st = op->not_implemented ? fill_from_signature(e, cap, op->mxnet_signature)
                               : fill_implemented(e, cap);
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
