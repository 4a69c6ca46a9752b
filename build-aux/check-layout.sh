#!/bin/sh
# The tree against its own description: a TAP test (run by `make check`) and
# the distcheck hook (run on the unpacked distribution).
#
# usage: check-layout.sh [SRCDIR]
#
# SRCDIR defaults to $srcdir (automake's test harness sets it), else ".".
# MXCTS_INSTALLED_DATA holds the suite files `make install` installs
# (suites/local.mk's dist_suites_DATA and dist_expectations_DATA).
#
# Test points:
#   1. every file of suites/ (*.json, expectations/*.txt) is installed, and
#      every installed one exists;
#   2. every doc under docs/ is reachable from README.md, following the
#      docs/NAME.md names that README.md and the docs reached so far mention;
#   3. README.md's suite table (the rows under its "## Suites" heading whose
#      first cell is a `name`) names
#      exactly the suites of suites/;
#   4. every source path that README.md and docs/ name (ref/..., harness/...,
#      and paths relative to ref/src, harness/ or ref/include) exists, so a
#      moved or removed file cannot stay documented;
#   5. the code block of README.md's "## Layout" section lists exactly the
#      folders directly under harness/ and ref/src/: each as an indented
#      `NAME/` line under the unindented line that starts with `harness/` or
#      `ref/src/`.
# Each failing point prints what differs.  Exit status: 0 all passed, 1 one
# failed, 2 usage error.
set -u

srcdir=${1:-${srcdir:-.}}
if [ ! -f "$srcdir/README.md" ] || [ ! -d "$srcdir/suites" ]; then
    echo "check-layout.sh: $srcdir is not the source tree (no README.md or suites/)" >&2
    exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-layout.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
failed=0

echo "1..5"

# report N DESCRIPTION FILE: ok when FILE is empty, else not ok and its lines.
report() {
    if [ -s "$3" ]; then
        echo "not ok $1 - $2"
        sed 's/^/# /' "$3"
        failed=1
    else
        echo "ok $1 - $2"
    fi
}

# --- 1. suites installed -------------------------------------------------------
(cd "$srcdir" && ls suites/*.json suites/expectations/*.txt) | sort >"$tmp/suite-files"
for f in ${MXCTS_INSTALLED_DATA-}; do echo "$f"; done | sort -u >"$tmp/installed"
if [ -z "${MXCTS_INSTALLED_DATA-}" ]; then
    echo "MXCTS_INSTALLED_DATA is not set: the installed suite list is unknown" >"$tmp/out1"
else
    comm -23 "$tmp/suite-files" "$tmp/installed" | sed 's/$/ is not installed (add it to suites\/local.mk)/' >"$tmp/out1"
    comm -13 "$tmp/suite-files" "$tmp/installed" | sed 's/$/ is installed but does not exist/' >>"$tmp/out1"
fi
report 1 "every suite file is installed" "$tmp/out1"

# --- 2. docs reachable from README.md --------------------------------------------
# Mentions of docs/NAME.md anywhere, and of NAME.md inside a doc (docs link
# each other by bare name or relative link).
doc_mentions() {
    grep -o 'docs/[A-Za-z0-9_.-]*\.md' "$1"
    case $1 in
        */docs/*) grep -o '[(`]\{0,1\}[A-Za-z0-9_-]*\.md' "$1" | tr -d '(`' | sed 's|^|docs/|' ;;
    esac
}
echo README.md >"$tmp/reached"
: >"$tmp/queue-done"
while :; do
    next=$(comm -23 "$tmp/reached" "$tmp/queue-done" | head -n 1)
    [ -n "$next" ] || break
    echo "$next" >>"$tmp/queue-done"
    sort -o "$tmp/queue-done" "$tmp/queue-done"
    [ -f "$srcdir/$next" ] || continue
    { cat "$tmp/reached"; doc_mentions "$srcdir/$next"; } | sort -u >"$tmp/reached.new"
    mv "$tmp/reached.new" "$tmp/reached"
done
(cd "$srcdir" && ls docs/*.md) | sort >"$tmp/docs"
comm -23 "$tmp/docs" "$tmp/reached" | sed 's/$/ is not reachable from README.md/' >"$tmp/out2"
report 2 "every doc is reachable from README.md" "$tmp/out2"

# --- 3. README's suite table ------------------------------------------------------
awk '/^## / { in_suites = ($0 == "## Suites") ; next }
     in_suites && /^\| *`[a-z0-9][a-z0-9_.-]*` *\|/ {
         name = $0; sub(/^\| *`/, "", name); sub(/` *\|.*/, "", name); print name }' \
    "$srcdir/README.md" | sort >"$tmp/readme-suites"
(cd "$srcdir/suites" && ls *.json) | sed 's/\.json$//' | sort >"$tmp/suite-names"
{
    [ -s "$tmp/readme-suites" ] || echo 'README.md has no "## Suites" table'
    comm -23 "$tmp/suite-names" "$tmp/readme-suites" | sed 's/^/suite /; s/$/ is missing from README.md'"'"'s suite table/'
    comm -13 "$tmp/suite-names" "$tmp/readme-suites" | sed 's/^/README.md lists suite /; s/$/, which suites\/ does not have/'
} >"$tmp/out3"
report 3 "README.md lists exactly the suites of suites/" "$tmp/out3"

# --- 4. documented paths exist -----------------------------------------------------
# A path token starts with a folder of the tree (a top-level folder, or a
# folder of ref/src, harness/ or ref/include, which the docs name relative to
# those: `cuda/driver.cu`, `run/plan.h`, `mxref/engine.h`) and ends in a source
# file name or a folder's slash.  Build outputs (_build*/..., *.out/...) and
# absolute paths are not source paths (nor are folders named _*, such as
# distcheck's _build and _inst), and placeholders (suites/NAME.json,
# op/cuda/X.cu) name no file: all are left out.
roots=$(cd "$srcdir" && for d in */ ref/src/*/ harness/*/ ref/include/*/; do
            [ -d "$d" ] && basename "$d"; done | grep -v '^_' | sort -u | tr '\n' '|')
roots=${roots%|}
: >"$tmp/out4"
for doc in "$srcdir"/README.md "$srcdir"/docs/*.md; do
    name=${doc#"$srcdir"/}
    grep -o '[A-Za-z0-9_./-]*' "$doc" |
        sed 's|^\./||; s|\.$||' |
        grep -E "^\.?($roots)/" |
        grep -Ev '\.out/|(^|/)(NAME|IMPL|FILE|DIR|OUT|N|X|FAMILY)(\.|/|$)' |
        grep -E '(/|\.(c|h|cu|cuh|md|json|txt|sh|mk|py|in|map|am|ac|1))$' |
        sort -u |
        while read -r path; do
            found=0
            for base in "" ref/src/ harness/ ref/include/; do
                [ -e "$srcdir/$base$path" ] && { found=1; break; }
            done
            [ "$found" = 1 ] || echo "$name names $path, which does not exist"
        done >>"$tmp/out4"
done
report 4 "every path README.md and docs/ name exists" "$tmp/out4"

# --- 5. README's layout names every folder of harness/ and ref/src/ ---------------
# In the code block under "## Layout", an unindented line opens an entry (its
# first word, e.g. `harness/`); an indented line whose first word is `NAME/`
# names the folder NAME of the entry open above it.
awk '/^## / { in_layout = ($0 == "## Layout"); next }
     !in_layout { next }
     /^```/ { in_code = !in_code; next }
     !in_code { next }
     /^[^ ]/ { top = $1; next }
     /^ +[A-Za-z0-9_.-]+\/( |$)/ { print top $1 }' \
    "$srcdir/README.md" | sort -u >"$tmp/layout-named"
(cd "$srcdir" && for d in harness/*/ ref/src/*/; do [ -d "$d" ] && echo "$d"; done) |
    sort -u >"$tmp/layout-folders"
{
    [ -s "$tmp/layout-named" ] || echo 'README.md has no "## Layout" code block naming harness/ and ref/src/ folders'
    comm -23 "$tmp/layout-folders" "$tmp/layout-named" |
        sed 's|/$||; s|^|folder |; s|$| is missing from README.md'"'"'s "## Layout" section|'
    comm -13 "$tmp/layout-folders" "$tmp/layout-named" | grep -E '^(harness|ref/src)/' |
        sed 's|/$||; s|^|README.md'"'"'s "## Layout" section names |; s|$|, which does not exist|'
} >"$tmp/out5"
report 5 "README.md's layout names every folder of harness/ and ref/src/" "$tmp/out5"

exit "$failed"
