#!/usr/bin/env python3
"""compare_check.py TRUTH_A TRUTH_B OUTPUT - whether `memprof compare A B` (OUTPUT) names exactly the segments and
blocks that changed between the allocator's own snapshots TRUTH_A and TRUTH_B.

Segments are _memory_viz compare's: (address, total_size) only in A / only in B. Blocks: an active block (state
active_*) by (address, size) only in B was allocated (+), only in A freed (-). Prints what differs; exit 0 when
nothing does."""
import json
import re
import sys


def load(path):
    return json.load(open(path))


def segs(snap):
    return {(s["address"], s["total_size"]) for s in snap["segments"]}


def active(snap):
    return {(b["address"], b["size"]) for s in snap["segments"] for b in s["blocks"] if b["state"].startswith("active")}


def main():
    a, b, out = load(sys.argv[1]), load(sys.argv[2]), open(sys.argv[3]).read()
    problems = []
    for name, want in (("only_before", segs(a) - segs(b)), ("only_after", segs(b) - segs(a))):
        m = re.search(r"^%s = \[(.*)\]$" % name, out, re.M)
        got = sorted(int(x) for x in m.group(1).split(",") if x.strip()) if m else None
        if got != sorted(addr for addr, _ in want):
            problems.append("%s: printed %s, the truths say %s" % (name, got, sorted(x for x, _ in want)))
    printed = {"+": set(), "-": set()}
    for sign, addr in re.findall(r"^([+-]) (0x[0-9a-f]+) ", out, re.M):
        printed[sign].add(int(addr, 16))
    for sign, want in (("+", active(b) - active(a)), ("-", active(a) - active(b))):
        if printed[sign] != {addr for addr, _ in want}:
            problems.append("blocks %s: printed %s, the truths say %s" % (
                sign, sorted(hex(x) for x in printed[sign]), sorted(hex(x) for x, _ in want)))
    for p in problems:
        print(p)
    n = len(segs(a) ^ segs(b)), len(active(a) ^ active(b))
    if not problems:
        print("%d segments and %d blocks changed, all named" % n)
    return 1 if problems else 0


sys.exit(main())
