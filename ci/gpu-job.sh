#!/usr/bin/env bash
# The GPU CI job: build the CUDA image, run the unit tests in it with the
# host's GPUs visible, and bring the test logs back.
#
# usage: ci/gpu-job.sh [--tag TAG] [--base-image IMAGE] [--out DIR] [--no-build] [--no-gpu]
#
#   --tag TAG           image tag (default mxcts:cuda)
#   --base-image IMAGE  nvidia/cuda cuDNN devel image to build on (see
#                       containers/Dockerfile.cuda for the default)
#   --out DIR           where results go on the host (default ./ci-out)
#   --no-build          use the existing image TAG
#   --no-gpu            run without GPUs, to try the job on a machine that has
#                       none (the GPU tests skip, as during `docker build`);
#                       without it the job fails when the container sees no GPU
#
# Steps: ci/docker-build.sh cuda (whose image build already ran make check
# without a GPU), then in a container started with ci/docker-run.sh --gpus:
# nvidia-smi, make check in the image's build tree, then every conformance
# suite (gpu-* included) through harness/mxcts.  Results in DIR:
#   nvidia-smi.txt              the GPUs the container saw
#   make-check/test-suite.log   automake's summary, with the logs of failures
#   make-check/**/*.log, *.trs  every test's log and result file
#   make-check.status           make check's exit status
#   conformance/                results.tap, junit.xml, report.html, run/
#   conformance.status          mxcts run's exit status
# The job's exit status is make check's, or when that passed mxcts's (1
# when no GPU was visible, unless --no-gpu).  The last line printed is
# "N passed, N failed, N skipped" (make check's tests).
set -euo pipefail

usage() {
    echo "usage: ci/gpu-job.sh [--tag TAG] [--base-image IMAGE] [--out DIR] [--no-build] [--no-gpu]"
}

srcdir=$(cd "$(dirname "$0")/.." && pwd)
tag=mxcts:cuda
base_args=()
out=./ci-out
build=1
gpu_args=(--gpus)
no_gpu=0

while [ $# -gt 0 ]; do
    case $1 in
        --tag|--base-image|--out)
            [ $# -ge 2 ] || { usage >&2; echo "gpu-job.sh: $1 needs a value" >&2; exit 2; }
            case $1 in
                --tag) tag=$2 ;;
                --base-image) base_args=(--base-image "$2") ;;
                --out) out=$2 ;;
            esac
            shift ;;
        --no-build) build=0 ;;
        --no-gpu) no_gpu=1; gpu_args=() ;;
        -h|--help) usage; sed -n '6,28s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) usage >&2; echo "gpu-job.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/make-check" "$out/make-check.status" "$out/nvidia-smi.txt" "$out/conformance" \
    "$out/conformance.status"

if [ "$build" -eq 1 ]; then
    bash "$srcdir/ci/docker-build.sh" cuda "${base_args[@]}" --tag "$tag"
fi

# Runs inside the container, as root, in the image's build tree.
# shellcheck disable=SC2016  # expanded by the container's shell
inner='
set -uo pipefail
cd "$MXCTS_BUILD_DIR"
if nvidia-smi -L >/out/nvidia-smi.txt 2>&1 && grep -q "^GPU " /out/nvidia-smi.txt; then
    nvidia-smi >>/out/nvidia-smi.txt 2>&1
    cat /out/nvidia-smi.txt
    gpu=1
else
    echo "gpu-job: no GPU visible in the container:" >&2
    cat /out/nvidia-smi.txt >&2
    gpu=0
fi

rc=0
if [ "$gpu" -eq 1 ] || [ "$NO_GPU" -eq 1 ]; then
    make check || rc=$?
    if [ "$rc" -ne 0 ] && [ -f test-suite.log ]; then
        echo "gpu-job: make check failed; test-suite.log:"
        cat test-suite.log
    fi
    mkdir -p /out/make-check
    find . -name "mxref-*" -prune -o \( -name "*.log" -o -name "*.trs" \) -type f -print |
        while IFS= read -r f; do
            mkdir -p "/out/make-check/$(dirname "$f")"
            cp "$f" "/out/make-check/$f"
        done
else
    rc=1
fi

# Conformance suites: every suite (the gpu-* ones included; they skip
# without a GPU) against the in-tree libmxref, reports under /out/conformance.
if [ "$gpu" -eq 1 ] || [ "$NO_GPU" -eq 1 ]; then
    mkdir -p /out/conformance
    crc=0
    ./harness/mxcts run --out /out/conformance/run --tap /out/conformance/results.tap \
        --junit /out/conformance/junit.xml --html /out/conformance/report.html \
        --no-progress || crc=$?
    echo "$crc" >/out/conformance.status
    [ "$rc" -ne 0 ] || rc=$crc
fi

echo "$rc" >/out/make-check.status
chown -R "$HOST_UID:$HOST_GID" /out 2>/dev/null || true
exit "$rc"
'

rc=0
bash "$srcdir/ci/docker-run.sh" "${gpu_args[@]}" --out "$out" -e "NO_GPU=$no_gpu" \
    "$tag" -- bash -c "$inner" || rc=$?

counts=$(
    if [ -d "$out/make-check" ]; then
        find "$out/make-check" -name '*.trs' -exec cat {} +
    fi | awk '$1 == ":test-result:" {
                  if ($2 == "PASS" || $2 == "XFAIL") p++
                  else if ($2 == "SKIP") s++
                  else f++
              }
              END { printf "%d passed, %d failed, %d skipped\n", p, f, s }'
)
echo "gpu-job.sh: results in $out (exit status $rc)"
echo "$counts"
exit "$rc"
