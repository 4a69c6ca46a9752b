/*
 * mxref/device.h: which accelerators this build can use.
 *
 * Built without CUDA, every query reports zero GPUs.  Built with CUDA on a
 * machine without a GPU or driver, it also reports zero GPUs (that is not an
 * error); the reason is available from mxr_gpu_unavailable_reason().
 */
#ifndef MXREF_DEVICE_H
#define MXREF_DEVICE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if this build has the CUDA parts, else 0. */
int mxr_built_with_cuda(void);

/* 1 if this build uses cuDNN, else 0. */
int mxr_built_with_cudnn(void);

/* Number of usable GPUs (>= 0).  Never fails. */
int mxr_gpu_count(void);

/* Why mxr_gpu_count() is 0 ("built without CUDA", "no CUDA-capable device
 * is detected", ...), or "" when GPUs are present.  Static storage. */
const char *mxr_gpu_unavailable_reason(void);

struct mxr_gpu_info {
  char name[256];
  int cc_major, cc_minor;       /* compute capability */
  size_t total_mem;             /* bytes */
  int multiprocessors;
};

/* Describe GPU `id`.  MXR_ENODEV if id is not a usable GPU. */
int mxr_gpu_get_info(int id, struct mxr_gpu_info *out);

/* The engine driver for this build's GPUs (mxref/engine.h): per worker a
 * CUDA stream (two with MXNET_GPU_WORKER_NSTREAMS=2), and one wait for the
 * streams at the end of each op.  NULL in a build without CUDA.  Static
 * storage; mxr_engine_opts_from_config() puts it in the options. */
struct mxr_device_driver;
const struct mxr_device_driver *mxr_gpu_driver(void);

#ifdef __cplusplus
}
#endif
#endif /* MXREF_DEVICE_H */
