#!/bin/sh
# Build the symbol JSON fuzzer (ref/tests/fuzz_symbol_json.c) with clang,
# libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer, and run it.
#
#   ref/tests/run_fuzz.sh [SECONDS] [--merge] [-- LIBFUZZER-OPTIONS...]
#
# SECONDS (default 60) is the fuzzing time.  The library is built once in
# its own configured tree, $FUZZ_BUILD (default _build-fuzz), with coverage
# instrumentation; new inputs go to $FUZZ_BUILD/fuzz-corpus, seeded from
# ref/tests/corpus/symbol_json.  --merge then adds the new inputs that
# reach new code to ref/tests/corpus/symbol_json (libFuzzer's -merge=1).
# Crashes, leaks and timeouts leave crash-*/leak-*/timeout-* files in the
# current directory; rerun one with: $FUZZ_BUILD/fuzz_symbol_json FILE
# Needs clang with libFuzzer (Debian 12: apt-get install clang libclang-rt-14-dev).
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
seconds=60
merge=no
while [ $# -gt 0 ]; do
  case $1 in
    --merge) merge=yes; shift ;;
    --) shift; break ;;
    [0-9]*) seconds=$1; shift ;;
    *) echo "usage: $0 [SECONDS] [--merge] [-- LIBFUZZER-OPTIONS...]" >&2; exit 2 ;;
  esac
done

build=${FUZZ_BUILD:-$top/_build-fuzz}
cc=${FUZZ_CC:-clang}
seeds=$top/ref/tests/corpus/symbol_json
dict=$top/ref/tests/data/fuzz_symbol_json.dict
work=$build/fuzz-corpus
limits="-max_len=65536 -timeout=10 -rss_limit_mb=2048"

if [ ! -f "$build/Makefile" ]; then
  [ -x "$top/configure" ] || (cd "$top" && ./bootstrap)
  mkdir -p "$build"
  (cd "$build" && CC="$cc" CFLAGS="-g -O1 -fsanitize=fuzzer-no-link" \
    "$top/configure" --enable-sanitizers=address,undefined --with-cuda=no >configure.out) ||
    { cat "$build/configure.out" >&2; exit 1; }
fi
make -C "$build" -s -j"$(nproc 2>/dev/null || echo 2)" ref/libmxref_core.la
(
  cd "$build"
  "$cc" -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=all -fno-omit-frame-pointer -Wall -Wextra -Werror \
    -I"$top/ref/include" -I"$top/ref/src" -I. \
    -c "$top/ref/tests/fuzz_symbol_json.c" -o fuzz_symbol_json.o
  ./libtool --quiet --tag=CC --mode=link "$cc" -g -fsanitize=fuzzer,address,undefined \
    -o fuzz_symbol_json fuzz_symbol_json.o ref/libmxref_core.la
)

mkdir -p "$work"
# shellcheck disable=SC2086
"$build/fuzz_symbol_json" -max_total_time="$seconds" $limits -dict="$dict" \
  -print_final_stats=1 "$@" "$work" "$seeds"
if [ "$merge" = yes ]; then
  # shellcheck disable=SC2086
  "$build/fuzz_symbol_json" -merge=1 $limits "$seeds" "$work"
fi
