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
  const char **names, **types, **descs;
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

static int num_inputs_listed(const mxr_op *op) {
  if (op->not_implemented || variadic(op)) return 1;
  return op->nin;
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
  size_t n = (size_t)snprintf(buf, size, "{");
  for (int i = 0; f->choices && f->choices[i] && n < size; i++)
    n += (size_t)snprintf(buf + n, size - n, "%s'%s'", i ? ", " : "", f->choices[i]);
  if (n < size) snprintf(buf + n, size - n, "}");
  return buf;
}

static char *field_type(const struct mxr_param_field *f) {
  char base[INFO_TEXT_MAX / 2], text[INFO_TEXT_MAX];
  const char *b = type_base(f, base, sizeof base);
  if (f->def)
    snprintf(text, sizeof text, "%s, optional, default=%s", b, f->def);
  else
    snprintf(text, sizeof text, "%s, required", b);
  return strdup(text);
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

/* Fill e's argument arrays; 0 or MXR_ENOMEM (the caller frees). */
static int fill_args(struct info_entry *e) {
  const mxr_op *op = e->op;
  int nin = num_inputs_listed(op), nf = op->not_implemented ? 0 : op->num_fields;
  int n = nin + nf;
  e->names = calloc((size_t)n + 1, sizeof *e->names);
  e->types = calloc((size_t)n + 1, sizeof *e->types);
  e->descs = calloc((size_t)n + 1, sizeof *e->descs);
  if (!e->names || !e->types || !e->descs) return MXR_ENOMEM;
  bool list = op->not_implemented || variadic(op);
  for (int i = 0; i < nin; i++) {
    e->names[i] = list ? "data" : mxr__op_input_name_at(op, nin, i);
    e->types[i] = list ? ND_LIST_TYPE : ND_TYPE;
    e->descs[i] = list ? "the input arrays" : "an input array";
  }
  for (int i = 0; i < nf; i++) {
    e->names[nin + i] = op->fields[i].name;
    e->types[nin + i] = field_type(&op->fields[i]);
    e->descs[nin + i] = "a parameter";
    if (!e->types[nin + i]) return MXR_ENOMEM;
  }
  e->info = (struct mxr_op_info){
      .description = describe(op),
      .num_args = n,
      .arg_names = e->names,
      .arg_types = e->types,
      .arg_descs = e->descs,
      .key_var_num_args = variadic(op) && has_field(op, "num_args") ? "num_args" : "",
  };
  return e->info.description ? 0 : MXR_ENOMEM;
}

static void free_args(struct info_entry *e) {
  int nin = num_inputs_listed(e->op);
  for (int i = nin; e->types && e->types[i]; i++) free((void *)e->types[i]);
  free(e->names);
  free(e->types);
  free(e->descs);
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
