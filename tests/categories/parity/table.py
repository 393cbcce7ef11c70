"""table.py OUTDIR - the figures of a parity.sh --out OUTDIR run as one Markdown table (README.md's), from each
job's parity JSONs: per build, job and stacks mode, the timeline's agreement (allocations, share of bytes), the end
state (blocks the profiler labels that agree), read from the snapshot file and, with --core, the core, and the
category whose peak memprof's labels move most from the profiler's (the file's)."""
import glob
import json
import os
import sys


def row_of(path):
    with open(path) as f:
        return json.load(f)


def end(r):
    e = r["end_state"]
    refuted = e.get("data_flow_parameters_refuted", 0)
    return "%d/%d%s" % (e["labelled_agree"], e["labelled"], " (+%d refuted)" % refuted if refuted else "")


def peak_gap(r):
    """The category whose peak memprof misses most (against the closer of the profiler's readings), in MiB."""
    gaps = [(min(abs(p["memprof"] - p["profiler"]), abs(p["memprof"] - p["profiler_per_storage"])), p["category"])
            for p in r.get("peaks", [])]
    gap, cat = max(gaps, default=(0, None), key=lambda g: g[0])
    return "%.1f MiB (%s)" % (gap / 2**20, cat) if gap >= 2**20 / 10 else "0"


def main():
    out = sys.argv[1]
    print("| build | job | stacks | allocations | bytes (file) | end state, file | bytes (core) | end state, core "
          "| ambiguous bytes | largest peak gap |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for d in sorted(glob.glob(os.path.join(out, "*", "parity")), key=lambda p: (p.split("-gen-")[0], p)):
        job = os.path.basename(os.path.dirname(d))
        f, c = os.path.join(d, "file.parity.json"), os.path.join(d, "core.parity.json")
        if not os.path.exists(f):
            continue
        r = row_of(f)
        build, rest = job.split("-gen-") if "-gen-" in job else job.rsplit("-mlp-", 1)
        name, stacks = (("seed " + rest.rsplit("-", 1)[0]), rest.rsplit("-", 1)[1]) if "-gen-" in job else ("mlp", rest)
        core = row_of(c) if os.path.exists(c) else None
        print("| %s | %s | %s | %d/%d | %.1f %% | %s | %s | %s | %.1f %% | %s |" % (
            build, name, stacks, r["agree"], r["allocations"], 100.0 * r["agree_bytes"] / max(r["bytes"], 1), end(r),
            "%.1f %%" % (100.0 * core["agree_bytes"] / max(core["bytes"], 1)) if core else "-",
            end(core) if core else "-", 100.0 * r["ambiguous"]["bytes"] / max(r["bytes"], 1), peak_gap(r)))


if __name__ == "__main__":
    main()
