#!/usr/bin/env python3
"""summary_compare.py - compare summary_driver (memprof's memory_summary) with PyTorch's, byte for byte.

summary_compare.py --driver PATH --corpus FILE --oracle NAME=MEMORY_PY... [--keep DIR]

Runs `summary_driver --batch FILE` once and every oracle on every case. A case passes when
the texts are equal, or when PyTorch raises KeyError(K) and memprof reports an error line
"memory_summary: ... 'K' ...". Also checks that the oracles agree with each other.
Prints failures (the first lines that differ) and "N passed, M failed"; exit 0 or 1.
"""
import argparse
import json
import os
import re
import subprocess
import sys

import summary_oracle


def parse_batch(data):
    """The driver's --batch output: {i: ("ok", text) or ("error", msg)}."""
    res, pos = {}, 0
    while pos < len(data):
        nl = data.index(b"\n", pos)
        head = data[pos:nl].decode()
        m = re.fullmatch(r"@@ (\d+) (ok|error) (.*)", head)
        if not m:
            raise ValueError(f"bad driver output at byte {pos}: {head[:80]!r}")
        i = int(m.group(1))
        pos = nl + 1
        if m.group(2) == "ok":
            n = int(m.group(3))
            res[i] = ("ok", data[pos:pos + n].decode())
            pos += n
        else:
            res[i] = ("error", m.group(3))
    return res


def first_diff(a, b):
    la, lb = a.splitlines(), b.splitlines()
    for j in range(max(len(la), len(lb))):
        x = la[j] if j < len(la) else "<none>"
        y = lb[j] if j < len(lb) else "<none>"
        if x != y:
            return f"line {j + 1}:\n    pytorch: {x!r}\n    memprof: {y!r}"
    return "texts differ only in their line ends"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--oracle", action="append", required=True, help="NAME=path/to/memory.py")
    ap.add_argument("--keep")
    a = ap.parse_args()

    with open(a.corpus, encoding="utf-8") as f:
        cases = summary_oracle.untag(json.load(f))
    p = subprocess.run([a.driver, "--batch", a.corpus], capture_output=True)
    if p.returncode != 0:
        print(f"summary_compare: driver exited {p.returncode}: {p.stderr.decode()[:500]}")
        print("0 passed, 1 failed")
        return 1
    got = parse_batch(p.stdout)
    oracles = []
    for spec in a.oracle:
        name, _, path = spec.partition("=")
        oracles.append((name, summary_oracle.load(path)))

    passed = failed = 0
    errors = 0
    shown = 0
    for i, c in enumerate(cases):
        results = {}
        for name, call in oracles:
            want = summary_oracle.run(call, c["stats"], c["device"], c["abbreviated"])
            results[name] = want
            mine = got.get(i, ("missing", "no output for this case"))
            if want[0] == "ok":
                ok = mine == want
            else:
                ok = mine[0] == "error" and mine[1].startswith("memory_summary: ") \
                    and f"'{want[1]}'" in mine[1]
            if ok:
                passed += 1
                errors += want[0] == "error"
                continue
            failed += 1
            if shown < 10:
                shown += 1
                detail = first_diff(want[1], mine[1]) if want[0] == mine[0] == "ok" else \
                    f"pytorch: {want[0]} {want[1]!r:.200}\n    memprof: {mine[0]} {mine[1]!r:.200}"
                print(f"FAIL case {i} ({name}, device {c['device']}, abbreviated "
                      f"{c['abbreviated']}): {detail}")
            if a.keep:
                os.makedirs(a.keep, exist_ok=True)
                with open(os.path.join(a.keep, f"summary_case{i}.json"), "w") as f:
                    json.dump(summary_oracle.tag(c), f)
        if len({repr(r) for r in results.values()}) > 1:
            failed += 1
            print(f"FAIL case {i}: the oracles disagree: {sorted(results)}")
    names = ", ".join(n for n, _ in oracles)
    print(f"summary_compare: {len(cases)} cases x {len(oracles)} oracles ({names}); "
          f"{errors} comparisons where PyTorch raises KeyError")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
