/* Status codes and the per-thread last-error message (mxref/error.h). */
#include <stdarg.h>
#include <stdio.h>

#include "mxref/error.h"

static _Thread_local char last_error[MXR_ERROR_MAX];

const char *mxr_last_error(void) { return last_error; }

int mxr_set_error(int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return status;
}

const char *mxr_strerror(int status) {
  switch (status) {
#define MXR__ERROR_DESC(name, value, desc) \
  case value:                              \
    return desc;
    MXR_ERROR_TABLE(MXR__ERROR_DESC)
#undef MXR__ERROR_DESC
  }
  return "unknown status";
}

const char *mxr_err_name(int status) {
  switch (status) {
#define MXR__ERROR_NAME(name, value, desc) \
  case value:                              \
    return #name;
    MXR_ERROR_TABLE(MXR__ERROR_NAME)
#undef MXR__ERROR_NAME
  }
  return "MXR_E?";
}
