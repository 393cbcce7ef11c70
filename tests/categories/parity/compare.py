"""compare.py - memprof's categories against PyTorch's memory profiler, allocation by allocation.

usage: compare.py MATCHES.json TIMELINE.raw.json BLOCKS.json [--json OUT] [--label NAME]

MATCHES.json   match.py --out: each ring alloc entry the profiler saw, with the profiler's category
TIMELINE.raw.json   `memprof timeline SNAPSHOT --format raw`: [[time_ns, action, bytes, category index], ...]
BLOCKS.json    `memprof categories SNAPSHOT --format json --blocks`: the end state, block by block

The timeline's CREATE events (action 2) are memprof's categories of the ring's allocs, in time order; an event is
paired with the ring entry of the same time (us) and requested size, in order. Bytes are the profiler's (the block
sizes its timeline charges). The profiler's None and memprof's UNKNOWN are the same answer: no category.

Prints: allocations agreeing / all, the share of bytes agreeing, the confusion table (profiler -> memprof) by count
and bytes, and the end state (the blocks alive at the end that the profiler saw allocated: agreeing / all).
"""
import collections
import json
import sys

# export_memory_timeline_raw's category indices (the profiler's plot order), None last
RAW_NAMES = ["PARAMETER", "OPTIMIZER_STATE", "INPUT", "TEMPORARY", "ACTIVATION", "GRADIENT", "AUTOGRAD_DETAIL", None]
CREATE = 2


def label(name):
    return None if name in (None, "UNKNOWN") else name


def compare(matches, raw, blocks):
    creates = collections.defaultdict(collections.deque)
    for t_ns, action, nbytes, cat in raw:
        if action == CREATE:
            creates[(t_ns // 1000, nbytes)].append(RAW_NAMES[cat] if 0 <= cat < len(RAW_NAMES) else "?")
    by_count, by_bytes = collections.Counter(), collections.Counter()
    agree = agree_bytes = total_bytes = unpaired = 0
    for m in matches:
        q = creates.get((m["time_us"], m["requested"]))
        mine = q.popleft() if q else "?"
        unpaired += mine == "?"
        theirs = label(m["category"])
        size = m.get("block_size") or m["requested"]
        by_count[(theirs, label(mine))] += 1
        by_bytes[(theirs, label(mine))] += size
        total_bytes += size
        if theirs == label(mine):
            agree += 1
            agree_bytes += size
    # the end state: blocks alive at the end, by address, against the profiler's allocations never freed
    alive = {m["addr"]: label(m["category"]) for m in matches if m.get("alive_at_end")}
    end_agree = end_total = 0
    end_conf = collections.Counter()
    for b in blocks:
        if b["address"] in alive:
            end_total += 1
            pair = (alive[b["address"]], label(b["category"]))
            end_conf[pair] += 1
            end_agree += pair[0] == pair[1]
    return {"allocations": len(matches), "agree": agree, "bytes": total_bytes, "agree_bytes": agree_bytes,
            "unpaired": unpaired,
            "confusion": [{"profiler": k[0], "memprof": k[1], "count": v, "bytes": by_bytes[k]}
                          for k, v in sorted(by_count.items(), key=lambda kv: -by_bytes[kv[0]])],
            "end_state": {"blocks": end_total, "agree": end_agree,
                          "confusion": [{"profiler": k[0], "memprof": k[1], "count": v}
                                        for k, v in sorted(end_conf.items(), key=lambda kv: -kv[1])]}}


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    out = argv[argv.index("--json") + 1] if "--json" in argv else None
    name = argv[argv.index("--label") + 1] if "--label" in argv else ""
    if out in args:
        args.remove(out)
    if name in args:
        args.remove(name)
    if len(args) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    with open(args[0]) as f:
        matches = json.load(f)["matches"]
    with open(args[1]) as f:
        raw = json.load(f)
    with open(args[2]) as f:
        blocks = json.load(f)["blocks"]
    r = compare(matches, raw, blocks)
    r["label"] = name
    print("%s: timeline %d/%d allocations agree (%.1f %% of %d bytes); end state %d/%d blocks%s"
          % (name or "parity", r["agree"], r["allocations"], 100.0 * r["agree_bytes"] / max(r["bytes"], 1),
             r["bytes"], r["end_state"]["agree"], r["end_state"]["blocks"],
             "; %d ring allocs without a memprof event" % r["unpaired"] if r["unpaired"] else ""))
    for c in r["confusion"]:
        if c["profiler"] != c["memprof"]:
            print("  %-16s -> %-16s %4d allocations %12d bytes" % (c["profiler"], c["memprof"], c["count"], c["bytes"]))
    if out:
        with open(out, "w") as f:
            json.dump(r, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
