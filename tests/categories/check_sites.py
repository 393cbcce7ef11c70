#!/usr/bin/env python3
"""check_sites.py MEMPROF MEMORY_VIZ DIR NAME - `memprof categories --sites` on DIR/NAME.pickle
against groups computed here from the pickle's frames: the innermost user frame is the first
frame that PyTorch's own _frame_filter (imported from the real _memory_viz.py at MEMORY_VIZ)
keeps, of a Python file ('.py' or '<...>'), not under torch/ (CATEGORY-RULES.md); categories
are the generator's expectations (DIR/NAME.expect.json). Checks every --by, counts, the rest
and total against the active bytes, the JSON, plain and rst forms, and --device.
Prints what differs; exits 1 if anything does."""
import importlib.util
import json
import pickle
import re
import subprocess
import sys
from collections import defaultdict

TRACKER_ROWS = ["Parameter", "Buffer", "Gradient", "Activation", "Temp", "Optstate", "Unknown"]


def load_frame_filter(path):
    spec = importlib.util.spec_from_file_location("memory_viz_oracle", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod._frame_filter


def module_name(path):
    """The documented rule of --by module, written out independently."""
    start = max(path.rfind("site-packages/") + len("site-packages/") if "site-packages/" in path else -1,
                path.rfind("dist-packages/") + len("dist-packages/") if "dist-packages/" in path else -1)
    p = path[:-3] if path.endswith(".py") else path
    if start >= 0:
        rest = p[start:]
    else:
        parts = p.split("/")
        rest = parts[-1]
        if rest == "__init__" and len(parts) > 1:
            rest = parts[-2]
    if rest.endswith("/__init__"):
        rest = rest[:-len("/__init__")]
    return rest.replace("/", ".") if rest else path


def key_of(frames, by, keep):
    if not frames:
        return "(no frames)", None
    for f in frames:
        fn = f["filename"]
        if keep(f["name"], fn) and (fn.endswith(".py") or fn.startswith("<")) and \
                not ("/torch/" in fn or fn.startswith("torch/")):
            return {"site": f"{f['name']} ({fn}:{f['line']})", "function": f"{f['name']} ({fn})", "file": fn,
                    "module": module_name(fn)}[by], f
    return "(no user frame)", None


def expected_groups(snap, exp, by, scheme, keep, device=None):
    """{device: {name: [bytes, blocks, {category: [bytes, blocks]}]}} of the active blocks."""
    out = defaultdict(lambda: defaultdict(lambda: [0, 0, defaultdict(lambda: [0, 0])]))
    for seg in snap["segments"]:
        if device is not None and seg["device"] != device:
            continue
        out[seg["device"]]  # a device with only free blocks still has its section
        for b in seg["blocks"]:
            if b["state"] not in ("active_allocated", "active_pending_free"):
                continue
            cat = exp["tracker"][str(b["address"])] if scheme == "tracker" else exp["blocks"][str(b["address"])][0]
            g = out[seg["device"]][key_of(b["frames"], by, keep)[0]]
            g[0] += b["size"]
            g[1] += 1
            g[2][cat][0] += b["size"]
            g[2][cat][1] += 1
    return out


def ranked(groups):
    return sorted(groups.items(), key=lambda kv: (-kv[1][0], kv[0]))


def run(memprof, args):
    p = subprocess.run([memprof, "categories"] + args, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"memprof categories {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def cats(c):
    return {k: [v["bytes"], v["blocks"]] for k, v in c.items()}


def check_json(memprof, target, by, n, scheme, device, want, label):
    bad = []
    args = target + ["--format", "json", "--by", by, "--scheme", scheme]
    args += ["--sites"] if n is None else ["--sites", str(n)]
    args += [] if device is None else ["--device", str(device)]
    got = json.loads(run(memprof, args))
    n = 10 if n is None else n
    if [d["device"] for d in got["devices"]] != sorted(want):
        bad.append(f"{label}: devices {[d['device'] for d in got['devices']]}, expected {sorted(want)}")
        return bad
    for d in got["devices"]:
        groups = ranked(want[d["device"]])
        active = [sum(g[0] for _, g in groups), sum(g[1] for _, g in groups)]
        if [d["active"]["bytes"], d["active"]["blocks"]] != active:
            bad.append(f"{label}: device {d['device']}: active {d['active']}, expected {active}")
        got_top = [(s["name"], s["bytes"], s["blocks"], cats(s["categories"])) for s in d["sites"]]
        want_top = [(k, g[0], g[1], dict(g[2])) for k, g in groups[:n]]
        if got_top != want_top:
            bad.append(f"{label}: device {d['device']}: sites\n  got  {got_top}\n  want {want_top}")
        rest = groups[n:]
        want_other = [len(rest), sum(g[0] for _, g in rest), sum(g[1] for _, g in rest)]
        other = d["other"]
        if [other["groups"], other["bytes"], other["blocks"]] != want_other:
            bad.append(f"{label}: device {d['device']}: other {other}, expected {want_other}")
        if sum(s["bytes"] for s in d["sites"]) + other["bytes"] != d["active"]["bytes"]:
            bad.append(f"{label}: device {d['device']}: sites and other do not sum to the active bytes")
        if d["groups"] != len(groups):
            bad.append(f"{label}: device {d['device']}: {d['groups']} groups, expected {len(groups)}")
    return bad


ROW = re.compile(r"^(\d+)B +(\d+) +(\S+) +(\S+(?: \S+)?) +(.*)$")


def check_text(memprof, target, by, n, fmt, want, label):
    """Plain and rst in bytes: the rows, then a rest row and a total row that add up."""
    bad = []
    out = run(memprof, target + ["--sites", str(n), "--by", by, "--units", "B", "--format", fmt])
    sections = out.split("\ndevice ")
    if len(sections) != len(want):
        return [f"{label}: {len(sections)} device sections, expected {len(want)}"]
    for dev, text in zip(sorted(want), sections):
        groups = ranked(want[dev])
        rows = [ROW.match(line) for line in text.splitlines()]
        rows = [(int(m.group(1)), int(m.group(2)), m.group(5)) for m in rows if m]
        if fmt == "rst" and len([line for line in text.splitlines() if line.startswith("====")]) != 3:
            bad.append(f"{label}: device {dev}: not three rst borders")
        active = sum(g[0] for _, g in groups)
        want_rows = [(g[0], g[1], k) for k, g in groups[:n]]
        if rows[:-2] != want_rows:
            bad.append(f"{label}: device {dev}: rows\n  got  {rows[:-2]}\n  want {want_rows}")
        rest, total = rows[-2], rows[-1]
        nrest = len(groups) - len(want_rows)
        if not rest[2].startswith(f"({nrest} other ") or total[2] != "(total)":
            bad.append(f"{label}: device {dev}: last rows {rest}, {total}")
        if sum(r[0] for r in rows[:-1]) != total[0] or total[0] != active:
            bad.append(f"{label}: device {dev}: rows sum to {sum(r[0] for r in rows[:-1])}, total {total[0]},"
                       f" active {active}")
    return bad


def main():
    memprof, viz, d, name = sys.argv[1:5]
    keep = load_frame_filter(viz)
    snap = pickle.load(open(f"{d}/{name}.pickle", "rb"))
    exp = json.load(open(f"{d}/{name}.expect.json"))
    target = [f"{d}/{name}.pickle"] + exp["args"]
    bad, checks = [], 0
    for by in ("site", "function", "file", "module"):
        for scheme in ("profiler", "tracker"):
            want = expected_groups(snap, exp, by, scheme, keep)
            for n in (None, 1, 3, 1000):
                bad += check_json(memprof, target, by, n, scheme, None, want, f"{name} --by {by} {scheme} N={n}")
                checks += 1
            for device in want:
                bad += check_json(memprof, target, by, 2, scheme, device,
                                  expected_groups(snap, exp, by, scheme, keep, device),
                                  f"{name} --by {by} {scheme} --device {device}")
                checks += 1
        want = expected_groups(snap, exp, by, "profiler", keep)
        for fmt in ("plain", "rst"):
            bad += check_text(memprof, target, by, 4, fmt, want, f"{name} --by {by} --format {fmt}")
            checks += 1
    for line in bad:
        print(line)
    print(f"{name} sites: {checks} runs, {len(bad)} differences")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
