/* Ops of the 'conv' group: being written. */
#include "op/op_internal.h"

const struct mxr_op *const mxr__ops_conv[] = {NULL};
