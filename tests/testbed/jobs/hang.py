"""A hung collective: the DDP job of ddp.py trains two steps on every rank, then every rank but one (the last,
or --stuck R) enters an all-reduce that the stuck rank never enters: it waits in its checkpoint (in live mode,
until `dist.sh --resume`), as a rank stuck in its data loader would. The others checkpoint on the way in
(checkpoint(go_on=True): in live mode they write their truth and go on into the all-reduce, where they block
inside the NCCL stub's ncclAllReduce, the Python frame at dist.all_reduce). Only live mode hangs; in truth mode
the stuck rank's checkpoint returns, it joins, and the job ends. After --resume the stuck rank joins too and the
job ends. The process group's timeout is an hour, so PyTorch's watchdog leaves the hang alone meanwhile.

Every rank notes `stuck_rank`.

usage: hang.py [--stuck R]
"""
import argparse

import torch
import torch.distributed as dist

import memprof_testbed
from ddp import finish, setup, train


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stuck", type=int, default=-1)
    args = ap.parse_args()
    rank, world = setup(timeout_s=3600)
    stuck = args.stuck % world
    memprof_testbed.note("stuck_rank", stuck)
    model, ddp, opt = train(2, 64)
    flag = torch.ones(1, device="cuda")
    if rank == stuck:
        memprof_testbed.checkpoint()
    else:
        memprof_testbed.checkpoint(go_on=True)
    dist.all_reduce(flag)
    finish()


if __name__ == "__main__":
    main()
