/*
 * TAP version 13 (report/report.h): one plan, one test point per assertion, and a
 * YAML block of diagnostics under each.  Values are written in JSON syntax,
 * which YAML 1.2 reads as flow scalars and collections, so the block is
 * valid YAML without a YAML library.
 *
 * Directives: skip -> "ok N - name # SKIP reason"; xfail -> "not ok N -
 * name # TODO expected failure: reason"; xpass -> "ok N - name # TODO
 * unexpected pass: reason" (a TAP consumer such as automake's driver counts
 * it as XPASS, a failure, as mxcts does); unsupported -> "not ok N - name
 * (unsupported)", and with an unsupported expectation "not ok N - name
 * (unsupported) # TODO expected unsupported: reason" (automake: XFAIL).
 */
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "judge/judge.h"
#include "report/report.h"

static void yaml_value(FILE *f, const json_t *v) {
  char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_PRESERVE_ORDER |
                              JSON_REAL_PRECISION(6));
  fputs(s ? s : "null", f);
  free(s);
}

static void yaml_kv(FILE *f, int indent, const char *key, const json_t *v) {
  if (!v) return;
  fprintf(f, "%*s%s: ", indent, "", key);
  yaml_value(f, v);
  fputc('\n', f);
}

/* A TAP description: no '#' (it starts a directive), no newline. */
static void tap_text(FILE *f, const char *s) {
  for (; s && *s; s++) {
    if (*s == '#') fputs("\\#", f);
    else if (*s == '\n' || *s == '\r') fputc(' ', f);
    else fputc(*s, f);
  }
}

static const char *const pair_keys[] = {
    "slower", "faster", "slower_median", "faster_median", "ratio_median", "wins", "rounds",
    "rounds_left_out", "decided_at", "llr", "upper", "fail_llr", "fail_upper", "margin", "decision",
    NULL};

static void yaml_pairs(FILE *f, const json_t *pairs) {
  fprintf(f, "  pairs:\n");
  size_t i;
  json_t *p;
  json_array_foreach(pairs, i, p) {
    json_t *brief = json_object();
    for (size_t k = 0; pair_keys[k]; k++) {
      json_t *v = json_object_get(p, pair_keys[k]);
      if (v) json_object_set(brief, pair_keys[k], v);
    }
    if (strcmp(json_string_value(json_object_get(p, "slower_measure")), "timing.median")) {
      json_object_set(brief, "slower_measure", json_object_get(p, "slower_measure"));
      json_object_set(brief, "faster_measure", json_object_get(p, "faster_measure"));
    }
    fprintf(f, "    - ");
    yaml_value(f, brief);
    fputc('\n', f);
    json_decref(brief);
  }
}

static void yaml_configs(FILE *f, const json_t *suite, const json_t *a) {
  fprintf(f, "  configs:\n");
  size_t i, k;
  json_t *id, *c;
  json_array_foreach(json_object_get(a, "configs"), i, id) {
    json_array_foreach(json_object_get(suite, "configs"), k, c) {
      if (!json_equal(json_object_get(c, "id"), id)) continue;
      fprintf(f, "    ");
      yaml_value(f, id);
      fprintf(f, ": {\"env\": ");
      yaml_value(f, json_object_get(c, "env"));
      fprintf(f, ", \"median\": ");
      json_t *t = json_object_get(c, "timings");
      size_t n = 0, r;
      json_t *x;
      double *vals = mxcts_xcalloc(json_array_size(t) + 1, sizeof *vals);
      json_array_foreach(t, r, x) {
        if (json_is_number(x)) vals[n++] = json_number_value(x);
      }
      if (n) {
        fprintf(f, "%.6g, \"unit\": ", mxcts_median(vals, n));
        yaml_value(f, json_object_get(c, "unit"));
      } else {
        fprintf(f, "null");
      }
      free(vals);
      fprintf(f, "}\n");
    }
  }
}

static void yaml_block(FILE *f, const json_t *results, const json_t *suite, const json_t *a) {
  fprintf(f, "  ---\n");
  yaml_kv(f, 2, "suite", json_object_get(suite, "name"));
  yaml_kv(f, 2, "assertion", json_object_get(a, "id"));
  yaml_kv(f, 2, "type", json_object_get(a, "type"));
  yaml_kv(f, 2, "verdict", json_object_get(a, "verdict"));
  if (!json_equal(json_object_get(a, "verdict"), json_object_get(a, "raw_verdict")))
    yaml_kv(f, 2, "raw_verdict", json_object_get(a, "raw_verdict"));
  const char *detail = json_string_value(json_object_get(a, "detail"));
  if (detail && *detail) yaml_kv(f, 2, "detail", json_object_get(a, "detail"));
  yaml_kv(f, 2, "expectation", json_object_get(a, "expectation"));
  yaml_kv(f, 2, "seed", json_object_get(results, "seed"));
  const char *type = json_string_value(json_object_get(a, "type"));
  if (type && !strcmp(type, "ordering")) {
    yaml_kv(f, 2, "rounds_run", json_object_get(suite, "rounds_run"));
    yaml_kv(f, 2, "max_rounds", json_object_get(suite, "max_rounds"));
    yaml_kv(f, 2, "sprt", json_object_get(suite, "sprt"));
    json_t *pairs = json_object_get(json_object_get(a, "diag"), "pairs");
    if (json_array_size(pairs)) yaml_pairs(f, pairs);
  }
  yaml_kv(f, 2, "missing", json_object_get(json_object_get(a, "diag"), "missing"));
  yaml_configs(f, suite, a);
  yaml_kv(f, 2, "command_job", json_object_get(a, "command_job"));
  yaml_kv(f, 2, "command", json_object_get(a, "command"));
  fprintf(f, "  ...\n");
}

static void test_point(FILE *f, size_t n, const json_t *results, const json_t *suite,
                       const json_t *a) {
  int v = mxcts_verdict_parse(json_string_value(json_object_get(a, "verdict")));
  const char *reason = json_string_value(json_object_get(json_object_get(a, "expectation"), "reason"));
  bool inconclusive = v == MXCTS_V_INCONCLUSIVE; /* a skip: neither proven nor refuted */
  bool ok = v == MXCTS_V_PASS || v == MXCTS_V_SKIP || v == MXCTS_V_XPASS || inconclusive;
  fprintf(f, "%s %zu - ", ok ? "ok" : "not ok", n);
  tap_text(f, json_string_value(json_object_get(a, "name")));
  if (v != MXCTS_V_PASS && v != MXCTS_V_SKIP && v != MXCTS_V_XFAIL && v != MXCTS_V_XPASS &&
      !inconclusive) {
    fprintf(f, " (%s)", mxcts_verdict_name((enum mxcts_verdict)(v < 0 ? MXCTS_V_ERROR : v)));
  }
  if (inconclusive) {
    fprintf(f, " # SKIP inconclusive: ");
    tap_text(f, json_string_value(json_object_get(a, "detail")));
  } else if (v == MXCTS_V_SKIP) {
    fprintf(f, " # SKIP ");
    tap_text(f, json_string_value(json_object_get(a, "detail")));
  } else if (v == MXCTS_V_XFAIL) {
    fprintf(f, " # TODO expected failure: ");
    tap_text(f, reason);
  } else if (v == MXCTS_V_XPASS) {
    fprintf(f, " # TODO unexpected pass: ");
    tap_text(f, reason);
  } else if (v == MXCTS_V_UNSUPPORTED && !mxcts_assertion_fails(a)) {
    fprintf(f, " # TODO expected unsupported: ");
    tap_text(f, reason);
  }
  fputc('\n', f);
  yaml_block(f, results, suite, a);
}

int mxcts_report_tap(const json_t *results, FILE *f) {
  size_t total = 0, i, k;
  json_t *s, *a;
  json_array_foreach(json_object_get(results, "suites"), i, s)
    total += json_array_size(json_object_get(s, "assertions"));
  fprintf(f, "TAP version 13\n1..%zu\n", total);
  size_t n = 0;
  json_array_foreach(json_object_get(results, "suites"), i, s) {
    json_array_foreach(json_object_get(s, "assertions"), k, a) test_point(f, ++n, results, s, a);
  }
  return ferror(f) ? mxcts_set_error(MXR_ESYS, "write error") : 0;
}
