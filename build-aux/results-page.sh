#!/bin/sh
# A dated results page: what `make results` runs.
#
# usage: results-page.sh --srcdir DIR --builddir DIR [RESULTS.json ...]
#
# Without results files it runs `mxcts run` of the default suites against
# the build's libmxref (BUILDDIR/ref/.libs/libmxref.so) into
# BUILDDIR/results-out (emptied first), the Python workloads in
# BUILDDIR/python-env when `make python-env` made it, and renders that run.  With results
# files (the RESULTS variable of `make results`: results.json of mxcts runs,
# e.g. libmxref's and MXNet releases') it runs nothing and renders those, one
# column per implementation.
#
# It writes SRCDIR/docs/results/DATE-HOST.md (DATE is today, YYYY-MM-DD;
# HOST is $RESULTS_HOST, else the short host name), replacing a page of the
# same name: a header naming the machine (CPU model, cores, OS, kernel), the
# mxcts version and the commands, then `mxcts report --matrix
# --omit-skipped` of the results and, when they hold images per second,
# `mxcts report --throughput`.  Then it rewrites SRCDIR/docs/results/README.md,
# the index: one line per page, newest first.
#
# Exit status: 0 when the page was written (whatever the verdicts), 2 when
# the run or a report could not be made.
set -u

die() { echo "results-page.sh: $*" >&2; exit 2; }

srcdir= builddir=
while [ $# -gt 0 ]; do
    case $1 in
        --srcdir) [ $# -ge 2 ] || die "--srcdir needs a folder"; srcdir=$2; shift 2 ;;
        --builddir) [ $# -ge 2 ] || die "--builddir needs a folder"; builddir=$2; shift 2 ;;
        --) shift; break ;;
        -*) die "unknown option $1" ;;
        *) break ;;
    esac
done
[ -n "$srcdir" ] && [ -f "$srcdir/suites/local.mk" ] || die "--srcdir must name the source tree"
[ -n "$builddir" ] && [ -x "$builddir/harness/mxcts" ] || die "--builddir must name a build with harness/mxcts"
srcdir=$(cd "$srcdir" && pwd) && builddir=$(cd "$builddir" && pwd) || exit 2

mxcts=$builddir/harness/mxcts
pages=$srcdir/docs/results
date=$(date +%Y-%m-%d)
host=${RESULTS_HOST:-$(hostname -s 2>/dev/null || uname -n)}
case $host in ''|*/*|.*) die "unusable host name '$host' (set RESULTS_HOST)" ;; esac
page=$pages/$date-$host.md
mkdir -p "$pages" || exit 2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/results-page.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

# --- the results ------------------------------------------------------------
if [ $# -eq 0 ]; then
    out=$builddir/results-out
    lib=$builddir/ref/.libs/libmxref.so
    [ -f "$lib" ] || die "$lib is not built"
    rm -rf "$out"
    # the Python workloads in the environment of `make python-env`, if made
    py=
    [ -x "$builddir/python-env/bin/python" ] && py=python-env/bin/python
    run="mxcts run --impl ref/.libs/libmxref.so${py:+ --python $py} --out results-out --no-progress"
    echo "results-page.sh: $run (a few minutes)"
    start=$(date +%s)
    rc=0
    # shellcheck disable=SC2086 # the option pair, or nothing
    "$mxcts" run --impl "$lib" --suites "$srcdir/suites" --out "$out" --no-progress \
        ${py:+--python "$builddir/$py"} >"$tmp/run.txt" 2>&1 || rc=$?
    took=$(( $(date +%s) - start ))
    cat "$tmp/run.txt"
    [ -f "$out/results.json" ] || die "mxcts run wrote no results.json (exit status $rc)"
    set -- "$out/results.json"
    how="run: \`$run\` in the build folder, $took s, exit status $rc"
else
    for f in "$@"; do [ -f "$f" ] || die "$f: no such results file"; done
    how="results: the files given to \`make results RESULTS=...\`: $*"
fi

# --- the page ----------------------------------------------------------------
cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || grep -c '^processor' /proc/cpuinfo)
os=$( (. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-}") )
kernel=$(uname -sr)
version=$(git -C "$srcdir" describe --always --dirty 2>/dev/null) ||
    version=$("$mxcts" --version 2>/dev/null)
configured=$(sed -n 's/^  \$ //p' "$builddir/config.log" 2>/dev/null | head -n 1)

"$mxcts" report --matrix --omit-skipped --markdown "$tmp/matrix.md" "$@" >/dev/null ||
    die "mxcts report --matrix failed"
"$mxcts" report --throughput --markdown "$tmp/throughput.md" "$@" >/dev/null ||
    die "mxcts report --throughput failed"

{
    echo "# Results: $date, $host"
    echo
    echo "- date: $date"
    echo "- machine: $host: ${cpu:-unknown CPU}, $cores cores, ${os:-unknown OS}, $kernel"
    echo "- mxcts: $version${configured:+, configured with \`$configured\`}"
    echo "- $how"
    echo "- rendered by: \`make results\` (build-aux/results-page.sh), with"
    echo "  \`mxcts report --matrix --omit-skipped\`"
    echo
    echo "An assertion is a row and an implementation a column; a cell is the"
    echo "verdict, for timed orderings the rounds won and the median ratio, for"
    echo "a deviation its first finding. Assertions skipped in every column (the"
    echo "\`gpu-*\` suites without a GPU, Python workloads without MXNet's"
    echo "Python package) are left out. docs/harness.md explains the verdicts."
    echo
    cat "$tmp/matrix.md"
    if [ -s "$tmp/throughput.md" ] && ! grep -q "^0 rows" "$tmp/throughput.md"; then
        echo
        echo "## Images per second"
        echo
        echo "\`mxcts report --throughput\` of the same results (docs/networks.md)."
        echo
        cat "$tmp/throughput.md"
    fi
} >"$tmp/page.md" || exit 2
mv "$tmp/page.md" "$page" || exit 2
echo "results-page.sh: wrote $page"

# --- the index ---------------------------------------------------------------
{
    echo "# Results"
    echo
    echo "Dated pages of conformance results, newest first. \`make results\`"
    echo "(build-aux/results-page.sh) writes one for the machine it runs on and"
    echo "rewrites this index."
    echo
    (cd "$pages" && ls) | grep -E '^[0-9]{4}-[0-9]{2}-[0-9]{2}-.*\.md$' | sort -r |
        while read -r f; do
            title=$(sed -n '1s/^# *//p' "$pages/$f")
            echo "- [${f%.md}]($f): ${title:-results}"
        done
} >"$tmp/index.md" || exit 2
mv "$tmp/index.md" "$pages/README.md" || exit 2
echo "results-page.sh: wrote $pages/README.md"
exit 0
