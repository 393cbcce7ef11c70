"""Expandable segments (run with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True): the allocator maps physical
pages into one reserved range per stream and pool and grows it, instead of one cudaMalloc per segment.

usage: expandable.py
"""
import torch

import memprof_testbed


def main():
    model = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(6)]).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    for _ in range(2):
        x = torch.randn(256, 1024, device="cuda")
        model(x).sum().backward()
        optimizer.step()
    big = [torch.empty(n << 20, dtype=torch.uint8, device="cuda") for n in (5, 30, 12)]
    del big[1]
    memprof_testbed.register("big", big)
    memprof_testbed.checkpoint()


if __name__ == "__main__":
    main()
