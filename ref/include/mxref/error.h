/*
 * mxref/error.h: status codes and the per-thread last-error message.
 *
 * Every mxr_* function that can fail returns an int status: 0 on success, a
 * negative MXR_E* code on failure.  On failure it has also stored a message in
 * the calling thread's last-error buffer, readable with mxr_last_error() until
 * the next failing call on the same thread overwrites it.  Success never
 * clears the message.
 */
#ifndef MXREF_ERROR_H
#define MXREF_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, value, description): the one table of error codes. */
#define MXR_ERROR_TABLE(X)                                                   \
  X(MXR_OK, 0, "success")                                                    \
  X(MXR_EINVAL, -1, "invalid argument")                                      \
  X(MXR_ENOMEM, -2, "out of memory")                                         \
  X(MXR_ESTATE, -3, "call not allowed in the current state")                 \
  X(MXR_ENOTFOUND, -4, "not found")                                          \
  X(MXR_ENODEV, -5, "device not available")                                  \
  X(MXR_EOP, -6, "an operation failed")                                      \
  X(MXR_ESYS, -7, "system call failed")                                      \
  X(MXR_ECUDA, -8, "CUDA call failed")                                       \
  X(MXR_ECONFIG, -9, "invalid environment configuration")                   \
  X(MXR_ENOTIMPL, -10, "not implemented by libmxref")

enum mxr_status {
#define MXR__ERROR_ENUM(name, value, desc) name = value,
  MXR_ERROR_TABLE(MXR__ERROR_ENUM)
#undef MXR__ERROR_ENUM
};

/* The calling thread's last error message.  Never NULL; "" if none yet.
 * The pointer stays valid until the next mxr_* call on this thread. */
const char *mxr_last_error(void);

/* A static description of a status code ("invalid argument"). Never NULL. */
const char *mxr_strerror(int status);

/* The code's name ("MXR_EINVAL"). Never NULL. */
const char *mxr_err_name(int status);

/* Store a formatted message as this thread's last error and return `status`,
 * so that failing paths read `return mxr_set_error(MXR_EINVAL, "...", ...);`.
 * Messages longer than MXR_ERROR_MAX - 1 bytes are truncated. */
int mxr_set_error(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define MXR_ERROR_MAX 1024

#ifdef __cplusplus
}
#endif
#endif /* MXREF_ERROR_H */
