#!/bin/sh
# make check-mutants: mutation testing of the suites (docs/harness.md,
# "Mutation testing").
#
# Each file harness/tests/mutants/NAME.patch is one realistic bug in
# libmxref's source, with a header naming the assertions that must catch it:
#
#   Mutant: NAME
#   Killed-by: SUITE/ASSERTION[,SUITE/ASSERTION...]
#
#   What the bug is, in a sentence.
#
#   --- a/ref/src/...      (a unified diff against the tree, applied with -p1)
#
# The runtime's source holds no trace of the mutants.  This script copies the
# distributed tree (make distdir) to BUILDDIR/mutants/src, configures and
# builds libmxref there once (--without-cuda), and runs mxcts over the named
# assertions without any mutant: that baseline must pass, so that a kill
# means the bug was seen.  Then, for each patch: apply it to the copy, rebuild
# libmxref, run mxcts over its assertions, reverse the patch.  The mutant is
# KILLED when every listed assertion comes out `fail`.  A patch that no
# longer applies cleanly (STALE) or whose build fails (BROKEN) is an error,
# never skipped.  Prints one line per mutant and the kill rate; exits 0 only
# when every mutant was killed, 2 on a usage or setup error.
#
# usage: check-mutants.sh SRCDIR BUILDDIR [NAME...]
#        check-mutants.sh --check-apply SRCDIR [NAME...]
#   NAME...            only these mutants (default: every patch)
#   --check-apply      only check that every patch applies to SRCDIR as it
#                      is (no build, no run; part of make check)
#   MUTANT_DIR=DIR     where the patches are (default SRCDIR/harness/tests/mutants)
#   MUTANT_SEED=N      the mxcts seed of every run (default: random)
#   MUTANT_OUT=DIR     where the runs go (default: BUILDDIR/mutants/out)
set -u

die() {
  echo "check-mutants: $*" >&2
  exit 2
}

check_apply=0
if [ "${1:-}" = --check-apply ]; then
  check_apply=1
  shift
fi
[ $# -ge $((2 - check_apply)) ] || die "usage: check-mutants.sh SRCDIR BUILDDIR [NAME...] | --check-apply SRCDIR [NAME...]"
srcdir=$1
shift
if [ "$check_apply" -eq 0 ]; then
  builddir=$1
  shift
fi
mdir=${MUTANT_DIR:-$srcdir/harness/tests/mutants}
[ -d "$mdir" ] || die "no mutant folder $mdir"

# The patches to run: NAME... or every one.
patches=
if [ $# -gt 0 ]; then
  for n in "$@"; do
    [ -f "$mdir/$n.patch" ] || die "no mutant $n ($mdir/$n.patch)"
    patches="$patches $mdir/$n.patch"
  done
else
  patches=$(ls "$mdir"/*.patch 2>/dev/null) || die "no patches in $mdir"
fi

# header FIELD PATCH: the value of "FIELD: value" in the patch's header.
header() { sed -n "/^---/q; s/^$1: *//p" "$2" | head -n 1; }
# what PATCH: the header's sentence.
what() { sed -n '/^---/q; /^[A-Za-z-]*: /d; /^$/d; p' "$1" | head -n 1; }

# applies PATCH DIR [-R]: the patch applies to DIR exactly (no fuzz, no offset
# guesses beyond patch's own line search); prints patch's complaint if not.
applies() { patch -p1 -d "$2" -F0 -s -f --dry-run ${3:-} <"$1" >/dev/null 2>&1; }

# Every patch must name itself and its killers, and apply to SRCDIR.
stale=
for p in $patches; do
  n=$(basename "$p" .patch)
  [ "$(header Mutant "$p")" = "$n" ] || die "$p: its header must say 'Mutant: $n'"
  [ -n "$(header Killed-by "$p")" ] || die "$p: its header has no 'Killed-by:' line"
  if ! applies "$p" "$srcdir"; then
    echo "STALE     $n: $p no longer applies to $srcdir (the code it mutates changed; regenerate the patch)" >&2
    patch -p1 -d "$srcdir" -F0 -f --dry-run <"$p" >&2
    stale="$stale $n"
  fi
done
if [ "$check_apply" -eq 1 ]; then
  [ -z "$stale" ] || die "stale patches:$stale"
  echo "check-mutants: $(echo $patches | wc -w) patches apply to $srcdir"
  exit 0
fi
[ -z "$stale" ] || die "stale patches:$stale"

work=$builddir/mutants
out=${MUTANT_OUT:-$work/out}
seed=${MUTANT_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
# shellcheck source=build-aux/mutants-lib.sh
. "$(dirname "$0")/mutants-lib.sh"

# run_mxcts DIR ASSERTION...: one run of the named assertions.
run_mxcts() {
  dir=$1
  shift
  sel=
  for a in "$@"; do sel="$sel --assertion $a"; done
  # shellcheck disable=SC2086 # $sel is a list of options, each a plain word
  mutants_run "$dir" $sel
}

mutants_prepare

# The baseline: every assertion the selected mutants name, no mutant.
all=$(for p in $patches; do header Killed-by "$p"; done | tr ',' '\n' | sort -u)
echo "check-mutants: seed $seed; baseline run of $(echo "$all" | wc -l) assertions without a mutant"
# shellcheck disable=SC2086 # one assertion a word
run_mxcts "$out/baseline" $all
rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
  cat "$out/baseline/mxcts.log" >&2
  die "the baseline (no mutant) does not pass (mxcts exit $rc): nothing to measure"
fi

total=0 killed=0 survivors= broken=
start=$(date +%s)
for p in $patches; do
  name=$(basename "$p" .patch)
  asserts=$(header Killed-by "$p" | tr ',' ' ')
  total=$((total + 1))
  t0=$(date +%s)
  patch -p1 -d "$msrc" -F0 -s -f <"$p" >"$out/$name.apply.log" 2>&1 || die "$name: patch failed on the copy: $out/$name.apply.log"
  if mutants_build; then
    # shellcheck disable=SC2086 # one assertion a word
    run_mxcts "$out/$name" $asserts
    got=$(mutants_verdicts "$out/$name/mxcts.tap")
    ok=yes detail=
    for a in $asserts; do
      v=$(echo "$got" | awk -v a="$a" '$1 == a {print $2}')
      detail="$detail $a=${v:-missing}"
      [ "$v" = fail ] || ok=no
    done
  else
    cp "$mbuild/build.log" "$out/$name.build.log"
    ok=broken detail=" build failed: $out/$name.build.log"
  fi
  patch -p1 -R -d "$msrc" -F0 -s -f <"$p" >>"$out/$name.apply.log" 2>&1 || die "$name: reversing the patch failed: $out/$name.apply.log"
  secs=$(($(date +%s) - t0))
  case $ok in
    yes) killed=$((killed + 1)); printf 'KILLED    %-36s%s (%ss)\n' "$name" "$detail" "$secs" ;;
    broken) broken="$broken $name"; printf 'BROKEN    %-36s%s (%ss)\n' "$name" "$detail" "$secs" ;;
    *) survivors="$survivors $name"; printf 'SURVIVED  %-36s%s (%ss): %s\n' "$name" "$detail" "$secs" "$(what "$p")" ;;
  esac
done
mutants_build || die "the unpatched build failed after the mutants: $mbuild/build.log"

echo "check-mutants: kill rate $killed/$total ($((100 * killed / total)) %) in $(($(date +%s) - start)) s, seed $seed"
[ -z "$survivors" ] || echo "check-mutants: survived:$survivors (runs in $out)"
[ -z "$broken" ] || echo "check-mutants: patches that do not build:$broken"
[ "$killed" -eq "$total" ]
