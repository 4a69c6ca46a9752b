#!/usr/bin/env python3
"""Print `make check-peer`'s table from the JSON-lines results that
mxcts_peer.py wrote for libmxref and for MXNet, and judge it.

usage: summary.py MXREF_RESULTS MXNET_RESULTS EXPECTATIONS

Per file: libmxref's passed, failed, skipped and "lacks" (failed because
libmxref does not implement something the test uses: an op, an iterator,
a storage type), the pass rate of the tests that lack nothing, and MXNet
1.9.1's passed, failed and skipped.  Then every test that passes on MXNet
and fails on libmxref without lacking anything: a libmxref bug unless the
expectations file lists it ("file::test  reason"), and every expectation
that no longer fails.  Exit status 1 when there is such an unexpected
failure, else 0.  A results file that is missing (a library not run)
leaves its columns empty.  A test tried again (pytest-rerunfailures) is
listed with its failed tries.
"""
import collections
import json
import os
import sys


def load(path):
    results = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                results[(r["file"], r["test"])] = r
    return results


def load_expectations(path):
    expected = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    key, _, reason = line.partition(" ")
                    file, _, test = key.partition("::")
                    expected[(file, test)] = reason.strip()
    return expected


def counts(results, file):
    c = collections.Counter()
    for (f, _), r in results.items():
        if f != file:
            continue
        if r["outcome"] == "failed" and r.get("lacks"):
            c["lacks"] += 1
        else:
            c[r["outcome"]] += 1
    return c


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    ours, theirs = load(sys.argv[1]), load(sys.argv[2])
    expected = load_expectations(sys.argv[3])
    files = sorted({f for f, _ in ours} | {f for f, _ in theirs})
    head = "%-24s | %6s %6s %7s %5s %9s | %6s %6s %7s" % (
        "file", "passed", "failed", "skipped", "lacks", "pass rate", "passed", "failed", "skipped")
    print("%-24s | %-40s | %s" % ("", "libmxref", "MXNet 1.9.1"))
    print(head)
    print("-" * len(head))
    for file in files:
        a, b = counts(ours, file), counts(theirs, file)
        judged = a["passed"] + a["failed"]
        rate = "%.0f %%" % (100.0 * a["passed"] / judged) if judged else "-"
        print("%-24s | %6d %6d %7d %5d %9s | %6d %6d %7d" % (
            file, a["passed"], a["failed"], a["skipped"], a["lacks"], rate,
            b["passed"], b["failed"], b["skipped"]))
    lacking = collections.Counter(r["lacks"] for r in ours.values() if r.get("lacks"))
    if lacking:
        print("\nwhat the tests needed that libmxref lacks (tests):")
        print("  " + ", ".join("%s (%d)" % kv for kv in sorted(lacking.items(), key=lambda kv: (-kv[1], kv[0]))))
    bugs, stale = [], []
    for key, r in sorted(ours.items()):
        mxnet_passed = theirs.get(key, {}).get("outcome") == "passed" or not theirs
        bug = r["outcome"] == "failed" and not r.get("lacks") and mxnet_passed
        if bug and key not in expected:
            bugs.append(key)
        if not bug and key in expected and r["outcome"] == "passed":
            stale.append(key)
    for name, results in (("libmxref", ours), ("MXNet 1.9.1", theirs)):
        for key, r in sorted(results.items()):
            if r.get("reruns"):
                print("%s %s::%s: %s, tried again %d %s" % (
                    name, key[0], key[1], r["outcome"], r["reruns"],
                    "time" if r["reruns"] == 1 else "times"))
    for key in sorted(expected):
        if key in ours and ours[key]["outcome"] == "failed" and not ours[key].get("lacks"):
            print("expected failure: %s::%s (%s)" % (key[0], key[1], expected[key]))
    for key in stale:
        print("expected to fail but passed: %s::%s" % key)
    for key in bugs:
        print("UNEXPECTED FAILURE (passes on MXNet): %s::%s" % key)
    return 1 if bugs else 0


if __name__ == "__main__":
    sys.exit(main())
