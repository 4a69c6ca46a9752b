/*
 * Which accelerators this build can use (mxref/device.h).
 *
 * The C side of GPU discovery: it owns the cached answer and the policy
 * (no GPU is not an error); the CUDA runtime is reached only through the
 * C-callable functions of cuda/device.h, so this file builds without the
 * toolkit.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>

#include "common/threads.h"
#include "cuda/device.h"
#include "mxref/device.h"
#include "mxref/error.h"

/* Probed once per process: the first CUDA call initialises the runtime,
 * which is slow and whose answer does not change while we run. */
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int gpu_count;
static char unavailable_reason[256];

static void probe_gpus(void) {
#ifdef MXR_HAVE_CUDA
  /* A failed probe stores CUDA's message as this thread's last error, but
   * the callers of mxr_gpu_count() see no failure, so give them back the
   * message they had. */
  char saved[MXR_ERROR_MAX];
  snprintf(saved, sizeof saved, "%s", mxr_last_error());
  int n = 0;
  (void)mxr__cuda_device_count(&n, unavailable_reason, sizeof unavailable_reason);
  gpu_count = n;
  mxr_set_error(MXR_OK, "%s", saved);
#else
  gpu_count = 0;
  snprintf(unavailable_reason, sizeof unavailable_reason, "built without CUDA");
#endif
}

static void ensure_probed(void) { MXR_PTHREAD_CHECK(pthread_once(&probe_once, probe_gpus)); }

int mxr_built_with_cuda(void) {
#ifdef MXR_HAVE_CUDA
  return 1;
#else
  return 0;
#endif
}

int mxr_built_with_cudnn(void) {
#ifdef MXR_HAVE_CUDNN
  return 1;
#else
  return 0;
#endif
}

int mxr_gpu_count(void) {
  ensure_probed();
  return gpu_count;
}

const char *mxr_gpu_unavailable_reason(void) {
  ensure_probed();
  return unavailable_reason;
}

int mxr_gpu_get_info(int id, struct mxr_gpu_info *out) {
  if (out == NULL) return mxr_set_error(MXR_EINVAL, "mxr_gpu_info: out is NULL");
  int n = mxr_gpu_count();
  if (n == 0)
    return mxr_set_error(MXR_ENODEV, "mxr_gpu_info: gpu(%d) is not available: no GPUs (%s)", id,
                         unavailable_reason);
  if (id < 0 || id >= n)
    return mxr_set_error(MXR_ENODEV, "mxr_gpu_info: gpu(%d) is not available: %d GPU%s (0..%d)",
                         id, n, n == 1 ? "" : "s", n - 1);
#ifdef MXR_HAVE_CUDA
  return mxr__cuda_device_info(id, out);
#else
  return mxr_set_error(MXR_ENODEV, "mxr_gpu_info: built without CUDA"); /* n is 0 */
#endif
}

const struct mxr_device_driver *mxr_gpu_driver(void) {
#ifdef MXR_HAVE_CUDA
  return mxr__cuda_driver();
#else
  return NULL;
#endif
}
