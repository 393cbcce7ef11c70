"""Runs out of device memory: a model holds part of the device, then an activation too large for what is left is
requested, and PyTorch raises its real torch.OutOfMemoryError (the caching allocator's own message and
statistics: num_ooms, the retry that freed cached blocks).

usage: oom.py [--uncaught] [--history none|python|all]

Default: the error is caught, and the checkpoint is taken inside the `except` block, while it is being handled.
--uncaught: the error propagates out of the script, which dies of it (exit status 1); the checkpoint is taken by
the excepthook that memprof_testbed installs (memprof_testbed.checkpoint_on_uncaught_exception), as a
post-mortem would see the process. The capacity is the device's (FAKECUDA_CAPACITY, default 1 GiB).
"""
import argparse

import torch

import memprof_testbed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--uncaught", action="store_true")
    ap.add_argument("--history", choices=("none", "python", "all"), default="none")
    args = ap.parse_args()
    if args.history != "none":
        torch.cuda.memory._record_memory_history(stacks=args.history)
    if args.uncaught:
        memprof_testbed.checkpoint_on_uncaught_exception()

    total = torch.cuda.get_device_properties(0).total_memory
    layers = [torch.nn.Linear(1024, 1024).cuda() for _ in range(8)]
    # A cache of freed blocks the OOM retry will release, and some fragmentation: every other chunk freed.
    chunks = [torch.empty(3 << 20, dtype=torch.uint8, device="cuda") for _ in range(16)]
    del chunks[::2]
    x = torch.randn(64, 1024, device="cuda")
    for layer in layers:
        x = layer(x)
    request = int(total * 0.9)
    if args.uncaught:
        memprof_testbed.note("oom_request_bytes", request)
        torch.empty(request, dtype=torch.uint8, device="cuda")
    try:
        torch.empty(request, dtype=torch.uint8, device="cuda")
    except torch.OutOfMemoryError as error:
        memprof_testbed.note("oom_message", str(error))
        memprof_testbed.note("oom_request_bytes", request)
        memprof_testbed.checkpoint()
        print(f"caught: {str(error).splitlines()[0]}")


if __name__ == "__main__":
    main()
