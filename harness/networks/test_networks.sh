#!/bin/sh
# netgen.py and the network_inference workload against libmxref (TAP):
# netgen's errors and its deterministic output; a small network (Inception-BN
# at 32x32, 10 classes) bound and run at two batch sizes with finite outputs
# and positive speeds; its own outputs as a reference agree exactly, a
# perturbed reference fails; libmxref's MXNDArrayLoad and the probe's reader
# give the same outputs; a truncated or corrupt .params file (both loaders), an unknown
# op in the symbol JSON, a missing file and a bad batch list end the workload
# with status error and a message naming what was wrong.  Run from the top
# build directory (as `make check` does).
set -u
srcdir=${srcdir:-.}
netgen="$srcdir/harness/networks/netgen.py"
probe=./harness/mxcts-probe
lib=ref/.libs/libmxref.so
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mxcts-networks.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=0
fails=0

# shellcheck source=harness/tests/tap_util.sh
. "$srcdir/harness/tests/tap_util.sh"

if ! command -v python3 >/dev/null 2>&1; then
    echo "1..0 # SKIP python3 is needed to write the networks"
    exit 77
fi

# run_probe OUT [--param k=v ...]: the small network on libmxref.
run_probe() {
    out=$1; shift
    $probe --impl "$lib" --workload network_inference --seed 1 --out "$out" --param dir="$tmp/a" \
        --param net=inception-bn --param image=32 --param batches=1,2 --param iterations=1 "$@"
}

# field FILE EXPR: a Python expression over the result r, printed.
field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

# is FILE EXPR WANT: the expression prints WANT.
is() { got=$(field "$1" "$2") && [ "$got" = "$3" ] || { echo "$2 = $got, want $3"; return 1; }; }

# error_names FILE TEXT: status error, and the message contains TEXT.
error_names() { is "$1" "r['status']" error && field "$1" "r['error']" | grep -F -- "$2"; }

echo "TAP version 13"
echo "1..17"
ok "netgen lists the six networks" sh -c "python3 '$netgen' --list | wc -l | grep -qx 6"
# fails_naming TEXT COMMAND...: the command exits 1 and its stderr holds TEXT.
fails_naming() {
    want=$1; shift
    "$@" 2>"$tmp/stderr" >/dev/null
    [ $? -eq 1 ] && grep -F -q -- "$want" "$tmp/stderr" || { cat "$tmp/stderr"; return 1; }
}
ok "netgen refuses an unknown network, naming it" \
    fails_naming "unknown network 'lenet'" python3 "$netgen" --net lenet --out "$tmp"
ok "netgen refuses an image too small for AlexNet, naming it" \
    fails_naming "alexnet at image 32: input" python3 "$netgen" --net alexnet --image 32 --out "$tmp"
mkdir -p "$tmp/a" "$tmp/b" "$tmp/c"
ok "netgen writes the same files twice" sh -c "python3 '$netgen' --net inception-bn --image 32 --classes 10 --out '$tmp/a' &&
    python3 '$netgen' --net inception-bn --image 32 --classes 10 --out '$tmp/b' &&
    cmp '$tmp/a/inception-bn-32-0000.params' '$tmp/b/inception-bn-32-0000.params' &&
    cmp '$tmp/a/inception-bn-32-symbol.json' '$tmp/b/inception-bn-32-symbol.json'"
ok "another seed gives other weights" sh -c "python3 '$netgen' --net inception-bn --image 32 --classes 10 --seed 2 --out '$tmp/c' &&
    ! cmp -s '$tmp/a/inception-bn-32-0000.params' '$tmp/c/inception-bn-32-0000.params'"

run_probe "$tmp/r1.json" --param save_reference="$tmp/ref.json" >/dev/null 2>&1
ok "the network runs at batches 1 and 2 with finite outputs, weights through MXNDArrayLoad" is "$tmp/r1.json" \
    "[r['status'], r['loader'], r['values']['output_b1']['n'], r['values']['output_b2']['n'], r['values']['output_b1']['finite'], r['values']['output_b2']['finite'], r['metrics']['b1_img_s'] > 0, r['metrics']['b2_img_s'] > 0]" \
    "['ok', 'MXNDArrayLoad', 10, 20, True, True, True, True]"
run_probe "$tmp/r2.json" --param reference="$tmp/ref.json" >/dev/null 2>&1
ok "its own outputs as a reference agree exactly" is "$tmp/r2.json" \
    "[(c['name'], c['pass']) for c in r['checks']] + [r['metrics']['b1_max_rel_diff'], r['metrics']['b2_max_rel_diff']]" \
    "[('b1_agrees_with_reference', True), ('b2_agrees_with_reference', True), 0.0, 0.0]"
python3 - "$tmp/ref.json" "$tmp/bad-ref.json" <<'PY'
import json, sys
ref = json.load(open(sys.argv[1]))
o = ref["outputs"]["2"]
o[3] += 0.01 * max(abs(v) for v in o)
json.dump(ref, open(sys.argv[2], "w"))
PY
run_probe "$tmp/r3.json" --param reference="$tmp/bad-ref.json" >/dev/null 2>&1
ok "a reference 1 % off in one value fails that batch only" is "$tmp/r3.json" \
    "[(c['name'], c['pass']) for c in r['checks']]" \
    "[('b1_agrees_with_reference', True), ('b2_agrees_with_reference', False)]"

params="$tmp/a/inception-bn-32-0000.params"
cp "$params" "$tmp/whole.params"
head -c 5000 "$tmp/whole.params" >"$params"
for loader in probe impl; do
    run_probe "$tmp/r4.json" --param loader=$loader >/dev/null 2>&1
    ok "a truncated .params file is an error naming the file and offset (loader=$loader)" \
        error_names "$tmp/r4.json" "$params: byte "
done
cp "$tmp/whole.params" "$params"
printf '\377' | dd of="$params" bs=1 seek=24 conv=notrunc 2>/dev/null
run_probe "$tmp/r5.json" --param loader=probe >/dev/null 2>&1
ok "a corrupt array magic is an error naming it (the probe's reader)" error_names "$tmp/r5.json" "byte 28: array magic"
run_probe "$tmp/r5.json" --param loader=impl >/dev/null 2>&1
ok "a corrupt array magic is an error naming it (libmxref's MXNDArrayLoad)" \
    error_names "$tmp/r5.json" "byte 28: not an NDArray magic number"
cp "$tmp/whole.params" "$params"
run_probe "$tmp/r1p.json" --param loader=probe >/dev/null 2>&1
digests="[v['digest'] for v in r['values'].values()]"
ok "libmxref's MXNDArrayLoad and the probe's reader give the same outputs" \
    is "$tmp/r1p.json" "r['loader'], $digests" "$(field "$tmp/r1.json" "'probe', $digests")"
sym="$tmp/a/inception-bn-32-symbol.json"
sed 's/"op": "Concat"/"op": "Konkat"/' "$sym" >"$tmp/sym" && cp "$sym" "$tmp/whole.json" && cp "$tmp/sym" "$sym"
run_probe "$tmp/r6.json" >/dev/null 2>&1
ok "an unknown op in the symbol JSON is an error naming it" error_names "$tmp/r6.json" "Konkat"
cp "$tmp/whole.json" "$sym"
run_probe "$tmp/r7.json" --param net=resnet-50 >/dev/null 2>&1
ok "a network not written yet is an error naming its file" error_names "$tmp/r7.json" "resnet-50-32-symbol.json"
run_probe "$tmp/r8.json" --param batches=1,0 >/dev/null 2>&1
ok "a bad batch list is an error naming it" error_names "$tmp/r8.json" "batches='1,0'"
run_probe "$tmp/r9.json" --param loader=disk >/dev/null 2>&1
ok "a bad loader is an error naming it" error_names "$tmp/r9.json" "loader=disk"
[ "$fails" -eq 0 ]
