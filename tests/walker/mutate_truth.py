#!/usr/bin/env python3
"""mutate_truth.py - make a copy of a test bed truth that compare_truth.py must (or must not) tell apart.

mutate_truth.py --list                 the kinds, one a line
mutate_truth.py TRUTH.json KIND OUT    write OUT and print "RC ARGS|PATH": the exit status
                                       compare_truth.py TRUTH OUT ARGS must give and a text its
                                       output must hold; exit 3 when KIND does not apply to TRUTH
"""
import copy
import json
import sys

SEG = ("device", "address", "total_size", "allocated_size", "active_size", "requested_size",
       "stream", "segment_type", "segment_pool_id", "is_expandable")
BLK = ("address", "size", "requested_size", "state")


class NotApplicable(Exception):
    pass


def bump(v):
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return v + 512
    if isinstance(v, str):
        return v + "_x"
    if isinstance(v, list):
        return [bump(v[0])] + v[1:]
    if isinstance(v, float):
        return v + 0.5
    raise NotApplicable(f"cannot bump {v!r}")


def last_seg_with_blocks(t, n=1):
    for i in range(len(t["segments"]) - 1, -1, -1):
        if len(t["segments"][i]["blocks"]) >= n:
            return i
    raise NotApplicable("no segment with enough blocks")


def trace_entry(t, pred=lambda e: True):
    for d, tr in enumerate(t["device_traces"]):
        for j in range(len(tr) - 1, -1, -1):
            if pred(tr[j]):
                return d, j
    raise NotApplicable("no trace entry")


def snapshot_entry(t, d, time_us):
    size = sum(s["active_size"] for s in t["segments"] if s["device"] == d)
    return {"action": "snapshot", "addr": 0, "size": size, "stream": 0, "time_us": time_us}


def ring_tail(t, n):
    """memprof's view of a process: n SNAPSHOT entries after each non-empty trace."""
    for d, tr in enumerate(t["device_traces"]):
        if tr:
            tr.extend(snapshot_entry(t, d, tr[-1]["time_us"] + 5) for _ in range(n))


def mutate(t, kind):
    """Change T in place; return (rc, extra args, text the output must hold)."""
    if kind.startswith("segment."):
        k = kind.split(".", 1)[1]
        i = len(t["segments"]) // 2
        t["segments"][i][k] = bump(t["segments"][i][k])
        return 1, "", f"segments[{i}].{k}"
    if kind == "segment_bool_as_int":
        t["segments"][0]["is_expandable"] = int(t["segments"][0]["is_expandable"])
        return 1, "", "segments[0].is_expandable"
    if kind == "segment_key_missing":
        was = t["segments"][0].pop("stream")
        return 1, "", f"segments[0].stream: truth {was!r}, memprof <missing>"
    if kind.startswith("block."):
        k = kind.split(".", 1)[1]
        i = last_seg_with_blocks(t)
        t["segments"][i]["blocks"][-1][k] = bump(t["segments"][i]["blocks"][-1][k])
        return 1, "", f"segments[{i}].blocks[{len(t['segments'][i]['blocks']) - 1}].{k}"
    if kind == "block_removed":
        i = last_seg_with_blocks(t)
        t["segments"][i]["blocks"].pop()
        return 1, "", f"len(segments[{i}].blocks)"
    if kind == "blocks_swapped":
        i = last_seg_with_blocks(t, 2)
        b = t["segments"][i]["blocks"]
        b[0], b[1] = b[1], b[0]
        return 1, "", f"segments[{i}].blocks[0].address"
    if kind == "segment_removed":
        t["segments"].pop()
        return 1, "", "len(segments)"
    if kind == "segments_swapped":
        if len(t["segments"]) < 2:
            raise NotApplicable("one segment")
        s = t["segments"]
        s[0], s[-1] = s[-1], s[0]
        return 1, "", "segments[0].address"
    if kind.startswith("trace."):
        k = kind.split(".", 1)[1]
        d, j = trace_entry(t, lambda e: e["action"] != "oom")
        t["device_traces"][d][j][k] = bump(t["device_traces"][d][j][k])
        return 1, "--ring-extra 0", f"device_traces[{d}][{j}].{k}"
    if kind == "trace_time_beyond_tolerance":
        d, j = trace_entry(t)
        t["device_traces"][d][j]["time_us"] += 1001
        return 1, "--ring-extra 0", f"device_traces[{d}][{j}].time_us"
    if kind == "trace_time_within_tolerance":
        trace_entry(t)
        for tr in t["device_traces"]:
            for n, e in enumerate(tr):
                e["time_us"] += (n % 3 - 1) * 1000
        return 0, "--ring-extra 0", "result: equal"
    if kind == "trace_time_custom_tolerance":
        d, j = trace_entry(t)
        t["device_traces"][d][j]["time_us"] -= 50
        return 1, "--ring-extra 0 --time-tolerance-us 49", f"device_traces[{d}][{j}].time_us"
    if kind == "trace_removed":
        d, j = trace_entry(t)
        del t["device_traces"][d][0]
        return 1, "--ring-extra 0", f"len(device_traces[{d}])"
    if kind == "add_oom":
        # an oom entry, as history records one (device_free instead of addr)
        d, _ = trace_entry(t)
        t["device_traces"][d].append({"action": "oom", "device_free": 4096, "size": 1 << 26,
                                      "stream": 0, "time_us": t["device_traces"][d][-1]["time_us"]})
        return 1, "--ring-extra 0", f"len(device_traces[{d}])"
    if kind == "oom_device_free":
        d, j = trace_entry(t, lambda e: e["action"] == "oom")
        t["device_traces"][d][j]["device_free"] += 1
        return 1, "--ring-extra 0", f"device_traces[{d}][{j}].device_free"
    if kind == "ring_tail_default":
        trace_entry(t)
        ring_tail(t, 1)
        return 0, "", "+ 1 snapshot"
    if kind == "ring_tail_two":
        trace_entry(t)
        ring_tail(t, 2)
        return 0, "--ring-extra 2", "+ 2 snapshot"
    if kind == "ring_tail_unexpected":
        trace_entry(t)
        ring_tail(t, 1)
        return 1, "--ring-extra 0", "len(device_traces[0])"
    if kind == "ring_tail_missing":
        trace_entry(t)
        return 1, "", "len(device_traces[0])"
    if kind == "ring_tail_too_many":
        trace_entry(t)
        ring_tail(t, 2)
        return 1, "", "len(device_traces[0])"
    if kind == "ring_tail_wrong_size":
        trace_entry(t)
        ring_tail(t, 1)
        t["device_traces"][0][-1]["size"] += 1
        return 1, "", f"device_traces[0][{len(t['device_traces'][0]) - 1}].size"
    if kind == "ring_tail_not_snapshot":
        trace_entry(t)
        ring_tail(t, 1)
        t["device_traces"][0][-1]["action"] = "alloc"
        return 1, "", f"device_traces[0][{len(t['device_traces'][0]) - 1}].action"
    if kind == "ring_full_wrapped":
        d, _ = trace_entry(t)
        tr = t["device_traces"][d]
        n = len(tr)
        ring_tail(t, 1)
        del tr[0]
        return 0, f"--ring-max {n}", "(-1 overwritten) + 1 snapshot"
    if kind == "ring_full_not_wrapped":
        d, _ = trace_entry(t)
        n = len(t["device_traces"][d])
        ring_tail(t, 1)
        return 1, f"--ring-max {n}", f"len(device_traces[{d}])"
    if kind in ("idle_device_snapshot", "idle_device_two_snapshots"):
        # history on, no events on this device: 0 or exactly N trailing snapshots accepted
        ds = [d for d, tr in enumerate(t["device_traces"]) if not tr]
        if not ds:
            raise NotApplicable("no device with an empty trace")
        n = 1 if kind == "idle_device_snapshot" else 2
        t["device_traces"][ds[-1]].extend(snapshot_entry(t, ds[-1], 1) for _ in range(n))
        if n == 1:
            return 0, "", f"device {ds[-1]}: 0 entries + 1 snapshot"
        return 1, "", f"len(device_traces[{ds[-1]}])"
    if kind == "stats_value":
        t["device_stats"][0]["allocated_bytes.all.current"] += 1
        return 1, "", "device_stats[0].allocated_bytes.all.current"
    if kind == "stats_key_missing":
        del t["device_stats"][0]["num_ooms"]
        return 1, "", "device_stats[0].num_ooms: truth"
    if kind == "stats_key_extra":
        t["device_stats"][0]["zzz_extra"] = 1
        return 1, "", "device_stats[0].zzz_extra: truth <missing>, memprof 1"
    if kind == "stats_device_missing":
        t["device_stats"].pop()
        return 1, "", "len(device_stats)"
    if kind == "stats_absent":
        del t["device_stats"]
        return 0, "--ring-extra 0", "not in memprof output (not compared)"
    if kind == "settings_value":
        t["allocator_settings"]["max_split_size"] = bump(t["allocator_settings"]["max_split_size"])
        return 1, "", "allocator_settings.max_split_size"
    if kind == "settings_bool_as_int":
        t["allocator_settings"]["expandable_segments"] = int(t["allocator_settings"]["expandable_segments"])
        return 1, "", "allocator_settings.expandable_segments"
    if kind == "settings_nested":
        t["allocator_settings"]["roundup_power2_divisions"]["64"] = 4
        return 1, "", "allocator_settings.roundup_power2_divisions.64"
    if kind == "settings_missing":
        del t["allocator_settings"]
        return 1, "", "allocator_settings: truth"
    if kind == "frames_changed":
        for s in t["segments"]:
            s["frames"] = []
            for b in s["blocks"]:
                b["frames"] = [{"name": "elsewhere", "filename": "x.py", "line": 1}]
        return 0, "--ring-extra 0", "result: equal"
    if kind == "tagged_json":
        # what memprof's writer could emit: tuples tagged, ints as __int__
        for s in t["segments"]:
            s["segment_pool_id"] = {"__tuple__": s["segment_pool_id"]}
            s["address"] = {"__int__": str(s["address"])}
        t["allocator_settings"] = {"__dict__": [[k, v] for k, v in t["allocator_settings"].items()]}
        return 0, "--ring-extra 0", "result: equal"
    if kind == "bad_segments":
        t["segments"] = {"not": "a list"}
        return 2, "", ""
    if kind == "bad_tag":
        t["segments"][0]["address"] = {"__int__": "12x"}
        return 2, "", ""
    raise SystemExit(f"mutate_truth: unknown kind {kind}")


KINDS = ([f"segment.{k}" for k in SEG] + ["segment_bool_as_int", "segment_key_missing"] +
         [f"block.{k}" for k in BLK] +
         ["block_removed", "blocks_swapped", "segment_removed", "segments_swapped"] +
         [f"trace.{k}" for k in ("action", "addr", "size", "stream")] +
         ["trace_time_beyond_tolerance", "trace_time_within_tolerance",
          "trace_time_custom_tolerance", "trace_removed", "add_oom", "oom_device_free",
          "ring_tail_default", "ring_tail_two", "ring_tail_unexpected", "ring_tail_missing",
          "ring_tail_too_many", "ring_tail_wrong_size", "ring_tail_not_snapshot",
          "ring_full_wrapped", "ring_full_not_wrapped", "idle_device_snapshot",
          "idle_device_two_snapshots",
          "stats_value", "stats_key_missing", "stats_key_extra", "stats_device_missing",
          "stats_absent", "settings_value", "settings_bool_as_int", "settings_nested",
          "settings_missing", "frames_changed", "tagged_json", "bad_segments", "bad_tag"])


def main():
    if sys.argv[1:] == ["--list"]:
        print("\n".join(KINDS))
        return 0
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        t = json.load(f)
    t = copy.deepcopy(t)
    try:
        rc, args, text = mutate(t, sys.argv[2])
    except NotApplicable as e:
        print(f"n/a: {e}")
        return 3
    with open(sys.argv[3], "w", encoding="utf-8") as f:
        json.dump(t, f)
    print(f"{rc} {args}|{text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
