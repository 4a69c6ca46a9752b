/*
 * Aggregate statistics: per op name, count and total/min/max duration; and
 * their printing in MXNet 1.9.1's two layouts (AggregateStats::DumpTable and
 * DumpJson, src/profiler/aggregate_stats.cc): one section per category,
 * categories in byte order, entries sorted by the chosen statistic
 * (descending unless ascending), equal values by name, descending.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxref/error.h"
#include "mxref/profiler.h"
#include "profiler/profiler_internal.h"

const char *mxr__prof_category(const char *name) {
  if (strncmp(name, MXR_PROFILER_CUDA_GRAPH_PREFIX, strlen(MXR_PROFILER_CUDA_GRAPH_PREFIX)) == 0)
    return "cuda_graph";
  return strstr(name, "::") ? "Custom Operator" : "operator";
}

static uint64_t fnv1a(const char *s, size_t len) {
  uint64_t h = UINT64_C(14695981039346656037);
  for (size_t i = 0; i < len; i++) {
    h ^= (unsigned char)s[i];
    h *= UINT64_C(1099511628211);
  }
  return h;
}

static int grow(struct agg_table *t) {
  size_t ncap = t->cap ? t->cap * 2 : 16;
  struct agg_entry *ns = calloc(ncap, sizeof *ns);
  if (!ns) return MXR_ENOMEM;
  for (size_t i = 0; i < t->cap; i++) {
    struct agg_entry *e = &t->slots[i];
    if (!e->name) continue;
    size_t j = (size_t)e->hash & (ncap - 1);
    while (ns[j].name) j = (j + 1) & (ncap - 1);
    ns[j] = *e;
  }
  free(t->slots);
  t->slots = ns;
  t->cap = ncap;
  return 0;
}

/* The entry for `name`, inserted (zeroed, min at UINT64_MAX) if new; NULL
 * when out of memory. */
static struct agg_entry *find_or_insert(struct agg_table *t, const char *name, size_t len,
                                        uint64_t h) {
  if ((t->n + 1) * 10 > t->cap * 7 && grow(t) != 0) return NULL;
  size_t mask = t->cap - 1;
  size_t i = (size_t)h & mask;
  while (t->slots[i].name) {
    struct agg_entry *e = &t->slots[i];
    if (e->hash == h && memcmp(e->name, name, len) == 0 && e->name[len] == '\0') return e;
    i = (i + 1) & mask;
  }
  char *copy = malloc(len + 1);
  if (!copy) return NULL;
  memcpy(copy, name, len);
  copy[len] = '\0';
  struct agg_entry *e = &t->slots[i];
  e->name = copy;
  e->hash = h;
  e->count = e->total_us = e->max_us = 0;
  e->min_us = UINT64_MAX;
  t->n++;
  return e;
}

int mxr__agg_add(struct agg_table *t, const char *name, size_t len, uint64_t dur_us) {
  struct agg_entry *e = find_or_insert(t, name, len, fnv1a(name, len));
  if (!e) return MXR_ENOMEM;
  e->count++;
  e->total_us += dur_us;
  if (dur_us < e->min_us) e->min_us = dur_us;
  if (dur_us > e->max_us) e->max_us = dur_us;
  return 0;
}

int mxr__agg_merge(struct agg_table *dst, const struct agg_table *src) {
  for (size_t i = 0; i < src->cap; i++) {
    const struct agg_entry *s = &src->slots[i];
    if (!s->name) continue;
    struct agg_entry *d = find_or_insert(dst, s->name, strlen(s->name), s->hash);
    if (!d) return MXR_ENOMEM;
    d->count += s->count;
    d->total_us += s->total_us;
    if (s->min_us < d->min_us) d->min_us = s->min_us;
    if (s->max_us > d->max_us) d->max_us = s->max_us;
  }
  return 0;
}

void mxr__agg_clear(struct agg_table *t) {
  for (size_t i = 0; i < t->cap; i++) free(t->slots[i].name);
  free(t->slots);
  t->slots = NULL;
  t->cap = t->n = 0;
}

/* ---- printing ------------------------------------------------------------------ */

struct sort_item {
  const struct agg_entry *e;
  double key;
};

static int sort_cmp(const void *pa, const void *pb) {
  const struct sort_item *a = pa, *b = pb;
  /* MXNet pops a max-heap of (value, name): larger value first, then the
   * larger name. */
  if (a->key != b->key) return a->key > b->key ? -1 : 1;
  return -strcmp(a->e->name, b->e->name);
}

static double sort_key(const struct agg_entry *e, int sort_by) {
  switch (sort_by) {
    case 1: return (double)e->total_us / (double)e->count; /* avg */
    case 2: return (double)e->min_us;
    case 3: return (double)e->max_us;
    case 4: return (double)e->count;
    default: return (double)e->total_us;
  }
}

/* MXNet converts microseconds to float milliseconds before printing. */
static double ms(double us) { return (double)(float)(us / 1000.0); }

static void json_escaped(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
  fputc('"', f);
}

static const char *const categories[] = {"Custom Operator", "cuda_graph", "operator"}; /* byte order */
#define NCAT 3

char *mxr__agg_format(const struct agg_table *t, int format, int sort_by, int ascending) {
  struct sort_item *items = malloc((t->n ? t->n : 1) * sizeof *items);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = items ? open_memstream(&buf, &len) : NULL;
  if (!f) {
    free(items);
    return NULL;
  }
  if (format == 0) {
    fprintf(f, "\nProfile Statistics:\n\tNote the difference in units for different entries.\n");
  } else {
    fprintf(f, "{\n    \"Time\": {\n");
  }
  bool any_section = false;
  for (int c = 0; c < NCAT; c++) {
    size_t n = 0;
    for (size_t i = 0; i < t->cap; i++) {
      const struct agg_entry *e = &t->slots[i];
      if (!e->name || strcmp(mxr__prof_category(e->name), categories[c]) != 0) continue;
      double k = sort_key(e, sort_by);
      items[n].e = e;
      items[n].key = ascending ? -k : k;
      n++;
    }
    if (n == 0) continue;
    qsort(items, n, sizeof *items, sort_cmp);
    if (format == 0) {
      fprintf(f, "%s\n=================\n", categories[c]);
      fprintf(f, "%-25s%16s %16s %16s %16s %16s\n", "Name", "Total Count", "Time (ms)",
              "Min Time (ms)", "Max Time (ms)", "Avg Time (ms)");
      fprintf(f, "%-25s%16s %16s %16s %16s %16s\n", "----", "-----------", "---------",
              "-------------", "-------------", "-------------");
      for (size_t i = 0; i < n; i++) {
        const struct agg_entry *e = items[i].e;
        fprintf(f, "%-25s%16llu %16.4f %16.4f %16.4f %16.4f\n", e->name,
                (unsigned long long)e->count, ms((double)e->total_us), ms((double)e->min_us),
                ms((double)e->max_us), ms((double)e->total_us / (double)e->count));
      }
      fprintf(f, "\n");
    } else {
      if (any_section) fprintf(f, "        ,\n");
      fprintf(f, "        ");
      json_escaped(f, categories[c]);
      fprintf(f, ": {\n");
      for (size_t i = 0; i < n; i++) {
        const struct agg_entry *e = items[i].e;
        if (i) fprintf(f, "            ,\n");
        fprintf(f, "            ");
        json_escaped(f, e->name);
        fprintf(f,
                ": {\n"
                "                \"Count\": %llu,\n"
                "                \"Total\": %.4g,\n"
                "                \"Min\": %.4g,\n"
                "                \"Max\": %.4g,\n"
                "                \"Avg\": %.4g\n"
                "            }\n",
                (unsigned long long)e->count, ms((double)e->total_us), ms((double)e->min_us),
                ms((double)e->max_us), ms((double)e->total_us / (double)e->count));
      }
      fprintf(f, "        }\n");
    }
    any_section = true;
  }
  if (format != 0) {
    fprintf(f,
            "    }\n"
            "    ,\n"
            "    \"Memory\": {\n"
            "    }\n"
            ",\n"
            "    \"Unit\": {\n"
            "        \"Time\": \"ms\",\n"
            "        \"Memory\": \"kB\"\n"
            "    }\n"
            "}\n");
  }
  bool failed = ferror(f) != 0;
  if (fclose(f) != 0) failed = true;
  free(items);
  if (failed) {
    free(buf);
    return NULL;
  }
  return buf;
}
