/*
 * MXNet's NDArray list file (.params) for the network workload: read by
 * the probe itself, or through the implementation's MXNDArrayLoad.
 *
 * The layout (MXNet 1.9.1 src/ndarray/ndarray.cc, NDArray::Save and
 * MXNDArraySave), little-endian: uint64 0x112 (kMXAPINDArrayListMagic),
 * uint64 reserved, uint64 count, then per array uint32 0xF993FAC9
 * (NDARRAY_V2_MAGIC), int32 storage type (0: default), int32 ndim, int64
 * dims[ndim], int32 device type, int32 device id, int32 dtype, the data;
 * then uint64 count and per name uint64 length and the bytes ("arg:NAME",
 * "aux:NAME").  The probe reads float32 dense arrays only.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe_internal.h"

#define ND_LIST_MAGIC 0x112ull
#define NDARRAY_V2_MAGIC 0xF993FAC9u

struct reader {
  const char *path;
  const unsigned char *b;
  size_t len, pos;
  char err[512];
};

static bool bad(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool bad(struct reader *r, const char *fmt, ...) {
  char what[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(r->err, sizeof r->err, "%s: byte %zu: %s", r->path, r->pos, what);
  return false;
}

static bool take(struct reader *r, void *out, size_t n, const char *what) {
  if (r->len - r->pos < n) return bad(r, "file ends inside %s", what);
  memcpy(out, r->b + r->pos, n);
  r->pos += n;
  return true;
}

/* One array's header; on success r->pos is at its data. */
static bool read_header(struct reader *r, struct mxcts__param_array *a) {
  uint32_t magic = 0;
  int32_t stype = 0, ndim = 0, ctx[2], dtype = 0;
  if (!take(r, &magic, 4, "an array's magic")) return false;
  if (magic != NDARRAY_V2_MAGIC) return bad(r, "array magic 0x%08x, want 0x%08x", magic, NDARRAY_V2_MAGIC);
  if (!take(r, &stype, 4, "the storage type") || !take(r, &ndim, 4, "ndim")) return false;
  if (stype != 0) return bad(r, "storage type %d: only dense (0) arrays are read", stype);
  if (ndim < 1 || ndim > 8) return bad(r, "ndim %d (want 1..8)", ndim);
  a->ndim = ndim;
  a->size = 1;
  for (int i = 0; i < ndim; i++) {
    if (!take(r, &a->shape[i], 8, "the shape")) return false;
    if (a->shape[i] < 1 || a->shape[i] > (1ll << 31)) return bad(r, "dimension %lld", (long long)a->shape[i]);
    a->size *= a->shape[i];
  }
  if (!take(r, ctx, 8, "the context") || !take(r, &dtype, 4, "the dtype")) return false;
  if (dtype != 0) return bad(r, "dtype %d: only float32 (0) is read", dtype);
  if ((size_t)a->size > (r->len - r->pos) / 4) return bad(r, "file ends inside %lld floats", (long long)a->size);
  a->data = (const float *)(r->b + r->pos);
  r->pos += (size_t)a->size * 4;
  return true;
}

static bool read_names(struct reader *r, struct mxcts__param_file *f) {
  uint64_t n = 0;
  if (!take(r, &n, 8, "the name count")) return false;
  if (n != (uint64_t)f->n) return bad(r, "%llu names for %d arrays", (unsigned long long)n, f->n);
  for (int i = 0; i < f->n; i++) {
    uint64_t len = 0;
    if (!take(r, &len, 8, "a name's length")) return false;
    if (len > 4096 || len > r->len - r->pos) return bad(r, "name length %llu", (unsigned long long)len);
    f->arrays[i].name = mxcts_xstrndup((const char *)r->b + r->pos, (size_t)len);
    r->pos += (size_t)len;
  }
  return true;
}

static bool read_list(struct reader *r, struct mxcts__param_file *f) {
  uint64_t head[3] = {0};
  if (!take(r, head, sizeof head, "the list header")) return false;
  if (head[0] != ND_LIST_MAGIC) return bad(r, "list magic 0x%llx, want 0x112", (unsigned long long)head[0]);
  if (head[2] < 1 || head[2] > 100000) return bad(r, "array count %llu", (unsigned long long)head[2]);
  f->n = (int)head[2];
  f->arrays = calloc((size_t)f->n, sizeof *f->arrays);
  if (!f->arrays) return bad(r, "out of memory for %d arrays", f->n);
  for (int i = 0; i < f->n; i++)
    if (!read_header(r, &f->arrays[i])) return false;
  return read_names(r, f);
}

int mxcts__param_file_read(const char *path, struct mxcts__param_file *f, char *err, size_t errlen) {
  memset(f, 0, sizeof *f);
  size_t len = 0;
  if (mxcts_read_file(path, &f->bytes, &len) != 0) {
    snprintf(err, errlen, "%s", mxcts_last_error());
    return -1;
  }
  struct reader r = {.path = path, .b = (const unsigned char *)f->bytes, .len = len};
  if (read_list(&r, f)) return 0;
  snprintf(err, errlen, "%s", r.err);
  mxcts__param_file_free(f);
  return -1;
}

void mxcts__param_file_free(struct mxcts__param_file *f) {
  for (int i = 0; f->arrays && i < f->n; i++) free(f->arrays[i].name);
  free(f->arrays);
  free(f->bytes);
  memset(f, 0, sizeof *f);
}
