/*
 * Internal: CUDA kernel launchers for the GPU forwards of the ops (built
 * only with CUDA; defined in the .cu files of ref/src/op/cuda/, C linkage).
 *
 * The op files under ref/src/op/ keep each op's semantics in one place:
 * their GPU forward (under #ifdef MXR_HAVE_CUDA) validates params and
 * requests exactly as the CPU forward does, then calls a launcher here with
 * plain arguments.  A launcher takes device pointers, queues its kernels on
 * `stream` (the engine worker's cudaStream_t, from mxr_run_ctx; NULL means
 * the legacy default stream, waited for before returning), checks the
 * launch, and returns 0 or a negative status with the last error naming
 * the call, file and line.  Completion is the engine driver's business
 * (one wait per op or bulked segment), so launchers never synchronise a
 * worker's stream.
 *
 * Dtypes are MXNet's codes; each launcher says which it takes and fails
 * with MXR_EINVAL on others.  req is enum mxr_req.
 */
#ifndef MXR_OP_CUDA_LAUNCH_H
#define MXR_OP_CUDA_LAUNCH_H

#include <stdbool.h>
#include <stdint.h>

#include "mxref/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which forward to run on `ctx`; NULL fields are filled in by the op files
 * with MXR_GPU_FORWARD(fn), which names nothing in a build without CUDA. */
#ifdef MXR_HAVE_CUDA
#define MXR_GPU_FORWARD(fn) fn
#else
#define MXR_GPU_FORWARD(fn) NULL
#endif

/* out = in with the axes flagged in flip[0..ndim) reversed.  Any dtype for
 * write requests (elements move as bits); float32/float64 for add. */
int mxr__gpu_reverse(void *stream, const void *in, void *out, int dtype, int ndim,
                     const int64_t *dims, const bool *flip, int req);

/* out = in (write: a device-to-device copy; in place: nothing), or
 * out += in (add: float32/float64).  n elements. */
int mxr__gpu_copy(void *stream, const void *in, void *out, int dtype, int64_t n, int req);

/* out = value (write) or out += value (add), n elements: float32,
 * float64, int32, int64. */
int mxr__gpu_fill(void *stream, void *out, int dtype, int64_t n, int req, double value);

/* Random fill (op/random.c): sample i of `seed` (op/random_fn.h), uniform
 * on [a, b) or normal (mean a, deviation b), stored as req asks: float32,
 * float64. */
int mxr__gpu_random_fill(void *stream, void *out, int dtype, int64_t n, int req, int normal,
                         double a, double b, uint64_t seed);

/* Dtype conversion (op/cast.c): n elements of in_dtype into out_dtype,
 * stored as req asks; every dtype but float16. */
int mxr__gpu_cast(void *stream, const void *in, int in_dtype, void *out, int out_dtype, int64_t n,
                  int req);

/* out = sum of in[0..nin) (write) or out += that sum (add): float32,
 * float64.  `in` is a host array of device pointers. */
int mxr__gpu_add_n(void *stream, const void *const *in, int nin, void *out, int dtype, int64_t n,
                   int req);

/* C = op(A) op(B) (write) or C += op(A) op(B) (add), row-major: op(A) is
 * m x k, op(B) k x n, A and B stored with leading dimensions lda and ldb
 * (as stored, before the transpose), C with n.  float32/float64, through
 * the cuBLAS handle of `run`'s worker, on its stream (run NULL or without a
 * worker: the legacy default stream, waited for).  float32 is full FP32
 * unless TF32 is allowed (mxr__gpu_tf32_allowed). */
struct mxr_run_ctx;
int mxr__gpu_gemm(const struct mxr_run_ctx *run, int dtype, bool ta, bool tb, int64_t m, int64_t n,
                  int64_t k, const void *a, int64_t lda, const void *b, int64_t ldb, int req,
                  void *c);

/* out[i, j] += row[j] for an m x n out: float32, float64. */
int mxr__gpu_add_row(void *stream, void *out, const void *row, int64_t m, int64_t n, int dtype);

/* out[j] = (or +=) the sum over i of in[i, j], for an m x n in: float32,
 * float64 (summed in double). */
int mxr__gpu_column_sums(void *stream, const void *in, void *out, int64_t m, int64_t n, int dtype,
                         int req);

#ifdef __cplusplus
}
#endif
#endif /* MXR_OP_CUDA_LAUNCH_H */
