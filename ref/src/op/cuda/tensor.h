/*
 * Internal: CUDA kernel launchers of the tensor families' GPU forwards
 * (op/reduce.c, op/transpose.c, op/concat.c, op/softmax.c), defined with
 * C linkage in op/cuda/reduce.cu, transpose.cu, concat.cu and softmax.cu;
 * built only with CUDA.
 *
 * The conventions of op/cuda/launch.h hold: device pointers in, kernels
 * queued on `stream` (NULL: the legacy default stream, waited for before
 * returning), 0 or a negative status with the last error set.  The op
 * files validate shapes, params and requests first (sharing that code with
 * the CPU forwards); a launcher only refuses a dtype (or request) it does
 * not take, with MXR_EINVAL.  req is enum mxr_req: null does nothing,
 * write and in place overwrite, add accumulates.  Shapes are row-major
 * dims (ndim <= MXR_MAX_NDIM); they reach the kernels by value, so no
 * launcher allocates.
 *
 * Arithmetic launchers (reductions, softmax) take float32 and float64 and
 * compute in double, as the CPU kernels do; moving launchers (transpose,
 * Concat's) take any dtype for write requests (elements move as bits) and
 * float32/float64 for add.
 */
#ifndef MXR_OP_CUDA_TENSOR_H
#define MXR_OP_CUDA_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda/worker.h"

#ifdef __cplusplus
extern "C" {
#endif

/* sum and mean: out[o] (req)= the sum (or mean) over the dims flagged in
 * reduced[0..ndim) of `in`, whose shape is dims[0..ndim).  Outputs are the
 * kept coordinates in row-major order (keepdims only adds 1s, so it does
 * not matter).  Summed in double; a mean over no elements is 0/0, NaN.
 * float32/float64, in and out of one dtype. */
int mxr__gpu_reduce(void *stream, const void *in, void *out, int dtype, int ndim,
                    const int64_t *dims, const bool *reduced, bool mean, int req);

/* The gradient of a reduction: grad[i] (req)= ograd[kept coordinates of
 * i] * scale, for a grad of shape dims[0..ndim) whose dims flagged in
 * reduced[] were reduced (scale: 1 for sum, kept count / total for mean).
 * float32/float64, ograd and grad of one dtype. */
int mxr__gpu_reduce_grad(void *stream, const void *ograd, void *grad, int dtype, int ndim,
                         const int64_t *dims, const bool *reduced, double scale, int req);

/* out (req)= in with its axes permuted: out dim d is in dim perm[d]; dims
 * are in's.  in and out must not overlap. */
int mxr__gpu_transpose(void *stream, const void *in, void *out, int dtype, int ndim,
                       const int64_t *dims, const int *perm, int req);

/* Concat, one input at a time.  The whole (Concat's output) is `lead` rows
 * of `row` elements; a part (one input) is `lead` rows of `width` elements
 * and covers columns [offset, offset + width) of each row of the whole.
 * concat_part: those columns (req)= the part; split_part (_backward_Concat):
 * the part (req)= those columns. */
int mxr__gpu_concat_part(void *stream, const void *part, void *whole, int dtype, int64_t lead,
                         int64_t row, int64_t offset, int64_t width, int req);
int mxr__gpu_split_part(void *stream, const void *whole, void *part, int dtype, int64_t lead,
                        int64_t row, int64_t offset, int64_t width, int req);

/* softmax and log_softmax of x / temperature along an axis: the arrays are
 * outer x m x inner, and each of the outer * inner rows (row o * inner + i)
 * has m elements, inner apart.  length (NULL: none) holds each row's count
 * of elements that take part, as int32 or int64 (length_dtype); the others
 * get 0.  A length outside [0, m] makes its row NaN and is recorded in
 * `err` (mxr__cuda_error_slot, cuda/worker.h; NULL: not recorded),
 * which fails the op when it completes, with the CPU kernel's message.  x
 * and out are float32 or float64, independently (softmax's dtype=
 * parameter). */
int mxr__gpu_softmax(void *stream, const void *x, int x_dtype, const void *length,
                     int length_dtype, void *out, int out_dtype, int64_t outer, int64_t m,
                     int64_t inner, double temperature, bool log_out, int req,
                     struct mxr_device_error *err);

/* Their gradient, rows as above, from ograd and the forward output y (one
 * dtype, y_dtype) into grad (grad_dtype), each float32 or float64:
 *   softmax:     grad (req)= y * (ograd - sum(ograd * y)) / temperature
 *   log_softmax: grad (req)= (ograd - exp(y) * sum(ograd)) / temperature */
int mxr__gpu_softmax_grad(void *stream, const void *ograd, const void *y, int y_dtype, void *grad,
                          int grad_dtype, int64_t outer, int64_t m, int64_t inner,
                          double temperature, bool log_out, int req);

/* out[0..bytes) = 0, as bytes (softmax's length gradient, any dtype). */
int mxr__gpu_zero(void *stream, void *out, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* MXR_OP_CUDA_TENSOR_H */
