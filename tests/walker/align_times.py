#!/usr/bin/env python3
"""align_times.py TRUTH.json MEMPROF.json OUT.json - the truth with memprof's trace times.

A walker converts the ring's TSC stamps to microseconds with clock pairs of its own, so its time_us may be a
microsecond off PyTorch's (compare_truth.py bounds the difference); analyses that group events by time (the
memory timeline) then group a few differently. To compare such an analysis of a core with the same analysis of
the job's own snapshot, everything but that conversion must be the job's: this writes TRUTH with each trace
entry's time_us taken from the MEMPROF entry at the same place (memprof's trailing snapshot() entry aside),
after checking that the entries agree in action, address and size. Exit 0 written, 1 they do not line up.
"""
import json
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.splitlines()[0])
    with open(sys.argv[1]) as f:
        truth = json.load(f)
    with open(sys.argv[2]) as f:
        mine = json.load(f)
    tt, mt = truth.get("device_traces", []), mine.get("device_traces", [])
    if len(tt) != len(mt):
        sys.exit(f"align_times: {len(tt)} devices in the truth, {len(mt)} in memprof's")
    for d, (t, m) in enumerate(zip(tt, mt)):
        if len(m) < len(t):
            sys.exit(f"align_times: device {d}: memprof has {len(m)} entries, the truth {len(t)}")
        for j, (x, y) in enumerate(zip(t, m)):
            for k in ("action", "addr", "device_free", "size"):
                if x.get(k) != y.get(k):
                    sys.exit(f"align_times: device_traces[{d}][{j}].{k}: {x.get(k)!r} vs {y.get(k)!r}")
            x["time_us"] = y["time_us"]
    with open(sys.argv[3], "w") as f:
        json.dump(truth, f)


if __name__ == "__main__":
    main()
