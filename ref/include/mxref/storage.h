/*
 * mxref/storage.h: raw device memory.
 *
 * A storage handle is a plain value describing one allocation.  The caller
 * owns it from mxr_storage_alloc() until it passes it to mxr_storage_free().
 * CPU memory is aligned to MXR_STORAGE_ALIGN bytes.  GPU memory arrives with
 * the CUDA storage pools; until then a GPU context fails with MXR_ENODEV.
 */
#ifndef MXREF_STORAGE_H
#define MXREF_STORAGE_H

#include <stddef.h>

#include "mxref/base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MXR_STORAGE_ALIGN 64

struct mxr_storage {
  void *dptr;             /* NULL when size is 0 */
  size_t size;            /* bytes */
  struct mxr_context ctx;
};

/* Allocate `size` bytes on ctx.  size 0 gives dptr NULL and succeeds. */
int mxr_storage_alloc(struct mxr_context ctx, size_t size, struct mxr_storage *out);

/* Release an allocation; resets *s to zero.  NULL or an empty handle is a no-op. */
void mxr_storage_free(struct mxr_storage *s);

/* Bytes currently allocated through this module on CPU contexts (for tests
 * and leak checks). */
size_t mxr_storage_cpu_bytes_in_use(void);

#ifdef __cplusplus
}
#endif
#endif /* MXREF_STORAGE_H */
