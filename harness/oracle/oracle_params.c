/*
 * The oracle's parameter parser: MXNet-style strings ("(2,2)", "True",
 * "None", "0.5") into struct mxcts_oracle_value, with each op's defaults.
 * Written for the oracle alone; it shares nothing with ref/src/op/params.c.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle/oracle_internal.h"

/* [*b, *e) without surrounding blanks. */
static void trim(const char *text, const char **b, const char **e) {
  const char *s = text, *t = text + strlen(text);
  while (s < t && isspace((unsigned char)*s)) s++;
  while (t > s && isspace((unsigned char)t[-1])) t--;
  *b = s;
  *e = t;
}

/* Does [b, e) spell `word` exactly? */
static bool spells(const char *b, const char *e, const char *word) {
  size_t n = strlen(word);
  return (size_t)(e - b) == n && memcmp(b, word, n) == 0;
}

/* A decimal integer filling [b, e) exactly. */
static int int_span(const char *b, const char *e, int64_t *out) {
  char buf[32];
  size_t n = (size_t)(e - b);
  if (n == 0 || n >= sizeof buf) return MXCTS_ORACLE_EINVAL;
  memcpy(buf, b, n);
  buf[n] = '\0';
  const char *p = buf;
  if (*p == '+' || *p == '-') p++;
  if (!isdigit((unsigned char)*p)) return MXCTS_ORACLE_EINVAL;
  for (; *p; p++)
    if (!isdigit((unsigned char)*p)) return MXCTS_ORACLE_EINVAL;
  errno = 0;
  long long v = strtoll(buf, NULL, 10);
  if (errno == ERANGE) return MXCTS_ORACLE_EINVAL;
  *out = (int64_t)v;
  return 0;
}

int mxcts_oracle_parse_int(const char *text, int64_t *out) {
  const char *b, *e;
  if (!text) return MXCTS_ORACLE_EINVAL;
  trim(text, &b, &e);
  return int_span(b, e, out);
}

int mxcts_oracle_parse_float(const char *text, double *out) {
  const char *b, *e;
  if (!text) return MXCTS_ORACLE_EINVAL;
  trim(text, &b, &e);
  char buf[64];
  size_t n = (size_t)(e - b);
  if (n == 0 || n >= sizeof buf) return MXCTS_ORACLE_EINVAL;
  memcpy(buf, b, n);
  buf[n] = '\0';
  char *end;
  errno = 0;
  double v = strtod(buf, &end);
  if (*end != '\0' || end == buf || errno == ERANGE || !isfinite(v)) return MXCTS_ORACLE_EINVAL;
  *out = v;
  return 0;
}

int mxcts_oracle_parse_bool(const char *text, bool *out) {
  const char *b, *e;
  if (!text) return MXCTS_ORACLE_EINVAL;
  trim(text, &b, &e);
  static const char *const yes[] = {"True", "true", "1"}, *const no[] = {"False", "false", "0"};
  for (int i = 0; i < 3; i++) {
    if (spells(b, e, yes[i])) return *out = true, 0;
    if (spells(b, e, no[i])) return *out = false, 0;
  }
  return MXCTS_ORACLE_EINVAL;
}

int mxcts_oracle_parse_tuple(const char *text, int *n, int64_t *v) {
  const char *b, *e;
  if (!text) return MXCTS_ORACLE_EINVAL;
  trim(text, &b, &e);
  if (b == e) return MXCTS_ORACLE_EINVAL;
  int64_t tmp[MXCTS_ORACLE_MAX_NDIM];
  int count = 0;
  if ((*b == '(' && e[-1] == ')') || (*b == '[' && e[-1] == ']')) {
    b++, e--;
    const char *s = b;
    while (s < e && isspace((unsigned char)*s)) s++;
    if (s == e) { /* "()" */
      *n = 0;
      return 0;
    }
    for (;;) {
      const char *comma = memchr(b, ',', (size_t)(e - b)), *end = comma ? comma : e;
      const char *ib = b, *ie = end;
      while (ib < ie && isspace((unsigned char)*ib)) ib++;
      while (ie > ib && isspace((unsigned char)ie[-1])) ie--;
      if (ib == ie) {
        /* only a trailing comma may leave an empty entry: "(2,)" */
        if (!comma) break;
        return MXCTS_ORACLE_EINVAL;
      }
      if (count == MXCTS_ORACLE_MAX_NDIM || int_span(ib, ie, &tmp[count])) return MXCTS_ORACLE_EINVAL;
      count++;
      if (!comma) break;
      b = comma + 1;
    }
  } else { /* a bare integer */
    if (int_span(b, e, &tmp[0])) return MXCTS_ORACLE_EINVAL;
    count = 1;
  }
  *n = count;
  memcpy(v, tmp, (size_t)count * sizeof tmp[0]);
  return 0;
}

int mxcts_oracle_parse_value(int type, const char *const *choices, const char *text,
                             struct mxcts_oracle_value *out) {
  struct mxcts_oracle_value v;
  memset(&v, 0, sizeof v);
  if (!text || strlen(text) >= sizeof v.s) return MXCTS_ORACLE_EINVAL;
  strcpy(v.s, text);
  const char *b, *e;
  trim(text, &b, &e);
  bool none = spells(b, e, "None");
  bool flag;
  int st = MXCTS_ORACLE_EINVAL;
  switch (type) {
    case MXCTS_ORACLE_P_OPT_INT:
      if (none) {
        v.none = true, st = 0;
        break;
      }
      /* fall through */
    case MXCTS_ORACLE_P_INT: st = mxcts_oracle_parse_int(text, &v.i); break;
    case MXCTS_ORACLE_P_OPT_FLOAT:
      if (none) {
        v.none = true, st = 0;
        break;
      }
      /* fall through */
    case MXCTS_ORACLE_P_FLOAT: st = mxcts_oracle_parse_float(text, &v.f); break;
    case MXCTS_ORACLE_P_OPT_BOOL:
      if (none) {
        v.none = true, st = 0;
        break;
      }
      /* fall through */
    case MXCTS_ORACLE_P_BOOL:
      st = mxcts_oracle_parse_bool(text, &flag);
      v.i = flag;
      break;
    case MXCTS_ORACLE_P_OPT_TUPLE:
      if (none) {
        v.none = true, st = 0;
        break;
      }
      /* fall through */
    case MXCTS_ORACLE_P_TUPLE: st = mxcts_oracle_parse_tuple(text, &v.n, v.t); break;
    case MXCTS_ORACLE_P_ENUM:
      for (int i = 0; choices && choices[i]; i++)
        if (spells(b, e, choices[i])) {
          v.i = i, st = 0;
          break;
        }
      break;
    case MXCTS_ORACLE_P_STRING: st = 0; break;
    default: break;
  }
  if (st) return st;
  *out = v;
  return 0;
}

/* What a type accepts, for messages. */
static void expected_text(const struct mxcts_oracle_field *f, char *buf, size_t size) {
  static const char *const what[] = {
      [MXCTS_ORACLE_P_INT] = "an integer",
      [MXCTS_ORACLE_P_FLOAT] = "a finite number",
      [MXCTS_ORACLE_P_BOOL] = "True or False",
      [MXCTS_ORACLE_P_TUPLE] = "a tuple of integers such as (2,2)",
      [MXCTS_ORACLE_P_OPT_INT] = "None or an integer",
      [MXCTS_ORACLE_P_OPT_FLOAT] = "None or a finite number",
      [MXCTS_ORACLE_P_OPT_TUPLE] = "None, an integer or a tuple such as (0,1)",
      [MXCTS_ORACLE_P_OPT_BOOL] = "None, True or False",
      [MXCTS_ORACLE_P_STRING] = "a string",
  };
  if (f->type != MXCTS_ORACLE_P_ENUM) {
    snprintf(buf, size, "%s", what[f->type] ? what[f->type] : "?");
    return;
  }
  size_t at = (size_t)snprintf(buf, size, "one of");
  for (int i = 0; f->choices[i] && at < size; i++)
    at += (size_t)snprintf(buf + at, size - at, "%s %s", i ? "," : "", f->choices[i]);
}

int mxcts__oracle_parse_params(struct mxcts_oracle_call *c, int nparams, const char *const *keys,
                               const char *const *vals, struct mxcts_oracle_error *err) {
  const struct mxcts_oracle_opdef *d = c->def;
  char exp[160];
  for (int i = 0; i < d->nfields; i++) {
    const struct mxcts_oracle_field *f = &d->fields[i];
    if (f->def && mxcts_oracle_parse_value(f->type, f->choices, f->def, &c->pv[i]))
      return mxcts__oracle_fail(err, MXCTS_ORACLE_EINVAL, c->op, "bad default for %s", f->name);
  }
  if (nparams < 0 || (nparams > 0 && (!keys || !vals)))
    return mxcts__oracle_fail(err, MXCTS_ORACLE_EINVAL, c->op, "%d parameters without keys or values",
                              nparams);
  for (int k = 0; k < nparams; k++) {
    if (!keys[k] || !vals[k])
      return mxcts__oracle_fail(err, MXCTS_ORACLE_EINVAL, c->op, "parameter %d is NULL", k);
    int i = 0;
    while (i < d->nfields && strcmp(d->fields[i].name, keys[k]) != 0) i++;
    if (i == d->nfields)
      return mxcts__oracle_fail(err, MXCTS_ORACLE_EINVAL, c->op, "unknown parameter '%s'", keys[k]);
    const struct mxcts_oracle_field *f = &d->fields[i];
    if (c->pv[i].given)
      return mxcts__oracle_fail(err, MXCTS_ORACLE_EINVAL, c->op, "parameter %s is given twice",
                                f->name);
    if (mxcts_oracle_parse_value(f->type, f->choices, vals[k], &c->pv[i])) {
      expected_text(f, exp, sizeof exp);
      return mxcts__oracle_fail(err, MXCTS_ORACLE_EINVAL, c->op,
                                "parameter %s='%s' is not valid: expected %s", f->name, vals[k], exp);
    }
    c->pv[i].given = true;
  }
  for (int i = 0; i < d->nfields; i++)
    if (!d->fields[i].def && !c->pv[i].given)
      return mxcts__oracle_fail(err, MXCTS_ORACLE_EINVAL, c->op, "required parameter %s is missing",
                                d->fields[i].name);
  return 0;
}
