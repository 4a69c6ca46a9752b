/*
 * Internal: storage services for the layers above (ndarray, ops).
 */
#ifndef MXR_STORAGE_STORAGE_INTERNAL_H
#define MXR_STORAGE_STORAGE_INTERNAL_H

#include <stddef.h>

#include "mxref/base.h"

/* Copy `size` bytes from src (memory of sctx) to dst (memory of dctx).
 * Host to host is a memcpy.  A copy that involves a GPU goes through the
 * CUDA runtime: queued on `stream` when one is given (a GPU worker's; the
 * engine's driver waits for it at the end of the op), finished on return
 * when `stream` is NULL.  Returns 0, MXR_ENODEV in a build without CUDA, or
 * MXR_ECUDA naming the failed call. */
int mxr__storage_copy(void *dst, struct mxr_context dctx, const void *src,
                      struct mxr_context sctx, size_t size, void *stream);

#endif /* MXR_STORAGE_STORAGE_INTERNAL_H */
