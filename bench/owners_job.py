"""The owners benchmark's job: 2,500 small blocks (5,000 parameters) trained one Adam step, so 5,000 gradients
and 15,000 optimizer-state tensors are live (25,000 tensors), beside 1,000,000 other GC-tracked Python objects
(lists). The reference, timed inside the job: what the job's own manifest collection takes
(memprof_testbed.manifest: gc.get_objects(), isinstance() on each, named_parameters(), the optimizers' state),
the in-process way to the same answer.

usage: owners_job.py [--objects N] [--blocks N]
"""
import argparse
import time

import torch
import torch.nn as nn

import memprof_testbed
from memprof_testbed import manifest


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--objects", type=int, default=1_000_000)
    ap.add_argument("--blocks", type=int, default=2_500)
    args = ap.parse_args()
    model = nn.Sequential(*[nn.Linear(8, 8) for _ in range(args.blocks)]).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model(torch.randn(4, 8, device="cuda")).sum().backward()
    opt.step()
    junk = [[i] for i in range(args.objects)]   # lists: always GC-tracked (a dict of atoms is not)
    start = time.perf_counter()
    entries = manifest.collect([("model", model), ("opt", opt)])
    memprof_testbed.note("reference_s", time.perf_counter() - start)
    memprof_testbed.note("tensors", len(entries))
    memprof_testbed.register("model", model)
    memprof_testbed.register("opt", opt)
    memprof_testbed.checkpoint()
    del junk


if __name__ == "__main__":
    main()
