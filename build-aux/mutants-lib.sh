# Shared by build-aux/check-mutants.sh (the hand-written patches) and
# build-aux/check-mutants-generated.sh (mutants made by a mutation tool):
# a private copy of the distributed tree with libmxref built in it, and one
# mxcts run of that copy's libmxref.  Sourced, not run; the caller sets
#   builddir  the build tree whose mxcts judges (and whose `make distdir` copies)
#   work      the folder for the copy: $work/src, $work/build
#   out       where runs go
#   seed      the mxcts seed of every run
# and defines die().

msrc=$work/src
mbuild=$work/build
mxcts=$builddir/harness/mxcts
lib=$mbuild/ref/.libs/libmxref.so

# mutants_prepare [CONFIGURE ARGS...]: a fresh copy of the distributed
# tree, configured --without-cuda (and the arguments) and built once.  With
# arguments (a sanitizer build) the copy's own mxcts and probe are built and
# used, so that the probe carries the same instrumentation as the library.
mutants_prepare() {
  [ -x "$mxcts" ] || die "no $mxcts: build the tree first (make)"
  rm -rf "$msrc" "$mbuild"
  mkdir -p "$msrc" "$mbuild" "$out" || die "cannot create $work"
  echo "mutants: copying the tree to $msrc (make distdir)"
  ${MAKE:-make} -s -C "$builddir" distdir distdir="$msrc" top_distdir="$msrc" >"$work/distdir.log" 2>&1 ||
    die "make distdir failed: $work/distdir.log"
  echo "mutants: configuring and building libmxref in $mbuild (--without-cuda)"
  (cd "$mbuild" && "$msrc/configure" --without-cuda "$@" >configure.log 2>&1) ||
    die "configure failed: $mbuild/configure.log"
  if [ $# -gt 0 ]; then
    echo "mutants: building the copy's harness too ($*)"
    (cd "$mbuild" && ${MAKE:-make} -j"${MUTANT_JOBS:-2}" all >build.log 2>&1) ||
      die "the unmutated build failed: $mbuild/build.log"
    mxcts=$mbuild/harness/mxcts
  fi
  mutants_build || die "the unmutated build failed: $mbuild/build.log"
}

# mutants_build: rebuild the copy's libmxref; its status (log: $mbuild/build.log).
mutants_build() { (cd "$mbuild" && ${MAKE:-make} -j"${MUTANT_JOBS:-2}" ref/libmxref.la >build.log 2>&1); }

# mutants_run DIR [mxcts run options...]: one mxcts run of the copy's
# libmxref, no expectations, results and TAP in DIR; mxcts's exit status.
mutants_run() {
  dir=$1
  shift
  rm -rf "$dir"
  mkdir -p "$dir"
  "$mxcts" run --impl "$lib" --suites "$msrc/suites" --expectations none \
    --seed "$seed" --max-backoff 0 --no-progress --out "$dir/run" \
    --tap "$dir/mxcts.tap" "$@" </dev/null >"$dir/mxcts.log" 2>&1
}

# mutants_verdicts TAP: "SUITE/ASSERTION VERDICT" for every test point.
mutants_verdicts() {
  awk '/^  suite: /{s=$2} /^  assertion: /{a=$2} /^  verdict: /{v=$2; gsub(/"/,"",s); gsub(/"/,"",a); gsub(/"/,"",v); print s "/" a, v}' "$1"
}
