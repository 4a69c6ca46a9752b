/*
 * Op parameters: the generic parser that turns MXNet-style strings into an
 * op's params struct, driven by its field table (op_internal.h).
 *
 * Accepted forms follow dmlc::Parameter as MXNet 1.9.1 uses it: ints and
 * floats in C notation with nothing trailing; bools True/False/true/false/
 * 1/0; enums by exact name; tuples "(2,2)", "[2,2]", "(2,)", "()" or a bare
 * int; optional values "None".  Keys of the form __name__ are graph
 * attributes: kept, not parsed.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "op/op_internal.h"

const char *const mxr__dtype_choices[] = {"float32", "float64", "float16", "uint8", "int32",
                                          "int8",    "int64",   "bool",    NULL};

struct mxr_op_params {
  atomic_int refs; /* immutable after parsing, so sharing is safe */
  const mxr_op *op;
  int n;
  char **keys, **vals;
  void *parsed; /* op->params_size bytes, in the same block */
};

static const char *skip_space(const char *s) {
  while (isspace((unsigned char)*s)) s++;
  return s;
}

static bool only_space(const char *s) { return *skip_space(s) == '\0'; }

static int bad_value(const char *opname, const struct mxr_param_field *f, const char *text,
                     const char *expected) {
  return mxr_set_error(MXR_EINVAL, "%s: parameter %s='%s' is not valid: expected %s", opname,
                       f->name, text, expected);
}

static bool parse_long(const char *text, long long *out, const char **end) {
  errno = 0;
  char *e;
  long long v = strtoll(text, &e, 10);
  if (e == text || errno == ERANGE) return false;
  *out = v;
  *end = e;
  return true;
}

static bool parse_int_text(const char *text, int *out) {
  long long v;
  const char *end;
  if (!parse_long(text, &v, &end) || !only_space(end) || v < INT_MIN || v > INT_MAX) return false;
  *out = (int)v;
  return true;
}

static bool parse_float_text(const char *text, double *out) {
  errno = 0;
  char *end;
  double v = strtod(text, &end);
  if (end == text || errno == ERANGE || !only_space(end)) return false;
  *out = v;
  return true;
}

static bool parse_bool_text(const char *text, bool *out) {
  static const char *const yes[] = {"True", "true", "1"}, *const no[] = {"False", "false", "0"};
  const char *t = skip_space(text);
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(yes[i]), m = strlen(no[i]);
    if (strncmp(t, yes[i], n) == 0 && only_space(t + n)) return *out = true, true;
    if (strncmp(t, no[i], m) == 0 && only_space(t + m)) return *out = false, true;
  }
  return false;
}

static bool is_none(const char *text) {
  const char *t = skip_space(text);
  return strncmp(t, "None", 4) == 0 && only_space(t + 4);
}

/* "(1, 2)", "[1,2]", "(3,)", "()", or a bare "3". */
static bool parse_tuple_text(const char *text, struct mxr_tuple *out) {
  const char *s = skip_space(text);
  out->n = 0;
  char close = 0;
  if (*s == '(') close = ')';
  if (*s == '[') close = ']';
  if (!close) {
    long long v;
    const char *end;
    if (!parse_long(s, &v, &end) || !only_space(end)) return false;
    out->n = 1;
    out->v[0] = v;
    return true;
  }
  s = skip_space(s + 1);
  while (*s != close) {
    long long v;
    const char *end;
    if (out->n == MXR_MAX_NDIM || !parse_long(s, &v, &end)) return false;
    out->v[out->n++] = v;
    s = skip_space(end);
    if (*s == ',') s = skip_space(s + 1);
    else if (*s != close) return false;
  }
  return only_space(s + 1);
}

int mxr__param_parse_value(const char *opname, const struct mxr_param_field *f,
                           const char *text, void *params) {
  void *slot = (char *)params + f->offset;
  switch (f->type) {
    case MXR_PARAM_INT:
      return parse_int_text(text, slot) ? 0 : bad_value(opname, f, text, "an integer");
    case MXR_PARAM_FLOAT:
      return parse_float_text(text, slot) ? 0 : bad_value(opname, f, text, "a number");
    case MXR_PARAM_BOOL:
      return parse_bool_text(text, slot) ? 0 : bad_value(opname, f, text, "True or False");
    case MXR_PARAM_ENUM: {
      const char *t = skip_space(text);
      for (int i = 0; f->choices[i]; i++)
        if (strcmp(t, f->choices[i]) == 0) return *(int *)slot = i, 0;
      char expected[256] = "one of";
      for (int i = 0; f->choices[i]; i++) {
        strncat(expected, i ? ", " : " ", sizeof expected - strlen(expected) - 1);
        strncat(expected, f->choices[i], sizeof expected - strlen(expected) - 1);
      }
      return bad_value(opname, f, text, expected);
    }
    case MXR_PARAM_TUPLE:
      return parse_tuple_text(text, slot) ? 0 : bad_value(opname, f, text, "a tuple such as (2,2)");
    case MXR_PARAM_OPT_INT: {
      struct mxr_opt_int *o = slot;
      o->has = !is_none(text);
      if (!o->has || parse_int_text(text, &o->value)) return 0;
      return bad_value(opname, f, text, "None or an integer");
    }
    case MXR_PARAM_OPT_TUPLE: {
      struct mxr_opt_tuple *o = slot;
      o->has = !is_none(text);
      if (!o->has || parse_tuple_text(text, &o->t)) return 0;
      return bad_value(opname, f, text, "None, an integer or a tuple");
    }
    case MXR_PARAM_OPT_FLOAT: {
      struct mxr_opt_float *o = slot;
      o->has = !is_none(text);
      if (!o->has || parse_float_text(text, &o->value)) return 0;
      return bad_value(opname, f, text, "None or a number");
    }
    case MXR_PARAM_STRING: {
      struct mxr_param_str *o = slot;
      if (strlen(text) >= sizeof o->s) return bad_value(opname, f, text, "a shorter string");
      strcpy(o->s, text);
      return 0;
    }
  }
  return mxr_set_error(MXR_EINVAL, "%s: parameter %s has an unknown type", opname, f->name);
}

static bool is_hidden_key(const char *k) {
  size_t n = strlen(k);
  return n > 4 && strncmp(k, "__", 2) == 0 && strcmp(k + n - 2, "__") == 0;
}

static const struct mxr_param_field *find_field(const mxr_op *op, const char *key) {
  for (int i = 0; i < op->num_fields; i++)
    if (strcmp(op->fields[i].name, key) == 0) return &op->fields[i];
  return NULL;
}

static int apply_defaults(const mxr_op *op, void *parsed) {
  for (int i = 0; i < op->num_fields; i++) {
    const struct mxr_param_field *f = &op->fields[i];
    if (!f->def) continue;
    int st = mxr__param_parse_value(op->name, f, f->def, parsed);
    if (st) return st; /* a broken default is a bug in the op's table */
  }
  return 0;
}

static int check_required(const mxr_op *op, const mxr_op_params *p) {
  for (int i = 0; i < op->num_fields; i++) {
    const struct mxr_param_field *f = &op->fields[i];
    if (f->def) continue;
    bool given = false;
    for (int k = 0; k < p->n && !given; k++) given = strcmp(p->keys[k], f->name) == 0;
    if (!given)
      return mxr_set_error(MXR_EINVAL, "%s: required parameter '%s' is missing", op->name, f->name);
  }
  return 0;
}

/* Round n up to a multiple of the strictest alignment. */
static size_t align_up(size_t n) {
  size_t a = _Alignof(max_align_t);
  return (n + a - 1) / a * a;
}

/* One block holds the params, the parsed struct, the key and value pointer
 * arrays and the strings: parsing runs on every imperative call, so it
 * allocates once.  The pairs are checked for NULL before this. */
static mxr_op_params *alloc_params(const mxr_op *op, int num, const char *const *keys,
                                   const char *const *vals) {
  size_t head = align_up(sizeof(mxr_op_params)), parsed = align_up(op->params_size);
  size_t ptrs = 2 * ((size_t)num + 1) * sizeof(char *), text = 0;
  for (int i = 0; i < num; i++) text += strlen(keys[i]) + strlen(vals[i]) + 2;
  char *block = calloc(1, head + parsed + ptrs + text);
  if (!block) return NULL;
  mxr_op_params *p = (mxr_op_params *)block;
  p->parsed = block + head;
  p->keys = (char **)(block + head + parsed);
  p->vals = p->keys + num + 1;
  char *str = (char *)(p->vals + num + 1);
  for (int i = 0; i < num; i++) {
    size_t lk = strlen(keys[i]) + 1, lv = strlen(vals[i]) + 1;
    p->keys[i] = memcpy(str, keys[i], lk);
    p->vals[i] = memcpy(str + lk, vals[i], lv);
    str += lk + lv;
  }
  p->n = num;
  return p;
}

static int check_pairs(const mxr_op *op, int num, const char *const *keys,
                       const char *const *vals) {
  for (int i = 0; i < num; i++)
    if (!keys[i] || !vals[i])
      return mxr_set_error(MXR_EINVAL, "%s: parameter %d has a NULL %s", op->name, i,
                           keys[i] ? "value" : "key");
  return 0;
}

static int parse_pairs(mxr_op_params *p) {
  const mxr_op *op = p->op;
  for (int i = 0; i < p->n; i++) {
    if (is_hidden_key(p->keys[i])) continue;
    const struct mxr_param_field *f = find_field(op, p->keys[i]);
    if (!f)
      return mxr_set_error(MXR_EINVAL, "%s: unknown parameter '%s' (value '%s')", op->name,
                           p->keys[i], p->vals[i]);
    int st = mxr__param_parse_value(op->name, f, p->vals[i], p->parsed);
    if (st) return st;
  }
  return 0;
}

int mxr_op_params_parse(const mxr_op *op, int num, const char *const *keys,
                        const char *const *vals, mxr_op_params **out) {
  if (!op || !out || num < 0 || (num > 0 && (!keys || !vals)))
    return mxr_set_error(MXR_EINVAL, "mxr_op_params_parse: bad arguments");
  *out = NULL;
  if (op->not_implemented)
    return mxr_set_error(MXR_ENOTIMPL, "operator %s is not implemented by libmxref", op->name);
  int st = check_pairs(op, num, keys, vals);
  if (st) return st;
  mxr_op_params *p = alloc_params(op, num, keys, vals);
  if (!p) return mxr_set_error(MXR_ENOMEM, "op params: out of memory");
  atomic_init(&p->refs, 1);
  p->op = op;
  st = apply_defaults(op, p->parsed);
  if (!st) st = parse_pairs(p);
  if (!st) st = check_required(op, p);
  if (!st && op->check) st = op->check(op->name, p->parsed);
  if (st) {
    mxr_op_params_free(p);
    return st;
  }
  *out = p;
  return 0;
}

mxr_op_params *mxr_op_params_retain(mxr_op_params *p) {
  if (p) atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
  return p;
}

void mxr_op_params_free(mxr_op_params *p) {
  if (!p || atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) != 1) return;
  free(p); /* one block: alloc_params */
}

int mxr_op_params_count(const mxr_op_params *p) { return p ? p->n : 0; }
const char *mxr_op_params_key(const mxr_op_params *p, int i) {
  return p && i >= 0 && i < p->n ? p->keys[i] : NULL;
}
const char *mxr_op_params_value(const mxr_op_params *p, int i) {
  return p && i >= 0 && i < p->n ? p->vals[i] : NULL;
}
const void *mxr__op_params_struct(const mxr_op_params *p) { return p ? p->parsed : NULL; }
