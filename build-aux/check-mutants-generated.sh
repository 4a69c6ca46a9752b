#!/bin/sh
# make check-mutants-generated: the suites' mutation score on mutants that
# nobody wrote (docs/harness.md, "Generated mutants").
#
# universalmutator (PyPI) generates every single-line mutant of each C file
# of ref/src/engine, executor, imperative and op: operators swapped,
# conditions negated or forced, constants changed, statements removed.
# This script samples them in a seeded random order and judges each one on
# a private copy of the distributed tree (build-aux/mutants-lib.sh):
#
#   build error   the mutant does not compile (not counted in the score)
#   equivalent    its object code equals the original's (trivial compiler
#                 equivalence: same code, same behaviour), or it is listed
#                 in harness/tests/mutants/generated-equivalent.txt with
#                 the reason it cannot change behaviour
#   killed        mxcts fails (or crashes, or times out) on some assertion
#                 of the folder's suites, which all pass without the mutant
#                 (the line names the first suite that failed)
#   survived      every assertion still passes (its diff is printed)
#
# Per folder it stops once N mutants were killed or survived.  The score is
# killed / (killed + survived); the run passes when every folder reaches
# MUTANT_TARGET %.
#
# Lines that only raise an error (mxr_set_error) are not mutated: the
# suites judge what an engine does with valid programs; rejecting bad input
# is the unit tests' part (ref/tests).
#
# usage: check-mutants-generated.sh SRCDIR BUILDDIR
#   N=COUNT            judged mutants per folder (default 10)
#   MUTANT_FOLDERS     folders of ref/src (default "engine executor imperative op")
#   MUTANT_SEED=S      sampling and mxcts seed (default: random; printed)
#   MUTANT_TARGET=P    the score each folder must reach, in % (default 90)
#   MUTANT_OUT=DIR     where runs go (default BUILDDIR/mutants-generated/out)
#   MUTANT_SANITIZE=1  build the copy, library and probe, with
#                      AddressSanitizer and UBSan (default 0: a plain build;
#                      the engine folder's suites take minutes per mutant
#                      under the sanitizers on 2 cores)
#
# Exit status: 0 every folder reached the target, 1 one did not, 2 a usage
# or setup error, 77 universalmutator cannot be installed here (offline).
set -u

die() {
  echo "check-mutants-generated: $*" >&2
  exit 2
}
say() { echo "check-mutants-generated: $*"; }

[ $# -eq 2 ] || die "usage: check-mutants-generated.sh SRCDIR BUILDDIR"
srcdir=$(cd "$1" && pwd) || die "no source tree $1"
builddir=$(cd "$2" && pwd) || die "no build tree $2"
per_folder=${N:-10}
folders=${MUTANT_FOLDERS:-engine executor imperative op}
target=${MUTANT_TARGET:-90}
seed=${MUTANT_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
work=$builddir/mutants-generated
out=${MUTANT_OUT:-$work/out}
equivalents=$srcdir/harness/tests/mutants/generated-equivalent.txt
case $per_folder in '' | *[!0-9]*) die "N=$per_folder: expected a count" ;; esac
# shellcheck source=build-aux/mutants-lib.sh
. "$srcdir/build-aux/mutants-lib.sh"

# The suites each folder's mutants are judged by: those that exercise the
# folder's code without a long timed part, the quickest first (a mutant is
# killed by the first suite that fails; the rest do not run).  Suites not in
# the tree are left out.
folder_suites() {
  case $1 in
    engine) echo "knobs ndarray-views rejections numerics errors bulking-imperative bulking-inference async engine" ;;
    executor) echo "knobs rejections shape-inference profiler memory-plan errors numerics bulking-inference bulking-symbolic" ;;
    imperative) echo "knobs ndarray-views rejections numerics errors memory-plan bulking-imperative bulking-cachedop" ;;
    op) echo "ndarray-views knobs rejections shape-inference numerics memory-plan" ;;
    *) return 1 ;;
  esac
}

# The mutation tool, in the Python environment ci/python-env.sh makes.
venv=$builddir/python-env
rc=0
sh "$srcdir/ci/python-env.sh" "$venv" universalmutator >&2 || rc=$?
[ "$rc" -eq 77 ] && exit 77
[ "$rc" -eq 0 ] || die "ci/python-env.sh could not install universalmutator (exit $rc)"
mutate=$venv/bin/mutate

# Under AddressSanitizer and UBSan (MUTANT_SANITIZE=1) a mutant that reads
# or writes out of bounds, or overflows, stops the probe (a crash verdict)
# instead of passing by luck; the suites then run several times slower.
# Their objects also record the source line of every check, so a mutant
# that only moves lines (a statement inserted where it changes nothing)
# would never compare equal: equivalence is then decided on a plain build
# of the same copy ($pbuild), the judging done on the sanitized one.
pbuild=
if [ "${MUTANT_SANITIZE:-0}" = 1 ]; then
  mutants_prepare --enable-sanitizers=address,undefined
  pbuild=$work/build-plain
  rm -rf "$pbuild"
  mkdir -p "$pbuild" || die "cannot create $pbuild"
  echo "mutants: configuring and building a plain libmxref in $pbuild (the equivalence check)"
  (cd "$pbuild" && "$msrc/configure" --without-cuda >configure.log 2>&1) || die "configure failed: $pbuild/configure.log"
  plain_build() { (cd "$pbuild" && ${MAKE:-make} -j"${MUTANT_JOBS:-2}" ref/libmxref.la >build.log 2>&1); }
  plain_build || die "the plain build failed: $pbuild/build.log"
else
  mutants_prepare
fi

# stripped OBJECT COPY: the object without debug sections, for comparison.
stripped() { objcopy --strip-debug "$1" "$2"; }
# object_of FILE [TREE]: the PIC object TREE (default the judged build) made
# of ref/src/FOLDER/FILE.c.
object_of() {
  d=$(dirname "$1")
  b=$(basename "$1" .c)
  ls "${2:-$mbuild}/$d/.libs/"*"-$b.o" 2>/dev/null | head -n 1
}
# compared_object FILE: the object the equivalence check compares, built
# from the source as it is now: the plain tree's (the path the baseline
# found: libtool removes an object whose source fails to compile), or the
# judged build's (which must then be built first).  Fails when FILE does
# not compile.
compared_object() {
  if [ -z "$pbuild" ]; then
    mutants_build && object_of "$1"
    return
  fi
  o=$(cat "$work/base/$(basename "$1" .c).path")
  lo=$(dirname "$(dirname "$o")")/$(basename "$o" .o).lo
  (cd "$pbuild" && ${MAKE:-make} "${lo#"$pbuild"/}" >>build.log 2>&1) && [ -f "$o" ] && echo "$o"
}

# The mutants of one folder, "FILE MUTANT" a line in a seeded random order.
generate() {
  folder=$1 gen=$work/gen/$1
  rm -rf "$gen"
  mkdir -p "$gen"
  printf '%s\n' 'mxr_set_error\(' >"$work/ignore.txt"
  for f in "$msrc"/ref/src/"$folder"/*.c; do
    rel=${f#"$msrc"/}
    mkdir -p "$gen/$(basename "$f" .c)"
    "$mutate" "$f" c --noCheck --ignore "$work/ignore.txt" --mutantDir "$gen/$(basename "$f" .c)" \
      >"$gen/$(basename "$f" .c).log" 2>&1 || die "mutate failed on $rel: $gen/$(basename "$f" .c).log"
    for m in "$gen/$(basename "$f" .c)"/*.mutant.*.c; do
      [ -e "$m" ] && echo "$rel $m"
    done
  done | awk -v seed="$seed$folder" 'BEGIN { n = split(seed, c, ""); s = 0; for (i = 1; i <= n; i++) s = (s * 31 + index("0123456789abcdefghijklmnopqrstuvwxyz", c[i])) % 2147483647; srand(s) } { print rand() "\t" $0 }' |
    sort -k1,1 | cut -f2-
}

# key FILE MUTANT: the mutation as "FILE<tab>-LINE<tab>+LINE" (whitespace
# trimmed), how generated-equivalent.txt names it.  An inserted line is
# named with the line it follows: "-PREV<tab>+PREV | INSERTED".
key() {
  diff "$msrc/$1" "$2" | awk -v f="$1" -v src="$msrc/$1" '
    function trim(s) { sub(/^[ \t]*/, "", s); sub(/[ \t]*$/, "", s); return s }
    NR == 1 && /^[0-9]+a/ { n = $0; sub(/a.*/, "", n); n += 0; while (i < n && (getline line < src) > 0) i++; prev = trim(line) }
    /^< / { o = trim(substr($0, 3)) }
    /^> / { m = trim(substr($0, 3)) }
    END { if (prev != "" || o == "") { o = prev; m = prev " | " m } print f "\t-" o "\t+" m }'
}

listed_equivalent() {
  [ -f "$equivalents" ] || return 1
  grep -v '^#' "$equivalents" | cut -f1-3 | grep -qxF "$(key "$1" "$2")"
}

# judge FILE MUTANT SUITES...: prints killed, survived, equivalent or build-error.
judge() {
  file=$1 m=$2
  shift 2
  if listed_equivalent "$file" "$m"; then echo equivalent; return; fi
  cp "$msrc/$file" "$work/original.c"
  cp "$m" "$msrc/$file"
  verdict=
  if ! o=$(compared_object "$file"); then
    verdict=build-error
  elif stripped "$o" "$work/mutant.o" && cmp -s "$work/mutant.o" "$work/base/$(basename "$file" .c).o"; then
    verdict=equivalent
  elif [ -n "$pbuild" ] && ! mutants_build; then
    verdict=build-error
  else
    verdict=survived
    for s in "$@"; do
      mutants_run "$run_dir/$s" --suite "$s" --jobs 2 --timeout-scale 0.25
      case $? in
        0 | 3) ;;
        *) verdict="killed $s"; break ;;
      esac
    done
  fi
  cp "$work/original.c" "$msrc/$file"
  touch "$msrc/$file"
  echo "$verdict"
}

# The baseline: the folder's suites pass without a mutant, and the
# unmutated objects are kept for the equivalence check.
baseline() {
  folder=$1
  shift
  mutants_build || die "the unmutated build failed: $mbuild/build.log"
  [ -z "$pbuild" ] || plain_build || die "the unmutated plain build failed: $pbuild/build.log"
  mkdir -p "$work/base"
  for f in "$msrc"/ref/src/"$folder"/*.c; do
    o=$(object_of "${f#"$msrc"/}" "${pbuild:-$mbuild}")
    [ -n "$o" ] || die "no object for $f in ${pbuild:-$mbuild}"
    stripped "$o" "$work/base/$(basename "$f" .c).o"
    echo "$o" >"$work/base/$(basename "$f" .c).path"
  done
  sel=
  for s in "$@"; do sel="$sel --suite $s"; done
  # shellcheck disable=SC2086 # one option a word
  mutants_run "$out/$folder/baseline" $sel
  rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] ||
    die "the $folder baseline (no mutant) does not pass (mxcts exit $rc; $out/$folder/baseline/mxcts.log)"
}

status=0
summary=
start=$(date +%s)
say "seed $seed, $per_folder judged mutants per folder, target $target %"
for folder in $folders; do
  want=$(folder_suites "$folder") || die "unknown folder $folder"
  suites=
  for s in $want; do [ -f "$msrc/suites/$s.json" ] && suites="$suites $s"; done
  # shellcheck disable=SC2086 # one suite a word
  baseline "$folder" $suites
  killed=0 survived=0 equivalent=0 broken=0 drawn=0
  mkdir -p "$out/$folder"
  generate "$folder" >"$work/$folder.list"
  total=$(wc -l <"$work/$folder.list")
  say "$folder: $total mutants generated; suites:$suites"
  while read -r file m; do
    [ $((killed + survived)) -lt "$per_folder" ] || break
    drawn=$((drawn + 1))
    run_dir=$out/$folder/m$drawn
    t0=$(date +%s)
    # shellcheck disable=SC2086 # one suite a word
    v=$(judge "$file" "$m" $suites)
    line=$(diff "$msrc/$file" "$m" | awk '/^[0-9]/ { sub(/[acd].*/, "", $1); print $1; exit }')
    printf '%-11s %s:%s (%ss)\n' "$v" "$file" "$line" "$(($(date +%s) - t0))"
    case $v in
      killed*) killed=$((killed + 1)) ;;
      survived)
        survived=$((survived + 1))
        diff -u --label "a/$file" --label "b/$file" "$msrc/$file" "$m" | tee "$out/$folder/survivor-$drawn.diff" | sed 's/^/    /'
        printf '    key: %s\n' "$(key "$file" "$m")" ;;
      equivalent) equivalent=$((equivalent + 1)) ;;
      *) broken=$((broken + 1)) ;;
    esac
  done <"$work/$folder.list"
  judged=$((killed + survived))
  score=0
  [ "$judged" -gt 0 ] && score=$((100 * killed / judged))
  line="$folder: $killed killed, $survived survived, $equivalent equivalent, $broken build errors ($drawn drawn of $total): score $score %"
  say "$line"
  summary="$summary
  $line"
  if [ "$judged" -lt "$per_folder" ] || [ "$score" -lt "$target" ]; then status=1; fi
done
mutants_build || die "the unmutated build failed after the mutants: $mbuild/build.log"
say "seed $seed, $(($(date +%s) - start)) s:$summary"
[ "$status" -eq 0 ] && say "every folder reached $target %" || say "some folder is below $target % (survivors above; runs in $out)"
exit "$status"
