/*
 * The ndarray_views workload: the array calls behind Python's indexing and
 * reshaping, each judged by an exact check (docs/probe-protocol.md).  The
 * array is a 4x3 float32 matrix holding 0, 1, ..., 11.
 *
 * - MXNDArraySlice(a, 1, 3) (Python's a[1:3]) holds rows 1 and 2, and
 *   shares a's memory: a write through the slice shows in a.
 * - MXNDArrayAt(a, 2) (a[2]) holds row 2.
 * - MXNDArrayReshape64(a, (2,6)) holds the same elements in row-major
 *   order, and shares a's memory.
 * - MXNDArraySyncCopyFromCPU and MXNDArraySyncCopyToCPU refuse a size that
 *   is not the array's (sizes count elements): copying 11 or 13 elements
 *   into or out of 12 fails and leaves both sides as they were.
 * - MXImperativeInvokeEx with an output from MXNDArrayCreateNone gives that
 *   placeholder the op's inferred shape and result.
 */
#include <stdio.h>
#include <string.h>

#include "probe/probe.h"
#include "probe/probe_internal.h"

enum { ROWS = 4, COLS = 3, N = ROWS * COLS };

/* A new 4x3 float32 array on the probe's device holding 0..11. */
static int new_matrix(struct probe *p, NDArrayHandle *out) {
  uint32_t shape[] = {ROWS, COLS};
  float x[N];
  for (int i = 0; i < N; i++) x[i] = (float)i;
  PROBE_CALL(p, MXNDArrayCreateEx, shape, 2, p->dev_type, 0, 0, 0, out);
  PROBE_CALL(p, MXNDArraySyncCopyFromCPU, *out, x, (size_t)N);
  return 0;
}

/* Whether y[0..n) equals 0..11 from element `first` on. */
static bool counts_from(const float *y, int n, int first) {
  for (int i = 0; i < n; i++)
    if (y[i] != (float)(first + i)) return false;
  return true;
}

static int check_slice(struct probe *p, NDArrayHandle a) {
  NDArrayHandle s;
  float y[2 * COLS], all[N], minus[2 * COLS];
  PROBE_CALL(p, MXNDArraySlice, a, 1, 3, &s);
  int rc = p->api.MXNDArraySyncCopyToCPU(s, y, 2 * COLS) ? mxcts__probe_fail(p, "MXNDArraySyncCopyToCPU") : 0;
  if (!rc)
    mxcts__probe_add_check(p, "slice_rows", counts_from(y, 2 * COLS, COLS),
                           "a[1:3] of a 4x3 array holding 0..11 read %g %g %g / %g %g %g (expected rows 1-2: "
                           "3..8)", (double)y[0], (double)y[1], (double)y[2], (double)y[3], (double)y[4],
                           (double)y[5]);
  for (int i = 0; i < 2 * COLS; i++) minus[i] = -1;
  if (!rc && p->api.MXNDArraySyncCopyFromCPU(s, minus, 2 * COLS)) rc = mxcts__probe_fail(p, "MXNDArraySyncCopyFromCPU");
  if (!rc && p->api.MXNDArraySyncCopyToCPU(a, all, N)) rc = mxcts__probe_fail(p, "MXNDArraySyncCopyToCPU");
  if (!rc) {
    bool shared = counts_from(all, COLS, 0) && all[COLS] == -1 && all[3 * COLS - 1] == -1 &&
                  counts_from(all + 3 * COLS, COLS, 3 * COLS);
    mxcts__probe_add_check(p, "slice_shares_memory", shared,
                           "after writing -1 through a[1:3], a read %g %g %g / %g ... %g / %g (expected 0 1 2 / "
                           "-1 ... -1 / 9)", (double)all[0], (double)all[1], (double)all[2], (double)all[3],
                           (double)all[8], (double)all[9]);
  }
  p->api.MXNDArrayFree(s);
  return rc;
}

static int check_at(struct probe *p, NDArrayHandle a) {
  NDArrayHandle r;
  float y[COLS];
  PROBE_CALL(p, MXNDArrayAt, a, 2, &r);
  int rc = p->api.MXNDArraySyncCopyToCPU(r, y, COLS) ? mxcts__probe_fail(p, "MXNDArraySyncCopyToCPU") : 0;
  if (!rc)
    mxcts__probe_add_check(p, "at_row", counts_from(y, COLS, 2 * COLS),
                           "a[2] of a 4x3 array holding 0..11 read %g %g %g (expected 6 7 8)", (double)y[0],
                           (double)y[1], (double)y[2]);
  p->api.MXNDArrayFree(r);
  return rc;
}

static int check_reshape(struct probe *p, NDArrayHandle a) {
  NDArrayHandle r;
  dim_t dims[] = {2, 6};
  float y[N], seven = 7, back[N];
  PROBE_CALL(p, MXNDArrayReshape64, a, 2, dims, false, &r);
  int rc = p->api.MXNDArraySyncCopyToCPU(r, y, N) ? mxcts__probe_fail(p, "MXNDArraySyncCopyToCPU") : 0;
  if (!rc)
    mxcts__probe_add_check(p, "reshape_row_major", counts_from(y, N, 0),
                           "a 4x3 array holding 0..11 reshaped to (2,6) read %g %g ... %g %g (expected 0..11)",
                           (double)y[0], (double)y[1], (double)y[N - 2], (double)y[N - 1]);
  /* a write of the whole reshaped array must show in a */
  for (int i = 0; i < N; i++) y[i] = seven;
  if (!rc && p->api.MXNDArraySyncCopyFromCPU(r, y, N)) rc = mxcts__probe_fail(p, "MXNDArraySyncCopyFromCPU");
  if (!rc && p->api.MXNDArraySyncCopyToCPU(a, back, N)) rc = mxcts__probe_fail(p, "MXNDArraySyncCopyToCPU");
  if (!rc)
    mxcts__probe_add_check(p, "reshape_shares_memory", back[0] == seven && back[N - 1] == seven,
                           "after writing 7 through the reshaped array, a read %g ... %g (expected 7 ... 7)",
                           (double)back[0], (double)back[N - 1]);
  p->api.MXNDArrayFree(r);
  return rc;
}

/* A copy of 11 elements into and out of a 12-element array must fail and
 * touch nothing: neither the array nor the host buffer's last element. */
static int check_copy_smaller(struct probe *p, NDArrayHandle a) {
  float src[N], dst[N], after[N];
  for (int i = 0; i < N; i++) src[i] = 100, dst[i] = -5;
  int into = p->api.MXNDArraySyncCopyFromCPU(a, src, N - 1);
  int out = p->api.MXNDArraySyncCopyToCPU(a, dst, N - 1);
  PROBE_CALL(p, MXNDArraySyncCopyToCPU, a, after, N);
  bool untouched = after[N - 1] != 100 && dst[N - 1] == -5;
  mxcts__probe_add_check(p, "sync_copy_checks_size", into != 0 && out != 0 && untouched,
                         "copying %d elements into and out of a %d-element array returned %d and %d (expected "
                         "-1 and -1); the array's last element is %g after it, the host buffer's %g",
                         N - 1, N, into, out, (double)after[N - 1], (double)dst[N - 1]);
  return 0;
}

/* A copy of 13 elements into and out of a 12-element array must fail as
 * well (MXNet checks the size for equality), and touch nothing: not the
 * array, and not one element of the host buffer. */
static int check_copy_larger(struct probe *p, NDArrayHandle a) {
  float src[N + 1], dst[N + 1], after[N];
  for (int i = 0; i <= N; i++) src[i] = 100, dst[i] = -5;
  int into = p->api.MXNDArraySyncCopyFromCPU(a, src, N + 1);
  int out = p->api.MXNDArraySyncCopyToCPU(a, dst, N + 1);
  PROBE_CALL(p, MXNDArraySyncCopyToCPU, a, after, N);
  bool untouched = counts_from(after, N, 0);
  for (int i = 0; i <= N; i++) untouched = untouched && dst[i] == -5;
  mxcts__probe_add_check(p, "sync_copy_refuses_larger", into != 0 && out != 0 && untouched,
                         "copying %d elements into and out of a %d-element array returned %d and %d (expected "
                         "-1 and -1); the array's first and last elements are %g and %g after it (expected 0 "
                         "and %d), the host buffer's %g and %g (expected -5)",
                         N + 1, N, into, out, (double)after[0], (double)after[N - 1], N - 1, (double)dst[0],
                         (double)dst[N]);
  return 0;
}

/* a + 1 invoked with an output made by MXNDArrayCreateNone (what Python's
 * `out=` of an empty array passes): the call succeeds, and the placeholder
 * takes the inferred shape (4,3) and holds 1..12. */
static int check_placeholder_output(struct probe *p, NDArrayHandle a) {
  NDArrayHandle none, *outs = &none;
  OpHandle op;
  int nout = 1, ndim = -1, rc;
  const int *dims = NULL, *stypes;
  const char *k[] = {"scalar"}, *v[] = {"1"};
  float y[N];
  PROBE_CALL(p, MXNDArrayCreateNone, &none);
  PROBE_CALL(p, NNGetOpHandle, "_plus_scalar", &op);
  rc = p->api.MXImperativeInvokeEx(op, 1, &a, &nout, &outs, 1, k, v, &stypes);
  if (!rc) rc = mxcts__capi_get_shape(&p->api, none, &ndim, &dims);
  bool shaped = !rc && ndim == 2 && dims[0] == ROWS && dims[1] == COLS;
  if (shaped) rc = p->api.MXNDArraySyncCopyToCPU(none, y, N);
  mxcts__probe_add_check(p, "placeholder_output", !rc && shaped && counts_from(y, N, 1),
                         "a + 1 into an MXNDArrayCreateNone output: status %d, the output's shape has %d dims "
                         "(%d, %d), reads %g ... %g (expected 0, (4, 3) and 1 ... 12): %s", rc, ndim,
                         ndim >= 1 ? dims[0] : -1, ndim >= 2 ? dims[1] : -1, shaped ? (double)y[0] : -1.0,
                         shaped ? (double)y[N - 1] : -1.0, rc ? p->api.MXGetLastError() : "");
  p->api.MXNDArrayFree(none);
  return 0;
}

int mxcts__probe_ndarray_views(struct probe *p) {
  int (*const checks[])(struct probe *, NDArrayHandle) = {check_slice, check_at, check_reshape, check_copy_smaller,
                                                          check_copy_larger, check_placeholder_output};
  for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
    NDArrayHandle a; /* each check on a fresh 0..11 */
    if (new_matrix(p, &a)) return -1;
    int rc = checks[i](p, a);
    p->api.MXNDArrayFree(a);
    if (rc) return rc;
  }
  return 0;
}
