"""oom_history_job.py - a long memory history that ends in an OOM, for bench/oom_replay.sh: STEPS training-like
steps of the same requests (a forward that keeps most of what it makes, frees in between, a backward that frees
it all), recorded with Python stacks, then, the last forward's tensors still live, a request of the whole device;
the test bed's checkpoint in the
`except` writes the job's own _snapshot() (snapshot.pickle, its trace holding every entry).

usage (through tests/testbed/job.sh, mode truth): oom_history_job.py [--steps N] [--per-step K] [--seed S]
"""
import argparse
import random

import torch

import memprof_testbed

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=200)
ap.add_argument("--per-step", type=int, default=500)
ap.add_argument("--seed", type=int, default=1)
args = ap.parse_args()

rng = random.Random(args.seed)
# one step's requests, the same each step (a training step repeats): small and large pool sizes
sizes = [rng.choice((512, 4096, 65536, 1 << 20, 3 << 20, 12 << 20, 24 << 20)) + rng.randrange(0, 4096)
         for _ in range(args.per_step)]
torch.cuda.memory._record_memory_history(max_entries=50_000_000, stacks="python")


def forward():
    kept = []
    for i, size in enumerate(sizes):
        kept.append(torch.empty(size, dtype=torch.uint8, device="cuda"))
        if i % 4 == 3:
            del kept[-2]  # a temporary freed as the next op runs
    return kept


def backward(kept):
    while kept:
        kept.pop()


for step in range(args.steps - 1):
    backward(forward())
live = forward()  # the last step's forward still holds its tensors at the OOM: a state to explain, not an empty one
try:
    torch.empty(torch.cuda.get_device_properties(0).total_memory, dtype=torch.uint8, device="cuda")
except torch.OutOfMemoryError as e:
    memprof_testbed.note("oom_message", str(e))
    memprof_testbed.checkpoint()
