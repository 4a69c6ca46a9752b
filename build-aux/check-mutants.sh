#!/bin/sh
# make check-mutants: mutation testing of the suites (docs/harness.md,
# "Mutation testing").
#
# Builds libmxref once more, configured with --enable-mutants, in
# BUILDDIR/mutants-build; then, for each line of harness/tests/mutants.txt,
# runs mxcts over just the listed assertions with MXR_MUTANT=NAME and counts
# the mutant killed when every listed assertion comes out `fail`.  A first
# run without any mutant must pass, so that a kill means the bug was seen.
# Prints one line per mutant and the kill rate; exits 0 only when every
# mutant was killed.
#
# usage: check-mutants.sh SRCDIR BUILDDIR [NAME...]
#   NAME...            only these mutants (default: every one of the table)
#   MUTANT_SEED=N      the mxcts seed of every run (default: random)
#   MUTANT_OUT=DIR     where the runs go (default: BUILDDIR/mutants-out)
set -u

srcdir=$1
builddir=$2
shift 2
table=$srcdir/harness/tests/mutants.txt
mbuild=$builddir/mutants-build
out=${MUTANT_OUT:-$builddir/mutants-out}
mxcts=$builddir/harness/mxcts
seed=${MUTANT_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
lib=$mbuild/ref/.libs/libmxref.so

die() {
  echo "check-mutants: $*" >&2
  exit 2
}

[ -f "$table" ] || die "no table $table"
[ -x "$mxcts" ] || die "no $mxcts: build the tree first (make)"

# The table's lines, without comments and blank lines.
entries() { grep -v '^[[:space:]]*\(#\|$\)' "$table"; }

build_library() {
  mkdir -p "$mbuild" || die "cannot create $mbuild"
  if [ ! -f "$mbuild/config.status" ]; then
    echo "check-mutants: configuring $mbuild (--enable-mutants --without-cuda)"
    (cd "$mbuild" && "$srcdir/configure" --enable-mutants --without-cuda >configure.log 2>&1) ||
      die "configure failed: $mbuild/configure.log"
  fi
  echo "check-mutants: building $lib"
  (cd "$mbuild" && ${MAKE:-make} ref/libmxref.la >build.log 2>&1) ||
    die "build failed: $mbuild/build.log"
}

# "SUITE/ASSERTION VERDICT" for every test point of a TAP report.
verdicts() {
  awk '/^  suite: /{s=$2} /^  assertion: /{a=$2} /^  verdict: /{v=$2; gsub(/"/,"",s); gsub(/"/,"",a); gsub(/"/,"",v); print s "/" a, v}' "$1"
}

# run_mxcts DIR MUTANT ASSERTION...: one mxcts run; its exit status.
run_mxcts() {
  dir=$1 mutant=$2
  shift 2
  sel=
  for a in "$@"; do sel="$sel --assertion $a"; done
  rm -rf "$dir"
  mkdir -p "$dir"
  # shellcheck disable=SC2086 # $sel is a list of options, each a plain word
  MXR_MUTANT=$mutant "$mxcts" run --impl "$lib" --suites "$srcdir/suites" --expectations none \
    --pass-env MXR_MUTANT --seed "$seed" --max-backoff 0 --no-progress --out "$dir/run" \
    --tap "$dir/mxcts.tap" $sel </dev/null >"$dir/mxcts.log" 2>&1
}

build_library
if [ $# -gt 0 ]; then
  for n in "$@"; do entries | awk -v n="$n" '$1 == n {f=1} END {exit !f}' || die "no mutant $n in $table"; done
fi
selected() { [ $# -eq 0 ] && return 0; for n in "$@"; do [ "$n" = "$want" ] && return 0; done; return 1; }

# The baseline: every assertion the selected mutants name, no mutant.
all=$(entries | while read -r name asserts _; do want=$name; selected "$@" && echo "$asserts"; done |
  tr ',' '\n' | sort -u)
echo "check-mutants: seed $seed; baseline run of $(echo "$all" | wc -l) assertions without a mutant"
# shellcheck disable=SC2086 # one assertion a word
run_mxcts "$out/baseline" "" $all
rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
  cat "$out/baseline/mxcts.log" >&2
  die "the baseline (no mutant) does not pass (mxcts exit $rc): nothing to measure"
fi

total=0 killed=0 survivors=
start=$(date +%s)
entries > "$out/table.txt"
while read -r name asserts what; do
  want=$name
  selected "$@" || continue
  total=$((total + 1))
  t0=$(date +%s)
  # shellcheck disable=SC2046 # one assertion a word
  run_mxcts "$out/$name" "$name" $(echo "$asserts" | tr ',' ' ')
  got=$(verdicts "$out/$name/mxcts.tap")
  ok=yes detail=
  for a in $(echo "$asserts" | tr ',' ' '); do
    v=$(echo "$got" | awk -v a="$a" '$1 == a {print $2}')
    detail="$detail $a=${v:-missing}"
    [ "$v" = fail ] || ok=no
  done
  secs=$(($(date +%s) - t0))
  if [ "$ok" = yes ]; then
    killed=$((killed + 1))
    printf 'KILLED    %-36s%s (%ss)\n' "$name" "$detail" "$secs"
  else
    survivors="$survivors $name"
    printf 'SURVIVED  %-36s%s (%ss): %s\n' "$name" "$detail" "$secs" "$what"
  fi
done < "$out/table.txt"

[ "$total" -gt 0 ] || die "no mutant selected"
echo "check-mutants: kill rate $killed/$total ($((100 * killed / total)) %) in $(($(date +%s) - start)) s, seed $seed"
[ -z "$survivors" ] || echo "check-mutants: survived:$survivors (runs in $out)"
[ "$killed" -eq "$total" ]
