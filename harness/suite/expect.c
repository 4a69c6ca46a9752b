/* Expectation files (suite/suite.h). */
#include "suite/suite.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

const char *mxcts_expect_kind_name(enum mxcts_expect_kind k) {
  switch (k) {
  case MXCTS_EXPECT_FAIL: return "fail";
  case MXCTS_EXPECT_FLAKY: return "flaky";
  case MXCTS_EXPECT_SKIP: return "skip";
  case MXCTS_EXPECT_UNSUPPORTED: return "unsupported";
  case MXCTS_EXPECT_EXIT_CRASH: return "exit-crash";
  }
  return "?";
}

/* Next whitespace-separated word of *p (advanced); NULL at the end. */
static char *next_word(const char **p) {
  while (**p == ' ' || **p == '\t') (*p)++;
  if (!**p) return NULL;
  const char *start = *p;
  while (**p && **p != ' ' && **p != '\t') (*p)++;
  return mxcts_xstrndup(start, (size_t)(*p - start));
}

static bool valid_glob(const char *s) {
  if (!*s) return false;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && !strchr("_.-*?[]!", *s)) return false;
  return true;
}

static int parse_kind(const char *word, enum mxcts_expect_kind *k) {
  for (int i = MXCTS_EXPECT_FAIL; i <= MXCTS_EXPECT_EXIT_CRASH; i++)
    if (!strcmp(word, mxcts_expect_kind_name((enum mxcts_expect_kind)i))) {
      *k = (enum mxcts_expect_kind)i;
      return 0;
    }
  return -1;
}

static int parse_line(const char *line, const char *file, int lineno,
                      struct mxcts_expect_entry *e) {
  const char *p = line;
  char *kind = next_word(&p), *pattern = next_word(&p);
  while (*p == ' ' || *p == '\t') p++;
  int rc = 0;
  if (parse_kind(kind, &e->kind))
    rc = mxcts_set_error(MXR_EINVAL, "%s:%d: unknown kind \"%s\" (known: fail, flaky, skip, unsupported, exit-crash)",
                         file, lineno, kind);
  else if (!pattern || !*p)
    rc = mxcts_set_error(MXR_EINVAL, "%s:%d: expected \"%s SUITE/ASSERTION REASON...\" (%s "
                         "missing)", file, lineno, kind, pattern ? "the reason is" : "a pattern is");
  if (!rc) {
    const char *slash = strchr(pattern, '/');
    e->suite = slash ? mxcts_xstrndup(pattern, (size_t)(slash - pattern)) : mxcts_xstrdup(pattern);
    e->assertion = mxcts_xstrdup(slash ? slash + 1 : "*");
    e->reason = mxcts_xstrdup(p);
    e->line = lineno;
    if (!valid_glob(e->suite) || !valid_glob(e->assertion) || strchr(e->assertion, '/'))
      rc = mxcts_set_error(MXR_EINVAL, "%s:%d: \"%s\" is not a SUITE/ASSERTION pattern", file,
                           lineno, pattern);
  }
  free(kind);
  free(pattern);
  return rc;
}

int mxcts_expect_parse(const char *text, const char *file, struct mxcts_expectations *out) {
  struct mxcts_expectations ex = {0};
  size_t cap = 0;
  ex.file = mxcts_xstrdup(file);
  int lineno = 0, rc = 0;
  for (const char *p = text; *p && !rc;) {
    size_t n = strcspn(p, "\n");
    char *line = mxcts_xstrndup(p, n);
    p += n + (p[n] == '\n');
    lineno++;
    while (n > 0 && isspace((unsigned char)line[n - 1])) line[--n] = '\0';
    const char *s = line + strspn(line, " \t");
    if (*s && *s != '#') {
      mxcts_grow(&ex.v, &cap, ex.n + 1, sizeof *ex.v);
      memset(&ex.v[ex.n], 0, sizeof *ex.v);
      rc = parse_line(s, file, lineno, &ex.v[ex.n]);
      ex.n++;
    }
    free(line);
  }
  if (rc) {
    mxcts_expect_free(&ex);
    memset(out, 0, sizeof *out);
    return rc;
  }
  *out = ex;
  return 0;
}

int mxcts_expect_load(const char *path, struct mxcts_expectations *out) {
  char *text;
  size_t len;
  memset(out, 0, sizeof *out);
  int rc = mxcts_read_file(path, &text, &len);
  if (rc) return rc;
  if (memchr(text, '\0', len))
    rc = mxcts_set_error(MXR_EINVAL, "%s: not a text file (it holds a NUL byte)", path);
  else
    rc = mxcts_expect_parse(text, path, out);
  free(text);
  return rc;
}

void mxcts_expect_free(struct mxcts_expectations *e) {
  for (size_t i = 0; i < e->n; i++) {
    free(e->v[i].suite);
    free(e->v[i].assertion);
    free(e->v[i].reason);
  }
  free(e->v);
  free(e->file);
  memset(e, 0, sizeof *e);
}

static const struct mxcts_expect_entry *match(struct mxcts_expectations *e, const char *suite,
                                              const char *assertion, bool exit_crash) {
  for (size_t i = 0; e && i < e->n; i++) {
    if ((e->v[i].kind == MXCTS_EXPECT_EXIT_CRASH) != exit_crash) continue;
    if (fnmatch(e->v[i].suite, suite, 0) || fnmatch(e->v[i].assertion, assertion, 0)) continue;
    e->v[i].used = true;
    return &e->v[i];
  }
  return NULL;
}

const struct mxcts_expect_entry *mxcts_expect_match(struct mxcts_expectations *e,
                                                    const char *suite, const char *assertion) {
  return match(e, suite, assertion, false);
}

const struct mxcts_expect_entry *mxcts_expect_exit_crash(struct mxcts_expectations *e,
                                                         const char *suite, const char *assertion) {
  return match(e, suite, assertion, true);
}

const struct mxcts_expect_entry *mxcts_expect_skips_suite(struct mxcts_expectations *e,
                                                          const char *suite) {
  for (size_t i = 0; e && i < e->n; i++) {
    if (e->v[i].kind != MXCTS_EXPECT_SKIP || strcmp(e->v[i].assertion, "*")) continue;
    if (fnmatch(e->v[i].suite, suite, 0)) continue;
    e->v[i].used = true;
    return &e->v[i];
  }
  return NULL;
}
