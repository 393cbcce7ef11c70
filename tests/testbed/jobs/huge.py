"""A million blocks: enough small tensors that the caching allocator holds at least 1,000,000 blocks (active
ones and the free remainders between them), for the scale of memprof's walk. History is off.

usage: huge.py [--blocks N]  (run with FAKECUDA_CAPACITY=2G or more)
"""
import argparse

import torch

import memprof_testbed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=1_000_000)
    args = ap.parse_args()
    # Each 512-byte tensor is one small-pool block; freeing every other one leaves a free block between active
    # ones, which the allocator keeps as a block of its own (neighbours merge only when both are free).
    tensors = [torch.empty(128, device="cuda") for _ in range(args.blocks)]
    del tensors[::2]
    memprof_testbed.checkpoint()


if __name__ == "__main__":
    main()
