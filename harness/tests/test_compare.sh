#!/bin/sh
# mxcts compare (TAP): usage errors exit 2; two fake libraries, one twice
# as slow as the other (fake_probe's "fake-scale"), compared over a suite of
# two timed configs: every round paired, the ratio 0.5 with an interval
# below 1, the rows of the text table and the HTML page, both orders of the
# libraries among the rounds, and crashed rounds counted, not fatal; then
# performance targets (--targets): each outcome (met, known miss, missed,
# unmeasured) and the exit status it gives, bad targets files refused
# before anything runs, and the project's bench/targets.json valid.  Uses the fake probe.  Run from the top build directory (as `make check` does).
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
             {"id": "two", "env": {"FAKE_ID": "2", "FAKE_MS": "2"}},
             {"id": "three", "env": {"FAKE_ID": "3", "FAKE_MS": "1"}}],
 "assertions": [{"id": "order", "type": "ordering", "slower": ["one"], "faster": ["two"]},
                {"id": "runs", "type": "checks", "configs": ["three"]}]}
JSON
sed -e 's/"FAKE_ID": "2",/"FAKE_ID": "2", "FAKE_MODE": "crash",/' -e 's/"ab"/"crash"/' \
    "$tmp/suites/ab.json" >"$tmp/crash/crash.json"
echo "fake-scale 2" >"$tmp/slow.so"
echo "fake-scale 1" >"$tmp/fast.so"
run() { $mxcts compare --probe "$fake" --lock-file none --seed 11 --rounds 8 "$@"; }

echo "TAP version 13"
echo "1..28"
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
assert [(r["suite"], r["config"]) for r in d["rows"]] == [("ab", "one"), ("ab", "two"), ("ab", "three")], d["rows"]
for r in d["rows"]:
    a, b = r["impls"]
    assert a["rounds"] == b["rounds"] == 8 and a["failed"] == b["failed"] == 0, r
    assert abs(a["median"] / b["median"] - 2) < 1e-9, r
    q = r["ratios"][0]
    assert q["impl"] == "fast" and q["baseline"] == "slow", q
    assert abs(q["ratio"] - 0.5) < 1e-9 and q["ci_high"] < 1, q
    assert q["faster_rounds"] == q["paired_rounds"] == 8, q
' "$tmp/o1/compare.json"
ok "the table has a row per config (one no ordering reads too), each saying faster" sh -c "
    test \"\$(grep -c '^ab/\(one\|two\|three\) .* faster, faster in 8/8' '$tmp/o1.txt')\" -eq 3"
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
# Targets over the same two libraries (fast: one 4 ms, two 2 ms; slow twice
# that).
targets_file() { # FILE TARGET-JSON...
    f=$1; shift
    { printf '{"mxcts_targets": 1, "targets": ['; sep=
      for t in "$@"; do printf '%s%s' "$sep" "$t"; sep=', '; done; printf ']}\n'; } >"$f"
}
met1='{"id": "fast-two", "suite": "ab", "config": "two", "impl": "fast", "at_most": 2.5}'
met2='{"id": "fast-over-slow", "suite": "ab", "config": "one", "impl": "fast", "measure": "ratio", "at_most": 0.6}'
known='{"id": "one-over-two", "suite": "ab", "config": "one", "impl": "fast", "over": {"suite": "ab", "config": "two"}, "at_least": 3, "known_miss": "one does twice the work of two"}'
missed='{"id": "slow-one", "suite": "ab", "config": "one", "impl": "slow", "at_most": 1}'
unmeasured='{"id": "four", "suite": "ab", "config": "four", "impl": "slow", "at_most": 1}'
targets_file "$tmp/t-all.json" "$met1" "$met2" "$known" "$missed" "$unmeasured"
targets_file "$tmp/t-ok.json" "$met1" "$met2" "$known"
runt() { run --suites "$tmp/suites" --impl "$tmp/slow.so" --impl "$tmp/fast.so" "$@"; }
status_is 1 "a missed and an unmeasured target exit 1" runt --out "$tmp/o3" \
    --targets "$tmp/t-all.json" --html "$tmp/o3.html"
cp "$tmp/last.out" "$tmp/o3.txt"
ok "each target's outcome and figure in compare.json" python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["targets"]
got = {r["id"]: (r["outcome"], r["figure"]) for r in t["results"]}
assert got == {"fast-two": ("met", 2.0), "fast-over-slow": ("met", 0.5),
               "one-over-two": ("known miss", 2.0), "slow-one": ("missed", 8.0),
               "four": ("unmeasured", None)}, got
assert t["missed"] == 2, t
r = {r["id"]: r for r in t["results"]}
assert r["one-over-two"]["reason"] == "one does twice the work of two", r
assert "ab/four is not a timed config" in r["four"]["reason"], r
assert r["fast-over-slow"]["ci_high"] < 0.6 and r["fast-over-slow"]["unit"] == "x", r
' "$tmp/o3/compare.json"
ok "the text names each outcome and the tally" sh -c "
    grep -q '2 met, 1 known miss, 1 missed, 1 unmeasured' '$tmp/o3.txt' &&
    grep -q '^  known miss  one-over-two: ab/one over ab/two on fast: 2x, at least 3' '$tmp/o3.txt' &&
    grep -q '^  missed      slow-one: ab/one on slow: 8 ms, at most 1' '$tmp/o3.txt' &&
    grep -q 'one does twice the work of two' '$tmp/o3.txt'"
ok "the HTML page has the targets' table" sh -c "grep -q '<h2>Targets</h2>' '$tmp/o3.html' &&
    grep -q 'slow-one' '$tmp/o3.html'"
status_is 0 "met and known misses only: exit 0" runt --out "$tmp/o4" --targets "$tmp/t-ok.json"
# Bad targets files: refused with the file and the place named, before any
# process runs (no compare.json).
bad() { # DESCRIPTION WANT-IN-MESSAGE FILE-CONTENT
    printf '%s\n' "$3" >"$tmp/bad.json"
    status_is 2 "$1" runt --out "$tmp/o5" --targets "$tmp/bad.json"
    cp "$tmp/last.out" "$tmp/bad.out"
    ok "  ...and says so" sh -c "grep -qF -- '$2' '$tmp/bad.out' && grep -qF 'bad.json' '$tmp/bad.out' &&
        test ! -e '$tmp/o5/compare.json'"
}
bad "malformed JSON" "malformed JSON" '{"mxcts_targets": 1, "targets": [}'
bad "a library not compared" "targets[0].impl" \
    '{"mxcts_targets": 1, "targets": [{"id": "x", "suite": "ab", "config": "one", "impl": "medium", "at_most": 1}]}'
bad "a ratio of the baseline" "is the baseline" \
    '{"mxcts_targets": 1, "targets": [{"id": "x", "suite": "ab", "config": "one", "impl": "slow", "measure": "ratio", "at_most": 1}]}'
status_is 1 "bench/targets.json loads (its rows are not in this comparison)" run --suites "$tmp/suites" \
    --impl "$tmp/fast.so" --impl-name libmxref --impl "$tmp/slow.so" --impl-name mxnet-1.9.1 \
    --out "$tmp/o7" --targets "$srcdir/bench/targets.json"
ok "  ...every one of its targets unmeasured, none refused" python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["targets"]
assert len(t["results"]) >= 10 and t["missed"] == len(t["results"]), t["missed"]
assert {r["outcome"] for r in t["results"]} == {"unmeasured"}, t
' "$tmp/o7/compare.json"
status_is 2 "'run' does not take --targets" $mxcts run --probe "$fake" --lock-file none \
    --suites "$tmp/suites" --impl "$tmp/fast.so" --out "$tmp/o6" --targets "$tmp/t-ok.json"
# a library that cannot be loaded: compare and run say why (the real probe)
: >"$tmp/empty.so"
$mxcts compare --probe "$PWD/harness/mxcts-probe" --suites "$srcdir/suites" --suite async --rounds 1 \
    --impl "$tmp/empty.so" --impl "$tmp/fast.so" --lock-file none --out "$tmp/o8" >/dev/null 2>"$tmp/o8.err"
rc=$?
ok "compare of libraries that cannot be loaded exits 1, saying why" sh -c \
    "test $rc -eq 1 && grep -q 'empty ran none of its 3 processes: cannot load .*empty.so' '$tmp/o8.err'"
$mxcts run --probe "$PWD/harness/mxcts-probe" --suites "$srcdir/suites" --suite capi-contract \
    --impl "$tmp/empty.so" --lock-file none --out "$tmp/o9" --no-progress >"$tmp/o9.out" 2>&1
ok "run's verdict names why the library cannot be loaded" grep -q 'exited with status 1: cannot load' "$tmp/o9.out"
[ "$n" -eq 28 ] || echo "# ran $n tests, planned 28"
exit 0
