/*
 * Raw device memory (mxref/storage.h).
 *
 * Only host memory exists so far.  GPU contexts are refused with MXR_ENODEV
 * until the CUDA pools arrive, so that callers can already tell "no device
 * memory in this build" apart from a malformed request.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mxref/error.h"
#include "mxref/storage.h"

/* Bytes handed out on host contexts and not yet freed.  Relaxed ordering is
 * enough: the counter is a statistic, it orders no other memory. */
static atomic_size_t cpu_bytes_in_use;

static const char *dev_type_name(int dev_type) {
  switch (dev_type) {
  case MXR_DEV_CPU: return "cpu";
  case MXR_DEV_GPU: return "gpu";
  case MXR_DEV_CPU_PINNED: return "cpu_pinned";
  case MXR_DEV_CPU_SHARED: return "cpu_shared";
  default: return NULL;
  }
}

int mxr_storage_alloc(struct mxr_context ctx, size_t size, struct mxr_storage *out) {
  if (out == NULL)
    return mxr_set_error(MXR_EINVAL, "mxr_storage_alloc: out is NULL");
  /* An empty handle on every failure, so that a caller's unconditional
   * mxr_storage_free() is harmless. */
  memset(out, 0, sizeof *out);

  const char *dev = dev_type_name(ctx.dev_type);
  if (dev == NULL)
    return mxr_set_error(MXR_EINVAL,
                         "mxr_storage_alloc: unknown device type %d (expected 1 cpu, 2 gpu, "
                         "3 cpu_pinned or 5 cpu_shared)",
                         ctx.dev_type);
  if (ctx.dev_id < 0)
    return mxr_set_error(MXR_EINVAL, "mxr_storage_alloc: negative device id %s(%d)", dev,
                         ctx.dev_id);
  if (ctx.dev_type == MXR_DEV_GPU)
    return mxr_set_error(MXR_ENODEV,
                         "mxr_storage_alloc: %zu bytes on gpu(%d): GPU storage is not available "
                         "in this build yet",
                         size, ctx.dev_id);

  /* Pinned and shared host memory are plain host memory until something
   * (CUDA host registration, shared-memory IPC) needs them to differ. */
  if (size == 0) {
    out->ctx = ctx;
    return 0;
  }

  /* No object may be larger than PTRDIFF_MAX (pointer differences inside it
   * would overflow); refuse such sizes ourselves so that every allocator,
   * sanitizer ones included, reports them the same way. */
  void *p = NULL;
  int rc = size > (size_t)PTRDIFF_MAX ? ENOMEM : posix_memalign(&p, MXR_STORAGE_ALIGN, size);
  if (rc != 0)
    return mxr_set_error(MXR_ENOMEM, "mxr_storage_alloc: cannot allocate %zu bytes on %s(%d): %s",
                         size, dev, ctx.dev_id, strerror(rc));
  atomic_fetch_add_explicit(&cpu_bytes_in_use, size, memory_order_relaxed);
  out->dptr = p;
  out->size = size;
  out->ctx = ctx;
  return 0;
}

void mxr_storage_free(struct mxr_storage *s) {
  if (s == NULL) return;
  if (s->dptr != NULL) {
    /* Only host memory can have been allocated (GPU contexts fail above). */
    free(s->dptr);
    atomic_fetch_sub_explicit(&cpu_bytes_in_use, s->size, memory_order_relaxed);
  }
  memset(s, 0, sizeof *s);
}

size_t mxr_storage_cpu_bytes_in_use(void) {
  return atomic_load_explicit(&cpu_bytes_in_use, memory_order_relaxed);
}
