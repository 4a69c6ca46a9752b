/*
 * Internal: CUDA kernel launchers of the optimizer ops' GPU forwards
 * (op/optimizer.c), defined in op/cuda/optimizer.cu with C linkage;
 * built only with CUDA.
 *
 * The conventions of op/cuda/launch.h hold: device pointers in, kernels
 * queued on `stream` (NULL: the legacy default stream, waited for before
 * returning), 0 or a negative status with the last error set.  Every array
 * has n elements of one dtype, float32 or float64 (others: MXR_EINVAL).
 * req (enum mxr_req) applies to the new weight `out` only; the states
 * (mom, mean, var) are updated in place whatever it is, as in MXNet.  out
 * may be the weight itself (out=weight).
 *
 * The hyperparameters are MXNet's float parameters: each is rounded to
 * float, then taken in the arrays' type, and the update is computed in that
 * type with op/optimizer.c's formulas and order of operations
 * (clipping when clip_gradient >= 0).  nvcc may fuse a multiply and an add
 * into one FMA, so a float result can differ from the CPU's in the last
 * bit.
 */
#ifndef MXR_OP_CUDA_OPTIMIZER_H
#define MXR_OP_CUDA_OPTIMIZER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* sgd_update's and sgd_mom_update's parameters (momentum: the latter's). */
struct mxr__gpu_sgd_hyper {
  double lr, momentum, wd, rescale_grad, clip_gradient;
};

/* adam_update's parameters. */
struct mxr__gpu_adam_hyper {
  double lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient;
};

/* out (req)= (1 - lr wd) weight - lr clip(rescale_grad grad). */
int mxr__gpu_sgd_update(void *stream, const void *weight, const void *grad, void *out, int dtype,
                        int64_t n, struct mxr__gpu_sgd_hyper h, int req);

/* mom = momentum mom - lr wd weight - lr clip(rescale_grad grad);
 * out (req)= weight + mom. */
int mxr__gpu_sgd_mom_update(void *stream, const void *weight, const void *grad, void *mom,
                            void *out, int dtype, int64_t n, struct mxr__gpu_sgd_hyper h, int req);

/* g = clip(rescale_grad grad + wd weight); mean = beta1 mean + (1 - beta1) g;
 * var = beta2 var + (1 - beta2) g g;
 * out (req)= weight - lr mean / (sqrt(var) + epsilon). */
int mxr__gpu_adam_update(void *stream, const void *weight, const void *grad, void *mean,
                         void *var, void *out, int dtype, int64_t n,
                         struct mxr__gpu_adam_hyper h, int req);

#ifdef __cplusplus
}
#endif
#endif /* MXR_OP_CUDA_OPTIMIZER_H */
