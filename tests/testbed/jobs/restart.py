"""A job that torchrun starts again (dist.sh --max-restarts 1): in its first attempt every rank sets up its device
and process group, writes its pid to OUTDIR/rank-R/attempt-0.pid and waits for OUTDIR/CRASH (a test watches it
first); then rank 1 (or the last when there are fewer) fails, torchrun stops the others and starts every rank
again. The second attempt is oom_rank.py's job: the same rank runs out of memory in its forward while the others
checkpoint before their backward.

Every rank notes `oom_rank` and `first_pid` (its pid in the first attempt).

usage: restart.py [--oom-rank R] [--rows N]   (oom_rank.py's options)
"""
import os
import sys
import time

import memprof_testbed
import oom_rank
from ddp import setup


def first_attempt():
    rank, world = setup()
    out = os.environ["MEMPROF_TESTBED_OUT"]
    with open(os.path.join(out, f"rank-{rank}", "attempt-0.pid"), "w") as f:
        f.write(f"{os.getpid()}\n")
    while not os.path.exists(os.path.join(out, "CRASH")):
        time.sleep(0.1)
    if rank == min(1, world - 1):
        sys.exit(3)  # the others wait here until torchrun stops them
    while True:
        time.sleep(1)


def main():
    if int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")) == 0:
        first_attempt()
    rank = int(os.environ["RANK"])
    out = os.environ["MEMPROF_TESTBED_OUT"]
    with open(os.path.join(out, f"rank-{rank}", "attempt-0.pid")) as f:
        memprof_testbed.note("first_pid", int(f.read()))
    oom_rank.main()


if __name__ == "__main__":
    main()
