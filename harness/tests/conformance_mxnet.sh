#!/bin/sh
# The conformance suites against MXNet 1.9.1's own libmxnet.so (the CPU
# wheel, unpacked by `make check-mxnet` into $MXNET_WHEEL_DIR), judged with
# suites/expectations/mxnet-1.9.1.txt, reported as TAP.  Run by
# `make check-mxnet` (which sets MXNET_REQUIRED); a plain `make check` skips
# it, since the suites take minutes and the wheel comes from PyPI.  It times
# work, so it runs after every other test (harness/probe/local.mk).
set -u
srcdir=${srcdir:-.}
dir=${MXNET_WHEEL_DIR:-$PWD/mxnet-wheel}
lib=$dir/mxnet/libmxnet.so
if [ -z "${MXNET_REQUIRED:-}" ]; then
  echo "1..0 # SKIP the suites against MXNet run in make check-mxnet"
  exit 77
fi
if [ -n "${MXCTS_SANITIZERS:-}" ]; then
  echo "1..0 # SKIP sanitizer build: MXNet's own code is not instrumented, and timings mean nothing"
  exit 77
fi
if [ ! -f "$lib" ]; then
  echo "Bail out! $lib is missing (make check-mxnet fetches it)"
  exit 1
fi
out=harness/tests/conformance-mxnet.out
rm -rf "$out"
# The wheel ships libopenblas and libgfortran beside libmxnet.so; the probe
# processes get LD_LIBRARY_PATH from the runner's environment.
LD_LIBRARY_PATH="$dir/mxnet${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
MXNET_SUBGRAPH_VERBOSE=0
export LD_LIBRARY_PATH MXNET_SUBGRAPH_VERBOSE
# shellcheck source=harness/tests/conformance_util.sh
. "$srcdir/harness/tests/conformance_util.sh"
run_conformance "$lib" mxnet-1.9.1 "$out" "$srcdir/suites/expectations/mxnet-1.9.1.txt" \
  --pass-env MXNET_SUBGRAPH_VERBOSE
