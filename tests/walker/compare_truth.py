#!/usr/bin/env python3
"""compare_truth.py - compare a snapshot memprof rebuilt (from a core or a live process) with the test bed's truth.

usage: compare_truth.py TRUTH.json MEMPROF.json [--ring-extra N] [--ring-max M|truth]
                        [--time-tolerance-us T] [--max-diffs K]

Both files are memprof JSON (src/model/SCHEMA.md; tags such as {"__tuple__": [...]} and
{"__int__": "..."} are undone first). Compared field by field, in order:

  segments            per segment: device, address, total_size, allocated_size, active_size,
                      requested_size, stream, segment_type, segment_pool_id (tuple == list),
                      is_expandable; per block: address, size, requested_size, state
  device_traces       per device: action, addr (device_free for oom), size, stream; time_us
                      within T (default 1000) microseconds, since a walker only approximates
                      snapshot()'s TSC -> us conversion. snapshot() appends its SNAPSHOT entry
                      to the ring after copying it, so memprof's ring holds exactly N (default
                      1) more trailing `snapshot` entries (addr 0, stream 0, size = the device's
                      total active_size) than the truth on a device whose truth trace is not
                      empty; where the truth trace is empty, 0 or N such entries are accepted
                      (history off, or on with no events). With --ring-max M (the ring's
                      capacity, e.g. 64 in the `history` scenario; `--ring-max truth`: the
                      truth's scenario_notes.ring_entries, if any) a ring that was full loses
                      its oldest entries to them instead. --ring-extra 0 compares exactly.
                      pool_id too where the truth's entries have it (2.14).
  external_annotations  where the truth has them: per entry, its keys in order (the metadata,
                      device, time_us), values equal, time_us within T
  top level           the truth's keys that _snapshot() returns are memprof's, in the same order
                      (the test bed's own keys aside); memprof adds none but device_stats
  device_stats        key by key, per device, when MEMPROF.json has a top-level device_stats
  allocator_settings  key by key (nested dicts too)

  frames              with --frames compare: every segment's, block's and trace entry's frames
                      list (the `frames` key present in both or neither), frame by frame:
                      Python frames (a truth filename ending in .py or in <...>) equal as
                      dicts, byte for byte; C++ frames by name only (file and line come from
                      another symbolizer: PyTorch runs addr2line), where both sides name a
                      symbol. Counted, not failed: C++ frames named alike but placed in another
                      file or line (binutils' addr2line, which PyTorch runs, misnames a few
                      DWARF 5 files), C++ frames memprof leaves unnamed, and aliases of one
                      symbol (`f [clone .localalias]` and `f`; glibc's `clone3`, `__clone3`,
                      `__GI___clone3`), should memprof pick another of them than addr2line. Default --frames count: only
                      counts (the C++ test bed's contexts are its own type, not PyTorch's).

Ints and bools are told apart (False is not 0).
Prints one line per category and, on mismatch, the first K (default 12) differences with
their paths. Exit 0 equal, 1 different, 2 bad input.
"""
import argparse
import base64
import json
import re
import sys

SEGMENT_FIELDS = ("device", "address", "total_size", "allocated_size", "active_size",
                  "requested_size", "stream", "segment_type", "segment_pool_id", "is_expandable")
BLOCK_FIELDS = ("address", "size", "requested_size", "state")
TAGS = ("__tuple__", "__int__", "__float__", "__bytes__", "__str__", "__dict__")


class BadInput(Exception):
    pass


def untag(v, where):
    """memprof JSON -> plain Python values (tuples become lists: compared as equal)."""
    if isinstance(v, list):
        return [untag(x, where) for x in v]
    if not isinstance(v, dict):
        return v
    if len(v) == 1:
        (tag, x), = v.items()
        try:
            if tag == "__tuple__":
                return [untag(y, where) for y in x]
            if tag == "__int__":
                return int(x)
            if tag == "__float__":
                return float(x)
            if tag == "__bytes__":
                return base64.b64decode(x, validate=True)
            if tag == "__str__":
                return base64.b64decode(x, validate=True).decode("utf-8", "surrogatepass")
            if tag == "__dict__":
                return {repr(untag(k, where)) if isinstance(k, (list, dict)) else untag(k, where):
                        untag(y, where) for k, y in x}
        except (TypeError, ValueError) as e:
            raise BadInput(f"{where}: malformed {tag} tag: {e}") from None
    return {k: untag(x, where) for k, x in v.items()}


def load(path):
    try:
        with open(path, "rb") as f:
            raw = json.loads(f.read().decode("utf-8-sig"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise BadInput(f"{path}: {e}") from None
    snap = untag(raw, path)
    if not isinstance(snap, dict):
        raise BadInput(f"{path}: not a snapshot dict (top level is {type(snap).__name__})")
    for key in ("segments", "device_traces"):
        if key in snap and not isinstance(snap[key], list):
            raise BadInput(f"{path}: '{key}' is not a list")
    if "segments" not in snap:
        raise BadInput(f"{path}: no 'segments'")
    for i, s in enumerate(snap["segments"]):
        if not isinstance(s, dict) or not isinstance(s.get("blocks", []), list):
            raise BadInput(f"{path}: segments[{i}] is not a segment dict")
    for d, tr in enumerate(snap.get("device_traces", [])):
        if not isinstance(tr, list) or not all(isinstance(e, dict) for e in tr):
            raise BadInput(f"{path}: device_traces[{d}] is not a list of dicts")
    if "device_stats" in snap and not (isinstance(snap["device_stats"], list) and
                                       all(isinstance(x, dict) for x in snap["device_stats"])):
        raise BadInput(f"{path}: 'device_stats' is not a list of dicts")
    return snap


MISSING = object()


def show(v):
    return "<missing>" if v is MISSING else repr(v)


def same(a, b):
    """Equal with bool and int told apart, at any depth."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b or (
        isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == b)


class Report:
    def __init__(self, max_diffs):
        self.max_diffs = max_diffs
        self.diffs = []
        self.count = {}

    def diff(self, cat, path, truth, mine, note=""):
        self.count[cat] = self.count.get(cat, 0) + 1
        self.diffs.append(f"  {path}: truth {show(truth)}, memprof {show(mine)}{note}")

    def field(self, cat, path, t, m, key):
        a, b = t.get(key, MISSING), m.get(key, MISSING)
        if a is MISSING and b is MISSING:
            return
        if a is MISSING or b is MISSING or not same(a, b):
            self.diff(cat, f"{path}.{key}", a, b)


def compare_segments(truth, mine, rep):
    ts, ms = truth["segments"], mine["segments"]
    if len(ts) != len(ms):
        rep.diff("segments", "len(segments)", len(ts), len(ms))
    nblocks = [0, 0]
    for i, (t, m) in enumerate(zip(ts, ms)):
        p = f"segments[{i}]"
        for k in SEGMENT_FIELDS:
            rep.field("segments", p, t, m, k)
        tb, mb = t.get("blocks", []), m.get("blocks", [])
        if len(tb) != len(mb):
            rep.diff("segments", f"len({p}.blocks)", len(tb), len(mb))
        for j, (x, y) in enumerate(zip(tb, mb)):
            for k in BLOCK_FIELDS:
                if not isinstance(x, dict) or not isinstance(y, dict):
                    rep.diff("segments", f"{p}.blocks[{j}]", type(x).__name__, type(y).__name__)
                    break
                rep.field("segments", f"{p}.blocks[{j}]", x, y, k)
    for i, snap in enumerate((truth, mine)):
        nblocks[i] = sum(len(s.get("blocks", [])) for s in snap["segments"])
    return f"{len(ts)} vs {len(ms)} segments, {nblocks[0]} vs {nblocks[1]} blocks"


def active_total(truth, device):
    return sum(s.get("active_size", 0) for s in truth["segments"] if s.get("device") == device)


def compare_entry(t, m, path, rep, tol, maxdt):
    for k in ("action", "size", "stream"):
        rep.field("device_traces", path, t, m, k)
    if "pool_id" in t:
        rep.field("device_traces", path, t, m, "pool_id")
    addr = "device_free" if t.get("action") == "oom" else "addr"
    rep.field("device_traces", path, t, m, addr)
    a, b = t.get("time_us", MISSING), m.get("time_us", MISSING)
    if a is MISSING or b is MISSING or isinstance(a, bool) or isinstance(b, bool) \
            or not isinstance(a, int) or not isinstance(b, int):
        if not (a is MISSING and b is MISSING):
            rep.diff("device_traces", f"{path}.time_us", a, b)
        return maxdt
    if abs(a - b) > tol:
        rep.diff("device_traces", f"{path}.time_us", a, b, f" (|diff| {abs(a - b)} us > {tol})")
    return max(maxdt, abs(a - b))


def compare_traces(truth, mine, rep, extra, ring_max, tol, pairs):
    tt, mt = truth.get("device_traces", MISSING), mine.get("device_traces", MISSING)
    if tt is MISSING and mt is MISSING:
        return "absent in both"
    if tt is MISSING or mt is MISSING:
        rep.diff("device_traces", "device_traces", "<list>" if tt is not MISSING else tt,
                 "<list>" if mt is not MISSING else mt)
        return "missing"
    if len(tt) != len(mt):
        rep.diff("device_traces", "len(device_traces)", len(tt), len(mt))
    maxdt, parts = 0, []
    for d, (t, m) in enumerate(zip(tt, mt)):
        # how many of memprof's trailing entries are snapshot()'s, and which truth entries remain
        want = extra if t else (extra if len(m) == extra else 0)
        drop = 0
        if ring_max is not None and want and len(t) + want > ring_max:
            drop = len(t) + want - ring_max
        tail = m[len(m) - want:] if want and len(m) >= want else []
        body = m[:len(m) - want] if want else m
        t_kept = t[drop:]
        if len(m) != len(t_kept) + want:
            note = f" (truth {len(t)} entries" + (f", {drop} overwritten" if drop else "") + \
                   f", + {want} trailing snapshot)"
            rep.diff("device_traces", f"len(device_traces[{d}])", len(t_kept) + want, len(m), note)
        for j, (x, y) in enumerate(zip(t_kept, body)):
            maxdt = compare_entry(x, y, f"device_traces[{d}][{j}]", rep, tol, maxdt)
            pairs.append((f"device_traces[{d}][{j}]", x, y))
        size = active_total(truth, d)
        for j, y in enumerate(tail):
            p = f"device_traces[{d}][{len(m) - want + j}]"
            for k, v in (("action", "snapshot"), ("addr", 0), ("stream", 0), ("size", size)):
                if not same(y.get(k, MISSING), v):
                    rep.diff("device_traces", f"{p}.{k}", v, y.get(k, MISSING),
                             " (snapshot()'s own SNAPSHOT entry)")
        parts.append(f"device {d}: {len(t)} entries" + (f" (-{drop} overwritten)" if drop else "")
                     + (f" + {want} snapshot" if want else ""))
    return "; ".join(parts) + (f"; time_us max |diff| {maxdt} us" if tt else "")


def compare_annotations(truth, mine, rep, tol):
    ta, ma = truth.get("external_annotations", MISSING), mine.get("external_annotations", MISSING)
    if ta is MISSING:
        return "not in truth (not compared)"
    if ma is MISSING or len(ta) != len(ma):
        rep.diff("external_annotations", "len(external_annotations)", len(ta),
                 ma if ma is MISSING else len(ma))
        return "%d in truth" % len(ta)
    for i, (t, m) in enumerate(zip(ta, ma)):
        path = f"external_annotations[{i}]"
        if list(t) != list(m):
            rep.diff("external_annotations", f"{path} keys", list(t), list(m))
        for k in t:
            if k == "time_us" and isinstance(t[k], int) and isinstance(m.get(k), int):
                if abs(t[k] - m[k]) > tol:
                    rep.diff("external_annotations", f"{path}.time_us", t[k], m[k])
            else:
                rep.field("external_annotations", path, t, m, k)
    return "%d entries" % len(ta)


SNAPSHOT_KEYS = ("segments", "device_traces", "allocator_settings", "external_annotations", "host_segments",
                 "host_traces")  # what _snapshot() returns at the top, 2.0 to 2.14


def compare_top(truth, mine, rep):
    t = [k for k in truth if k in SNAPSHOT_KEYS]
    m = [k for k in mine if k in SNAPSHOT_KEYS]
    if t != m:
        rep.diff("top level", "keys", t, m)
    # keys of neither _snapshot() nor the truth (the test bed's own, time_is_tsc and scenario, are in both when a
    # truth is compared with itself or its JSON conversion)
    extra = [k for k in mine if k not in SNAPSHOT_KEYS and k != "device_stats" and k not in truth]
    if extra:
        rep.diff("top level", "keys of memprof's own", [], extra)
    return ", ".join(t)


def compare_stats(truth, mine, rep):
    if "device_stats" not in mine:
        return "not in memprof output (not compared)"
    ts, ms = truth.get("device_stats", MISSING), mine["device_stats"]
    if ts is MISSING:
        return "not in truth (not compared)"
    if len(ts) != len(ms):
        rep.diff("device_stats", "len(device_stats)", len(ts), len(ms))
    nkeys = 0
    for d, (t, m) in enumerate(zip(ts, ms)):
        nkeys += len(t)
        for k in list(t) + [k for k in m if k not in t]:
            rep.field("device_stats", f"device_stats[{d}]", t, m, k)
        if list(m) != sorted(m, key=lambda k: k.encode()):
            rep.diff("device_stats", f"device_stats[{d}] key order", "sorted", "unsorted")
    return f"{len(ts)} device(s), {nkeys} keys"


def compare_tree(cat, path, t, m, rep):
    if isinstance(t, dict) and isinstance(m, dict):
        for k in list(t) + [k for k in m if k not in t]:
            a, b = t.get(k, MISSING), m.get(k, MISSING)
            if isinstance(a, dict) and isinstance(b, dict):
                compare_tree(cat, f"{path}.{k}", a, b, rep)
            elif a is MISSING or b is MISSING or not same(a, b):
                rep.diff(cat, f"{path}.{k}", a, b)
    elif not same(t, m):
        rep.diff(cat, path, t, m)


def compare_settings(truth, mine, rep):
    t, m = truth.get("allocator_settings", MISSING), mine.get("allocator_settings", MISSING)
    if t is MISSING and m is MISSING:
        return "absent in both"
    if t is MISSING or m is MISSING:
        rep.diff("allocator_settings", "allocator_settings", t, m)
        return "missing"
    compare_tree("allocator_settings", "allocator_settings", t, m, rep)
    return f"{len(t) if isinstance(t, dict) else '?'} keys"


def count_frames(snap):
    lists = frames = 0

    def add(x):
        nonlocal lists, frames
        f = x.get("frames") if isinstance(x, dict) else None
        if isinstance(f, list) and f:
            lists += 1
            frames += len(f)
    for s in snap["segments"]:
        add(s)
        for b in s.get("blocks", []):
            add(b)
    for tr in snap.get("device_traces", []):
        for e in tr:
            add(e)
    return f"{lists} non-empty lists / {frames} frames"


UNNAMED = ("??", "<unwind unsupported>", "")


def python_frame(f):
    fn = f.get("filename", "") if isinstance(f, dict) else ""
    return isinstance(fn, str) and (fn.endswith(".py") or (fn.startswith("<") and fn.endswith(">")))


def symbol_key(name):
    """One symbol's aliases alike: no clone suffix, no symbol version, no leading underscores or __GI_."""
    name = re.sub(r" \[clone [^]]*\]$", "", name)
    name = re.sub(r"@@?[A-Za-z0-9_.]+$", "", name)
    return re.sub(r"^(__GI_)?_*", "", name)


class FrameTally:
    def __init__(self):
        self.lists = self.python = self.cpp_equal = self.cpp_alias = 0
        self.cpp_unnamed_memprof = self.cpp_unnamed_truth = self.cpp_where = 0


def compare_frame_lists(path, t, m, rep, tally):
    a, b = t.get("frames", MISSING), m.get("frames", MISSING)
    if a is MISSING or b is MISSING:
        if a is not b:
            rep.diff("frames", f"{path}.frames", "<list>" if a is not MISSING else a,
                     "<list>" if b is not MISSING else b)
        return
    if not isinstance(a, list) or not isinstance(b, list) or len(a) != len(b):
        rep.diff("frames", f"len({path}.frames)", len(a) if isinstance(a, list) else a,
                 len(b) if isinstance(b, list) else b)
        return
    tally.lists += 1
    for i, (x, y) in enumerate(zip(a, b)):
        p = f"{path}.frames[{i}]"
        if python_frame(x):
            tally.python += 1
            if not same(x, y):
                rep.diff("frames", p, x, y, " (a Python frame)")
            continue
        tn, mn = x.get("name"), y.get("name") if isinstance(y, dict) else None
        if mn in UNNAMED:
            tally.cpp_unnamed_memprof += 1
        elif tn in UNNAMED:
            tally.cpp_unnamed_truth += 1
        elif tn == mn:
            tally.cpp_equal += 1
            if (x.get("filename"), x.get("line")) != (y.get("filename"), y.get("line")):
                tally.cpp_where += 1
        elif isinstance(tn, str) and isinstance(mn, str) and symbol_key(tn) == symbol_key(mn):
            tally.cpp_alias += 1
        else:
            rep.diff("frames", f"{p}.name", tn, mn, " (a C++ frame)")


def compare_frames(truth, mine, rep, trace_pairs):
    tally = FrameTally()
    for i, (t, m) in enumerate(zip(truth["segments"], mine["segments"])):
        compare_frame_lists(f"segments[{i}]", t, m, rep, tally)
        for j, (x, y) in enumerate(zip(t.get("blocks", []), m.get("blocks", []))):
            if isinstance(x, dict) and isinstance(y, dict):
                compare_frame_lists(f"segments[{i}].blocks[{j}]", x, y, rep, tally)
    for path, x, y in trace_pairs:
        compare_frame_lists(path, x, y, rep, tally)
    return (f"{tally.lists} lists; {tally.python} Python frames; C++ frames: {tally.cpp_equal} named alike "
            f"({tally.cpp_where} of them in another file or line), "
            f"{tally.cpp_alias} aliases of one symbol, {tally.cpp_unnamed_memprof} unnamed by memprof, "
            f"{tally.cpp_unnamed_truth} unnamed by PyTorch")


def ring_max_arg(text):
    """--ring-max: a capacity, or `truth` (the truth's scenario_notes.ring_entries)."""
    return text if text == "truth" else int(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("truth")
    ap.add_argument("memprof")
    ap.add_argument("--ring-extra", type=int, default=1, metavar="N")
    ap.add_argument("--ring-max", type=ring_max_arg, default=None, metavar="M|truth")
    ap.add_argument("--time-tolerance-us", type=int, default=1000, metavar="T")
    ap.add_argument("--max-diffs", type=int, default=12, metavar="K")
    ap.add_argument("--frames", choices=("compare", "count"), default="count")
    try:
        a = ap.parse_args()
    except SystemExit as e:
        return 2 if e.code else 0
    if a.ring_extra < 0 or a.time_tolerance_us < 0 or (isinstance(a.ring_max, int) and a.ring_max < 1):
        print("compare_truth: --ring-extra and --time-tolerance-us must be >= 0, --ring-max >= 1",
              file=sys.stderr)
        return 2
    try:
        truth, mine = load(a.truth), load(a.memprof)
    except BadInput as e:
        print(f"compare_truth: {e}", file=sys.stderr)
        return 2
    if a.ring_max == "truth":
        notes = truth.get("scenario_notes") if isinstance(truth, dict) else None
        ring = notes.get("ring_entries") if isinstance(notes, dict) else None
        a.ring_max = ring if isinstance(ring, int) and ring >= 1 else None
    rep = Report(a.max_diffs)
    pairs = []
    lines = [
        ("segments", compare_segments(truth, mine, rep)),
        ("device_traces", compare_traces(truth, mine, rep, a.ring_extra, a.ring_max,
                                         a.time_tolerance_us, pairs)),
        ("device_stats", compare_stats(truth, mine, rep)),
        ("allocator_settings", compare_settings(truth, mine, rep)),
        ("external_annotations", compare_annotations(truth, mine, rep, a.time_tolerance_us)),
        ("top level", compare_top(truth, mine, rep)),
    ]
    if a.frames == "compare":
        lines.append(("frames", compare_frames(truth, mine, rep, pairs)))
    for cat, what in lines:
        n = rep.count.get(cat, 0)
        print(f"{cat + ':':20} {'equal' if n == 0 else f'{n} difference(s)'} ({what})")
    if a.frames == "count":
        print(f"{'frames:':20} not compared (truth {count_frames(truth)}; memprof {count_frames(mine)})")
    if rep.diffs:
        print(f"first {min(len(rep.diffs), a.max_diffs)} of {len(rep.diffs)} differences:")
        for d in rep.diffs[:a.max_diffs]:
            print(d)
        print("result: different")
        return 1
    print("result: equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
