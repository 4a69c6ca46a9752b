#!/bin/sh
# mxcts compare (TAP): usage errors exit 2; two fake libraries, one twice
# as slow as the other (fake_probe's "fake-scale"), compared over a suite of
# two timed configs: every round paired, the ratio 0.5 with an interval
# below 1, the rows of the text table and the HTML page, both orders of the
# libraries among the rounds, and crashed rounds counted, not fatal.  Uses
# the fake probe.  Run from the top build directory (as `make check` does).
set -u
srcdir=${srcdir:-.}
mxcts=./harness/mxcts
fake=$PWD/harness/tests/fake_probe
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mxcts-compare.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=0
fails=0

# shellcheck source=harness/tests/tap_util.sh
. "$srcdir/harness/tests/tap_util.sh"

mkdir -p "$tmp/suites" "$tmp/crash"
cat >"$tmp/suites/ab.json" <<'JSON'
{"format": 1, "name": "ab", "workload": "fake", "rounds": 8, "timeout": 10,
 "configs": [{"id": "one", "env": {"FAKE_ID": "1", "FAKE_MS": "4"}},
             {"id": "two", "env": {"FAKE_ID": "2", "FAKE_MS": "2"}}],
 "assertions": [{"id": "order", "type": "ordering", "slower": ["one"], "faster": ["two"]}]}
JSON
sed -e 's/"FAKE_ID": "2",/"FAKE_ID": "2", "FAKE_MODE": "crash",/' -e 's/"ab"/"crash"/' \
    "$tmp/suites/ab.json" >"$tmp/crash/crash.json"
echo "fake-scale 2" >"$tmp/slow.so"
echo "fake-scale 1" >"$tmp/fast.so"
run() { $mxcts compare --probe "$fake" --lock-file none --seed 11 --rounds 8 "$@"; }

echo "TAP version 13"
echo "1..12"
status_is 0 "compare --help" $mxcts compare --help
status_is 2 "one library is not a comparison" run --suites "$tmp/suites" --impl "$tmp/slow.so"
status_is 2 "two libraries of one name" run --suites "$tmp/suites" --impl "$tmp/slow.so" \
    --impl "$tmp/fast.so" --impl-name x --impl-name x --out "$tmp/o0"
status_is 2 "a library that is not there" run --suites "$tmp/suites" --impl "$tmp/slow.so" \
    --impl "$tmp/nonexistent.so"
status_is 2 "an option of run that compare does not take" run --suites "$tmp/suites" \
    --impl "$tmp/slow.so" --impl "$tmp/fast.so" --tap -
status_is 0 "slow against fast" run --suites "$tmp/suites" --impl "$tmp/slow.so" --impl "$tmp/fast.so" \
    --out "$tmp/o1" --html "$tmp/o1.html"
cp "$tmp/last.out" "$tmp/o1.txt"
ok "every round paired; ratio 0.5, its interval below 1, faster in 8 of 8" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [i["name"] for i in d["impls"]] == ["slow", "fast"], d["impls"]
assert [(r["suite"], r["config"]) for r in d["rows"]] == [("ab", "one"), ("ab", "two")], d["rows"]
for r in d["rows"]:
    a, b = r["impls"]
    assert a["rounds"] == b["rounds"] == 8 and a["failed"] == b["failed"] == 0, r
    assert abs(a["median"] / b["median"] - 2) < 1e-9, r
    q = r["ratios"][0]
    assert q["impl"] == "fast" and q["baseline"] == "slow", q
    assert abs(q["ratio"] - 0.5) < 1e-9 and q["ci_high"] < 1, q
    assert q["faster_rounds"] == q["paired_rounds"] == 8, q
' "$tmp/o1/compare.json"
ok "the table has a row per config, each saying faster" sh -c "
    test \"\$(grep -c '^ab/\(one\|two\) .* faster, faster in 8/8' '$tmp/o1.txt')\" -eq 2"
ok "the HTML page has the table" sh -c "grep -q '<table>' '$tmp/o1.html' && grep -q 'ab/one' '$tmp/o1.html'"
ok "the libraries take turns going first" python3 -c '
import glob, json, os, sys
first = set()
for d in glob.glob(sys.argv[1] + "/slow/ab/*/r*"):
    rel = os.path.relpath(d, sys.argv[1] + "/slow")
    s = json.load(open(d + "/result.json"))["fake_start"]
    f = json.load(open(sys.argv[1] + "/fast/" + rel + "/result.json"))["fake_start"]
    first.add(s < f)
assert first == {True, False}, first
' "$tmp/o1"
status_is 0 "a config that crashes is reported, not fatal" run --suites "$tmp/crash" \
    --impl "$tmp/slow.so" --impl "$tmp/fast.so" --out "$tmp/o2"
ok "its rounds count as failed, with no ratio" python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
two = [r for r in rows if r["config"] == "two"][0]
assert all(i["median"] is None and i["failed"] == 8 for i in two["impls"]), two
assert two["ratios"][0]["ratio"] is None, two
' "$tmp/o2/compare.json"
[ "$n" -eq 12 ] || echo "# ran $n tests, planned 12"
exit 0
