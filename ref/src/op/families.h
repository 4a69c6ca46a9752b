/*
 * Internal: the op families, one line each.  A family is ref/src/op/<name>.c
 * (its ops' definitions and CPU kernels, with CUDA kernels in
 * ref/src/op/cuda/<name>.cu where it has them), and that file defines the
 * NULL-terminated group mxr__ops_<name> listing its ops.
 *
 * Include this file after defining MXR_OP_FAMILY(name); it is undefined at
 * the end.  op_internal.h declares the groups from it, registry.c lists
 * them.
 */
MXR_OP_FAMILY(basic)
MXR_OP_FAMILY(elemwise)
MXR_OP_FAMILY(reduce)
MXR_OP_FAMILY(dot)
MXR_OP_FAMILY(reshape)
MXR_OP_FAMILY(transpose)
MXR_OP_FAMILY(concat)
MXR_OP_FAMILY(softmax)
MXR_OP_FAMILY(fully_connected)
MXR_OP_FAMILY(output)
MXR_OP_FAMILY(dropout)
MXR_OP_FAMILY(batchnorm)
MXR_OP_FAMILY(convolution)
MXR_OP_FAMILY(pooling)
MXR_OP_FAMILY(optimizer)
MXR_OP_FAMILY(random)
MXR_OP_FAMILY(cast)
MXR_OP_FAMILY(clip)

#undef MXR_OP_FAMILY
