#!/usr/bin/env bash
# The test job inside an mxcts image (containers/Dockerfile.*), run by
# ci/check-container.sh and ci/gpu-job.sh: the README's test command in a
# clean copy of the image's source tree, results in /out.
#
# usage: ci/container-job.sh [--require-gpu] [--out DIR] [-- CHECK.SH ARGS...]
#
#   --require-gpu  fail (status 1, before any test) when nvidia-smi lists no GPU
#   --out DIR      where results go (default /out)
#
# Steps: copy $MXCTS_SRC_DIR (default /src/mxcts) to a new directory in
# $HOME, then there CONFIGURE_FLAGS=$MXCTS_CONFIGURE_FLAGS bash ci/check.sh
# [ARGS] (its output also in DIR/check.log), then collect.  DIR afterwards:
#   nvidia-smi.txt                 the GPUs seen (or why none)
#   mxr-info.txt                   the installed mxr-info: what the image's
#                                  libmxref has (CUDA, cuDNN, GPUs)
#   check.log, check.status        check.sh's output and exit status
#   make-check/<build dir>/...     every test's .log and .trs, test-suite.log
#   conformance/results.tap, junit.xml, report.html, run/
#                                  the conformance suites of `make check`
#                                  (harness/tests/conformance.out), reported
#                                  with the built mxcts
# Exit status: check.sh's, or 1 when it passed but a report is missing.
set -euo pipefail

usage() { echo "usage: ci/container-job.sh [--require-gpu] [--out DIR] [-- CHECK.SH ARGS...]"; }

require_gpu=0
out=/out
while [ $# -gt 0 ]; do
    case $1 in
        --require-gpu) require_gpu=1 ;;
        --out) [ $# -ge 2 ] || { usage >&2; exit 2; }; out=$2; shift ;;
        -h|--help) usage; sed -n '6,23s/^# \{0,1\}//p' "$0"; exit 0 ;;
        --) shift; break ;;
        *) usage >&2; echo "container-job.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done

src=${MXCTS_SRC_DIR:-/src/mxcts}
[ -f "$src/ci/check.sh" ] || { echo "container-job.sh: no source tree at $src (MXCTS_SRC_DIR)" >&2; exit 1; }
mkdir -p "$out"
[ -w "$out" ] || { echo "container-job.sh: cannot write to $out" >&2; exit 1; }

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >"$out/nvidia-smi.txt" 2>&1 &&
        grep -q '^GPU ' "$out/nvidia-smi.txt"; then
    nvidia-smi >>"$out/nvidia-smi.txt" 2>&1 || true
    cat "$out/nvidia-smi.txt"
elif [ "$require_gpu" -eq 1 ]; then
    echo "container-job.sh: no GPU visible in the container:" >&2
    cat "$out/nvidia-smi.txt" >&2 2>/dev/null || echo "  (no nvidia-smi)" >&2
    echo 1 >"$out/check.status"
    exit 1
else
    command -v nvidia-smi >/dev/null 2>&1 || echo "no nvidia-smi in this image" >"$out/nvidia-smi.txt"
    echo "container-job.sh: no GPU: the GPU tests and the gpu-* suites skip"
fi

mxr-info >"$out/mxr-info.txt" 2>&1 || { cat "$out/mxr-info.txt" >&2; echo "container-job.sh: the installed mxr-info failed" >&2; exit 1; }

work=$(mktemp -d "$HOME/mxcts.XXXXXX")
cp -a "$src/." "$work"
cd "$work"
echo "container-job.sh: bash ci/check.sh $* in a copy of $src ($work), as $(id -un)" | tee "$out/check.log"
rc=0
CONFIGURE_FLAGS=${MXCTS_CONFIGURE_FLAGS:-} bash ci/check.sh "$@" 2>&1 |
    tee -a "$out/check.log" || rc=$?
echo "$rc" >"$out/check.status"

# Every test's log and result file, by build directory (not distcheck's tree).
find . -path './_build*/mxref-*' -prune -o -path './_build*' -type f \
        \( -name '*.trs' -o -name '*.log' \) -print |
    while IFS= read -r f; do
        mkdir -p "$out/make-check/$(dirname "${f#./}")"
        cp "$f" "$out/make-check/${f#./}"
    done

results=_build-ci/harness/tests/conformance.out/results.json
if [ -f "$results" ]; then
    mkdir -p "$out/conformance"
    cp -a _build-ci/harness/tests/conformance.out "$out/conformance/run"
    # mxcts report exits as run does: 1 for failures (make check has failed
    # then too), 3 for inconclusive orderings (skips), 2 when it cannot report.
    report_rc=0
    ./_build-ci/harness/mxcts report "$results" --tap "$out/conformance/results.tap" \
        --junit "$out/conformance/junit.xml" --html "$out/conformance/report.html" || report_rc=$?
    if [ "$report_rc" -ne 0 ] && [ "$report_rc" -ne 3 ]; then
        echo "container-job.sh: mxcts report exited $report_rc" >&2
        [ "$rc" -ne 0 ] || rc=1
    fi
else
    echo "container-job.sh: no conformance results ($results): make check did not reach the suites" >&2
    [ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
