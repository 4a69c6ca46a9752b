#!/bin/sh
# The mxcts command line (TAP): help for every command, usage errors exit 2,
# run/plan/judge/report exit 0 when everything passed, 1 on a failure and 3
# when orderings stayed inconclusive (never 77 or 99), --assertion running
# only the selected assertions and their configs, the shipped suites list, plan + exec + judge --next-batch by hand reaching run's verdicts, GNU parallel fan-out through
# harness/cli/mxcts-parallel, and the reports of a run.  Uses the fake probe.
# Run from the top build directory (as `make check` does); $srcdir is the
# source tree.
set -u
srcdir=${srcdir:-.}
mxcts=./harness/mxcts
fake=$PWD/harness/tests/fake_probe
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mxcts-cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=0
fails=0

# shellcheck source=harness/tests/tap_util.sh
. "$srcdir/harness/tests/tap_util.sh"

mkdir -p "$tmp/suites" "$tmp/bad"
cat >"$tmp/suites/cli.json" <<'JSON'
{"format": 1, "name": "cli", "workload": "fake", "rounds": 9, "timeout": 10,
 "configs": [{"id": "slow", "env": {"FAKE_ID": "s", "FAKE_MS": "3", "FAKE_CAP": "off", "FAKE_OPS": "20"}},
             {"id": "fast", "env": {"FAKE_ID": "f", "FAKE_MS": "1", "FAKE_CAP": "5", "FAKE_OPS": "20"}}],
 "assertions": [{"id": "order", "type": "ordering", "slower": ["slow"], "faster": ["fast"]},
                {"id": "shape", "type": "structure", "expect": {
                   "slow": {"forward": {"single": 20}}, "fast": {"forward": {"bulk": [20, 5]}}}},
                {"id": "same", "type": "equal", "path": "values.output.digest"}]}
JSON
sed -e 's/"FAKE_MS": "3"/"FAKE_MS": "0.5"/' -e 's/"cli"/"rev"/' "$tmp/suites/cli.json" >"$tmp/bad/rev.json"
# a machine busy throughout: every round left out, the budget spent
mkdir -p "$tmp/busy"
sed -e 's/"FAKE_ID": "s",/"FAKE_ID": "s", "FAKE_BUSY_P": "1",/' -e 's/"cli"/"busy"/' \
    -e 's/"timeout": 10,/"timeout": 10, "max_contention": 0.5, "max_rounds": 19,/' \
    "$tmp/suites/cli.json" >"$tmp/busy/busy.json"

echo "TAP version 13"
plan=67
echo "1..$plan"
status_is 0 "mxcts --help" $mxcts --help
for c in run plan exec judge list report; do
    status_is 0 "mxcts $c --help" $mxcts $c --help
done
status_is 2 "no command" $mxcts
status_is 2 "unknown command" $mxcts frobnicate
status_is 2 "unknown option" $mxcts run --frobnicate
status_is 2 "bad --rounds" $mxcts run --rounds 0 --probe "$fake" --impl "$fake"
status_is 2 "missing --probe file" $mxcts run --probe /nonexistent/probe --impl "$fake"
status_is 2 "bad suite directory" $mxcts run --suites /nonexistent --probe "$fake" --impl "$fake" --out "$tmp/o0"
ok "the shipped suites list" $mxcts list --suites "$srcdir/suites"
status_is 0 "run passes" $mxcts run --suites "$tmp/suites" --probe "$fake" --impl "$fake" --seed 5 \
    --out "$tmp/o1" --tap "$tmp/o1.tap" --junit "$tmp/o1.xml" --html "$tmp/o1.html" --json "$tmp/o1.json" \
    --lock-file "$tmp/lock"
ok "TAP, JUnit, HTML and JSON written" test -s "$tmp/o1.tap" -a -s "$tmp/o1.xml" -a -s "$tmp/o1.html" -a -s "$tmp/o1/results.json"
ok "the TAP parses for automake's driver" sh -c "sh '$srcdir/build-aux/tap-driver.sh' --test-name cli --log-file '$tmp/d.log' --trs-file '$tmp/d.trs' --color-tests no --enable-hard-errors yes --expect-failure no -- cat '$tmp/o1.tap' >/dev/null && ! grep -q ERROR '$tmp/d.trs' && grep -q ':global-test-result: PASS' '$tmp/d.trs'"
if command -v python3 >/dev/null 2>&1 && python3 -c 'import yaml' 2>/dev/null; then
    ok "every TAP YAML block parses (PyYAML)" python3 -c '
import sys, yaml
block = None
for line in open(sys.argv[1]).read().split("\n"):
    if line == "  ---": block = []
    elif line == "  ...": yaml.safe_load("\n".join(l[2:] for l in block)); block = None
    elif block is not None: block.append(line)
' "$tmp/o1.tap"
else
    n=$((n + 1)); echo "ok $n - every TAP YAML block parses # SKIP PyYAML not installed"
fi
if command -v xmllint >/dev/null 2>&1; then
    ok "the JUnit XML is well-formed (xmllint)" xmllint --noout "$tmp/o1.xml"
else
    n=$((n + 1)); echo "ok $n - the JUnit XML is well-formed # SKIP xmllint not installed"
fi
status_is 1 "run with a failing ordering exits 1" $mxcts run --suites "$tmp/bad" --probe "$fake" --impl "$fake" \
    --seed 5 --out "$tmp/o2" --lock-file "$tmp/lock"
status_is 0 "--assertion keeps the structure assertion only, so the failing ordering is not judged" \
    $mxcts run --suites "$tmp/bad" --probe "$fake" --impl "$fake" --seed 5 --out "$tmp/o8" \
    --lock-file "$tmp/lock" --assertion 'r?v/sha*' --tap "$tmp/o8.tap"
ok "its TAP holds that one assertion, and only structure runs ran" sh -c "grep -q '^1..1\$' '$tmp/o8.tap' && grep -q '^ok 1 - rev/shape' '$tmp/o8.tap' && ls -d '$tmp'/o8/rev/*/profile >/dev/null && ! ls -d '$tmp'/o8/rev/*/r001 2>/dev/null"
status_is 2 "--assertion matching nothing is a usage error" $mxcts run --suites "$tmp/bad" --probe "$fake" \
    --impl "$fake" --seed 5 --out "$tmp/o9" --lock-file "$tmp/lock" --assertion 'rev/nothing'
status_is 3 "run with an inconclusive ordering exits 3" $mxcts run --suites "$tmp/busy" --probe "$fake" --impl "$fake" \
    --seed 5 --out "$tmp/o7" --lock-file "$tmp/lock" --max-backoff 0 --tap "$tmp/o7.tap"
ok "its TAP shows a skip, not a pass" sh -c "grep -q '^ok 1 - busy/order # SKIP inconclusive: ' '$tmp/o7.tap' && grep -q 'rounds_run: 19' '$tmp/o7.tap'"
ok "the summary names it" sh -c "$mxcts report '$tmp/o7/results.json' | grep -q 'INCONCLUSIVE' && $mxcts report '$tmp/o7/results.json' | grep -q '^  inconclusive busy/order'"
status_is 0 "report re-renders a passing results file" $mxcts report "$tmp/o1/results.json" --tap "$tmp/o3.tap"
ok "report renders the same TAP" cmp "$tmp/o1.tap" "$tmp/o3.tap"
status_is 1 "report of a failing results file exits 1" $mxcts report "$tmp/o2/results.json"
echo '{"mxcts_results": 1' >"$tmp/broken.json"
status_is 2 "report of a malformed results file exits 2" $mxcts report "$tmp/broken.json"
ok "list names each assertion's C API needs" sh -c "$mxcts list --suites '$srcdir/suites' --suite engine | grep -q '^    needs: MXGetLastError .* MXEnginePushSyncND\$'"
status_is 0 "report --matrix of two results files" $mxcts report --matrix --omit-skipped --markdown "$tmp/m.md" --html "$tmp/m.html" "$tmp/o1/results.json" "$tmp/o2/results.json"
ok "the matrix has a row per assertion and a column per implementation" sh -c "grep -q '^| assertion | fake_probe |\$' '$tmp/m.md' && grep -q '^| .cli/order. | pass, ' '$tmp/m.md' && grep -q '</table>' '$tmp/m.html'"
status_is 2 "report --matrix without files exits 2" $mxcts report --matrix
status_is 2 "report --matrix of a missing file exits 2" $mxcts report --matrix "$tmp/none.json"
status_is 0 "report --throughput of two results files" $mxcts report --throughput --markdown "$tmp/t.md" "$tmp/o1/results.json" "$tmp/o2/results.json"
ok "the throughput table has its columns, and no rows without img/s figures" sh -c "grep -q '^| suite | config | network | batch | fake_probe img/s | fake_probe peak RSS MB |\$' '$tmp/t.md' && grep -q '^0 rows: ' '$tmp/t.md'"
status_is 2 "report --throughput takes no --html" $mxcts report --throughput --html "$tmp/t.html" "$tmp/o1/results.json"
# plan + exec + judge by hand (what GNU parallel would do, here with sh)
$mxcts plan --suites "$tmp/suites" --probe "$fake" --impl "$fake" --seed 5 --out "$tmp/o4" \
    --lock-file "$tmp/lock" >"$tmp/jobs.txt" 2>/dev/null
ok "plan prints a line per untimed job and per timed round" test "$(wc -l <"$tmp/jobs.txt")" -eq 11
ok "the job lines run" sh -e "$tmp/jobs.txt"
ok "every job gets depth=quick by default" sh -c "grep -c -- '--param depth=quick' '$tmp/jobs.txt' | grep -qx 11"
status_is 2 "--depth takes only quick or full" $mxcts plan --suites "$tmp/suites" --probe "$fake" --impl "$fake" --depth deep --out "$tmp/o9"
ok "--depth full reaches every job" sh -c "$mxcts plan --suites '$tmp/suites' --probe '$fake' --impl '$fake' --depth full --out '$tmp/o9' --lock-file '$tmp/lock' 2>/dev/null | grep -c -- '--param depth=full' | grep -qx 11"
status_is 3 "judge after the first batch: undecided (9 rounds cannot reach the bound)" $mxcts judge --out "$tmp/o4"
ok "judge --next-batch prints batches until the orderings are decided" sh -c "
  while $mxcts judge --out '$tmp/o4' --next-batch >'$tmp/batch.txt' && [ -s '$tmp/batch.txt' ]; do
    test \"\$(wc -l <'$tmp/batch.txt')\" -eq 10 && sh -e '$tmp/batch.txt' || exit 1; done"
status_is 0 "judge passes" $mxcts judge --out "$tmp/o4"
ok "judge agrees with run" sh -c "grep -c '^ok' '$tmp/o1.tap' >'$tmp/c1'; $mxcts judge --out '$tmp/o4' --tap - 2>/dev/null | grep -c '^ok' >'$tmp/c2'; cmp '$tmp/c1' '$tmp/c2'"
if command -v parallel >/dev/null 2>&1; then
    status_is 0 "mxcts-parallel passes" env PATH="$PWD/harness:$PATH" bash "$srcdir/harness/cli/mxcts-parallel" \
        --jobs 2 -- --suites "$tmp/suites" --probe "$fake" --impl "$fake" --seed 6 --out "$tmp/o5" --lock-file "$tmp/lock"
    status_is 1 "mxcts-parallel with a failing ordering exits 1" env PATH="$PWD/harness:$PATH" \
        bash "$srcdir/harness/cli/mxcts-parallel" -- --suites "$tmp/bad" --probe "$fake" --impl "$fake" --seed 6 \
        --out "$tmp/o6" --lock-file "$tmp/lock"
else
    n=$((n + 1)); echo "ok $n - mxcts-parallel passes # SKIP GNU parallel not installed"
    n=$((n + 1)); echo "ok $n - mxcts-parallel fails # SKIP GNU parallel not installed"
fi
# values that would write elsewhere or split plan's job lines
status_is 2 "--out '' is refused (it would write into the working folder)" sh -c \
    "cd '$tmp' && mkdir -p empty && cd empty && $PWD/$mxcts run --out '' --suites '$tmp/suites' --probe '$fake' --impl '$fake'"
ok "  ...and wrote nothing there" test -z "$(ls -A "$tmp/empty")"
status_is 2 "--out with a newline is refused" $mxcts plan --out "$(printf '%s/x\ny' "$tmp")" --suites "$tmp/suites" \
    --probe "$fake" --impl "$fake"
ok "an empty value names its option" sh -c "$mxcts run --jobs= 2>&1 | grep -q 'option --jobs: the value is empty'"
ok "an unknown command suggests 'mxcts --help'" sh -c "$mxcts bogus --help 2>&1 | grep -q \"Try 'mxcts --help'\""
mkdir -p "$tmp/fifo" && cp "$tmp/suites/cli.json" "$tmp/fifo/" && mkfifo "$tmp/fifo/pipe.json"
ok "a FIFO named *.json in the suites folder is an error naming it, not a hang" sh -c \
    "timeout 10 $mxcts list --suites '$tmp/fifo' >/dev/null 2>'$tmp/fifo.err'; test \$? -eq 2 && grep -q 'pipe.json: not a regular file' '$tmp/fifo.err'"
ok "a directory as --expectations says so" sh -c \
    "$mxcts plan --suites '$tmp/suites' --probe '$fake' --impl '$fake' --out '$tmp/o10' --expectations '$tmp' 2>&1 >/dev/null | grep -q 'not a regular file (a directory)'"
mkdir -p "$tmp/esc"
long=$(printf '%3000s' | tr ' ' y)
cat >"$tmp/esc/esc.json" <<JSON
{"format": 1, "name": "esc", "workload": "fake", "rounds": 1,
 "configs": [{"id": "a", "env": {"FAKE_MODE": "error", "FAKE_ERROR_TEXT": "bad\\u001b[2J tail $long END"}}],
 "assertions": [{"id": "all", "type": "checks"}]}
JSON
$mxcts run --suites "$tmp/esc" --probe "$fake" --impl "$fake" --out "$tmp/o-esc" --lock-file "$tmp/lock" \
    --html "$tmp/esc.html" --no-progress >"$tmp/esc.out" 2>&1
ok "an implementation's control characters reach neither the terminal nor the HTML raw" sh -c \
    "! grep -q \"\$(printf '\\033')\" '$tmp/esc.out' '$tmp/esc.html' && grep -q 'bad\\\\x1b\\[2J' '$tmp/esc.out'"
ok "  ...and its long message is kept whole" grep -q "$long END" "$tmp/o-esc/results.json"
cp -r "$tmp/o1" "$tmp/o1-moved"
mv "$tmp/o1" "$tmp/o1-gone"
status_is 0 "judge of a moved results folder reads the moved folder's files" $mxcts judge --out "$tmp/o1-moved"
mv "$tmp/o1-gone" "$tmp/o1"
cp -r "$tmp/o1" "$tmp/o1-mixed"
cp "$tmp/o1-mixed/cli/slow/r001/result.json" "$tmp/o1-mixed/cli/slow/r002/result.json"
ok "a result another job wrote (its seed) is refused, not judged" sh -c \
    "$mxcts judge --out '$tmp/o1-mixed' 2>&1 | grep -q 'r002/result.json is not this job.s: its seed is'"
$mxcts judge --out "$tmp/o1-mixed" >/dev/null 2>&1
status_is 1 "report --diff exits 1 on a regression" $mxcts report --diff "$tmp/o1/results.json" \
    "$tmp/o1-mixed/results.json" --markdown "$tmp/diff.md" --html "$tmp/diff.html"
ok "  ...and names it in Markdown and HTML" sh -c \
    "grep -q '^| cli/' '$tmp/diff.md' && grep -q '<h2>Regressions (pass before, failing now): [1-9]' '$tmp/diff.html'"
status_is 0 "report --diff of a run with itself exits 0" $mxcts report --diff "$tmp/o1/results.json" "$tmp/o1/results.json"
status_is 2 "report --diff takes two files" $mxcts report --diff "$tmp/o1/results.json"
status_is 0 "--expect-version and --expect-feature of what the library reports" $mxcts run --suites "$tmp/suites" \
    --probe "$fake" --impl "$fake" --out "$tmp/o-id" --lock-file "$tmp/lock" --expect-version 1.9.1 \
    --expect-feature CPU_SSE --no-progress
ok "--expect-version of another version is refused, naming both" sh -c \
    "$mxcts run --suites '$tmp/suites' --probe '$fake' --impl '$fake' --out '$tmp/o-id' --lock-file '$tmp/lock' \
     --expect-version 1.8.0 2>&1 >/dev/null | grep -q 'reports version 10901 (MXGetVersion), not 1.8.0'; test \$? -eq 0"
status_is 2 "--expect-feature of a feature it lacks is refused" $mxcts run --suites "$tmp/suites" --probe "$fake" \
    --impl "$fake" --out "$tmp/o-id" --lock-file "$tmp/lock" --expect-feature CUDA --no-progress
[ "$n" -eq "$plan" ] || echo "# ran $n tests, planned $plan"
exit 0
