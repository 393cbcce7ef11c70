#!/usr/bin/env python3
"""partial_check.py TRUTH MP [--damaged ADDR]... [--any-damaged]

Checks that what memprof rebuilt from a damaged target (MP, its snapshot JSON) is consistent with the
truth (TRUTH, the allocator's own snapshot before the damage): memprof may leave things out, never invent
them. Every segment memprof gives must be a segment of the truth whose block list starts with memprof's
(address, size, requested_size, state) blocks; a segment not named by --damaged (all are, with
--any-damaged) must be the truth's exactly and must not be missing. Prints one line; exit 0 when
consistent, 1 when not, 2 on unreadable input.
"""
import json
import sys


def blocks(seg):
    return [(b["address"], b["size"], b.get("requested_size"), b["state"]) for b in seg.get("blocks", [])]


SEG_KEYS = ("total_size", "allocated_size", "active_size", "requested_size", "stream", "segment_type")


def main(argv):
    args, damaged, any_damaged = [], set(), False
    i = 1
    while i < len(argv):
        if argv[i] == "--damaged":
            damaged.add(int(argv[i + 1], 0))
            i += 2
        elif argv[i] == "--any-damaged":
            any_damaged = True
            i += 1
        else:
            args.append(argv[i])
            i += 1
    if len(args) != 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    try:
        truth, mp = (json.load(open(p)) for p in args)
    except (OSError, ValueError) as e:
        print(f"partial_check: {e}")
        return 2
    tsegs = {(s["device"], s["address"]): s for s in truth["segments"]}
    problems, equal, cut = [], 0, 0
    seen = set()
    for s in mp.get("segments", []):
        key = (s["device"], s["address"])
        seen.add(key)
        t = tsegs.get(key)
        if t is None:
            problems.append(f"segment {s['address']:#x} is not in the truth")
            continue
        mb, tb = blocks(s), blocks(t)
        exact = mb == tb and all(s.get(k) == t.get(k) for k in SEG_KEYS)
        if exact:
            equal += 1
        elif any_damaged or s["address"] in damaged:
            if tb[: len(mb)] != mb:
                problems.append(f"segment {s['address']:#x}: its blocks are not a prefix of the truth's")
            else:
                cut += 1
        else:
            problems.append(f"undamaged segment {s['address']:#x} differs from the truth")
    missing = [k for k in tsegs if k not in seen]
    for dev, addr in missing:
        if not any_damaged and addr not in damaged:
            problems.append(f"undamaged segment {addr:#x} is missing")
    summary = (f"{equal} of {len(tsegs)} segments equal to the truth, {cut} cut short, "
               f"{len(missing)} left out")
    if problems:
        print(f"inconsistent: {'; '.join(problems[:3])} ({summary})")
        return 1
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
