/*
 * Internal: CUDA launchers of the elementwise ops (op/elemwise.c),
 * defined in op/cuda/elemwise.cu with C linkage.  Conventions as in launch.h:
 * device pointers, work queued on `stream` (NULL: the legacy default
 * stream, waited for), 0 or a negative status with the last error set.
 *
 * `fn` and `kind` are the codes of op/elemwise_fn.h; each element is
 * computed by the same function as on the CPU, in double, and stored in
 * `dtype` (float32 or float64; others fail with MXR_EINVAL) as `req` asks.
 */
#ifndef MXR_OP_CUDA_ELEMWISE_H
#define MXR_OP_CUDA_ELEMWISE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bcast; /* op/elemwise_fn.h */

/* A second or third operand: an array of the output's size, or, when
 * `data` is NULL, the constant `value`. */
struct mxr_gpu_operand {
  const void *data;
  double value;
};

/* out[i] = fn(a[i], b[i] or b.value, c[i] or c.value), i < n. */
int mxr__gpu_emap(void *stream, int fn, int dtype, int64_t n, const void *a,
                  struct mxr_gpu_operand b, struct mxr_gpu_operand c, void *out, int req);

/* out[i] = fn(a at i, b at i) over the iteration shape of `bc` (n
 * elements, out's row-major order), a and b read through bc's strides. */
int mxr__gpu_bcast_map(void *stream, int fn, int dtype, const struct bcast *bc, int64_t n,
                       const void *a, const void *b, void *out, int req);

/* The gradient of operand `side` (0 lhs, 1 rhs) of a broadcast binary op
 * of gradient kind `kind`: each of its n elements sums, in double, the
 * terms of the head gradient g over the axes where that operand was
 * stretched, in the CPU's order.  a and b may be NULL when the kind does
 * not read them. */
int mxr__gpu_bcast_grad(void *stream, int kind, int side, int dtype, const struct bcast *bc,
                        int64_t n, const void *g, const void *a, const void *b, void *out, int req);

/* LeakyReLU's rrelu forward over n elements: out = x > 0 ? x : slope * x,
 * slope (stored in `mask`) drawn per element from the splitmix64 sequence
 * of `seed` in training, (lo + hi) / 2 otherwise. */
int mxr__gpu_rrelu(void *stream, int dtype, int64_t n, const void *x, void *out, int req_out,
                   void *mask, int req_mask, bool train, uint64_t seed, float lo, float hi);

#ifdef __cplusplus
}
#endif
#endif /* MXR_OP_CUDA_ELEMWISE_H */
