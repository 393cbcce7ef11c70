"""One rank runs out of memory while the others go on: the DDP job of ddp.py trains two steps on every rank, then
rank 1 (or the last when there are fewer) gets a batch far too long for its device (its first activation, batch x
1024 floats, is 4 GiB at the default 1M rows; the fake device has 1 GiB): torch.OutOfMemoryError in the forward.
It catches the error and checkpoints with the failed step's state (notes: `oom_message`, `where`). The other
ranks finish their forward and checkpoint before the backward, whose all-reduce would wait forever for the
failed rank (in a real job they hang there until NCCL's timeout); then every rank learns of the failure through
one all-reduce of a flag and the job ends without the step.

Every rank notes `oom_rank`.

usage: oom_rank.py [--oom-rank R] [--rows N]
"""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn

import memprof_testbed
from ddp import finish, setup, train


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oom-rank", type=int, default=1)
    ap.add_argument("--rows", type=int, default=1 << 20)
    args = ap.parse_args()
    rank, world = setup()
    victim = min(args.oom_rank, world - 1)
    memprof_testbed.note("oom_rank", victim)
    model, ddp, opt = train(2, 64)
    rows = args.rows if rank == victim else 64
    # The victim's input is one row seen ROWS times (no memory of its own): the forward's activations run out.
    x = torch.randn(1 if rank == victim else rows, 256, device="cuda").expand(rows, 256)
    target = torch.randint(0, 10, (rows,), device="cuda")
    failed = torch.zeros(1, device="cuda")
    try:
        loss = nn.functional.cross_entropy(ddp(x), target)
    except torch.OutOfMemoryError as error:
        memprof_testbed.note("oom_message", str(error))
        memprof_testbed.note("where", memprof_testbed.raised_in(error, ("forward",)))
        failed.fill_(1)
        memprof_testbed.checkpoint()
    else:
        memprof_testbed.checkpoint()   # before backward: its all-reduce would wait for the failed rank
        del loss
    dist.all_reduce(failed)
    finish()


if __name__ == "__main__":
    main()
