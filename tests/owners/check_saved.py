#!/usr/bin/env python3
"""check_saved.py OWNERS.json SAVED.json - `memprof snapshot save --owners` of a target against `memprof owners
--format json` of the same target: every block the owners give an owner carries that name under 'owner' in the
saved snapshot (and 'category' for the kinds that name one), and no other block carries either key. Prints a
count; exit 0 when all agree."""
import json
import sys

CATEGORY = {"parameter": "PARAMETER", "buffer": "BUFFER", "gradient": "GRADIENT",
            "optimizer_state": "OPTIMIZER_STATE", "activation": "ACTIVATION"}


def main():
    owners, saved = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
    want = {(b["device"], b["address"]): b for b in owners["blocks"] if b["owner"] is not None}
    bad, seen = [], 0
    for seg in saved["segments"]:
        for blk in seg["blocks"]:
            key = (seg["device"], blk["address"])
            o = want.get(key)
            if o is None:
                if "owner" in blk or "category" in blk:
                    bad.append(f"block {blk['address']:#x}: saved with owner {blk.get('owner')!r}, owners give none")
                continue
            seen += 1
            if blk.get("owner") != o["owner"] or blk.get("category") != CATEGORY.get(o["kind"]):
                bad.append(f"block {blk['address']:#x}: saved {blk.get('owner')!r}/{blk.get('category')!r}, "
                           f"owners {o['owner']!r}/{o['kind']}")
    if seen != len(want):
        bad.append(f"{len(want) - seen} owned blocks missing from the saved snapshot")
    for line in bad[:10]:
        print("differ: " + line)
    print(f"{seen} owned blocks saved with their owners" + ("" if not bad else f"; {len(bad)} differences"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
