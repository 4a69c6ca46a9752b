#!/usr/bin/env bash
# Functions shared by the container scripts (ci/docker-build.sh,
# ci/docker-run.sh, ci/gpu-job.sh, ci/check-container.sh): one interface over
# docker, podman and buildah, and the locally made Debian base image.
# Sourced, not run: `source ci/container-lib.sh`.
#
# Which tool: $CONTAINER_TOOL when set (docker, podman or buildah; an error
# when it is not installed), else the first that works of
#   docker    when `docker info` reaches a daemon (a client alone is not enough)
#   buildah   builds with `buildah bud`, runs with `buildah from` + `buildah run`
#   podman
# buildah gets --storage-driver "${STORAGE_DRIVER:-vfs}" and runs with
# --isolation "${BUILDAH_ISOLATION:-chroot}": both work in an unprivileged
# container or a VM without overlayfs, where `podman run` may not.
# A run with GPUs needs docker (--gpus all) or podman (CDI); see ctr_run.
#
# The local base (ctr_local_base): debootstrap --variant=minbase of
# $MXCTS_DEBIAN_SUITE (bookworm) from $MXCTS_DEBIAN_MIRROR
# (http://deb.debian.org/debian), kept as a tarball under
# ${XDG_CACHE_HOME:-~/.cache}/mxcts/containers and imported as the image
# localhost/mxcts-base:<suite>; it stands in for debian:12.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    case ${1:-} in
        -h|--help) sed -n '2,21s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "container-lib.sh: source it (see --help)" >&2; exit 2 ;;
    esac
fi

CTR_TOOL=""
CTR=()

# ctr_die PREFIX MESSAGE... : print "PREFIX: MESSAGE" to stderr and exit 1.
ctr_die() { local p=$1; shift; echo "$p: $*" >&2; exit 1; }

# ctr_pick_tool PREFIX: set CTR_TOOL and CTR (the command with its global
# options).  Returns 1 (after saying why) when no tool works.
ctr_pick_tool() {
    local p=$1 t
    if [ -n "${CONTAINER_TOOL:-}" ]; then
        case $CONTAINER_TOOL in
            docker|podman|buildah) ;;
            *) echo "$p: CONTAINER_TOOL='$CONTAINER_TOOL': not docker, podman or buildah" >&2; return 1 ;;
        esac
        if ! command -v "$CONTAINER_TOOL" >/dev/null 2>&1; then
            echo "$p: CONTAINER_TOOL=$CONTAINER_TOOL, but '$CONTAINER_TOOL' is not installed" >&2
            return 1
        fi
        if [ "$CONTAINER_TOOL" = docker ] && ! docker info >/dev/null 2>&1; then
            echo "$p: CONTAINER_TOOL=docker, but 'docker info' reaches no daemon" >&2
            return 1
        fi
        t=$CONTAINER_TOOL
    elif command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
        t=docker
    elif command -v buildah >/dev/null 2>&1; then
        t=buildah
    elif command -v podman >/dev/null 2>&1; then
        t=podman
    else
        if command -v docker >/dev/null 2>&1; then
            echo "$p: docker is installed but 'docker info' reaches no daemon, and neither buildah nor podman is installed" >&2
        else
            echo "$p: none of docker, buildah, podman is installed (apt-get install buildah)" >&2
        fi
        return 1
    fi
    CTR_TOOL=$t
    case $t in
        buildah) CTR=(buildah --storage-driver "${STORAGE_DRIVER:-vfs}") ;;
        podman) CTR=(podman ${STORAGE_DRIVER:+--storage-driver "$STORAGE_DRIVER"}) ;;
        docker) CTR=(docker) ;;
    esac
}

ctr_image_exists() {
    case $CTR_TOOL in
        buildah) "${CTR[@]}" inspect --type image "$1" >/dev/null 2>&1 ;;
        *) "${CTR[@]}" image inspect "$1" >/dev/null 2>&1 ;;
    esac
}

# ctr_image_size TAG: the image's size, "N MB" (MB = 10^6 bytes), or
# "size unknown".
ctr_image_size() {
    local s
    case $CTR_TOOL in
        buildah) s=$("${CTR[@]}" images --format '{{.Size}}' "$1" 2>/dev/null | head -n 1) ;;
        *) s=$("${CTR[@]}" image inspect --format '{{.Size}}' "$1" 2>/dev/null) &&
               s="$((s / 1000000)) MB" ;;
    esac
    echo "${s:-size unknown}"
}

# ctr_build DIR DOCKERFILE TAG [BUILD OPTIONS...]: build DIR (a directory)
# with DOCKERFILE (a path under DIR or absolute).  Options are docker build's
# (--build-arg, --target, --no-cache, --pull); buildah and podman take them too.
ctr_build() {
    local dir=$1 file=$2 tag=$3; shift 3
    case $CTR_TOOL in
        buildah)
            "${CTR[@]}" bud --isolation "${BUILDAH_ISOLATION:-chroot}" --layers \
                -f "$file" -t "$tag" "$@" "$dir" ;;
        podman)
            "${CTR[@]}" build --layers -f "$file" -t "$tag" "$@" "$dir" ;;
        docker)
            "${CTR[@]}" build -f "$file" -t "$tag" "$@" "$dir" ;;
    esac
}

# ctr_import TARBALL TAG: make an image of a root file system tarball.
ctr_import() {
    local tarball=$1 tag=$2 c
    case $CTR_TOOL in
        docker|podman) "${CTR[@]}" import "$tarball" "$tag" >/dev/null ;;
        buildah)
            c=$("${CTR[@]}" from scratch)
            if "${CTR[@]}" add "$c" "$tarball" / >/dev/null &&
                "${CTR[@]}" config --cmd /bin/bash "$c" &&
                "${CTR[@]}" commit -q "$c" "$tag" >/dev/null; then
                "${CTR[@]}" rm "$c" >/dev/null
            else
                "${CTR[@]}" rm "$c" >/dev/null 2>&1 || true
                return 1
            fi ;;
    esac
}

# ctr_local_base PREFIX [--refresh]: make sure the image localhost/mxcts-base:SUITE
# exists, building its rootfs with debootstrap (cached) when needed; prints
# the tag.  Returns 77 (after saying why) when it cannot be made here.
ctr_local_base() {
    local p=$1 refresh=${2:-} suite=${MXCTS_DEBIAN_SUITE:-bookworm}
    local mirror=${MXCTS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
    local cache=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/mxcts/containers
    local arch tarball tag=localhost/mxcts-base:$suite root
    arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
    tarball=$cache/debian-$suite-$arch-minbase.tar
    if [ "$refresh" = --refresh ]; then
        rm -f "$tarball"
    elif [ -s "$tarball" ] && ctr_image_exists "$tag"; then
        echo "$p: base image $tag (from $tarball)" >&2
        echo "$tag"
        return 0
    fi
    if [ ! -s "$tarball" ]; then
        if ! command -v debootstrap >/dev/null 2>&1; then
            echo "$p: cannot make the local base: debootstrap is not installed (apt-get install debootstrap)" >&2
            return 77
        fi
        if [ "$(id -u)" -ne 0 ]; then
            echo "$p: cannot make the local base: debootstrap needs root (running as uid $(id -u))" >&2
            return 77
        fi
        mkdir -p "$cache"
        root=$(mktemp -d "$cache/rootfs.XXXXXX")
        echo "$p: debootstrap --variant=minbase $suite from $mirror (once per machine; cached in $cache)" >&2
        if ! debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$root.log" 2>&1; then
            echo "$p: debootstrap failed; the end of its log:" >&2
            tail -n 20 "$root.log" >&2
            rm -rf "$root" "$root.log"
            return 1
        fi
        # What docker's debian images drop too: package lists and caches.
        rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb
        printf 'mirror=%s suite=%s date=%s\n' "$mirror" "$suite" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
            >"$root/etc/mxcts-base"
        tar -C "$root" --numeric-owner -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
        rm -rf "$root" "$root.log"
    fi
    echo "$p: importing $tarball as $tag" >&2
    ctr_import "$tarball" "$tag" || { echo "$p: could not import $tarball" >&2; return 1; }
    echo "$tag"
}

# ctr_buildah_copy_out CONTAINER DIR
# Copy a buildah container's /out into DIR: straight from its root file
# system through `buildah mount` where that works (as root), else as a tar
# stream out of the container.  The stream is the fallback because buildah
# 1.28 has been seen to end it early (tar: Unexpected EOF) after 24 MB.
ctr_buildah_copy_out() {
    local c=$1 out=$2 mnt rc=0
    if mnt=$("${CTR[@]}" mount "$c" 2>/dev/null) && [ -d "$mnt/out" ]; then
        cp -R "$mnt/out/." "$out" || rc=$?
        "${CTR[@]}" umount "$c" >/dev/null || true
        return "$rc"
    fi
    "${CTR[@]}" run --isolation "${BUILDAH_ISOLATION:-chroot}" "$c" -- tar -C /out -cf - . |
        tar -C "$out" --no-same-owner --no-same-permissions -xf -
}

# ctr_run [--gpus] [--no-network] [--user U] [--out DIR] [-e NAME=VALUE]... TAG -- CMD...
# Run CMD in a new container of TAG and remove the container.  With --out,
# the container's /out (which the image provides, writable by its user) is
# copied to DIR afterwards, whatever CMD's exit status.  Returns CMD's status.
ctr_run() {
    local gpus=0 net=1 user="" out="" tag c rc=0 probe
    local envs=() opts=()
    while [ $# -gt 0 ]; do
        case $1 in
            --gpus) gpus=1 ;;
            --no-network) net=0 ;;
            --user) user=$2; shift ;;
            --out) out=$2; shift ;;
            -e) envs+=(-e "$2"); shift ;;
            --) shift; break ;;
            *) tag=$1 ;;
        esac
        shift
    done
    [ -z "$user" ] || opts+=(--user "$user")
    if [ "$CTR_TOOL" = buildah ]; then
        [ "$gpus" -eq 0 ] || { echo "ctr_run: buildah cannot give a container GPUs: use docker (--gpus all) or podman (CDI)" >&2; return 1; }
        # chroot isolation cannot make a network namespace: buildah runs in a
        # new one (only a loopback device, down) instead.
        local pre=()
        [ "$net" -eq 1 ] || pre=(unshare --net)
        c=$("${CTR[@]}" from --pull=never -q "$tag") || return 1
        "${pre[@]}" "${CTR[@]}" run --isolation "${BUILDAH_ISOLATION:-chroot}" "${opts[@]}" \
            "${envs[@]}" "$c" -- "$@" || rc=$?
        if [ -n "$out" ]; then
            ctr_buildah_copy_out "$c" "$out" || { echo "ctr_run: copying /out back failed" >&2; [ "$rc" -ne 0 ] || rc=1; }
        fi
        "${CTR[@]}" rm "$c" >/dev/null || true
        return "$rc"
    fi
    [ "$net" -eq 1 ] || opts+=(--network none)
    if [ "$gpus" -eq 1 ]; then
        if [ "$CTR_TOOL" = podman ]; then
            # CDI: the host has run `nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`.
            opts+=(--device nvidia.com/gpu=all)
        elif probe=$("${CTR[@]}" run --rm --gpus all "$tag" true 2>&1); then
            opts+=(--gpus all)
        elif "${CTR[@]}" info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"nvidia"'; then
            echo "ctr_run: --gpus all failed; using --runtime nvidia. The --gpus error was:" >&2
            printf '%s\n' "$probe" | sed 's/^/  /' >&2
            opts+=(--runtime nvidia -e NVIDIA_VISIBLE_DEVICES=all
                   -e "NVIDIA_DRIVER_CAPABILITIES=${NVIDIA_DRIVER_CAPABILITIES:-compute,utility}")
        else
            echo "ctr_run: cannot give the container GPUs: 'docker run --gpus all' failed and docker has no nvidia runtime:" >&2
            printf '%s\n' "$probe" | sed 's/^/  /' >&2
            echo "ctr_run: install the NVIDIA Container Toolkit on the host (nvidia-ctk runtime configure --runtime=docker)" >&2
            return 1
        fi
    fi
    if [ -t 0 ] && [ -t 1 ]; then
        opts+=(-it)
    fi
    c=$("${CTR[@]}" create --init "${opts[@]}" "${envs[@]}" "$tag" "$@") || return 1
    if [ -t 0 ] && [ -t 1 ]; then
        "${CTR[@]}" start -ai "$c" || rc=$?
    else
        "${CTR[@]}" start -a "$c" || rc=$?
    fi
    if [ -n "$out" ]; then
        "${CTR[@]}" cp "$c:/out/." "$out" || { echo "ctr_run: copying /out back failed" >&2; [ "$rc" -ne 0 ] || rc=1; }
    fi
    "${CTR[@]}" rm -f "$c" >/dev/null || true
    return "$rc"
}

# ctr_count_results DIR: "N passed, N failed, N skipped" over the
# :test-result: lines of the .trs files under DIR (as .ci/run counts:
# PASS and XFAIL pass, SKIP skips, anything else fails).
ctr_count_results() {
    local lines
    lines=$(find "$1" -name '*.trs' -exec grep -h '^:test-result:' {} + 2>/dev/null || true)
    printf '%d passed, %d failed, %d skipped\n' \
        "$(grep -cE '^:test-result: (PASS|XFAIL)' <<<"$lines" || true)" \
        "$(grep -E '^:test-result:' <<<"$lines" | grep -cvE '^:test-result: (PASS|XFAIL|SKIP)' || true)" \
        "$(grep -c '^:test-result: SKIP' <<<"$lines" || true)"
}
