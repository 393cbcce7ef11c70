#!/usr/bin/env python3
"""match.py SNAPSHOT.pickle PROFILER_CATEGORIES.json [--device N] [--tolerance-us US] [--out MATCHES.json] [-v]

Pairs the allocations PyTorch's memory profiler saw (profiler_oracle.py's profiler_categories.json) one to one
with the allocations of the caching allocator's trace ring (SNAPSHOT's device_traces[N]: an "alloc" entry, then the
"free_requested" and "free_completed" entries of the same addr), and prints how many matched and, for those that
did not, why. Exit status 0 when every profiler allocation with an allocation time matched, 1 otherwise.

A pair must have the same device address; the ring's alloc entry holds the size the caller asked for, the profiler
the block's size, so the request rounded up to 512 bytes (at least 512) must not exceed the profiler's size; the
profiler's alloc time minus OFFSET must lie within TOLERANCE of the ring's time_us, where OFFSET is the median
difference over all same-address nearest pairs (the two recorders convert the same TSC with separate converters,
and the allocator reports to the profiler just after its trace entry). Candidates are taken nearest first, each
ring allocation at most once. Frees are checked after the pairing: the profiler's free event against the ring's
free_requested (the profiler hears of a free when it is requested; free_completed may come later, after
record_stream's events).

--out writes the pairs: for each ring alloc entry (its index in device_traces[N]) the profiler's category, the
ground truth a categorizer of the snapshot is to agree with.
"""
import argparse
import collections
import json
import pickle
import statistics
import sys


def rounded(size):
    return max(512, (size + 511) // 512 * 512)


def ring_allocations(trace):
    """Each alloc entry of the trace ring with the free_requested / free_completed that followed it at its addr."""
    allocs, open_at = [], {}
    for i, e in enumerate(trace):
        act = e.get("action")
        if act == "alloc":
            rec = {"index": i, "addr": e["addr"], "size": e["size"], "alloc_us": e["time_us"], "free_req_us": None,
                   "free_done_us": None, "stream": e.get("stream")}
            open_at[e["addr"]] = rec
            allocs.append(rec)
        elif act == "free_requested":
            rec = open_at.get(e["addr"])
            if rec is not None and rec["free_req_us"] is None:
                rec["free_req_us"] = e["time_us"]
        elif act == "free_completed":
            rec = open_at.pop(e["addr"], None)
            if rec is not None:
                rec["free_done_us"] = e["time_us"]
    return allocs


def live_blocks(snapshot, device):
    """addr -> (size, state) of every block of SNAPSHOT's segments on DEVICE."""
    blocks = {}
    for seg in snapshot.get("segments", []):
        if seg.get("device") != device:
            continue
        addr = seg["address"]
        for b in seg["blocks"]:
            blocks[addr] = (b["size"], b["state"])
            addr += b["size"]
    return blocks


def stats(values):
    if not values:
        return "none"
    return "min %.1f median %.1f max %.1f (n=%d)" % (min(values), statistics.median(values), max(values),
                                                      len(values))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("snapshot")
    ap.add_argument("categories")
    ap.add_argument("--device", type=int, default=0)
    # the allocator writes its trace entry, then reports to the profiler: on a loaded machine a thread can be
    # preempted between the two for milliseconds (1.1 ms seen beside a parallel build). Pairs are taken nearest
    # first, so the wide bound only decides for what the close pairs left.
    ap.add_argument("--tolerance-us", type=float, default=5000.0)
    ap.add_argument("--out")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every unmatched allocation")
    args = ap.parse_args()

    with open(args.snapshot, "rb") as f:
        snapshot = pickle.load(f)
    with open(args.categories) as f:
        doc = json.load(f)
    traces = snapshot.get("device_traces") or []
    trace = traces[args.device] if args.device < len(traces) else []
    ring = ring_allocations(trace)
    profs = [a for a in doc["allocations"] if a.get("device") == args.device]
    timed = [a for a in profs if a["alloc_us"] is not None]
    by_addr = collections.defaultdict(list)
    for r in ring:
        by_addr[r["addr"]].append(r)

    # The clocks' offset: median of (profiler - ring) over each profiler allocation's nearest same-address entry.
    nearest = []
    for a in timed:
        cands = by_addr.get(a["address"], [])
        if cands:
            nearest.append(min((a["alloc_us"] - r["alloc_us"] for r in cands), key=abs))
    offset = statistics.median(nearest) if nearest else 0.0

    pairs = []
    for pi, a in enumerate(timed):
        for r in by_addr.get(a["address"], []):
            dt = a["alloc_us"] - offset - r["alloc_us"]
            if abs(dt) <= args.tolerance_us and rounded(r["size"]) <= a["size"]:
                pairs.append((abs(dt), pi, r["index"]))
    pairs.sort()
    prof_to_ring, ring_taken = {}, {}
    for _, pi, ri in pairs:
        if pi not in prof_to_ring and ri not in ring_taken:
            prof_to_ring[pi] = ri
            ring_taken[ri] = pi
    ring_by_index = {r["index"]: r for r in ring}

    # Why the rest did not match.
    reasons = collections.Counter()
    examples = collections.defaultdict(list)

    def why(kind, text):
        reasons[kind] += 1
        examples[kind].append(text)

    for pi, a in enumerate(timed):
        if pi in prof_to_ring:
            continue
        cands = by_addr.get(a["address"], [])
        desc = "0x%x %d B at %.1f us (%s)" % (a["address"], a["size"], a["alloc_us"], a["category"])
        if not cands:
            why("profiler: no ring alloc at its address", desc)
            continue
        near = min(cands, key=lambda r: abs(a["alloc_us"] - offset - r["alloc_us"]))
        dt = a["alloc_us"] - offset - near["alloc_us"]
        if abs(dt) > args.tolerance_us:
            why("profiler: nearest ring alloc at its address too far in time", "%s: %+.1f us" % (desc, dt))
        elif rounded(near["size"]) > a["size"]:
            why("profiler: ring's request larger than the profiler's block", "%s: ring asked %d" % (desc, near["size"]))
        else:
            why("profiler: its ring alloc went to another profiler allocation", desc)
    untimed = [a for a in profs if a["alloc_us"] is None]
    blocks = live_blocks(snapshot, args.device)
    for a in untimed:
        desc = "0x%x %s B (%s, %s)" % (a["address"], a["size"], a["source"], a["category"])
        b = blocks.get(a["address"])
        if a["source"] == "preexisting":
            why("profiler preexisting tensor (no event): " + ("a block of the snapshot starts there" if b else
                "no block of the snapshot starts there"), desc)
        else:
            why("profiler free_only (allocated before the profiler)", desc)

    first = doc.get("clock", {}).get("profiler_first_event_us")
    last = doc.get("clock", {}).get("profiler_last_event_us")
    ring_unmatched = collections.Counter()
    for r in ring:
        if r["index"] in ring_taken:
            continue
        t = r["alloc_us"] + offset
        if first is not None and t < first - args.tolerance_us:
            ring_unmatched["ring: allocated before the profiler started"] += 1
        elif last is not None and t > last + args.tolerance_us:
            ring_unmatched["ring: allocated after the profiler stopped"] += 1
        else:
            ring_unmatched["ring: inside the profiler's window, no profiler allocation"] += 1
            examples["ring: inside the profiler's window, no profiler allocation"].append(
                "0x%x %d B at %d us (entry %d)" % (r["addr"], r["size"], r["alloc_us"], r["index"]))

    # Checks on the matched pairs.
    alloc_dt, free_dt, done_dt = [], [], []
    free_mismatch, size_exact, by_cat = 0, 0, collections.Counter()
    matches = []
    for pi, ri in sorted(prof_to_ring.items(), key=lambda x: x[1]):
        a, r = timed[pi], ring_by_index[ri]
        alloc_dt.append(a["alloc_us"] - r["alloc_us"])
        size_exact += rounded(r["size"]) == a["size"]
        by_cat[a["category"]] += 1
        if (a["free_us"] is None) != (r["free_req_us"] is None):
            free_mismatch += 1
            examples["matched, but only one of them freed"].append(
                "0x%x: profiler free %s, ring free_requested %s" % (a["address"], a["free_us"], r["free_req_us"]))
        elif a["free_us"] is not None:
            free_dt.append(a["free_us"] - r["free_req_us"])
            if r["free_done_us"] is not None:
                done_dt.append(a["free_us"] - r["free_done_us"])
        matches.append({"trace_index": ri, "addr": r["addr"], "requested": r["size"], "time_us": r["alloc_us"],
                        "block_size": a["size"], "category": a["category"], "categories": a.get("categories"),
                        "category_per_storage": a.get("category_per_storage", a["category"]),
                        "parameter_source": a.get("parameter_source"),
                        "tensor_id": a.get("tensor_id"), "alive_at_end": r["free_req_us"] is None,
                        "free_us": r["free_req_us"]})

    print("trace ring (device %d): %d entries, %d alloc" % (args.device, len(trace), len(ring)))
    print("profiler: %d CUDA allocations on device %d (%d with an allocation event, %d without)" %
          (len(profs), args.device, len(timed), len(untimed)))
    print("clock offset (profiler alloc_us - ring time_us), median of nearest same-address pairs: %+.1f us" % offset)
    print("matched one to one: %d of %d profiler allocations, %d of %d ring allocs" %
          (len(prof_to_ring), len(timed), len(ring_taken), len(ring)))
    print("  alloc time difference (us): %s" % stats(alloc_dt))
    print("  free time difference vs free_requested (us): %s" % stats(free_dt))
    print("  free time difference vs free_completed (us): %s" % stats(done_dt))
    print("  profiler size == request rounded to 512: %d of %d (else the block kept an unsplit remainder)" %
          (size_exact, len(prof_to_ring)))
    print("  freed in one record only: %d" % free_mismatch)
    print("  by category: " + ", ".join("%s %d" % (k, v) for k, v in sorted(by_cat.items(), key=lambda x: str(x[0]))))
    unmatched = len(timed) - len(prof_to_ring)
    print("unmatched profiler allocations: %d (+%d without an allocation event)" % (unmatched, len(untimed)))
    for kind, n in sorted(reasons.items()):
        print("  %5d  %s" % (n, kind))
        for text in examples[kind][:None if args.verbose else 3]:
            print("           " + text)
    print("unmatched ring allocs: %d" % sum(ring_unmatched.values()))
    for kind, n in sorted(ring_unmatched.items()):
        print("  %5d  %s" % (n, kind))
        for text in examples.get(kind, [])[:None if args.verbose else 3]:
            print("           " + text)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"offset_us": offset, "matches": matches}, f, indent=1)
    return 0 if unmatched == 0 and free_mismatch == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
