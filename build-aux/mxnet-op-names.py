#!/usr/bin/env python3
"""Print ref/src/op/mxnet_op_names.h from MXNet's Python package: every
name libmxnet.so's MXListAllOpNames lists, sorted, one
MXR_MXNET_OP(name, signature) per line.  The signature is what the
frontend builds the op's function from (MXSymbolGetAtomicSymbolInfo):
"inputs|params|key_var_num_args", inputs space-separated with a leading
'*' on a variadic one.

usage: MXNET_LIBRARY_PATH= python3 build-aux/mxnet-op-names.py > ref/src/op/mxnet_op_names.h
(run with the Python that has mxnet==1.9.1 installed, on its own library)
"""
import ctypes
import sys

HEADER = """/*
 * Internal: every operator name MXNet 1.9.1 registers, aliases included
 * (MXListAllOpNames of the mxnet==1.9.1 wheel's libmxnet.so, sorted), one
 * MXR_MXNET_OP(name, signature) per line.  The signature is what MXNet's
 * MXSymbolGetAtomicSymbolInfo gives the frontends to build the op's
 * function from: "inputs|params|key_var_num_args", inputs separated by
 * spaces, a variadic one marked with a leading '*'.
 *
 * The registry lists each of these names that no op family implements as
 * a not-implemented op (registry.c): MXNet's frontends find every name
 * they expect, and a program that uses one fails with "operator X is not
 * implemented by libmxref" instead of a missing symbol or a wrong result.
 *
 * Regenerate with build-aux/mxnet-op-names.py (see its usage).
 * Include after defining MXR_MXNET_OP(name, signature); it is undefined at
 * the end.
 */
"""


def signature(lib, name):
    """The op's "inputs|params|key_var_num_args" text."""
    handle = ctypes.c_void_p()
    if lib.NNGetOpHandle(name.encode(), ctypes.byref(handle)) != 0:
        sys.exit("NNGetOpHandle(%s) failed" % name)
    real, desc, kvar, ret = (ctypes.c_char_p() for _ in range(4))
    num = ctypes.c_uint()
    names, types, descs = (ctypes.POINTER(ctypes.c_char_p)() for _ in range(3))
    if lib.MXSymbolGetAtomicSymbolInfo(
            handle, ctypes.byref(real), ctypes.byref(desc), ctypes.byref(num),
            ctypes.byref(names), ctypes.byref(types), ctypes.byref(descs),
            ctypes.byref(kvar), ctypes.byref(ret)) != 0:
        sys.exit("MXSymbolGetAtomicSymbolInfo(%s) failed" % name)
    inputs, params = [], []
    for i in range(num.value):
        arg, kind = names[i].decode(), types[i].decode()
        if kind.startswith(("NDArray", "Symbol")):
            inputs.append(("*" if kind.endswith("[]") else "") + arg)
        else:
            params.append(arg)
    return "%s|%s|%s" % (" ".join(inputs), " ".join(params), (kvar.value or b"").decode())


def main():
    if len(sys.argv) != 1:
        sys.exit(__doc__)
    import mxnet  # the frontend initialises the library (custom ops, ...)
    lib = mxnet.base._LIB
    size = ctypes.c_uint()
    plist = ctypes.POINTER(ctypes.c_char_p)()
    if lib.MXListAllOpNames(ctypes.byref(size), ctypes.byref(plist)) != 0:
        sys.exit("MXListAllOpNames failed")
    # The list is a buffer later calls overwrite: copy it first.
    names = sorted(plist[i].decode() for i in range(size.value))
    sys.stdout.write(HEADER)
    for name in names:
        sys.stdout.write('MXR_MXNET_OP("%s", "%s")\n' % (name, signature(lib, name)))
    sys.stdout.write("\n#undef MXR_MXNET_OP\n")


if __name__ == "__main__":
    main()
