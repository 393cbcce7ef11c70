"""capacity.py - the fake device's size for a campaign job, from its calibration run, so that most jobs run out of
memory within their steps.

usage: capacity.py CALIBRATION_RECORD.json SPEC.json ATTEMPT

Prints the bytes for FAKECUDA_CAPACITY, or "skip REASON". The calibration run had a device far too large; its
record holds each step's peak allocated (A) and reserved (R) bytes. A target step t is drawn from the seed, then
a size the process may use: below A (the live memory alone does not fit: device_full), or between A and R (what
fits only if the cache is reused well: fragmentation, other streams, oversize segments). A job that did not run
out gets another ATTEMPT: the size moves towards A, and the last attempt is below it. With a per-process memory
fraction f the device is that size / f. Drawn from the seed and the attempt only: the same job gets the same
device again.
"""
import json
import random
import sys

MiB = 1 << 20
ATTEMPTS = 3
LARGEST = 6 << 30   # the fake device is host memory that is mostly never touched; still, stay modest


def main():
    record, spec, attempt = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
    peaks = record.get("peaks") or []
    if record.get("oom") is not None:
        print("skip the calibration run ran out of memory on a %d MiB device" % (record.get("capacity", 0) >> 20))
        return
    if not peaks:
        print("skip the calibration run recorded no step")
        return
    r = random.Random("%s-capacity" % spec["seed"])
    t = r.choices(range(len(peaks)), [3 if i < 2 else 1 for i in range(len(peaks))])[0]
    a = max(p["allocated"] for p in peaks[:t + 1])
    res = max(p["reserved"] for p in peaks[:t + 1])
    u, v = r.random(), r.uniform(0.05, 0.95)
    if attempt >= ATTEMPTS:
        print("skip no OOM in %d attempts" % ATTEMPTS)
        return
    if u < 0.25 or res - a < 20 * MiB or attempt == ATTEMPTS - 1:
        size = a * r.uniform(0.8, 0.99)
    else:
        size = a + v * (0.5 ** attempt) * (res - a)
    if a < 32 * MiB:
        print("skip the job uses %d MiB only" % (a >> 20))
        return
    fraction = spec.get("memory_fraction") or 1.0
    device = int(size / fraction) // MiB * MiB
    if device > LARGEST:
        print("skip the job needs a %d MiB device" % (device >> 20))
        return
    print(device)


if __name__ == "__main__":
    main()
