/*
 * Internal: what device/ (C11, built with or without the toolkit) asks of
 * the CUDA runtime: GPU discovery (cuda/device.cu) and the engine driver
 * (cuda/driver.cu).  The .cu side defines these with C linkage;
 * device/device.c calls them only when MXR_HAVE_CUDA is defined.  Names are
 * mxr__* so the version script keeps them out of the exported symbol table.
 */
#ifndef MXR_CUDA_DEVICE_H
#define MXR_CUDA_DEVICE_H

#include <stddef.h>

#include "mxref/device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Ask the CUDA runtime how many GPUs there are.  Sets *count (0 on any
 * failure) and writes into reason[0..reason_len) why there are none, or ""
 * when there are some.  Returns 0, or MXR_ECUDA when the runtime call failed
 * (no device and no driver included; the caller treats that as zero GPUs). */
int mxr__cuda_device_count(int *count, char *reason, size_t reason_len);

/* Fill *out for device `id` (0 <= id < count, checked by the caller).
 * Returns 0 or MXR_ECUDA with the last error set. */
int mxr__cuda_device_info(int id, struct mxr_gpu_info *out);

/* The CUDA engine driver (cuda/driver.cu); static storage. */
const struct mxr_device_driver *mxr__cuda_driver(void);

#ifdef __cplusplus
}
#endif
#endif /* MXR_CUDA_DEVICE_H */
