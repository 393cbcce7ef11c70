"""Frees the allocator cannot reuse yet: tensors used on a side stream (record_stream) and freed while that
stream's work is outstanding stay `active_pending_free` until the stream's event completes (on the fake device:
until a synchronisation).

usage: pending_free.py
"""
import torch

import memprof_testbed


def main():
    side = torch.cuda.Stream()
    keep = []
    for n in (1, 3, 9):
        t = torch.empty(n << 20, dtype=torch.uint8, device="cuda")
        with torch.cuda.stream(side):
            t.add_(1)
        t.record_stream(side)
        if n != 3:
            del t   # pending until the side stream's work completes
        else:
            keep.append(t)
    small = torch.ones(64, device="cuda")
    small.record_stream(side)
    del small
    memprof_testbed.register("kept", keep)
    memprof_testbed.checkpoint()


if __name__ == "__main__":
    main()
