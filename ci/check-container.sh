#!/usr/bin/env bash
# The container check (make check-container, and a stage of .ci/run): build
# the CPU image on a local Debian 12 base, run the README's test command in
# it without the network, and bring the results back.
#
# usage: ci/check-container.sh [--install-tools] [--out DIR] [--tag TAG] [--refresh-base]
#
#   --install-tools  first install buildah and debootstrap when no container
#                    tool or no debootstrap is there (ci/install-deps.sh)
#   --out DIR        where results go (default ./ci-out/check-container)
#   --tag TAG        the image's tag (default mxcts:cpu)
#   --refresh-base   run debootstrap again instead of using the cached base
#
# Steps: ci/docker-build.sh cpu --local-base (debootstrap of bookworm, cached
# under ${XDG_CACHE_HOME:-~/.cache}/mxcts/containers, as BASE_IMAGE), then
# ci/docker-run.sh --no-network --out DIR TAG -- bash
# /src/mxcts/ci/container-job.sh: `bash ci/check.sh` in a clean copy of the
# image's tree, as the image's user mxcts; the mxnet stage skips there, since
# PyPI cannot be reached.  DIR gets what ci/container-job.sh writes
# (check.log, make-check/ with every .trs and .log, conformance/results.tap
# and junit.xml).  The check fails when the image does not build, check.sh
# fails, no test result or no JUnit report came back, a test failed, the
# mxnet stage was not skipped (the container had the network), or the job
# did not run as mxcts.
# Exit status: 0 passed; 1 failed; 77 skipped, after saying why: no container
# tool that works here (none installed, docker without a daemon, a tool that
# cannot run a container), or no way to make the base (no debootstrap, not
# root).  The last line is "check-container: ..." with the counts, the
# image's size and the seconds taken.
set -euo pipefail

usage() {
    echo "usage: ci/check-container.sh [--install-tools] [--out DIR] [--tag TAG] [--refresh-base]"
}

srcdir=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=ci/container-lib.sh
source "$srcdir/ci/container-lib.sh"
install_tools=0
out=./ci-out/check-container
tag=mxcts:cpu
refresh=""

while [ $# -gt 0 ]; do
    case $1 in
        --install-tools) install_tools=1 ;;
        --out|--tag)
            [ $# -ge 2 ] || { usage >&2; echo "check-container.sh: $1 needs a value" >&2; exit 2; }
            case $1 in --out) out=$2 ;; --tag) tag=$2 ;; esac
            shift ;;
        --refresh-base) refresh=--refresh-base ;;
        -h|--help) usage; sed -n '7,31s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) usage >&2; echo "check-container.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done

start=$SECONDS
skip() { echo "check-container: SKIPPED (not run, not passed): $*"; exit 77; }
fail() { echo "check-container: FAILED: $* [$((SECONDS - start))s]"; exit 1; }

if [ "$install_tools" -eq 1 ] && { ! command -v debootstrap >/dev/null 2>&1 ||
        ! { command -v buildah || command -v podman || docker info; } >/dev/null 2>&1; }; then
    EXTRA_PACKAGES="buildah debootstrap" bash "$srcdir/ci/install-deps.sh" ||
        skip "installing buildah and debootstrap failed (above)"
fi
ctr_pick_tool check-container.sh || skip "no container tool works here (above)"
rc=0
base=$(ctr_local_base check-container.sh) || rc=$?
[ "$rc" -ne 77 ] || skip "the local Debian base cannot be made here (above)"
[ "$rc" -eq 0 ] || fail "making the local Debian base"
if ! probe=$(ctr_run --no-network "$base" -- true 2>&1); then
    printf '%s\n' "$probe" | sed 's/^/  /'
    skip "$CTR_TOOL cannot run a container here (above)"
fi

bash "$srcdir/ci/docker-build.sh" cpu --local-base $refresh --tag "$tag" || fail "building $tag"
size=$(ctr_image_size "$tag")

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "${out:?}"/*
rc=0
bash "$srcdir/ci/docker-run.sh" --no-network --out "$out" "$tag" -- \
    bash /src/mxcts/ci/container-job.sh || rc=$?
counts=$(ctr_count_results "$out/make-check")
echo "check-container: in $tag: $counts; results in $out"

[ "$rc" -eq 0 ] || fail "the job in $tag exited $rc ($counts)"
read -r passed _ failed _ _ _ <<<"$counts"
[ "$passed" -gt 0 ] || fail "no test result came back from $tag"
[ "$failed" -eq 0 ] || fail "$failed tests failed in $tag"
grep -q '<testsuite' "$out/conformance/junit.xml" 2>/dev/null || fail "no JUnit report in $out/conformance"
grep -Eq '^ +mxnet +skipped' "$out/check.log" || fail "the mxnet stage was not skipped: did the container reach the network?"
grep -q '^container-job.sh: .*, as mxcts$' "$out/check.log" || fail "the job in $tag did not run as the user mxcts"
echo "check-container: passed: image $tag $size; $counts [$((SECONDS - start))s]"
