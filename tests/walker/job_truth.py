#!/usr/bin/env python3
"""job_truth.py OUTDIR MEMPROF - the truth of a Python job (tests/testbed/job.sh) in the form compare_truth.py reads:
the job's own snapshot.pickle (torch.cuda.memory._snapshot()) as memprof JSON, read by `memprof convert`, plus
'device_stats': memory_stats.json's torch.cuda.memory_stats() of each device, in device order. Prints it."""
import json
import subprocess
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: job_truth.py OUTDIR MEMPROF")
    out, memprof = sys.argv[1:]
    converted = subprocess.run([memprof, "convert", f"{out}/snapshot.pickle", "-", "--to", "json"],
                               check=True, capture_output=True).stdout
    truth = json.loads(converted)
    with open(f"{out}/memory_stats.json") as f:
        stats = json.load(f)
    truth["device_stats"] = [stats[d] for d in sorted(stats, key=int)]
    json.dump(truth, sys.stdout)


if __name__ == "__main__":
    main()
