"""Uneven ranks: the DDP job of ddp.py, where one rank (rank 2, or the last when there are fewer) also holds what
the others do not: a frozen embedding shard (`extra_shard`, 16 MiB) and a list of leaked buffers (`leak`, three of
12 MiB), allocated before training, so that each sits in segments of its own (requests of 10 MiB and more get a
segment of their exact size, rounded to 2 MiB). That rank reserves the others' bytes plus exactly those.

Every rank notes (notes.json) `heavy_rank`, `extra` (the manifest's names of those tensors and their bytes) and
`extra_bytes` (their sum), so a tool reading any rank can be checked against it; the heavy rank's manifest.json
has the entries themselves.

usage: uneven.py [--heavy-rank R] [--shard-mib N] [--leaks N] [--leak-mib N] [--steps N]
"""
import argparse

import torch
import torch.nn as nn

import memprof_testbed
from ddp import finish, setup, train


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--heavy-rank", type=int, default=2)
    ap.add_argument("--shard-mib", type=int, default=16)
    ap.add_argument("--leaks", type=int, default=3)
    ap.add_argument("--leak-mib", type=int, default=12)
    ap.add_argument("--steps", type=int, default=3)
    args = ap.parse_args()
    rank, world = setup()
    heavy = min(args.heavy_rank, world - 1)
    dim = 256
    extra = {"extra_shard.weight": (args.shard_mib << 20) // (dim * 4) * dim * 4}
    extra.update({f"leak[{i}]": args.leak_mib << 20 for i in range(args.leaks)})
    memprof_testbed.note("heavy_rank", heavy)
    memprof_testbed.note("extra", extra)
    memprof_testbed.note("extra_bytes", sum(extra.values()))
    if rank == heavy:
        shard = nn.Embedding((args.shard_mib << 20) // (dim * 4), dim, device="cuda").requires_grad_(False)
        leak = [torch.empty(args.leak_mib << 20, dtype=torch.uint8, device="cuda") for _ in range(args.leaks)]
        memprof_testbed.register("extra_shard", shard)
        memprof_testbed.register("leak", leak)
    train(args.steps, 64)
    memprof_testbed.checkpoint()
    finish()


if __name__ == "__main__":
    main()
