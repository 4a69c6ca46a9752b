#!/bin/sh
# The MXNet matrix (ci/mxnet-matrix.sh) as one TAP test: every release's
# verdicts, each judged with suites/expectations/PKG-VERSION.txt, one test
# point per release and assertion ("mxnet-1.4.1: engine/reads-overlap").
# Run by `make check-mxnet-matrix` (all suites) and `make
# check-mxnet-matrix-untimed` (the untimed ones), which set
# MXNET_MATRIX_PARTS; a plain `make check` skips it.  Where no wheel can be
# fetched (no pip, PyPI unreachable) it is a skip, with the reason.
set -u
srcdir=${srcdir:-.}
parts=${MXNET_MATRIX_PARTS:-}
case $parts in
  untimed|timed|all) ;;
  "") echo "1..0 # SKIP the MXNet matrix runs in make check-mxnet-matrix"; exit 77 ;;
  *) echo "Bail out! MXNET_MATRIX_PARTS=$parts (want untimed, timed or all)"; exit 1 ;;
esac
if [ -n "${MXCTS_SANITIZERS:-}" ]; then
  echo "1..0 # SKIP sanitizer build: MXNet's own code is not instrumented"
  exit 77
fi
out=harness/tests/mxnet-matrix.out
mkdir -p "$out" && rm -rf "$out"/mxnet*/untimed "$out"/mxnet*/timed
rc=0
"$srcdir/ci/mxnet-matrix.sh" "--$parts" --build-dir . --out "$out" > "$out.log" 2>&1 || rc=$?
if [ "$rc" -eq 77 ]; then
  echo "1..0 # SKIP $(tail -n 1 "$out.log")"
  exit 77
fi
# Every release's results as TAP, the test points renumbered into one stream.
taps=
for r in "$out"/mxnet*/untimed/results.json "$out"/mxnet*/timed/results.json; do
  [ -f "$r" ] || continue
  name=$(basename "$(dirname "$(dirname "$r")")")
  ./harness/mxcts report "$r" --tap "$r.tap" > /dev/null 2>&1
  taps="$taps $name=$r.tap"
done
# A release whose wheel could not be fetched or unpacked is a failed test
# point of its own (one that cannot be had here at all is only skipped).
grep '^mxnet-matrix: fetching .* failed' "$out.log" | sed 's/^mxnet-matrix: //' > "$out.fetch-failures"
if [ -z "$taps" ] && [ ! -s "$out.fetch-failures" ]; then
  echo "Bail out! the matrix left no results (log: $out.log)"
  sed 's/^/# /' "$out.log"
  exit 1
fi
# shellcheck disable=SC2086  # one word per release
awk -v list="$taps" -v failures="$out.fetch-failures" '
  BEGIN {
    n = split(list, items, " ")
    total = 0
    while ((getline line < failures) > 0) failed[++nfailed] = line
    close(failures)
    total = nfailed
    for (i = 1; i <= n; i++) {
      split(items[i], kv, "=")
      while ((getline line < kv[2]) > 0)
        if (line ~ /^(ok|not ok) [0-9]+ /) total++
      close(kv[2])
    }
    print "TAP version 13"
    print "1.." total
    k = 0
    for (i = 1; i <= n; i++) {
      split(items[i], kv, "=")
      while ((getline line < kv[2]) > 0) {
        if (line ~ /^TAP version/ || line ~ /^1\.\./) continue
        if (match(line, /^(ok|not ok) [0-9]+ - /)) {
          head = substr(line, 1, RLENGTH)
          sub(/ [0-9]+ - $/, "", head)
          line = head " " (++k) " - " kv[1] ": " substr(line, RLENGTH + 1)
        }
        print line
      }
      close(kv[2])
    }
    for (i = 1; i <= nfailed; i++) print "not ok " (++k) " - " failed[i]
  }'
# the matrix's own log, as TAP comments
sed 's/^/# /' "$out.log"
