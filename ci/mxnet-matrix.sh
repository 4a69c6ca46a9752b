#!/bin/bash
# The MXNet compatibility matrix: every MXNet release on PyPI that exports
# the C API the suites use, judged by mxcts (docs/ci.md, "The MXNet matrix").
#
# usage: ci/mxnet-matrix.sh [--untimed|--timed|--all] [--build-dir DIR] [--out DIR]
#                           [--jobs N] [--release PKG==VERSION ...] [-h|--help]
#
# For each release: ref/tests/capi_fetch_mxnet.sh downloads the wheel with
# pip into the cache $MXCTS_WHEEL_CACHE (default ~/.cache/mxcts/wheels) and
# unpacks libmxnet.so with the libraries bundled beside it into
# CACHE/unpacked/PKG-VERSION (once); then `mxcts run` judges it with
# suites/expectations/PKG-VERSION.txt (PKG-VERSION is the implementation's
# name: mxnet-1.4.1, mxnet-native-1.8.0.post0).
#
#   --untimed   the suites without timing (structure, numerics, engine
#               semantics, profiler, knobs), every release at once through GNU
#               parallel, --jobs releases at a time (default: the CPU count)
#   --timed     the timed suites, one release after the other (mxcts' host
#               lock keeps timed processes from ever running beside others)
#   --all       both (default): the untimed part first
#   --build-dir the build tree holding harness/mxcts (default: _build)
#   --out       where results go (default: BUILD/mxnet-matrix): OUT/NAME/PART
#               per release and part, OUT/matrix.md and OUT/matrix.html
#   --release   judge only these releases (repeatable; default: all seven)
#
# Per release and part it prints the wall time and mxcts' summary line;
# then `mxcts report --matrix` renders every results file into OUT/matrix.md
# (Markdown, the README's table) and OUT/matrix.html, and `mxcts report
# --diff` of each release against the previous one (each part) goes into
# OUT/changes.md: what changed since the previous release.
# Exit status: 0 when every run passed (an inconclusive ordering included),
# 77 when no release could be fetched (no pip, the index unreachable), 1
# when a run failed or a wheel could not be unpacked, 2 on a usage error.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
cache=${MXCTS_WHEEL_CACHE:-$HOME/.cache/mxcts/wheels}
releases=(mxnet==1.4.1 mxnet==1.5.1 mxnet==1.6.0 mxnet==1.7.0.post2 mxnet==1.8.0.post0
          mxnet-native==1.8.0.post0 mxnet==1.9.1)
usage() {
    echo "usage: ci/mxnet-matrix.sh [--untimed|--timed|--all] [--build-dir DIR] [--out DIR] [--jobs N] [--release PKG==VERSION ...]"
}
say() { echo "mxnet-matrix: $*" >&2; }

# run_part PART NAME: judge one release's part (the job GNU parallel runs)
run_part() {
    local part=$1 name=$2 dir=$out/$2 lib=$cache/unpacked/$2/mxnet/libmxnet.so
    local -a suites=()
    mapfile -t suites < "$out/suites-$part.txt"
    local -a args=()
    for s in "${suites[@]}"; do args+=(--suite "$s"); done
    local expect=$src/suites/expectations/$name.txt
    [ -f "$expect" ] || expect=none
    mkdir -p "$dir"
    local t0=$SECONDS rc=0
    LD_LIBRARY_PATH="$cache/unpacked/$name/mxnet${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    MXNET_SUBGRAPH_VERBOSE=0 \
        "$mxcts" run --impl "$lib" --impl-name "$name" --probe "$build/harness/mxcts-probe" \
        --suites "$src/suites" --out "$dir/$part" --expectations "$expect" --no-progress \
        --jobs 1 --pass-env MXNET_SUBGRAPH_VERBOSE "${args[@]}" > "$dir/$part.log" 2>&1 || rc=$?
    local summary
    summary=$(grep -m1 '^mxcts: ' "$dir/$part.log" || echo "mxcts: no summary (exit $rc)")
    echo "$name $part: $((SECONDS - t0))s: ${summary#mxcts: }"
    # 3: none failed, some orderings inconclusive
    [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || { sed -n '2,20p' "$dir/$part.log"; return 1; }
}

if [ "${1:-}" = --part ]; then   # internal: one job of GNU parallel
    out=$4 build=$5 mxcts=$5/harness/mxcts
    run_part "$2" "$3"
    exit
fi

parts="untimed timed" build=$src/_build out= jobs=$(nproc 2>/dev/null || echo 2)
chosen=()
while [ $# -gt 0 ]; do
    case $1 in
        --untimed) parts=untimed ;;
        --timed) parts=timed ;;
        --all) parts="untimed timed" ;;
        --build-dir) [ $# -ge 2 ] || { usage >&2; exit 2; }; build=$(cd "$2" && pwd) || exit 2; shift ;;
        --out) [ $# -ge 2 ] || { usage >&2; exit 2; }; out=$2; shift ;;
        --jobs) [ $# -ge 2 ] && [ "$2" -ge 1 ] 2>/dev/null || { usage >&2; exit 2; }; jobs=$2; shift ;;
        --release)
            [ $# -ge 2 ] && [[ $2 == *==* ]] || { usage >&2; echo "mxnet-matrix: --release wants PKG==VERSION" >&2; exit 2; }
            chosen+=("$2"); shift ;;
        -h|--help) usage; sed -n '5,31s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) usage >&2; say "unknown argument: $1"; exit 2 ;;
    esac
    shift
done
[ ${#chosen[@]} -eq 0 ] || releases=("${chosen[@]}")
mxcts=$build/harness/mxcts
[ -x "$mxcts" ] || { say "$mxcts is missing: build first (make)"; exit 2; }
command -v parallel >/dev/null 2>&1 || { say "GNU parallel is not installed"; exit 2; }
out=${out:-$build/mxnet-matrix}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2

# The suites of each part, from `mxcts list` ("  workload W, timed, ...").
"$mxcts" list --suites "$src/suites" | awk '
    /^[^ ]/ { name = $1; sub(/:$/, "", name) }
    /^  workload / { print name > (OUT "/suites-" ($3 == "timed," ? "timed" : "untimed") ".txt") }' \
    OUT="$out" || exit 2

# Fetch every wheel (sequentially: pip and the cache are shared).
names=() failed=0
for r in "${releases[@]}"; do
    pkg=${r%%==*} version=${r#*==} name=${r%%==*}-${r#*==} rc=0
    MXNET_PACKAGE=$pkg MXNET_VERSION=$version MXNET_WHEEL_CACHE=$cache \
        "$src/ref/tests/capi_fetch_mxnet.sh" "$cache/unpacked/$name" >"$out/fetch-$name.log" 2>&1 || rc=$?
    case $rc in
        0) names+=("$name") ;;
        77) say "skipping $r: $(tail -n 1 "$out/fetch-$name.log")" ;;
        *) say "fetching $r failed:"; tail -n 5 "$out/fetch-$name.log" >&2; failed=1 ;;
    esac
done
[ ${#names[@]} -gt 0 ] || { [ "$failed" -eq 1 ] && exit 1; say "no release could be fetched"; exit 77; }

t0=$SECONDS
for part in $parts; do
    tp=$SECONDS
    if [ "$part" = untimed ]; then
        parallel --jobs "$jobs" --keep-order "$0" --part untimed {} "$out" "$build" ::: "${names[@]}" || failed=1
    else
        for name in "${names[@]}"; do "$0" --part timed "$name" "$out" "$build" || failed=1; done
    fi
    echo "mxnet-matrix: $part part of ${#names[@]} releases: $((SECONDS - tp))s"
done
echo "mxnet-matrix: total $((SECONDS - t0))s"

results=()
for name in "${names[@]}"; do
    for part in $parts; do
        [ -f "$out/$name/$part/results.json" ] && results+=("$out/$name/$part/results.json")
    done
done
if [ ${#results[@]} -gt 0 ]; then
    "$mxcts" report --matrix --markdown "$out/matrix.md" --html "$out/matrix.html" "${results[@]}" || failed=1
    echo "mxnet-matrix: $out/matrix.md, $out/matrix.html"
fi

# Changed since the previous release (mxcts report --diff, each part): a
# release's regressions are findings about MXNet, not a failure of this run.
: >"$out/changes.md"
prev=
for name in "${names[@]}"; do
    for part in $parts; do
        a=$out/$prev/$part/results.json b=$out/$name/$part/results.json rc=0
        [ -n "$prev" ] && [ -f "$a" ] && [ -f "$b" ] || continue
        "$mxcts" report --diff --markdown - "$a" "$b" | sed "1s/\$/ ($part)/" >>"$out/changes.md" || rc=$?
        [ "$rc" -le 1 ] || failed=1
    done
    prev=$name
done
[ -s "$out/changes.md" ] && echo "mxnet-matrix: $out/changes.md (changed since the previous release)"
exit "$failed"
