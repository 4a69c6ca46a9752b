/*
 * Internal: GPU launchers of BatchNorm and its gradient (op/cuda/batchnorm.cu; C
 * linkage), called by the GPU forwards in op/batchnorm.c after they
 * validated as the CPU forwards do.  The terms of launch.h hold: device
 * pointers, work queued on `run`'s stream (run NULL or without a worker:
 * the legacy default stream, waited for before returning), req is enum
 * mxr_req, 0 or a negative status with the last error set.
 *
 * The launchers compute the CPU op's definition (batchnorm.c): the "var"
 * output is the inverse standard deviation 1 / sqrt(var + eps) with the
 * biased batch variance, and the moving averages are updated by the
 * backward pass, in training mode, with the biased variance recovered from
 * it.  cuDNN's spatial batch norm runs the cases where it computes that
 * definition (batchnorm.cu says which); per-channel kernels run the rest, so
 * BatchNorm has a GPU forward in every CUDA build (MXR_GPU_FORWARD of
 * launch.h).
 */
#ifndef MXR_OP_CUDA_BATCHNORM_H
#define MXR_OP_CUDA_BATCHNORM_H

#include <stdbool.h>
#include <stdint.h>

#include "op/cuda/launch.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mxr_run_ctx;

/* One batch norm: the data viewed as (outer, c, inner) around the channel
 * axis; gamma, beta, the moving statistics and the saved ones have c
 * elements. */
struct mxr__gpu_bn {
  int dtype;                  /* float32 or float64, every tensor */
  int64_t outer, c, inner;
  double eps;                 /* added to the variance: the parameter in the data's dtype */
  double eps_param;           /* the parameter itself (the CPU's zero-variance rule, and the
                                 variance recovered in the backward pass, use it) */
  double momentum;            /* as the CPU applies it: (float)momentum */
  bool fix_gamma;             /* gamma taken as 1; its gradient 0 */
  bool batch_stats;           /* training without use_global_stats */
  bool allow_cudnn;           /* false with cudnn_off */
};

/* y = (x - mean) * invstd * gamma + beta, with the batch's statistics or the
 * moving ones; mean and invstd written out too.  req[0..2] for y, mean,
 * invstd. */
int mxr__gpu_bn_forward(const struct mxr_run_ctx *run, const struct mxr__gpu_bn *bn,
                        const void *x, const void *gamma, const void *beta,
                        const void *moving_mean, const void *moving_var, void *y, void *mean,
                        void *invstd, const int *req);

/* dx, dgamma, dbeta (req[0..2]) from dy, x, gamma and the forward's mean and
 * invstd; in batch_stats mode also moving_mean and moving_var updated in
 * place (else only read). */
int mxr__gpu_bn_backward(const struct mxr_run_ctx *run, const struct mxr__gpu_bn *bn,
                         const void *dy, const void *x, const void *gamma, const void *saved_mean,
                         const void *saved_invstd, void *moving_mean, void *moving_var, void *dx,
                         void *dgamma, void *dbeta, const int *req);

#ifdef __cplusplus
}
#endif
#endif /* MXR_OP_CUDA_BATCHNORM_H */
