/*
 * The op_info workload: what MXSymbolGetAtomicSymbolInfo tells frontends of
 * each op, against MXNet 1.9.1's answer (docs/probe-protocol.md).  The
 * reference is a table generated from MXNet's library
 * (build-aux/mxnet-op-info.py, suites/data/mxnet-1.9.1-op-info.json): per
 * listed name, the real op's name, the arguments as (name, type string)
 * pairs -- type strings carry the defaults -- and key_var_num_args.
 * Descriptions are prose, and not compared.
 *
 * Every name both the implementation (MXListAllOpNames) and the table list
 * is compared.  Two checks:
 *  - key_var_num_args: every op MXNet gives a key_var_num_args (Concat,
 *    add_n, stack, ...) reports the same one.  Without it MXNet's Python
 *    frontend cannot fill the count of a variadic call, and
 *    mx.nd.Concat(a, b) fails.
 *  - op_info_matches_mxnet: name, argument names, type strings and
 *    key_var_num_args equal MXNet's, for every op.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe/probe_internal.h"

#define SHOWN 4 /* differences named in a detail */

/* What the implementation reports of one name. */
struct reported {
  const char *name, *kvar;
  uint32_t nargs;
  const char **arg_names, **arg_types;
};

/* The reference file: an absolute path, or a name found in the source
 * tree's suites/data, then the installed one. */
static char *reference_path(const char *name) {
  if (name[0] == '/') return mxcts_xstrdup(name);
  const char *const dirs[] = {MXCTS_SUITES_DATA_SRC, MXCTS_SUITES_DATA_INSTALLED};
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
    char *path = mxcts_xasprintf("%s/%s", dirs[i], name);
    if (access(path, R_OK) == 0) return path;
    free(path);
  }
  return mxcts_xasprintf("%s/%s", MXCTS_SUITES_DATA_SRC, name);
}

static int load_reference(struct probe *p, json_t **ops) {
  char *path = reference_path(mxcts__probe_param_str(p, "reference", "mxnet-1.9.1-op-info.json"));
  json_error_t jerr;
  json_t *root = json_load_file(path, 0, &jerr);
  *ops = json_incref(json_object_get(root, "ops"));
  json_decref(root);
  if (!json_is_object(*ops)) {
    mxcts__probe_add_check(p, "reference", false, "%s: %s", path, root ? "no \"ops\" object" : jerr.text);
    free(path);
    json_decref(*ops);
    return -1;
  }
  free(path);
  return 0;
}

static int report_of(struct probe *p, const char *name, struct reported *r) {
  OpHandle op;
  const char *desc, *ret, **descs;
  PROBE_CALL(p, NNGetOpHandle, name, &op);
  PROBE_CALL(p, MXSymbolGetAtomicSymbolInfo, op, &r->name, &desc, &r->nargs, &r->arg_names, &r->arg_types, &descs,
             &r->kvar, &ret);
  return 0;
}

static bool same_text(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : "") == 0; }

/* The first field in which `r` differs from the reference entry `m`, written
 * into why; false when none does. */
static bool differs(json_t *m, const struct reported *r, char *why, size_t n) {
  const char *name = json_string_value(json_object_get(m, "name"));
  const char *kvar = json_string_value(json_object_get(m, "key_var_num_args"));
  json_t *args = json_object_get(m, "args");
  if (!same_text(r->name, name)) return snprintf(why, n, "name '%s', MXNet '%s'", r->name, name), true;
  if (!same_text(r->kvar, kvar))
    return snprintf(why, n, "key_var_num_args '%s', MXNet '%s'", r->kvar ? r->kvar : "(null)", kvar), true;
  size_t k = json_array_size(args);
  for (size_t i = 0; i < k || i < r->nargs; i++) {
    const char *an = json_string_value(json_array_get(json_array_get(args, i), 0));
    const char *at = json_string_value(json_array_get(json_array_get(args, i), 1));
    if (i >= r->nargs) return snprintf(why, n, "no argument %zu, MXNet's %s", i, an), true;
    if (i >= k) return snprintf(why, n, "argument %zu %s, which MXNet does not have", i, r->arg_names[i]), true;
    if (!same_text(r->arg_names[i], an))
      return snprintf(why, n, "argument %zu named %s, MXNet's %s", i, r->arg_names[i], an), true;
    if (!same_text(r->arg_types[i], at))
      return snprintf(why, n, "%s: type '%s', MXNet '%s'", an, r->arg_types[i], at), true;
  }
  return false;
}

/* Counts and the first differences of one check. */
struct tally {
  int compared, matched;
  char shown[SHOWN * 320];
};

static void tally_add(struct tally *t, const char *op, bool same, const char *why) {
  t->compared++;
  if (same) {
    t->matched++;
    return;
  }
  if (t->compared - t->matched > SHOWN) return;
  size_t used = strlen(t->shown);
  snprintf(t->shown + used, sizeof t->shown - used, "%s%s: %s", used ? "; " : "", op, why);
}

static void compare_one(json_t *m, const char *op, const struct reported *r, struct tally *kv, struct tally *all) {
  char why[300];
  const char *kvar = json_string_value(json_object_get(m, "key_var_num_args"));
  if (kvar && kvar[0]) {
    snprintf(why, sizeof why, "'%s', MXNet '%s'", r->kvar ? r->kvar : "(null)", kvar);
    tally_add(kv, op, same_text(r->kvar, kvar), why);
  }
  bool diff = differs(m, r, why, sizeof why);
  tally_add(all, op, !diff, why);
}

/* MXListAllOpNames's buffer is the library's: copy the names first. */
static int listed_names(struct probe *p, char ***names, uint32_t *n) {
  const char **list;
  PROBE_CALL(p, MXListAllOpNames, n, &list);
  *names = mxcts_xcalloc(*n ? *n : 1, sizeof **names);
  for (uint32_t i = 0; i < *n; i++) (*names)[i] = mxcts_xstrdup(list[i]);
  return 0;
}

int mxcts__probe_op_info(struct probe *p) {
  json_t *ops;
  if (load_reference(p, &ops)) return -1;
  char **names = NULL;
  uint32_t n = 0;
  int rc = listed_names(p, &names, &n);
  struct tally kv = {0}, all = {0};
  for (uint32_t i = 0; !rc && i < n; i++) {
    json_t *m = json_object_get(ops, names[i]);
    struct reported r;
    if (m && !(rc = report_of(p, names[i], &r))) compare_one(m, names[i], &r, &kv, &all);
  }
  if (!rc) {
    mxcts__probe_add_metric(p, "ops_compared", all.compared);
    mxcts__probe_add_metric(p, "ops_matching", all.matched);
    mxcts__probe_add_metric(p, "names_not_listed", (double)json_object_size(ops) - all.compared);
    mxcts__probe_add_check(p, "key_var_num_args", kv.compared > 0 && kv.matched == kv.compared,
                           "%d of %d ops MXNet gives a key_var_num_args report it%s%s", kv.matched, kv.compared,
                           kv.shown[0] ? "; " : "", kv.shown);
    mxcts__probe_add_check(p, "op_info_matches_mxnet", all.compared > 0 && all.matched == all.compared,
                           "%d of %d ops listed by both report MXNet 1.9.1's name, arguments, types and "
                           "key_var_num_args%s%s", all.matched, all.compared, all.shown[0] ? "; " : "", all.shown);
  }
  for (uint32_t i = 0; i < n; i++) free(names[i]);
  free(names);
  json_decref(ops);
  return rc;
}
