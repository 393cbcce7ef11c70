"""FSDP2: torch.distributed.fsdp.fully_shard on a small model, one rank per fake device, under dist.sh. Each
of the model's blocks and the root are sharded (parameters become DTensors whose local shard is 1/N of each
parameter, dim 0), Adam keeps its state per shard, and each step all-gathers a block's parameters for its forward
and backward and reduce-scatters its gradients (FSDP2's own streams and its all-gather buffers go through the
caching allocator). After a few steps, the checkpoint: every rank holds its shards, their gradients and Adam's
state.

usage: fsdp2.py [--steps N] [--batch N] [--blocks N]
"""
import argparse

import torch
import torch.nn as nn
from torch.distributed.fsdp import fully_shard

import memprof_testbed
from ddp import finish, setup


class Block(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.down(nn.functional.gelu(self.up(self.norm(x))))


class Model(nn.Module):
    def __init__(self, dim=256, hidden=1024, blocks=4, classes=10):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim, hidden) for _ in range(blocks))
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--blocks", type=int, default=4)
    args = ap.parse_args()
    setup()
    model = Model(blocks=args.blocks).cuda()
    for block in model.blocks:
        fully_shard(block)
    fully_shard(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(args.steps):
        x = torch.randn(args.batch, 256, device="cuda")
        target = torch.randint(0, 10, (args.batch,), device="cuda")
        nn.functional.cross_entropy(model(x), target).backward()
        opt.step()
        opt.zero_grad()
    memprof_testbed.register("model", model)
    memprof_testbed.register("opt", opt)
    memprof_testbed.checkpoint()
    finish()


if __name__ == "__main__":
    main()
