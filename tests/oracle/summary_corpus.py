#!/usr/bin/env python3
"""summary_corpus.py - a seeded corpus of memory_stats() dicts for the memory_summary differential.

summary_corpus.py --seed S --count N --out FILE

FILE: a JSON list of cases {"device": int, "abbreviated": bool, "stats": {key: int}} in
memprof's JSON (ints beyond +-2**53 as {"__int__": "..."}). Every case comes twice, once per
`abbreviated`. Values mix 0, small, huge (to int64's ends), negative, and the edges of the
unit logic: 768 KiB * 1024**k +- a little (including values just below 2**53 and beyond, where
PyTorch's int/float division rounds) and 750000 * 1000**k +- a little. Some cases lose keys
(PyTorch raises KeyError), some carry keys memory_stats() never has ("_", "device", junk),
one is {} (memory_stats() before CUDA is initialised).
"""
import argparse
import json
import random
import sys

from summary_oracle import tag

POOLED = ["allocation", "segment", "active", "inactive_split", "allocated_bytes", "reserved_bytes",
          "active_bytes", "inactive_split_bytes", "requested_bytes"]
POOLS = ["all", "small_pool", "large_pool"]
FIELDS = ["current", "peak", "allocated", "freed"]
SCALARS = ["num_alloc_retries", "num_ooms", "max_split_size", "num_sync_all_streams",
           "num_device_alloc", "num_device_free"]
SINGLE = ["oversize_allocations", "oversize_segments"]
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def all_keys():
    keys = [f"{m}.{p}.{f}" for m in POOLED for p in POOLS for f in FIELDS]
    keys += SCALARS + [f"{m}.{f}" for m in SINGLE for f in FIELDS]
    return sorted(keys, key=lambda k: k.encode())


def edge_values():
    v = [0, 1, -1, I64_MIN, I64_MAX, I64_MAX - 1, I64_MIN + 1, 2**53, 2**53 + 1, 2**53 - 1,
         -(2**53) - 1]
    for k in range(6):
        t = 786432 * 1024**k
        for d in (-2**12, -2**11 - 1, -2**10, -3, -1, 0, 1, 3, 2**10):
            v.append(t + d)
    for k in range(4):
        t = 750000 * 1000**k
        for d in (-1001, -1000, -999, -1, 0, 1, 999, 1000):
            v.append(t + d)
    # just below the thresholds where int -> float rounding decides (beyond 2**53)
    for k in (3, 4):
        t = 786432 * 1024**k
        for d in (1, 2**(k * 10 - 34) if k * 10 > 34 else 1, 2**6, 2**7, 2**8, 2**9):
            v.append(t - d)
    return [x for x in v if I64_MIN <= x <= I64_MAX]


EDGES = edge_values()


def value(rng, style):
    r = rng.random()
    if style == "edge" or r < 0.25:
        return rng.choice(EDGES)
    if r < 0.35:
        return 0
    if r < 0.45:
        return -rng.randrange(1, 2**rng.choice((4, 20, 40, 63)))
    bits = {"small": 20, "mid": 40, "big": 63}.get(style) or rng.choice((10, 20, 30, 40, 50, 60, 63))
    return rng.randrange(0, 2**bits)


def realistic(rng, stats):
    """all = small + large, current <= peak <= allocated, freed = allocated - current."""
    for m in POOLED:
        scale = rng.choice((10, 20, 30, 40, 50))
        tot = {}
        for p in ("small_pool", "large_pool"):
            alloc = rng.randrange(0, 2**scale)
            cur = rng.randrange(0, alloc + 1)
            peak = rng.randrange(cur, alloc + 1)
            tot[p] = (cur, peak, alloc, alloc - cur)
        for p in ("small_pool", "large_pool"):
            for f, x in zip(FIELDS, tot[p]):
                stats[f"{m}.{p}.{f}"] = x
        for i, f in enumerate(FIELDS):
            # peak of all is not the sum of peaks, but at least their max
            x = tot["small_pool"][i] + tot["large_pool"][i]
            if f == "peak":
                x = max(tot["small_pool"][i], tot["large_pool"][i],
                        stats[f"{m}.all.current"] if f"{m}.all.current" in stats else 0)
            stats[f"{m}.all.{f}"] = x
    for k in SCALARS:
        stats[k] = rng.randrange(0, 50)
    for m in SINGLE:
        for f in FIELDS:
            stats[f"{m}.{f}"] = rng.randrange(0, 2000000)


def make_case(rng, keys, i):
    stats = {}
    kind = rng.random()
    style = rng.choice(("edge", "small", "mid", "big", "mixed"))
    if kind < 0.2:
        realistic(rng, stats)
    else:
        for k in keys:
            stats[k] = value(rng, style)
    stats = {k: stats[k] for k in sorted(stats, key=lambda k: k.encode())}
    extra = rng.random()
    if extra < 0.05:
        stats["_"] = value(rng, "small")
    elif extra < 0.10:
        stats["device"] = value(rng, rng.choice(("small", "edge")))
    elif extra < 0.15:
        stats["junk.key.current"] = value(rng, "big")
    drop = rng.random()
    if drop < 0.06:
        for _ in range(rng.choice((1, 1, 2, 5))):
            stats.pop(rng.choice(list(stats)), None)
    elif drop < 0.09:
        stats.pop(rng.choice(["num_ooms", "num_alloc_retries"]), None)
    elif drop < 0.12:
        # only the pools abbreviated=True never reads
        for k in [k for k in stats if ".large_pool." in k or ".small_pool." in k]:
            if rng.random() < 0.3:
                del stats[k]
    device = rng.choice((0, 0, 1, 2, 7, 15, rng.randrange(0, 2**31), -1))
    return device, stats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    keys = all_keys()
    cases = [(0, {}), (3, {k: 0 for k in keys})]
    cases.append((0, {k: 786432 if "bytes" in k else 750000 for k in keys}))
    cases.append((0, {k: 786431 if "bytes" in k else 749999 for k in keys}))
    while len(cases) < a.count:
        cases.append(make_case(rng, keys, len(cases)))
    out = []
    for device, stats in cases:
        for abbr in (False, True):
            out.append({"device": device, "abbreviated": abbr, "stats": stats})
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(tag(out), f)
    print(f"summary_corpus: {len(out)} cases (seed {a.seed})", file=sys.stderr)


if __name__ == "__main__":
    main()
