#!/usr/bin/env python3
"""Print ref/src/op/mxnet_op_names.h from an MXNet libmxnet.so: every name
its MXListAllOpNames lists, sorted, one MXR_MXNET_OP(name) per line.

usage: build-aux/mxnet-op-names.py LIBMXNET_SO > ref/src/op/mxnet_op_names.h
"""
import ctypes
import sys

HEADER = """/*
 * Internal: every operator name MXNet 1.9.1 registers, aliases included
 * (MXListAllOpNames of the mxnet==1.9.1 wheel's libmxnet.so, sorted), one
 * MXR_MXNET_OP(name) per line.
 *
 * The registry lists each of these names that no op family implements as
 * a not-implemented op (registry.c): MXNet's frontends find every name
 * they expect, and a program that uses one fails with "operator X is not
 * implemented by libmxref" instead of a missing symbol or a wrong result.
 *
 * Regenerate with build-aux/mxnet-op-names.py LIBMXNET_SO > this file.
 * Include after defining MXR_MXNET_OP(name); it is undefined at the end.
 */
"""


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    lib = ctypes.CDLL(sys.argv[1])
    size = ctypes.c_uint()
    names = ctypes.POINTER(ctypes.c_char_p)()
    if lib.MXListAllOpNames(ctypes.byref(size), ctypes.byref(names)) != 0:
        sys.exit("MXListAllOpNames failed")
    sys.stdout.write(HEADER)
    for name in sorted(names[i].decode() for i in range(size.value)):
        sys.stdout.write('MXR_MXNET_OP("%s")\n' % name)
    sys.stdout.write("\n#undef MXR_MXNET_OP\n")


if __name__ == "__main__":
    main()
