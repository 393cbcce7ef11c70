#!/usr/bin/env python3
"""check_segsum.py MEMPROF MEMORY_VIZ DIR NAME - `memprof categories --segsum` on DIR/NAME.pickle
against the real `_memory_viz.py stats` (MEMORY_VIZ) and against letters computed here:
- every line but the page maps and the legend is _memory_viz's own, in its order;
- a page _memory_viz shows free (' ') is '.' in ours, and no other page is;
- each other page shows the category (the generator's expectation, both schemes) with the most
  bytes of allocated (requested) memory in the page, ties to the category met first in the
  segment's block order (CATEGORY-RULES.md).
Prints what differs; exits 1 if anything does."""
import json
import pickle
import subprocess
import sys
from collections import defaultdict

PAGE = 20 << 20
LETTERS = {"PARAMETER": "P", "OPTIMIZER_STATE": "O", "INPUT": "I", "TEMPORARY": "T", "ACTIVATION": "A",
           "GRADIENT": "G", "AUTOGRAD_DETAIL": "D", "UNKNOWN": "U", "Parameter": "P", "Buffer": "B",
           "Gradient": "G", "Activation": "A", "Temp": "T", "Optstate": "O", "Unknown": "U"}


def expected_maps(snap, category_of):
    """The page maps of the segments _memory_viz prints, in its order."""
    def allocated(seg):
        return sum(b["requested_size"] for b in seg["blocks"] if b["state"] == "active_allocated")
    maps = []
    for seg in sorted(snap["segments"], key=lambda s: (s["total_size"], allocated(s))):
        npages = (seg["total_size"] - 1) // PAGE + 1
        cat_bytes = [defaultdict(int) for _ in range(npages)]
        met = [[] for _ in range(npages)]
        offset = 0
        for b in seg["blocks"]:
            if b["state"] == "active_allocated":
                start, end = offset, offset + b["requested_size"]
                letter = LETTERS[category_of(b)]
                for j in range(start // PAGE, (end - 1) // PAGE + 1):
                    cat_bytes[j][letter] += min(end, (j + 1) * PAGE) - max(start, j * PAGE)
                    if letter not in met[j]:
                        met[j].append(letter)
            offset += b["size"]
        if seg["total_size"] >= PAGE:
            maps.append("".join(max(met[j], key=lambda c: (cat_bytes[j][c], -met[j].index(c))) if met[j] else "."
                                for j in range(npages)))
    return maps


def split(text):
    """(lines before the legend with each page map cut out, the page maps)."""
    head = text.split("\nLegend")[0].splitlines()
    maps = [line[1:line.index("] ")] for line in head if line.startswith("[")]
    rest = [line[line.index("] "):] if line.startswith("[") else line for line in head]
    return rest, maps


def main():
    memprof, viz, d, name = sys.argv[1:5]
    snap = pickle.load(open(f"{d}/{name}.pickle", "rb"))
    exp = json.load(open(f"{d}/{name}.expect.json"))
    target = [f"{d}/{name}.pickle"] + exp["args"]
    oracle = subprocess.run([sys.executable, viz, "stats", target[0]], capture_output=True, text=True,
                            check=True).stdout
    o_lines, o_maps = split(oracle)
    bad = []
    for scheme, table in (("profiler", lambda b: exp["blocks"][str(b["address"])][0]),
                          ("tracker", lambda b: exp["tracker"][str(b["address"])])):
        out = subprocess.run([memprof, "categories", "--segsum", "--scheme", scheme] + target, capture_output=True,
                             text=True, check=True).stdout
        lines, maps = split(out)
        if lines != o_lines:
            bad.append(f"{scheme}: lines differ from _memory_viz's:\n  {lines}\n  {o_lines}")
        for i, (ours, theirs) in enumerate(zip(maps, o_maps)):
            if len(ours) != len(theirs) or any((a == ".") != (b == " ") for a, b in zip(ours, theirs)):
                bad.append(f"{scheme}: segment line {i}: free pages [{ours}] vs _memory_viz [{theirs}]")
        want = expected_maps(snap, table)
        if maps != want:
            bad.append(f"{scheme}: letters\n  got  {maps}\n  want {want}")
        legend = out.split("\nLegend")[1].splitlines()[0] if "\nLegend" in out else ""
        if ". free" not in legend or (scheme == "tracker") != ("B Buffer" in legend):
            bad.append(f"{scheme}: legend line '{legend}'")
    for line in bad:
        print(line)
    print(f"{name} segsum: {len(o_maps)} segments drawn, {len(bad)} differences")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
