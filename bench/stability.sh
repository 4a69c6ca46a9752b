#!/bin/sh
# How often does `mxcts run` fail falsely?  Runs the default conformance run
# against an implementation N times in a row, optionally with a CPU hog
# pinned to one core, and prints one line per run and the false-failure
# count (every failure against libmxref is a false one: it passes the suites).
#
#   bench/stability.sh [--runs N] [--hog] [--out DIR] [-- MXCTS-RUN-OPTIONS...]
#
# Run from the top build directory (or set MXCTS=path/to/mxcts).  Each run's
# results stay in DIR/run-NN (default ./stability-out); the summary is also
# written to DIR/summary.txt.  The hog is a busy loop pinned with taskset to
# the last core, started before the first run and killed after the last.
set -u

runs=20
hog=no
out=./stability-out
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --hog) hog=yes; shift ;;
    --out) out=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "usage: $0 [--runs N] [--hog] [--out DIR] [-- MXCTS-RUN-OPTIONS...]" >&2; exit 2 ;;
  esac
done
case $runs in ''|*[!0-9]*) echo "$0: --runs $runs: expected a count" >&2; exit 2 ;; esac

mxcts=${MXCTS:-./harness/mxcts}
[ -x "$mxcts" ] || { echo "$0: $mxcts not found (run from the build directory or set MXCTS)" >&2; exit 2; }
mkdir -p "$out"
summary=$out/summary.txt
: >"$summary"

hog_pid=
if [ "$hog" = yes ]; then
  last=$(($(nproc) - 1))
  taskset -c "$last" sh -c 'while :; do :; done' &
  hog_pid=$!
  echo "CPU hog: pid $hog_pid pinned to core $last" | tee -a "$summary"
fi
cleanup() { [ -n "$hog_pid" ] && kill "$hog_pid" 2>/dev/null; }
trap cleanup EXIT
trap 'exit 130' INT TERM   # stop the batch, not just the current run (EXIT kills the hog)

failed=0
flaky=0
i=1
while [ "$i" -le "$runs" ]; do
  dir=$(printf '%s/run-%02d' "$out" "$i")
  start=$(date +%s)
  "$mxcts" run --out "$dir" --no-progress "$@" >"$dir.log" 2>&1
  rc=$?
  took=$(($(date +%s) - start))
  line=$(grep '^mxcts: ' "$dir.log" | tail -1)
  nflaky=$(grep -o '"flaky": true' "$dir/results.json" 2>/dev/null | wc -l)
  [ "$rc" -eq 0 ] || failed=$((failed + 1))
  flaky=$((flaky + nflaky))
  printf 'run %2d: exit %d, %3d s, %d flaky: %s\n' "$i" "$rc" "$took" "$nflaky" "$line" | tee -a "$summary"
  i=$((i + 1))
done
printf 'false failures: %d of %d runs (hog: %s); assertions passing only on their rerun: %d\n' \
  "$failed" "$runs" "$hog" "$flaky" | tee -a "$summary"
[ "$failed" -eq 0 ]
