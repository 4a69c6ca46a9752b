#!/usr/bin/env bash
# Install the Debian/Ubuntu packages that building and testing mxcts needs.
#
# usage: ci/install-deps.sh [--cuda] [--list] [-h|--help]
#
# Quiet and idempotent: when every package is already installed (checked with
# dpkg-query) it neither updates the package lists nor installs anything.
# Works on Debian 12 and Ubuntu 22.04/24.04 (same package names).  Uses sudo
# when not run as root and sudo exists.
#
#   --cuda   also verify that nvcc is present.  CUDA itself is NOT installed:
#            it comes from the base image (nvidia/cuda:*-devel) or the host.
#   --list   print the package list, one a line, and exit (for packagers).
#
# Environment: EXTRA_PACKAGES  more packages to install, space separated.
set -euo pipefail

usage() {
    echo "usage: ci/install-deps.sh [--cuda] [--list] [-h|--help]"
}

# Build: compiler, autotools, pkg-config.  Libraries: OpenBLAS (required),
# Check (unit tests), Jansson (JSON in the harness).  Tests and tools: GNU
# parallel (fan-out of suite jobs), python3/pip/venv and unzip (reference runs
# against the MXNet wheel; Debian 12's pip installs only into a venv), and
# ca-certificates (pip over HTTPS).
PACKAGES=(
    build-essential
    autoconf
    automake
    libtool
    pkg-config
    check
    libjansson-dev
    libopenblas-dev
    parallel
    python3
    python3-pip
    python3-venv
    unzip
    ca-certificates
)

want_cuda=0
while [ $# -gt 0 ]; do
    case $1 in
        --cuda) want_cuda=1 ;;
        --list) printf '%s\n' "${PACKAGES[@]}"; exit 0 ;;
        -h|--help) usage; sed -n '6,15s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) usage >&2; echo "install-deps.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done

if [ -n "${EXTRA_PACKAGES:-}" ]; then
    read -r -a extra <<<"$EXTRA_PACKAGES"
    PACKAGES+=("${extra[@]}")
fi

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps.sh: dpkg-query/apt-get not found: only Debian and Ubuntu are supported." >&2
    echo "install-deps.sh: install the equivalents of: ${PACKAGES[*]}" >&2
    exit 1
fi

is_installed() {
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" = "install ok installed" ]
}

missing=()
for pkg in "${PACKAGES[@]}"; do
    is_installed "$pkg" || missing+=("$pkg")
done

if [ ${#missing[@]} -gt 0 ]; then
    as_root=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            as_root=(sudo)
        else
            echo "install-deps.sh: not root and no sudo; as root, install: ${missing[*]}" >&2
            exit 1
        fi
    fi
    echo "install-deps.sh: installing ${missing[*]}"
    apt=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -qq)
    # The package lists can be briefly inconsistent while a mirror syncs.
    tries=0
    until "${apt[@]}" update; do
        tries=$((tries + 1))
        if [ "$tries" -ge 3 ]; then
            echo "install-deps.sh: apt-get update failed $tries times" >&2
            exit 1
        fi
        sleep $((tries * 10))
    done
    "${apt[@]}" install -y --no-install-recommends "${missing[@]}" >/dev/null
    still=()
    for pkg in "${missing[@]}"; do
        is_installed "$pkg" || still+=("$pkg")
    done
    if [ ${#still[@]} -gt 0 ]; then
        echo "install-deps.sh: still not installed: ${still[*]}" >&2
        exit 1
    fi
fi

if [ "$want_cuda" -eq 1 ]; then
    nvcc=$(PATH="${PATH}:${CUDA_HOME:+$CUDA_HOME/bin:}/usr/local/cuda/bin" command -v nvcc || true)
    if [ -z "$nvcc" ]; then
        echo "install-deps.sh: --cuda: nvcc not found (PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin)." >&2
        echo "install-deps.sh: CUDA is not installed by this script: use an nvidia/cuda *-devel base image or the host's toolkit." >&2
        exit 1
    fi
    echo "install-deps.sh: nvcc: $nvcc ($("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'))"
    cuda_root=$(dirname "$(dirname "$nvcc")")
    if [ ! -f "$cuda_root/include/cudnn.h" ] && [ ! -f /usr/include/cudnn.h ]; then
        echo "install-deps.sh: warning: cudnn.h not found; configure --with-cudnn will fail (use a *-cudnn-devel image)" >&2
    fi
fi
