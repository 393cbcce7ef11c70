#!/usr/bin/env python3
"""check_corpus.py MEMPROF DIR NAME - run `memprof categories --format json --blocks` on
DIR/NAME.pickle in both schemes and compare every block's category and source, and every
total, with DIR/NAME.expect.json. Prints what differs; exits 1 if anything does."""
import json
import subprocess
import sys
from collections import defaultdict


def run(memprof, args):
    out = subprocess.run([memprof, "categories"] + args + ["--format", "json", "--blocks"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def check_scheme(got, want_of, label):
    bad = []
    sums = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    seen = set()
    for b in got["blocks"]:
        key = str(b["address"])
        seen.add(key)
        want = want_of(key)
        if want is None:
            bad.append(f"{label}: block {key} is not expected to be active")
        elif want != want_of.got(b):
            bad.append(f"{label}: block {key}: expected {want}, got {want_of.got(b)}")
        sums[b["device"]][b["category"]][0] += b["size"]
        sums[b["device"]][b["category"]][1] += 1
    for key in want_of.keys():
        if key not in seen:
            bad.append(f"{label}: block {key} missing")
    for dev in got["devices"]:
        active = [0, 0]
        for cat, c in dev["categories"].items():
            s = sums[dev["device"]].get(cat, [0, 0])
            if [c["bytes"], c["blocks"]] != s:
                bad.append(f"{label}: device {dev['device']} {cat}: {c} but its blocks sum to {s}")
            active = [active[0] + c["bytes"], active[1] + c["blocks"]]
        if active != [dev["active"]["bytes"], dev["active"]["blocks"]]:
            bad.append(f"{label}: device {dev['device']}: categories sum to {active}, active is {dev['active']}")
    return bad


class Want:
    def __init__(self, table, got):
        self.table, self.got = table, got

    def __call__(self, key):
        return self.table.get(key)

    def keys(self):
        return self.table.keys()


def main():
    memprof, d, name = sys.argv[1:4]
    exp = json.load(open(f"{d}/{name}.expect.json"))
    target = [f"{d}/{name}.pickle"] + exp["args"]
    bad = check_scheme(run(memprof, target), Want(exp["blocks"], lambda b: [b["category"], b["source"], b.get("rule")]),
                       name)
    bad += check_scheme(run(memprof, target + ["--scheme", "tracker"]), Want(exp["tracker"], lambda b: b["category"]),
                        name + " (tracker)")
    for line in bad:
        print(line)
    print(f"{name}: {len(exp['blocks'])} blocks, {len(bad)} differences")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
