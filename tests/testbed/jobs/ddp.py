"""DistributedDataParallel of a small MLP, one rank per fake device, under tests/testbed/dist.sh (torchrun, the
nccl backend on the test bed's NCCL stub): a few Adam steps, then the checkpoint, each rank's truth in its own
OUTDIR/rank-R/. Every rank holds the same: the model (about 2 MiB of parameters), its gradients (DDP's buckets
are views of one flat buffer per bucket), Adam's state.

usage: ddp.py [--steps N] [--batch N]

The helpers (setup, train, finish) are what the other distributed scenarios (uneven.py, oom_rank.py, hang.py) run
too.
"""
import argparse
import os
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

import memprof_testbed


class MLP(nn.Module):
    def __init__(self, dim=256, hidden=1024, layers=2):
        super().__init__()
        self.layers = nn.Sequential(*(nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))
                                      for _ in range(layers)))
        self.head = nn.Linear(dim, 10)

    def forward(self, x):
        return self.head(self.layers(x))


def setup(timeout_s=600):
    """This rank's device (LOCAL_RANK, as torchrun sets it) and the process group (its collectives time out after
    TIMEOUT_S, PyTorch's default 600); returns (rank, world size)."""
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local), timeout=timedelta(seconds=timeout_s))
    rank, world = dist.get_rank(), dist.get_world_size()
    memprof_testbed.note("rank", rank)
    memprof_testbed.note("world_size", world)
    memprof_testbed.note("device", local)
    return rank, world


def train(steps, batch):
    """A DDP model trained STEPS steps; returns (model, ddp, optimizer), registered for the manifest."""
    model = MLP().cuda()
    ddp = DistributedDataParallel(model, device_ids=[torch.cuda.current_device()], bucket_cap_mb=1)
    opt = torch.optim.Adam(ddp.parameters(), lr=1e-3)
    for _ in range(steps):
        x = torch.randn(batch, 256, device="cuda")
        target = torch.randint(0, 10, (batch,), device="cuda")
        nn.functional.cross_entropy(ddp(x), target).backward()
        opt.step()
        opt.zero_grad(set_to_none=False)
    memprof_testbed.register("model", model)
    memprof_testbed.register("opt", opt)
    return model, ddp, opt


def finish():
    """Every rank past its checkpoint, then the process group is torn down."""
    dist.barrier()
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    setup()
    model, ddp, opt = train(args.steps, args.batch)
    memprof_testbed.checkpoint()
    finish()


if __name__ == "__main__":
    main()
