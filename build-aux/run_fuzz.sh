#!/bin/sh
# Build one of the project's libFuzzer targets with clang, libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer, and run it.
#
#   build-aux/run_fuzz.sh [--target NAME] [SECONDS] [--merge] [-- LIBFUZZER-OPTIONS...]
#
# Targets:
#   symbol_json  the symbol JSON loader (ref/tests/fuzz_symbol_json.c)
#   suite        suite files and expectation files (harness/tests/fuzz_suite.c)
#   result       probe result files and profiler traces (harness/tests/fuzz_result.c)
#   plan         plan files, as judge, exec and run --resume read them (harness/tests/fuzz_plan.c)
#
# SECONDS (default 60) is the fuzzing time.  The libraries are built once in
# their own configured tree, $FUZZ_BUILD (default _build-fuzz), with coverage
# instrumentation; new inputs go to $FUZZ_BUILD/fuzz-corpus-NAME, seeded from
# the target's corpus directory.  --merge then adds the new inputs that reach
# new code to that corpus (libFuzzer's -merge=1).  Crashes, leaks and
# timeouts leave crash-*/leak-*/timeout-* files in the current directory;
# rerun one with: $FUZZ_BUILD/fuzz_NAME FILE
# Needs clang with libFuzzer (Debian 12: apt-get install clang libclang-rt-14-dev).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
target=symbol_json
seconds=60
merge=no
usage() {
  echo "usage: $0 [--target symbol_json|suite|result|plan] [SECONDS] [--merge] [-- LIBFUZZER-OPTIONS...]" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --target) [ $# -ge 2 ] || usage; target=$2; shift 2 ;;
    --merge) merge=yes; shift ;;
    --) shift; break ;;
    [0-9]*) seconds=$1; shift ;;
    *) usage ;;
  esac
done

# Per target: sources, the libtool libraries they link, seed corpus, dictionary.
case $target in
  symbol_json)
    sources="ref/tests/fuzz_symbol_json.c"
    libs="ref/libmxref_core.la"
    seeds=$top/ref/tests/corpus/symbol_json
    dict=$top/ref/tests/data/fuzz_symbol_json.dict ;;
  suite)
    sources="harness/tests/fuzz_suite.c"
    libs="harness/libmxcts.la"
    seeds=$top/harness/tests/corpus/suite
    dict=$top/harness/tests/data/fuzz_harness.dict ;;
  result)
    sources="harness/tests/fuzz_result.c harness/probe/probe_trace.c"
    libs="harness/libmxcts.la"
    seeds=$top/harness/tests/corpus/result
    dict=$top/harness/tests/data/fuzz_harness.dict ;;
  plan)
    sources="harness/tests/fuzz_plan.c"
    libs="harness/libmxcts.la"
    seeds=$top/harness/tests/corpus/plan
    dict=$top/harness/tests/data/fuzz_harness.dict ;;
  *) echo "$0: unknown target '$target'" >&2; usage ;;
esac

build=${FUZZ_BUILD:-$top/_build-fuzz}
cc=${FUZZ_CC:-clang}
work=$build/fuzz-corpus-$target
limits="-max_len=65536 -timeout=10 -rss_limit_mb=2048"
flags="-std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all"
flags="$flags -fno-omit-frame-pointer -Wall -Wextra -Werror"

if [ ! -f "$build/Makefile" ]; then
  [ -x "$top/configure" ] || (cd "$top" && ./bootstrap)
  mkdir -p "$build"
  (cd "$build" && CC="$cc" CFLAGS="-g -O1 -fsanitize=fuzzer-no-link" \
    "$top/configure" --enable-sanitizers=address,undefined --with-cuda=no >configure.out) ||
    { cat "$build/configure.out" >&2; exit 1; }
fi
# shellcheck disable=SC2086
make -C "$build" -s -j"$(nproc 2>/dev/null || echo 2)" $libs
(
  cd "$build"
  objs=
  for src in $sources; do
    obj=fuzz_$target-$(basename "$src" .c).o
    # shellcheck disable=SC2086
    "$cc" $flags $(pkg-config --cflags jansson) -I"$top/harness" -I"$top/ref/include" -I"$top/ref/src" \
      -I. -c "$top/$src" -o "$obj"
    objs="$objs $obj"
  done
  # shellcheck disable=SC2086
  ./libtool --quiet --tag=CC --mode=link "$cc" -g -fsanitize=fuzzer,address,undefined \
    -o "fuzz_$target" $objs $libs $(pkg-config --libs jansson) -lm
)

mkdir -p "$work"
# shellcheck disable=SC2086
"$build/fuzz_$target" -max_total_time="$seconds" $limits -dict="$dict" \
  -print_final_stats=1 "$@" "$work" "$seeds"
if [ "$merge" = yes ]; then
  # shellcheck disable=SC2086
  "$build/fuzz_$target" -merge=1 $limits "$seeds" "$work"
fi
