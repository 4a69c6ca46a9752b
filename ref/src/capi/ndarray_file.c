/*
 * MXNDArraySave and MXNDArrayLoad: MXNet's NDArray list files (.params).
 *
 * The layout (MXNet 1.9.1 src/ndarray/ndarray.cc, NDArray::Save / Load and
 * src/c_api/c_api.cc), little-endian: uint64 0x112 (kMXAPINDArrayListMagic),
 * uint64 reserved (0), uint64 count, the arrays, uint64 count of names (0
 * or the array count), per name uint64 length and the bytes.  An array:
 * uint32 magic, then for V2 (0xF993FAC9) and V3 (0xF993FACA, NumPy shape
 * semantics) int32 storage type (only 0, dense, is supported here), and for
 * every version int32 ndim and int64 dims; an array with no shape (ndim 0,
 * or -1 under V3) ends there; else int32 device type, int32 device id,
 * int32 dtype and the data.  V1 (0xF993FAC8) has no storage type.
 * Arrays are written as V2 with their own context; loaded arrays live on
 * cpu(0) (MXNet copies an array saved from a GPU back to that GPU).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi/capi_internal.h"

#define LIST_MAGIC UINT64_C(0x112)
#define V1_MAGIC 0xF993FAC8u
#define V2_MAGIC 0xF993FAC9u
#define V3_MAGIC 0xF993FACAu

/* ------------------------------------------------------------------ save */

struct writer {
  FILE *f;
  const char *path;
  int st;
};

static void put(struct writer *w, const void *p, size_t n) {
  if (!w->st && n && fwrite(p, 1, n, w->f) != n)
    w->st = mxr_set_error(MXR_ESYS, "MXNDArraySave: cannot write %s: %s", w->path, strerror(errno));
}

static void put_u64(struct writer *w, uint64_t v) { put(w, &v, 8); }
static void put_i32(struct writer *w, int32_t v) { put(w, &v, 4); }

static void put_array(struct writer *w, mxr_ndarray *arr) {
  int ndim = mxr_ndarray_ndim(arr);
  const int64_t *shape = mxr_ndarray_shape(arr);
  struct mxr_context ctx = mxr_ndarray_context(arr);
  int dtype = mxr_ndarray_dtype(arr);
  size_t n = (size_t)mxr_ndarray_size(arr), bytes = n * mxr_dtype_size(dtype);
  put(w, &(uint32_t){V2_MAGIC}, 4);
  put_i32(w, 0); /* dense */
  put_i32(w, ndim);
  put(w, shape, (size_t)ndim * 8);
  put_i32(w, ctx.dev_type), put_i32(w, ctx.dev_id), put_i32(w, dtype);
  void *buf = bytes ? malloc(bytes) : NULL;
  if (!w->st && bytes && !buf) w->st = mxr_set_error(MXR_ENOMEM, "MXNDArraySave: out of memory (%zu bytes)", bytes);
  if (!w->st && n) w->st = mxr_ndarray_sync_copy_to_cpu(arr, buf, n);
  put(w, buf, bytes);
  free(buf);
}

static int check_save_args(const char *fn, const char *fname, uint32_t n, NDArrayHandle *args, mxr_ndarray **arrs) {
  if (!fname) return mxr__capi_null(fn, "fname");
  if (n && !args) return mxr__capi_null(fn, "args");
  for (uint32_t i = 0; i < n; i++) {
    char what[32];
    snprintf(what, sizeof what, "args[%u]", (unsigned)i);
    int st = mxr__capi_ndarray(args[i], fn, what, &arrs[i]);
    if (st) return st;
    if (mxr_ndarray_is_none(arrs[i]))
      return mxr_set_error(MXR_EINVAL, "%s: args[%u] is a placeholder with no shape", fn, (unsigned)i);
  }
  return 0;
}

int MXNDArraySave(const char *fname, uint32_t num_args, NDArrayHandle *args, const char **keys) {
  static const char fn[] = "MXNDArraySave";
  mxr_ndarray **arrs = calloc((size_t)num_args + 1, sizeof *arrs);
  if (!arrs) return capi_ret(mxr_set_error(MXR_ENOMEM, "%s: out of memory", fn));
  int st = check_save_args(fn, fname, num_args, args, arrs);
  for (uint32_t i = 0; !st && keys && i < num_args; i++)
    if (!keys[i]) st = mxr__capi_null(fn, "keys[i]");
  struct writer w = {.path = fname};
  if (!st && !(w.f = fopen(fname, "wb"))) st = mxr_set_error(MXR_ESYS, "%s: cannot open %s: %s", fn, fname, strerror(errno));
  if (!st) {
    put_u64(&w, LIST_MAGIC), put_u64(&w, 0), put_u64(&w, num_args);
    for (uint32_t i = 0; i < num_args; i++) put_array(&w, arrs[i]);
    put_u64(&w, keys ? num_args : 0);
    for (uint32_t i = 0; keys && i < num_args; i++) put_u64(&w, strlen(keys[i])), put(&w, keys[i], strlen(keys[i]));
    if (fclose(w.f) != 0 && !w.st) w.st = mxr_set_error(MXR_ESYS, "%s: cannot write %s: %s", fn, fname, strerror(errno));
    st = w.st;
  }
  free(arrs);
  return capi_ret(st);
}

/* ------------------------------------------------------------------ load */

struct reader {
  const char *path;
  const unsigned char *b;
  size_t len, pos;
};

static int bad(const struct reader *r, const char *what) {
  return mxr_set_error(MXR_EINVAL, "MXNDArrayLoad: %s: byte %zu: %s", r->path, r->pos, what);
}

static int take(struct reader *r, void *out, size_t n, const char *what) {
  if (r->len - r->pos < n) {
    char msg[96];
    snprintf(msg, sizeof msg, "the file ends inside %s", what);
    return bad(r, msg);
  }
  memcpy(out, r->b + r->pos, n);
  r->pos += n;
  return 0;
}

static int read_shape(struct reader *r, uint32_t magic, int64_t *dims, int *ndim) {
  int32_t nd = 0;
  if (magic != V1_MAGIC) {
    int32_t stype = 0;
    int st = take(r, &stype, 4, "the storage type");
    if (st) return st;
    if (stype != 0) return bad(r, "a sparse array (storage type not 0), which libmxref does not support");
  }
  int st = take(r, &nd, 4, "ndim");
  if (!st && (nd > MXR_MAX_NDIM || nd < (magic == V3_MAGIC ? -1 : 0))) st = bad(r, "ndim out of range");
  for (int i = 0; !st && i < nd; i++) {
    st = take(r, &dims[i], 8, "the shape");
    if (!st && (dims[i] < 0 || dims[i] > INT32_MAX)) st = bad(r, "a dimension out of range");
  }
  *ndim = nd;
  return st;
}

/* One array; *out is a new array (a placeholder for one saved without a
 * shape). */
static int read_array(struct reader *r, mxr_engine *eng, mxr_ndarray **out) {
  uint32_t magic = 0;
  int st = take(r, &magic, 4, "an array's magic number");
  if (!st && magic != V1_MAGIC && magic != V2_MAGIC && magic != V3_MAGIC)
    st = bad(r, "not an NDArray magic number (files from before MXNet 0.9 are not supported)");
  int64_t dims[MXR_MAX_NDIM];
  int ndim = 0;
  if (!st) st = read_shape(r, magic, dims, &ndim);
  if (!st && (ndim < 0 || (ndim == 0 && magic != V3_MAGIC))) return mxr_ndarray_create_none(eng, out);
  int32_t ctx[2], dtype = 0;
  if (!st) st = take(r, ctx, 8, "the context");
  if (!st) st = take(r, &dtype, 4, "the dtype");
  if (!st && mxr_dtype_size(dtype) == 0) st = bad(r, "an unknown dtype");
  if (st) return st;
  struct mxr_context cpu = {1, 0};
  st = mxr_ndarray_create(eng, dims, ndim, cpu, dtype, 0, out);
  size_t n = st ? 0 : (size_t)mxr_ndarray_size(*out);
  if (!st && n > (r->len - r->pos) / mxr_dtype_size(dtype)) st = bad(r, "the file ends inside an array's data");
  if (!st && n) st = mxr_ndarray_sync_copy_from_cpu(*out, r->b + r->pos, n);
  r->pos += n * mxr_dtype_size(dtype);
  return st;
}

/* The names: none, or one per array; *names is malloc'd, pointing into
 * `chars` (also malloc'd). */
static int read_names(struct reader *r, uint64_t count, char ***names, char **chars) {
  uint64_t n = 0;
  int st = take(r, &n, 8, "the name count");
  if (!st && n != 0 && n != count) st = bad(r, "the name count is neither 0 nor the array count");
  if (st || n == 0) return st;
  *names = calloc(n, sizeof **names);
  *chars = malloc(r->len - r->pos + n);
  if (!*names || !*chars) return mxr_set_error(MXR_ENOMEM, "MXNDArrayLoad: out of memory");
  char *p = *chars;
  for (uint64_t i = 0; !st && i < n; i++) {
    uint64_t len = 0;
    st = take(r, &len, 8, "a name's length");
    if (!st && len > r->len - r->pos) st = bad(r, "a name longer than the rest of the file");
    if (!st) {
      memcpy(p, r->b + r->pos, len), p[len] = '\0';
      (*names)[i] = p, p += len + 1, r->pos += len;
    }
  }
  return st;
}

static int read_file(const char *fn, const char *path, unsigned char **out, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return mxr_set_error(MXR_ESYS, "%s: cannot open %s: %s", fn, path, strerror(errno));
  size_t cap = 1 << 16, n = 0;
  unsigned char *b = malloc(cap);
  for (size_t got = 1; b && got;) {
    if (n == cap) {
      unsigned char *nb = realloc(b, cap *= 2);
      if (!nb) free(b);
      b = nb;
      if (!b) break;
    }
    got = fread(b + n, 1, cap - n, f);
    n += got;
  }
  int err = ferror(f);
  fclose(f);
  if (!b) return mxr_set_error(MXR_ENOMEM, "%s: out of memory reading %s", fn, path);
  if (err) {
    free(b);
    return mxr_set_error(MXR_ESYS, "%s: cannot read %s", fn, path);
  }
  *out = b, *len = n;
  return 0;
}

static int load_list(struct reader *r, mxr_engine *eng, mxr_ndarray ***arrs, uint64_t *count) {
  uint64_t head[3] = {0};
  int st = take(r, head, sizeof head, "the header");
  if (!st && head[0] != LIST_MAGIC) st = bad(r, "not an NDArray list file (magic is not 0x112)");
  if (!st && head[2] > (r->len - r->pos) / 12) st = bad(r, "an array count larger than the file can hold");
  if (st) return st;
  *count = head[2];
  *arrs = calloc(head[2] + 1, sizeof **arrs);
  if (!*arrs) return mxr_set_error(MXR_ENOMEM, "MXNDArrayLoad: out of memory");
  for (uint64_t i = 0; !st && i < head[2]; i++) st = read_array(r, eng, &(*arrs)[i]);
  return st;
}

int MXNDArrayLoad(const char *fname, uint32_t *out_size, NDArrayHandle **out_arr, uint32_t *out_name_size,
                  const char ***out_names) {
  static const char fn[] = "MXNDArrayLoad";
  if (!fname) return capi_ret(mxr__capi_null(fn, "fname"));
  if (!out_size || !out_arr || !out_name_size || !out_names) return capi_ret(mxr__capi_null(fn, "an out pointer"));
  mxr_engine *eng;
  unsigned char *bytes = NULL;
  size_t len = 0;
  int st = mxr_engine_default(&eng);
  if (!st) st = read_file(fn, fname, &bytes, &len);
  struct reader r = {fname, bytes, len, 0};
  mxr_ndarray **arrs = NULL;
  uint64_t count = 0;
  char **names = NULL, *chars = NULL;
  if (!st) st = load_list(&r, eng, &arrs, &count);
  if (!st) st = read_names(&r, count, &names, &chars);
  if (!st) st = mxr__capi_return_names((int)(names ? count : 0), (const char *const *)names, out_name_size, out_names);
  if (!st) {
    st = mxr__capi_return_arrays(arrs, (int)count, out_arr, NULL); /* takes the references, also on failure */
    if (!st) *out_size = (uint32_t)count;
  } else {
    for (uint64_t i = 0; arrs && i < count; i++) mxr_ndarray_free(arrs[i]);
  }
  free(arrs), free(names), free(chars), free(bytes);
  return capi_ret(st);
}
