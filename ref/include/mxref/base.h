/*
 * mxref/base.h: the small value types every layer shares.
 */
#ifndef MXREF_BASE_H
#define MXREF_BASE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Device types, with MXNet's numbering (Context::DeviceType). */
enum mxr_dev_type {
  MXR_DEV_CPU = 1,
  MXR_DEV_GPU = 2,
  MXR_DEV_CPU_PINNED = 3,
  MXR_DEV_CPU_SHARED = 5,
};

/* Device ids of each type run from 0 to MXR_MAX_DEVICES - 1. */
#define MXR_MAX_DEVICES 64

/* Where an op runs or an array lives.  A plain value: copy it freely. */
struct mxr_context {
  int dev_type; /* enum mxr_dev_type */
  int dev_id;
};

static inline struct mxr_context mxr_cpu(int dev_id) {
  struct mxr_context c = {MXR_DEV_CPU, dev_id};
  return c;
}

static inline struct mxr_context mxr_gpu(int dev_id) {
  struct mxr_context c = {MXR_DEV_GPU, dev_id};
  return c;
}

static inline int mxr_context_equal(struct mxr_context a, struct mxr_context b) {
  return a.dev_type == b.dev_type && a.dev_id == b.dev_id;
}

/* True for the host-side device types (cpu, cpu_pinned, cpu_shared). */
static inline int mxr_context_is_cpu(struct mxr_context c) {
  return c.dev_type != MXR_DEV_GPU;
}

/* Element types, with MXNet's numbering (mshadow type flags). */
enum mxr_dtype {
  MXR_FLOAT32 = 0,
  MXR_FLOAT64 = 1,
  MXR_FLOAT16 = 2,
  MXR_UINT8 = 3,
  MXR_INT32 = 4,
  MXR_INT8 = 5,
  MXR_INT64 = 6,
  MXR_BOOL = 7,
};

/* The most dimensions an array or shape has. */
#define MXR_MAX_NDIM 8

/* A shape.  ndim == -1 means "not known yet" (shape inference fills it);
 * ndim == 0 is a scalar.  Only dim[0..ndim) is meaningful. */
struct mxr_shape {
  int ndim;
  int64_t dim[MXR_MAX_NDIM];
};

/* Number of elements (1 for a scalar), or -1 if the shape is unknown. */
int64_t mxr_shape_size(const struct mxr_shape *s);

/* Same ndim and dims. */
int mxr_shape_equal(const struct mxr_shape *a, const struct mxr_shape *b);

/* Format as MXNet prints shapes: "(2,3)", "(10,)", "()" for a scalar, "?"
 * if unknown.  Returns buf. */
char *mxr_shape_str(const struct mxr_shape *s, char *buf, size_t size);

/* Bytes per element of `dtype`, or 0 for an unknown dtype. */
size_t mxr_dtype_size(int dtype);

/* The dtype's MXNet name ("float32"), or NULL for an unknown dtype. */
const char *mxr_dtype_name(int dtype);

#ifdef __cplusplus
}
#endif
#endif /* MXREF_BASE_H */
