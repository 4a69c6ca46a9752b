#!/bin/sh
# Run the C API conformance program (ref/tests/capi_conformance) on MXNet
# 1.9.1's own libmxnet.so, unpacked by `make check-mxnet` (see
# ref/tests/capi_fetch_mxnet.sh) into $MXNET_WHEEL_DIR (default:
# ./mxnet-wheel in the build directory, where the tests run).  Without it
# the test is skipped, unless MXNET_REQUIRED is set (make check-mxnet).
dir=${MXNET_WHEEL_DIR:-$PWD/mxnet-wheel}
lib=$dir/mxnet/libmxnet.so
prog=./ref/tests/capi_conformance
if [ ! -f "$lib" ]; then
    if [ -n "${MXNET_REQUIRED:-}" ]; then
        echo "Bail out! $lib is missing (make check-mxnet fetches it)"
        exit 1
    fi
    echo "1..0 # SKIP libmxnet.so not fetched; make check-mxnet fetches mxnet==1.9.1 from PyPI"
    exit 77
fi
# The wheel ships libopenblas and libgfortran beside libmxnet.so.  MXNet's
# own leaks at exit are not ours to report when the program is built with
# AddressSanitizer; the subgraph note on stderr is noise.
LD_LIBRARY_PATH="$dir/mxnet${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
MXNET_SUBGRAPH_VERBOSE=0
export LD_LIBRARY_PATH ASAN_OPTIONS MXNET_SUBGRAPH_VERBOSE
exec "$prog" "$lib"
