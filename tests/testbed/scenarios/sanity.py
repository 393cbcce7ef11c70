#!/usr/bin/env python3
"""sanity.py TRUTH.json... - internal consistency of scenario ground truth written by driver.cpp.

Checks that every block lies inside its segment, block sizes add up to the segment, the segment's
allocated/active/requested sizes are what PyTorch computes from its blocks, segments are sorted and disjoint,
device_stats agree with the blocks, and the state is what the scenario meant to produce (pending_free has
active_pending_free blocks, an OOM message names the request, ...). Prints each failure, then
"N passed, M failed"; exit status 1 if any failed.
"""
import json
import sys

STATES = {"active_allocated", "active_pending_free", "inactive"}
ACTIONS = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "segment_map",
           "segment_unmap", "snapshot", "oom"}
SEGMENT_KEYS = ["device", "address", "total_size", "allocated_size", "active_size", "requested_size", "stream",
                "segment_type", "segment_pool_id", "is_expandable", "frames", "blocks"]
BLOCK_KEYS = ["address", "size", "requested_size", "state", "frames"]
MiB = 1 << 20


class Checker:
    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {self.name}: {what}")
        return ok


def as_int(v):
    if isinstance(v, dict) and "__int__" in v:
        return int(v["__int__"])
    return v


def format_size(size):
    """c10::CachingDeviceAllocator::format_size (the sizes in OutOfMemoryError messages)."""
    if size <= 1024:
        return f"{size} bytes"
    if size <= 1048576:
        return f"{size / 1024.0:.2f} KiB"
    if size <= 1073741824:
        return f"{size / 1048576.0:.2f} MiB"
    return f"{size / 1073741824.0:.2f} GiB"


def check_file(path):
    c = Checker(path)
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        c.check(False, f"cannot read: {e}")
        return c
    for k in ("segments", "device_traces", "allocator_settings", "device_stats", "scenario"):
        c.check(k in d, f"top-level key {k!r}")
    scenario = d.get("scenario", "?")
    c.name = f"{path} [{scenario}]"
    segs = d.get("segments", [])
    stats = d.get("device_stats", [])
    ndev = len(stats)
    c.check(ndev >= 1, "device_stats has one entry per device")
    c.check(len(d.get("device_traces", [])) == ndev, "device_traces has one list per device")

    per_dev = [dict(alloc=0, reserved=0, active=0, nalloc=0, nactive=0, nseg=0, small_alloc=0, large_alloc=0,
                    small_res=0, large_res=0, inactive_split=0, n_inactive_split=0, expandable=False)
               for _ in range(ndev)]
    prev = None
    for i, s in enumerate(segs):
        where = f"segment {i}"
        if not c.check(list(s.keys()) == SEGMENT_KEYS or
                       list(s.keys()) == SEGMENT_KEYS[:10] + ["blocks", "frames"], f"{where}: keys {list(s)}"):
            continue
        addr, total = as_int(s["address"]), as_int(s["total_size"])
        dev = s["device"]
        c.check(0 <= dev < ndev, f"{where}: device {dev} in range")
        c.check(s["segment_type"] in ("small", "large"), f"{where}: segment_type")
        c.check(isinstance(s["segment_pool_id"], list) and len(s["segment_pool_id"]) == 2,
                f"{where}: segment_pool_id is a pair")
        c.check(bool(s["frames"]) == (list(s.keys())[-1] == "frames"), f"{where}: frames placed as PyTorch does")
        if prev is not None:
            pdev, paddr, ptotal = prev
            c.check((dev, addr) > (pdev, paddr), f"{where}: sorted by device, then address")
            if dev == pdev:
                c.check(paddr + ptotal <= addr, f"{where}: does not overlap the previous segment")
        prev = (dev, addr, total)
        blocks = s["blocks"]
        if not c.check(len(blocks) > 0, f"{where}: has blocks"):
            continue
        pos, alloc, active, req = addr, 0, 0, 0
        inside = True
        for j, b in enumerate(blocks):
            if list(b.keys()) != BLOCK_KEYS:
                c.check(False, f"{where} block {j}: keys {list(b)}")
                continue
            bsize = as_int(b["size"])
            inside &= as_int(b["address"]) == pos and bsize > 0 and pos + bsize <= addr + total
            pos += bsize
            st = b["state"]
            c.check(st in STATES, f"{where} block {j}: state {st!r}")
            if st == "active_allocated":
                alloc += bsize
            if st != "inactive":
                active += bsize
                req += as_int(b["requested_size"])
                c.check(as_int(b["requested_size"]) <= bsize, f"{where} block {j}: requested <= size")
        c.check(inside, f"{where}: blocks contiguous from the segment start and inside it")
        c.check(pos - addr == total, f"{where}: block sizes add up to total_size ({pos - addr} vs {total})")
        c.check(alloc == as_int(s["allocated_size"]), f"{where}: allocated_size = sum of allocated blocks")
        c.check(active == as_int(s["active_size"]), f"{where}: active_size = sum of active blocks")
        c.check(req == as_int(s["requested_size"]), f"{where}: requested_size = sum of active requested")
        if 0 <= dev < ndev:
            a = per_dev[dev]
            a["alloc"] += alloc
            a["reserved"] += total
            a["active"] += active
            a["nalloc"] += sum(b["state"] == "active_allocated" for b in blocks)
            a["nactive"] += sum(b["state"] != "inactive" for b in blocks)
            a["nseg"] += 1
            a[s["segment_type"] + "_alloc"] += alloc
            a[s["segment_type"] + "_res"] += total
            a["expandable"] |= s["is_expandable"]
            if len(blocks) > 1 and not s["is_expandable"]:
                a["inactive_split"] += sum(as_int(b["size"]) for b in blocks if b["state"] == "inactive")
                a["n_inactive_split"] += sum(b["state"] == "inactive" for b in blocks)

    for dev, st in enumerate(stats):
        a = per_dev[dev]
        w = f"device_stats[{dev}]"
        eq = lambda key, want: c.check(st.get(key) == want, f"{w}: {key} = {st.get(key)}, blocks say {want}")
        eq("allocated_bytes.all.current", a["alloc"])
        eq("allocated_bytes.small_pool.current", a["small_alloc"])
        eq("allocated_bytes.large_pool.current", a["large_alloc"])
        eq("reserved_bytes.all.current", a["reserved"])
        eq("reserved_bytes.small_pool.current", a["small_res"])
        eq("reserved_bytes.large_pool.current", a["large_res"])
        eq("active_bytes.all.current", a["active"])
        eq("allocation.all.current", a["nalloc"])
        eq("active.all.current", a["nactive"])
        if not a["expandable"]:
            eq("segment.all.current", a["nseg"])
            eq("inactive_split_bytes.all.current", a["inactive_split"])
            eq("inactive_split.all.current", a["n_inactive_split"])
        c.check(list(st) == sorted(st), f"{w}: keys sorted as memory_stats() sorts them")

    for dev, trace in enumerate(d.get("device_traces", [])):
        last = 0
        for k, e in enumerate(trace):
            w = f"device_traces[{dev}][{k}]"
            c.check(e.get("action") in ACTIONS, f"{w}: action {e.get('action')!r}")
            c.check(("device_free" if e.get("action") == "oom" else "addr") in e, f"{w}: addr/device_free")
            t = e.get("time_us", -1)
            c.check(t >= last, f"{w}: time_us not decreasing")
            last = t

    scenario_checks(c, scenario, d, segs, stats)
    return c


def all_blocks(segs):
    for s in segs:
        yield from s["blocks"]


def check_oom_message(c, d):
    msg, req = d.get("oom_message", ""), d.get("oom_request_bytes", 0)
    c.check("CUDA out of memory" in msg, "oom_message is c10's OutOfMemoryError text")
    rounded = (req + 2 * MiB - 1) // (2 * MiB) * (2 * MiB)
    c.check(f"Tried to allocate {format_size(req)}" in msg or f"Tried to allocate {format_size(rounded)}" in msg,
            f"oom_message names the request ({format_size(req)})")
    c.check(d["device_stats"][0].get("num_ooms", 0) >= 1, "num_ooms >= 1")


def scenario_checks(c, scenario, d, segs, stats):
    states = [b["state"] for b in all_blocks(segs)]
    notes = d.get("scenario_notes", {})
    traces = d.get("device_traces", [])
    if scenario == "training":
        names = {f["name"] for b in all_blocks(segs) for f in b["frames"]}
        c.check({"init_parameters", "forward", "backward", "optimizer_step"} <= names,
                f"blocks carry frames of the distinct call paths (have {sorted(names)})")
        c.check("inactive" in states and "active_allocated" in states, "some blocks freed, some live")
        c.check({s["segment_type"] for s in segs} == {"small", "large"}, "small and large segments")
        c.check(len({s["stream"] for s in segs}) >= 2, "segments on two streams")
        c.check(len(traces[0]) > 0, "a trace was recorded")
        c.check(len({b["size"] for b in all_blocks(segs) if b["state"] == "active_allocated"}) >= 10,
                "allocations of many distinct sizes")
    elif scenario == "fragmented":
        check_oom_message(c, d)
        holes = [b for b in all_blocks(segs) if b["state"] == "inactive"]
        c.check(len(holes) >= notes.get("holes", 1), f"at least {notes.get('holes')} holes ({len(holes)})")
        c.check(max(b["size"] for b in holes) < d.get("oom_request_bytes", 0), "no hole fits the failed request")
    elif scenario == "pending_free":
        n = states.count("active_pending_free")
        c.check(n == notes.get("pending_free_blocks", 1), f"active_pending_free blocks: {n}")
        c.check("active_allocated" in states, "plainly allocated blocks too")
    elif scenario == "oom":
        check_oom_message(c, d)
        c.check(stats[0].get("num_alloc_retries", 0) >= 1, "the OOM went through the retry path")
    elif scenario == "multi_device":
        c.check(len(stats) == 2 and len(traces) == 2, "two devices")
        c.check({s["device"] for s in segs} == {0, 1}, "segments on both devices")
    elif scenario == "private_pool":
        pools = {tuple(s["segment_pool_id"]) for s in segs}
        c.check({(0, 0), (1, 0), (0, 1)} <= pools, f"ordinary, graph (1,0) and MemPool (0,1) pools ({pools})")
    elif scenario == "expandable":
        c.check(any(s["is_expandable"] for s in segs), "expandable segments present")
        c.check(d["allocator_settings"].get("expandable_segments") is True, "allocator_settings say expandable")
    elif scenario == "history":
        ring = notes.get("ring_entries", 0)
        c.check(len(traces[0]) == ring, f"trace ring full ({len(traces[0])} of {ring} entries)")
        c.check(all(e.get("frames") for e in traces[0]), "every trace entry has frames from our recorder")
        c.check(any(f["name"] == "history_churn" for e in traces[0] for f in e.get("frames", [])),
                "trace frames name the churn loop")
        c.check(not any(f["name"] == "history_setup" for e in traces[0] for f in e.get("frames", [])),
                "the ring wrapped: the first allocations' entries were overwritten")
        c.check(any(f["name"] == "history_setup" for b in all_blocks(segs) for f in b["frames"]),
                "the first allocations' blocks keep their frames (RecordContext::ALL)")
        acts = {e["action"] for e in traces[0]}
        c.check({"alloc", "free_requested", "free_completed"} <= acts, f"trace actions {sorted(acts)}")
        c.check(all(e["time_us"] > 1_500_000_000_000_000 for e in traces[0]), "time_us are epoch microseconds")
    elif scenario == "huge":
        n = len(states)
        c.check(n >= 100_000, f"at least 100,000 blocks ({n})")
    else:
        c.check(False, f"unknown scenario {scenario!r}")


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    passed = failed = 0
    for path in argv[1:]:
        c = check_file(path)
        passed += c.passed
        failed += c.failed
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
