#!/usr/bin/env bash
# Build the mxcts container image from the repository root.
#
# usage: ci/docker-build.sh cpu|cuda [--base-image IMAGE] [--tag TAG]
#                           [--configure-flags FLAGS] [--no-cache] [--pull]
#
#   cpu    containers/Dockerfile.cpu (debian:12); default tag mxcts:cpu
#   cuda   containers/Dockerfile.cuda (ARG BASE_IMAGE, an nvidia/cuda cuDNN
#          devel image); default tag mxcts:cuda
#   --base-image IMAGE        cuda only: the BASE_IMAGE build argument
#   --tag TAG                 the image's tag
#   --configure-flags FLAGS   extra configure flags (the CONFIGURE_FLAGS build argument)
#   --no-cache, --pull        passed on to docker build
#
# The image build runs ci/check.sh (configure, make, make check) and fails when
# it fails.  The build context is the files git knows about (tracked, and
# untracked but not ignored), as in a fresh clone, so local build trees and
# in-tree configure output stay out; outside a git work tree it is the
# whole directory.  Environment: DOCKER (default docker).
set -euo pipefail

usage() {
    echo "usage: ci/docker-build.sh cpu|cuda [--base-image IMAGE] [--tag TAG] [--configure-flags FLAGS] [--no-cache] [--pull]"
}

srcdir=$(cd "$(dirname "$0")/.." && pwd)
docker=${DOCKER:-docker}
kind=""
tag=""
base_image=""
build_args=()
extra=()

while [ $# -gt 0 ]; do
    case $1 in
        cpu|cuda)
            [ -z "$kind" ] || { usage >&2; exit 2; }
            kind=$1 ;;
        --base-image|--tag|--configure-flags)
            [ $# -ge 2 ] || { usage >&2; echo "docker-build.sh: $1 needs a value" >&2; exit 2; }
            case $1 in
                --base-image) base_image=$2 ;;
                --tag) tag=$2 ;;
                --configure-flags) build_args+=(--build-arg "CONFIGURE_FLAGS=$2") ;;
            esac
            shift ;;
        --no-cache|--pull) extra+=("$1") ;;
        -h|--help) usage; sed -n '6,20s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) usage >&2; echo "docker-build.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done

if [ -z "$kind" ]; then
    usage >&2
    exit 2
fi
if [ -n "$base_image" ]; then
    if [ "$kind" != cuda ]; then
        echo "docker-build.sh: --base-image is for the cuda image (the cpu image is FROM debian:12)" >&2
        exit 2
    fi
    build_args+=(--build-arg "BASE_IMAGE=$base_image")
fi
tag=${tag:-mxcts:$kind}
dockerfile=containers/Dockerfile.$kind

if ! command -v "$docker" >/dev/null 2>&1; then
    echo "docker-build.sh: '$docker' not found" >&2
    exit 1
fi

cd "$srcdir"
cmd=("$docker" build -f "$dockerfile" -t "$tag" "${build_args[@]}" "${extra[@]}")
echo "docker-build.sh: building $tag from $dockerfile"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    # The context is a tar of the files a fresh clone would have, plus the
    # work tree's uncommitted edits; deleted-but-tracked files and results
    # in ci-out/ are left out.
    git ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' f; do
            case $f in ci-out/*) continue ;; esac  # ci/docker-run.sh's default --out
            if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
        done |
        tar --null --no-recursion -T - -cf - |
        "${cmd[@]}" -
else
    "${cmd[@]}" .
fi
echo "docker-build.sh: built $tag"
