#!/bin/sh
# `make check-peer`: MXNet 1.9.1's own Python tests (the peer files) with
# pytest on libmxref (MXNET_LIBRARY_PATH) and on MXNet 1.9.1 itself, and
# the table of their outcomes (ci/peer/summary.py).
#
# usage: check-peer.sh BUILDDIR SRCDIR
#
# The peer files (PEER_DIR, default SRCDIR/../shared/peer/mxnet-1.9.1) are
# copied to a scratch folder under BUILDDIR and run there unmodified, with
# our pytest plugin ci/peer/mxcts_peer.py recording each test.  They run in
# a virtual environment (PEER_VENV, default BUILDDIR/python-env, made by
# ci/python-env.sh) holding the
# mxnet==1.9.1 wheel's Python package, numpy < 1.24, pytest,
# pytest-rerunfailures, nose, requests and scipy (the GPU files import it),
# installed with pip once (a wheel that `make check-mxnet` downloaded is
# used from BUILDDIR/mxnet-wheel/download).
#
# PEER_FILES: the test files, relative to the peer folder (default the
#   seven of tests/python/unittest); PEER_GPU_TESTS: the GPU files' tests
#   run after them (default the seed's test_bulking versions; on the CPU,
#   through ci/peer/sitecustomize.py, when nvidia-smi finds no GPU), their
#   printed runtimes shown; PEER_LIBS: "mxref mxnet" (default) or
#   one of them; PEER_TIMEOUT: seconds per file and library (default 1800);
#   PEER_RUN: the scratch folder (default BUILDDIR/peer-run, emptied first).
# Before the peer files, ci/peer/frontend_smoke.py runs on each library.
# Exit status: 0 when the smoke test passes and every test that passes on
# MXNet passes on libmxref or
# needs something libmxref lacks (or is listed in ci/peer/expectations.txt);
# 1 otherwise; 77 when the tests cannot run here (no peer files, python3
# or pip missing, the package index unreachable), with the reason.
set -u
builddir=${1:?usage: check-peer.sh BUILDDIR SRCDIR}
srcdir=${2:?usage: check-peer.sh BUILDDIR SRCDIR}
peer=${PEER_DIR:-$srcdir/../shared/peer/mxnet-1.9.1}
venv=${PEER_VENV:-$builddir/python-env}
libs=${PEER_LIBS:-mxref mxnet}
files=${PEER_FILES:-"test_engine.py test_exc_handling.py test_autograd.py test_executor.py test_symbol.py test_profiler.py test_operator.py"}
libmxref=$builddir/ref/.libs/libmxref.so

say() { echo "check-peer: $*" >&2; }
skip() { say "SKIP: $*"; exit 77; }

[ -d "$peer/tests/python/unittest" ] || skip "no peer files at $peer (set PEER_DIR)"
[ -f "$libmxref" ] || { say "$libmxref is not built"; exit 1; }
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"

# The environment: made once (ci/python-env.sh), checked every time.
py=$venv/bin/python
rc=0
sh "$srcdir/ci/python-env.sh" "$venv" --wheels "$builddir/mxnet-wheel/download" \
    pytest pytest-rerunfailures nose requests 'scipy<1.12' || rc=$?
case $rc in
    0) ;;
    77) exit 77 ;;
    *) exit 1 ;;
esac

run=${PEER_RUN:-$builddir/peer-run}
rm -rf "$run" && mkdir -p "$run/results" || exit 1
cp -R "$peer/." "$run/files" && chmod -R u+w "$run/files" || exit 1

# run_file LIB FILE EXTRA_ENV [PYTEST ARGS]: one file (or test) on one
# library, its log in results/; EXTRA_ENV: VAR=value words or "".
run_file() {
    lib=$1 file=$2 extra_env=$3
    shift 3
    path=tests/python/unittest/$file
    [ -f "$run/files/${path%%::*}" ] || path=$file
    log=$run/results/$lib-$(basename "$file" .py | sed 's/\.py::/-/').log
    if [ "$lib" = mxref ]; then lib_env="MXNET_LIBRARY_PATH=$libmxref"; else lib_env="-u MXNET_LIBRARY_PATH"; fi
    # shellcheck disable=SC2086  # lib_env and extra_env are word lists
    (cd "$run/files" && env $lib_env $extra_env MXCTS_PEER_RESULTS="$run/results/$lib.jsonl" \
        PYTHONPATH="$srcdir/ci/peer:$run/stubs" timeout "${PEER_TIMEOUT:-1800}" "$py" -m pytest -q \
        -p mxcts_peer -p no:cacheprovider --tb=native -W ignore "$@" "$path") >"$log" 2>&1
    rc=$?
    say "$lib $file: $(tail -n 1 "$log") (exit $rc)"
    [ $rc -eq 124 ] && say "$lib $file timed out after ${PEER_TIMEOUT:-1800}s: its finished tests are not counted"
}

# The GPU files' seed tests (test_bulking, symbolic and Gluon), on the CPU
# where there is no GPU; the sibling modules they import that are not among
# the peer files are stubbed.
gpu_tests=${PEER_GPU_TESTS-"tests/python/gpu/test_operator_gpu.py::test_bulking_operator_gpu tests/python/gpu/test_gluon_gpu.py::test_bulking_gluon_gpu"}
# MXNet 1.9.1 marks both @unittest.skip (its issues 16517 and 14970); they
# run all the same.
gpu_env=MXCTS_PEER_UNSKIP=test_bulking_operator_gpu,test_bulking_gluon_gpu
nvidia-smi -L >/dev/null 2>&1 || gpu_env="$gpu_env MXCTS_PEER_CPU=1"
"$py" "$srcdir/ci/peer/mxcts_peer.py" "$run/stubs" "$run/files/tests/python/unittest" \
    "$run/files/tests/python/gpu" -- "$run"/files/tests/python/gpu/*.py || exit 1

smoke_failed=0
for lib in $libs; do
    if [ "$lib" = mxref ]; then set -- env MXNET_LIBRARY_PATH="$libmxref"; else set -- env -u MXNET_LIBRARY_PATH; fi
    say "$lib: the frontend smoke test (ci/peer/frontend_smoke.py)"
    "$@" "$py" "$srcdir/ci/peer/frontend_smoke.py" 2>"$run/results/$lib-smoke.err" || smoke_failed=1
    for file in $files; do run_file "$lib" "$file" ""; done
    for test in $gpu_tests; do
        # Each is one shot per config (20 iterations of about 1 ms on
        # libmxref), which a scheduler stall of a few ms can decide either
        # way: a failed try is tried again, up to 3 times, and the reruns
        # are counted in the table.  The runtimes printed are the last try's.
        run_file "$lib" "$test" "$gpu_env" -s --reruns 3
        grep -h "runtime of" "$log" | tail -n 6 | sed "s/^/check-peer: $lib /" >&2
    done
done
"$py" "$srcdir/ci/peer/summary.py" "$run/results/mxref.jsonl" "$run/results/mxnet.jsonl" \
    "$srcdir/ci/peer/expectations.txt" || exit 1
[ $smoke_failed -eq 0 ] || { say "the frontend smoke test failed (above)"; exit 1; }
