#!/usr/bin/env bash
# The GPU CI job: build the CUDA image, run the tests in it with the host's
# GPUs visible, and bring the results back.
#
# usage: ci/gpu-job.sh [--tag TAG] [--base-image IMAGE] [--local-base] [--out DIR]
#                      [--no-build] [--no-gpu]
#
#   --tag TAG           image tag (default mxcts:cuda; mxcts:cpu with --no-gpu)
#   --base-image IMAGE  the image to build on (ci/docker-build.sh --base-image)
#   --local-base        with --no-gpu: build the CPU image on a local
#                       debootstrap base (ci/docker-build.sh --local-base)
#   --out DIR           where results go on the host (default ./ci-out)
#   --no-build          use the existing image TAG
#   --no-gpu            run the job on the CPU image (containers/Dockerfile.cpu)
#                       without GPUs: the GPU tests and gpu-* suites skip.  To
#                       check the job on a machine without a GPU
#
# Steps: ci/docker-build.sh cuda (cpu with --no-gpu), then in a container
# started by ci/docker-run.sh --gpus (no --gpus with --no-gpu),
# ci/container-job.sh --require-gpu (without --require-gpu with --no-gpu):
# nvidia-smi, then bash ci/check.sh --skip-mxnet in a copy of the image's
# source tree, configured with the image's MXCTS_CONFIGURE_FLAGS (CUDA and
# cuDNN), whose make check runs the unit tests and every conformance suite,
# gpu-* included.  Results in DIR (ci/container-job.sh --help):
#   nvidia-smi.txt, check.log, check.status, make-check/, conformance/
# Docker needs the NVIDIA Container Toolkit on the host; podman needs its
# CDI spec (nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml); buildah
# cannot run the job with GPUs.  Exit status: the job's (1 when no GPU was
# visible, unless --no-gpu).  The last line printed is
# "N passed, N failed, N skipped" (every test of the job's make check runs).
set -euo pipefail

usage() {
    echo "usage: ci/gpu-job.sh [--tag TAG] [--base-image IMAGE] [--local-base] [--out DIR] [--no-build] [--no-gpu]"
}

srcdir=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=ci/container-lib.sh
source "$srcdir/ci/container-lib.sh"
tag=""
build_args=()
out=./ci-out
build=1
no_gpu=0

while [ $# -gt 0 ]; do
    case $1 in
        --tag|--base-image|--out)
            [ $# -ge 2 ] || { usage >&2; echo "gpu-job.sh: $1 needs a value" >&2; exit 2; }
            case $1 in
                --tag) tag=$2 ;;
                --base-image) build_args+=(--base-image "$2") ;;
                --out) out=$2 ;;
            esac
            shift ;;
        --local-base) build_args+=(--local-base) ;;
        --no-build) build=0 ;;
        --no-gpu) no_gpu=1 ;;
        -h|--help) usage; sed -n '7,31s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) usage >&2; echo "gpu-job.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done

if [ "$no_gpu" -eq 1 ]; then
    kind=cpu run_args=() job_args=()
else
    kind=cuda run_args=(--gpus) job_args=(--require-gpu)
fi
tag=${tag:-mxcts:$kind}

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/make-check" "$out/conformance" "$out/check.log" "$out/check.status" "$out/nvidia-smi.txt"

if [ "$build" -eq 1 ]; then
    bash "$srcdir/ci/docker-build.sh" "$kind" "${build_args[@]}" --tag "$tag"
fi

rc=0
bash "$srcdir/ci/docker-run.sh" "${run_args[@]}" --out "$out" "$tag" -- \
    bash /src/mxcts/ci/container-job.sh "${job_args[@]}" -- --skip-mxnet || rc=$?

echo "gpu-job.sh: results in $out (exit status $rc)"
ctr_count_results "$out/make-check"
exit "$rc"
