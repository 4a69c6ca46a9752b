#!/usr/bin/env bash
# Build an mxcts container image from the repository root, with docker,
# buildah or podman (ci/container-lib.sh picks; CONTAINER_TOOL forces one).
#
# usage: ci/docker-build.sh cpu|cuda [--base-image IMAGE] [--local-base] [--refresh-base]
#                           [--tag TAG] [--configure-flags FLAGS] [--no-cache] [--pull]
#
#   cpu    containers/Dockerfile.cpu (BASE_IMAGE debian:12); default tag mxcts:cpu
#   cuda   containers/Dockerfile.cuda (BASE_IMAGE an nvidia/cuda cuDNN devel
#          image, or any image with nvcc and cuDNN); default tag mxcts:cuda
#   --base-image IMAGE        the BASE_IMAGE build argument
#   --local-base              cpu only: build on a Debian 12 made here with
#                             debootstrap (root; cached under
#                             ${XDG_CACHE_HOME:-~/.cache}/mxcts/containers),
#                             for machines that cannot pull debian:12
#   --refresh-base            with --local-base: run debootstrap again
#   --tag TAG                 the image's tag
#   --configure-flags FLAGS   extra configure flags (the CONFIGURE_FLAGS build argument)
#   --no-cache, --pull        passed on to the build
#
# The build context is the files git knows about (tracked, and untracked but
# not ignored), as in a fresh clone, copied to a temporary directory, so local
# build trees, ci-out/ and in-tree configure output stay out; outside a git
# work tree it is the whole directory.  The deps stage is built first (tag
# TAG-deps); the image gets the labels org.mxcts.packages (package=version of every package
# ci/install-deps.sh installed), org.mxcts.base-image, org.mxcts.base (the
# local base's debootstrap mirror and date) and
# org.opencontainers.image.revision (the git commit).  The last line printed
# is "docker-build.sh: built TAG (N MB)".
set -euo pipefail

usage() {
    echo "usage: ci/docker-build.sh cpu|cuda [--base-image IMAGE] [--local-base] [--refresh-base] [--tag TAG] [--configure-flags FLAGS] [--no-cache] [--pull]"
}

srcdir=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=ci/container-lib.sh
source "$srcdir/ci/container-lib.sh"
kind=""
tag=""
base_image=""
local_base=0
refresh=""
build_args=()
extra=()

while [ $# -gt 0 ]; do
    case $1 in
        cpu|cuda)
            [ -z "$kind" ] || { usage >&2; echo "docker-build.sh: a second kind '$1'" >&2; exit 2; }
            kind=$1 ;;
        --base-image|--tag|--configure-flags)
            [ $# -ge 2 ] || { usage >&2; echo "docker-build.sh: $1 needs a value" >&2; exit 2; }
            case $1 in
                --base-image) base_image=$2 ;;
                --tag) tag=$2 ;;
                --configure-flags) build_args+=(--build-arg "CONFIGURE_FLAGS=$2") ;;
            esac
            shift ;;
        --local-base) local_base=1 ;;
        --refresh-base) refresh=--refresh ;;
        --no-cache|--pull) extra+=("$1") ;;
        -h|--help) usage; sed -n '7,29s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) usage >&2; echo "docker-build.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done

[ -n "$kind" ] || { usage >&2; echo "docker-build.sh: say cpu or cuda" >&2; exit 2; }
if [ "$local_base" -eq 1 ]; then
    [ "$kind" = cpu ] || { echo "docker-build.sh: --local-base is for the cpu image (the cuda image needs a base with nvcc and cuDNN: --base-image)" >&2; exit 2; }
    [ -z "$base_image" ] || { echo "docker-build.sh: --local-base and --base-image '$base_image' exclude each other" >&2; exit 2; }
fi
[ -z "$refresh" ] || [ "$local_base" -eq 1 ] || { echo "docker-build.sh: --refresh-base goes with --local-base" >&2; exit 2; }

ctr_pick_tool docker-build.sh || exit 1
tag=${tag:-mxcts:$kind}
dockerfile=containers/Dockerfile.$kind

if [ "$local_base" -eq 1 ]; then
    rc=0
    base_image=$(ctr_local_base docker-build.sh $refresh) || rc=$?
    [ "$rc" -eq 0 ] || exit "$rc"
fi
[ -z "$base_image" ] || build_args+=(--build-arg "BASE_IMAGE=$base_image")

ctx=$(mktemp -d "${TMPDIR:-/tmp}/mxcts-context.XXXXXX")
trap 'rm -rf "$ctx"' EXIT
cd "$srcdir"
revision=unknown
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    revision=$(git rev-parse HEAD)
    [ -z "$(git status --porcelain --untracked-files=no)" ] || revision="$revision+changes"
    # The files a fresh clone would have, plus the work tree's uncommitted
    # edits; deleted-but-tracked files and results in ci-out/ are left out.
    git ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' f; do
            case $f in ci-out/*) continue ;; esac  # ci/docker-run.sh's default --out
            if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
        done |
        tar --null --no-recursion -T - -cf - | tar -C "$ctx" -xf -
else
    cp -a . "$ctx"
fi

# The deps stage first: the versions it installed become labels of the
# image, which the full build (reusing that stage's layers) gets.
echo "docker-build.sh: building ${tag}-deps (the deps stage) with $CTR_TOOL${base_image:+ on $base_image}"
ctr_build "$ctx" "$ctx/$dockerfile" "${tag}-deps" --target deps "${build_args[@]}" "${extra[@]}" ||
    ctr_die docker-build.sh "building the deps stage of $dockerfile failed"
# shellcheck disable=SC2016  # for the container's shell
info=$(ctr_run "${tag}-deps" -- sh -c 'tr "\n" " " </usr/local/share/mxcts/packages.txt; echo
                                       cat /etc/mxcts-base 2>/dev/null || echo' </dev/null) ||
    ctr_die docker-build.sh "cannot read /usr/local/share/mxcts/packages.txt in ${tag}-deps"
packages=$(sed -n '1s/ *$//p' <<<"$info")
[ -n "$packages" ] || ctr_die docker-build.sh "${tag}-deps has an empty package list"
build_args+=(--label "org.mxcts.packages=$packages"
             --label "org.mxcts.base-image=${base_image:-$(sed -n 's/^ARG BASE_IMAGE=//p' "$dockerfile")}"
             --label "org.mxcts.base=$(sed -n 2p <<<"$info")"
             --label "org.opencontainers.image.revision=$revision")

echo "docker-build.sh: building $tag from $dockerfile"
ctr_build "$ctx" "$ctx/$dockerfile" "$tag" "${build_args[@]}" "${extra[@]}" ||
    ctr_die docker-build.sh "building $tag failed"
echo "docker-build.sh: built $tag ($(ctr_image_size "$tag"))"
