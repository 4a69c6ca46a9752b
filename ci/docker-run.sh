#!/usr/bin/env bash
# Run a command in a new container of an mxcts image and remove the
# container, with docker, podman or buildah (ci/container-lib.sh picks;
# CONTAINER_TOOL forces one).
#
# usage: ci/docker-run.sh [--gpus] [--no-network] [--out DIR] [-e NAME=VALUE]... TAG -- COMMAND [ARG...]
#
#   --gpus        make the host's GPUs visible.  docker: `--gpus all` when
#                 `docker run --rm --gpus all TAG true` works (NVIDIA Container
#                 Toolkit), else `--runtime nvidia` with NVIDIA_VISIBLE_DEVICES=all
#                 when docker info lists that runtime (nvidia-docker2), else an
#                 error.  podman: CDI, `--device nvidia.com/gpu=all` (the host
#                 has run nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml).
#                 buildah cannot; it is refused.
#   --no-network  the container gets no network (only loopback)
#   --out DIR     after the command, copy the container's /out (writable by
#                 the image's user mxcts) to DIR on the host (created)
#   -e NAME=VALUE environment for the command (repeatable)
#
# The command runs as the image's user (mxcts); the copy of /out makes the
# files the invoking user's.  The exit status is the command's (1 as well
# when copying /out back failed).
set -euo pipefail

usage() {
    echo "usage: ci/docker-run.sh [--gpus] [--no-network] [--out DIR] [-e NAME=VALUE]... TAG -- COMMAND [ARG...]"
}

srcdir=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=ci/container-lib.sh
source "$srcdir/ci/container-lib.sh"
args=()
out=""
tag=""

while [ $# -gt 0 ]; do
    case $1 in
        --gpus|--no-network) args+=("$1") ;;
        --out|-e|--env)
            [ $# -ge 2 ] || { usage >&2; echo "docker-run.sh: $1 needs a value" >&2; exit 2; }
            case $1 in
                --out) out=$2 ;;
                *) case $2 in
                       [A-Za-z_]*=*) args+=(-e "$2") ;;
                       *) echo "docker-run.sh: -e '$2': not NAME=VALUE" >&2; exit 2 ;;
                   esac ;;
            esac
            shift ;;
        -h|--help) usage; sed -n '7,22s/^# \{0,1\}//p' "$0"; exit 0 ;;
        --) shift; break ;;
        -*) usage >&2; echo "docker-run.sh: unknown option: $1" >&2; exit 2 ;;
        *)
            [ -z "$tag" ] || { usage >&2; echo "docker-run.sh: a second TAG '$1': put the command after --" >&2; exit 2; }
            tag=$1 ;;
    esac
    shift
done

if [ -z "$tag" ] || [ $# -eq 0 ]; then
    usage >&2
    exit 2
fi
ctr_pick_tool docker-run.sh || exit 1
ctr_image_exists "$tag" || ctr_die docker-run.sh "no image '$tag' for $CTR_TOOL (build it with ci/docker-build.sh)"
if [ -n "$out" ]; then
    mkdir -p "$out"
    out=$(cd "$out" && pwd)
    args+=(--out "$out")
fi

rc=0
ctr_run "${args[@]}" "$tag" -- "$@" || rc=$?
exit "$rc"
