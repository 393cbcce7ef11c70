"""A million blocks: enough small tensors that the caching allocator holds at least 1,000,000 blocks (active
ones and the free remainders between them), for the scale of memprof's walk. History is off unless asked:
--history python|all records every allocation's traceback (a ring of 10,000 entries), so each active block
holds a CapturedTraceback of its own, all of them alike but for the loop's line, as in a real job's loops.

usage: huge.py [--blocks N] [--history none|python|all]  (run with FAKECUDA_CAPACITY=2G or more)
"""
import argparse

import torch

import memprof_testbed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=1_000_000)
    ap.add_argument("--history", choices=("none", "python", "all"), default="none")
    args = ap.parse_args()
    if args.history != "none":
        torch.cuda.memory._record_memory_history(stacks=args.history, max_entries=10_000)
    # Each 512-byte tensor is one small-pool block; freeing every other one leaves a free block between active
    # ones, which the allocator keeps as a block of its own (neighbours merge only when both are free).
    tensors = [torch.empty(128, device="cuda") for _ in range(args.blocks)]
    del tensors[::2]
    memprof_testbed.checkpoint()


if __name__ == "__main__":
    main()
