#!/usr/bin/env bash
# Run a command in an mxcts image, with an output directory mounted at /out.
#
# usage: ci/docker-run.sh [--gpus] [--out DIR] [-e NAME=VALUE]... TAG -- COMMAND [ARG...]
#
#   --gpus      make the host's GPUs visible: `docker run --gpus all` when the
#               NVIDIA Container Toolkit supports it, else `--runtime nvidia`
#               with NVIDIA_VISIBLE_DEVICES=all (older nvidia-docker2 setups).
#               The choice is made by trying `docker run --rm --gpus all TAG
#               true` first, then looking for the nvidia runtime in docker info.
#   --out DIR   host directory mounted at /out (default ./ci-out; created)
#   -e NAME=VALUE  environment for the command (repeatable)
#
# The container runs as root (the build tree in the image is root's); HOST_UID
# and HOST_GID are passed in so a command can chown what it writes to /out.
# The exit status is the command's.  Environment: DOCKER (default docker).
set -euo pipefail

usage() {
    echo "usage: ci/docker-run.sh [--gpus] [--out DIR] [-e NAME=VALUE]... TAG -- COMMAND [ARG...]"
}

docker=${DOCKER:-docker}
gpus=0
out=./ci-out
envs=()
tag=""

while [ $# -gt 0 ]; do
    case $1 in
        --gpus) gpus=1 ;;
        --out)
            [ $# -ge 2 ] || { usage >&2; exit 2; }
            out=$2; shift ;;
        -e|--env)
            [ $# -ge 2 ] || { usage >&2; exit 2; }
            envs+=(-e "$2"); shift ;;
        -h|--help) usage; sed -n '6,17s/^# \{0,1\}//p' "$0"; exit 0 ;;
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
if ! command -v "$docker" >/dev/null 2>&1; then
    echo "docker-run.sh: '$docker' not found" >&2
    exit 1
fi
if ! "$docker" image inspect "$tag" >/dev/null 2>&1; then
    echo "docker-run.sh: no image '$tag' (build it with ci/docker-build.sh)" >&2
    exit 1
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)

gpu_args=()
if [ "$gpus" -eq 1 ]; then
    if probe=$("$docker" run --rm --gpus all "$tag" true 2>&1); then
        gpu_args=(--gpus all)
    elif "$docker" info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"nvidia"'; then
        echo "docker-run.sh: --gpus all failed; using --runtime nvidia. The --gpus error was:" >&2
        printf '%s\n' "$probe" | sed 's/^/  /' >&2
        gpu_args=(--runtime nvidia -e NVIDIA_VISIBLE_DEVICES=all
                  -e "NVIDIA_DRIVER_CAPABILITIES=${NVIDIA_DRIVER_CAPABILITIES:-compute,utility}")
    else
        echo "docker-run.sh: cannot give the container GPUs: 'docker run --gpus all' failed and docker has no nvidia runtime." >&2
        printf '%s\n' "$probe" | sed 's/^/  /' >&2
        echo "docker-run.sh: install the NVIDIA Container Toolkit on the host (nvidia-ctk runtime configure --runtime=docker)." >&2
        exit 1
    fi
fi

tty_args=()
if [ -t 0 ] && [ -t 1 ]; then
    tty_args=(-it)
fi

exec "$docker" run --rm --init "${tty_args[@]}" "${gpu_args[@]}" \
    -v "$out:/out" \
    -e "HOST_UID=$(id -u)" -e "HOST_GID=$(id -g)" \
    "${envs[@]}" \
    "$tag" "$@"
