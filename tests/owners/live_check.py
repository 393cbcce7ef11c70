#!/usr/bin/env python3
"""live_check.py EXPECTED.json OWNERS.json - `memprof owners --format json` of a job that keeps training
(tests/testbed/jobs/training_loop.py) against what the job computed for itself: per device, the bytes of the
blocks of its parameters and of its optimizer's state (neither changes while it trains, so every consistent
read gives them), the number of optimizer-state tensors, and a whole result (not partial).
Exit 0 when they agree (the line says "mid-step" when the read caught gradients or activations alive); 1 with
one line saying what differs."""
import json
import sys


def main():
    with open(sys.argv[1]) as f:
        expected = json.load(f)
    with open(sys.argv[2]) as f:
        got = json.load(f)
    if got.get("partial"):
        sys.exit("memprof says its result is partial")
    devices = {d["device"]: d["categories"] for d in got["devices"]}
    mid = False
    for dev, want in expected.items():
        cats = devices.get("cuda:" + dev)
        if cats is None:
            sys.exit("no device cuda:%s in memprof's result" % dev)
        for cat in ("parameter", "optimizer_state"):
            if cats[cat]["bytes"] != want[cat]:
                sys.exit("cuda:%s %s: memprof %d bytes, the job %d" % (dev, cat, cats[cat]["bytes"], want[cat]))
        if cats["optimizer_state"]["count"] != want["state_tensors"]:
            sys.exit("cuda:%s optimizer_state: memprof %d tensors, the job %d" %
                     (dev, cats["optimizer_state"]["count"], want["state_tensors"]))
        mid |= cats["gradient"]["bytes"] > 0 or cats["activation"]["bytes"] > 0
    print("parameter and optimizer_state bytes as the job's" + (" (mid-step)" if mid else ""))


if __name__ == "__main__":
    main()
