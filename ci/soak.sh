#!/usr/bin/env bash
# The soak: run the timed suites against one implementation many times under
# each of several machine loads, and count what each run decided.  Against a
# correct implementation (libmxref) every failure is a false failure; the
# goal is none under any load, with `inconclusive` as the honest answer to a
# machine that stays busy.
#
# usage: ci/soak.sh --build DIR [--impl LIB] [--runs N] [--loads LIST]
#                   [--suite NAME]... [--out DIR]
#
#   --build DIR    a configured and built tree (harness/mxcts in it); the
#                  make loads rebuild a copy of it, never DIR itself
#   --impl LIB     library under test (default DIR/ref/.libs/libmxref.so)
#   --runs N       runs per load (default 20)
#   --loads LIST   comma-separated, from: idle, hog (a busy loop pinned to
#                  CPU 0), make-nice (make -j2 of this project, in a loop,
#                  at nice 19), make (the same at normal priority);
#                  default all four
#   --suite NAME   a suite to run (repeatable; default every suite with a
#                  timed ordering that runs without a GPU or Python:
#                  bulking-symbolic, bulking-cachedop, bulking-inference,
#                  engine-dispatch, async)
#   --out DIR      where runs go (default ./soak-out); DIR/soak.md gets the
#                  table, DIR/LOAD/rNN/ each run's results
#
# Prints one line per run and then a Markdown table: per load, runs, runs
# with a failed assertion, failed assertions, inconclusive assertions, and
# the median and longest run time.  Exit status: 0 when no run failed an
# assertion, 1 when one did, 2 on a usage error.
set -euo pipefail

usage() {
    sed -n '9,10s/^# \{0,1\}//p' "$0"
}
die() { echo "soak.sh: $*" >&2; exit 2; }

srcdir=$(cd "$(dirname "$0")/.." && pwd)
build="" impl="" runs=20 loads=idle,hog,make-nice,make out=./soak-out
suites=()
while [ $# -gt 0 ]; do
    case $1 in
        --build|--impl|--runs|--loads|--suite|--out)
            [ $# -ge 2 ] || die "$1 needs a value"
            case $1 in
                --build) build=$2 ;; --impl) impl=$2 ;; --runs) runs=$2 ;;
                --loads) loads=$2 ;; --suite) suites+=("$2") ;; --out) out=$2 ;;
            esac
            shift ;;
        -h|--help) usage; sed -n '11,29s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
    shift
done
[ -n "$build" ] || { usage >&2; die "--build DIR is required"; }
[ -x "$build/harness/mxcts" ] || die "$build/harness/mxcts is missing: build the tree first"
build=$(cd "$build" && pwd)
impl=${impl:-$build/ref/.libs/libmxref.so}
[ -f "$impl" ] || die "--impl $impl: no such file"
case $runs in ''|*[!0-9]*|0) die "--runs $runs: not a positive whole number" ;; esac
[ ${#suites[@]} -gt 0 ] ||
    suites=(bulking-symbolic bulking-cachedop bulking-inference engine-dispatch async)
IFS=, read -r -a load_list <<<"$loads"
for l in "${load_list[@]}"; do
    case $l in idle|hog|make-nice|make) ;; *) die "--loads: unknown load '$l'" ;; esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

load_pid=""
stop_load() {
    if [ -n "$load_pid" ]; then
        kill -- -"$load_pid" 2>/dev/null || true
        wait "$load_pid" 2>/dev/null || true
        load_pid=""
    fi
}
trap stop_load EXIT

# A scratch copy of the build tree for the make loads: `make clean all` in
# a loop keeps both cores compiling for as long as the load runs.
make_tree() {
    local tree=$out/make-load
    if [ ! -d "$tree" ]; then
        cp -a "$build" "$tree"
    fi
    echo "$tree"
}

start_load() {
    case $1 in
        idle) return 0 ;;
        hog) setsid taskset -c 0 sh -c 'while :; do :; done' & ;;
        make-nice|make)
            local tree niceness=0
            tree=$(make_tree)
            [ "$1" = make-nice ] && niceness=19
            setsid nice -n "$niceness" sh -c \
                "while :; do make -C '$tree' -s clean >/dev/null 2>&1; make -C '$tree' -s -j2 >/dev/null 2>&1; done" & ;;
    esac
    load_pid=$!
    sleep 5 # let the load reach its steady state
}

# One run: its counts as "fail inconclusive seconds".
one_run() {
    local dir=$1 t0=$SECONDS rc=0 args=()
    for s in "${suites[@]}"; do args+=(--suite "$s"); done
    "$build/harness/mxcts" run --impl "$impl" --suites "$srcdir/suites" --out "$dir" \
        --no-progress "${args[@]}" >"$dir.log" 2>&1 || rc=$?
    if [ ! -f "$dir/results.json" ]; then
        echo "soak.sh: $dir: mxcts exited with status $rc and wrote no results.json (see $dir.log)" >&2
        echo "1 0 $((SECONDS - t0))"
        return
    fi
    python3 - "$dir/results.json" "$((SECONDS - t0))" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
bad = sum(s.get(k, 0) for k in ("fail", "crash", "timeout", "error", "xpass"))
print(bad, s.get("inconclusive", 0), sys.argv[2])
EOF
}

table=$out/soak.md
{
    echo "| load | runs | runs failed | failed assertions | inconclusive assertions | median s | longest s |"
    echo "|---|---|---|---|---|---|---|"
} >"$table"
any_failed=0
for load in "${load_list[@]}"; do
    start_load "$load"
    fails=0 failed_runs=0 inconcl=0 times=()
    for r in $(seq -w 1 "$runs"); do
        dir=$out/$load/r$r
        rm -rf "$dir"
        mkdir -p "$out/$load"
        read -r f i t < <(one_run "$dir")
        echo "soak: $load run $r: $f failed, $i inconclusive, ${t}s"
        fails=$((fails + f)); inconcl=$((inconcl + i)); times+=("$t")
        [ "$f" -eq 0 ] || failed_runs=$((failed_runs + 1))
    done
    stop_load
    read -r med max < <(printf '%s\n' "${times[@]}" | sort -n |
        awk '{a[NR]=$1} END {print a[int((NR+1)/2)], a[NR]}')
    echo "| $load | $runs | $failed_runs | $fails | $inconcl | $med | $max |" >>"$table"
    [ "$failed_runs" -eq 0 ] || any_failed=1
done
cat "$table"
exit "$any_failed"
