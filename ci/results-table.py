#!/usr/bin/env python3
"""Print the README's results table from two `mxcts run` results files.

usage: ci/results-table.py [--omit-skipped] REF_RESULTS.json MXNET_RESULTS.json

Each row is one assertion (suite/id, in the order of the first file), with
its verdict against each implementation; an ordering also gives its wins of
the rounds and the median ratio slower/faster (over several config pairs,
the weakest pair, written ">="); an expected failure that was a crash or
timeout says so.  --omit-skipped leaves out the rows skipped on both and
names their suites in a last line instead.  The files are what `make check` and
`make check-mxnet` leave in harness/tests/conformance.out/ and
harness/tests/conformance-mxnet.out/ of the build directory.
"""
import json
import sys

VERDICT_WORDS = {"xfail": "expected fail", "xpass": "unexpected pass"}


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"results-table: {path}: {e}")
    if "suites" not in doc:
        sys.exit(f"results-table: {path}: not an mxcts results file (no \"suites\")")
    return {a["name"]: a for s in doc["suites"] for a in s.get("assertions", [])}


def ordering_figures(a):
    pairs = (a.get("diag") or {}).get("pairs") or []
    pairs = [p for p in pairs if "wins" in p and p.get("ratio_median") is not None]
    if not pairs:
        return ""
    if len(pairs) == 1:
        p = pairs[0]
        return f", {p['wins']}/{p['rounds']} wins, ratio {p['ratio_median']:.2f}"
    wins = min(p["wins"] for p in pairs)
    rounds = pairs[0]["rounds"]
    ratio = min(p["ratio_median"] for p in pairs)
    return f", {len(pairs)} pairs, >= {wins}/{rounds} wins, ratio >= {ratio:.2f}"


def cell(a):
    if a is None:
        return "not run"
    verdict = VERDICT_WORDS.get(a["verdict"], a["verdict"])
    raw = a.get("raw_verdict")
    if a["verdict"] == "xfail" and raw not in (None, "fail"):
        verdict += f" ({raw})"
    if a.get("flaky"):
        verdict += " (flaky)"
    if a["type"] == "ordering" and a["verdict"] != "skip":
        verdict += ordering_figures(a)
    return verdict


def skipped(a):
    return a is None or a["verdict"] == "skip"


def main(argv):
    omit = "--omit-skipped" in argv[1:]
    files = [a for a in argv[1:] if a != "--omit-skipped"]
    if len(files) != 2:
        sys.exit(__doc__.strip().splitlines()[2])
    ref, mx = load(files[0]), load(files[1])
    print("| assertion | libmxref | MXNet 1.9.1 |")
    print("|---|---|---|")
    left_out = []
    for name in list(ref) + [n for n in mx if n not in ref]:
        if omit and skipped(ref.get(name)) and skipped(mx.get(name)):
            left_out.append(name)
            continue
        print(f"| `{name}` | {cell(ref.get(name))} | {cell(mx.get(name))} |")
    if left_out:
        suites = sorted({n.split("/")[0] for n in left_out})
        print(f"\nSkipped on both ({len(left_out)} assertions): the suites "
              + ", ".join(f"`{s}`" for s in suites) + ".")


if __name__ == "__main__":
    main(sys.argv)
