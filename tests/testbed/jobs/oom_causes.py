"""Runs out of device memory for one chosen reason, so that each torch.OutOfMemoryError has one dominant cause
(the device is FAKECUDA_CAPACITY, default 1 GiB; sizes below assume that):

  full          live tensors alone fill the device: `big` 700 MiB and `second` 200 MiB, then 300 MiB asked
  fragmentation 45 tensors of 20 MiB (a segment each) freed, then `kept`: 45 tensors of 12 MiB, each cut from its
                own cached segment (the 8 MiB rest is too small for the next one): every segment stays split,
                360 MiB cached in 8 MiB holes; then 200 MiB asked
  oversize      `arena` 900 MiB freed (cached whole), then `keep` 4 MiB is cut from it: the 896 MiB rest cannot be
                returned to the device while `keep` lives; then 950 MiB asked
  other_stream  the same on a side stream (`side`): `arena` 700 MiB freed there, `keep` 4 MiB cut from it; then
                500 MiB asked on the default stream, which cannot use the side stream's cache
  private_pool  600 MiB allocated and freed inside a torch.cuda.MemPool (`pool`): the pool keeps the segment,
                which the default pools' retry does not release; then 500 MiB asked outside the pool
  pending_free  (Debian's 2.6 only: see below) 3 x 250 MiB used on a side stream (record_stream) and freed while
                the fake device has not completed that stream's events; then 500 MiB asked inside a MemPool

usage: oom_causes.py --cause CAUSE [--history none|python|all] [--uncaught] [--alloc-conf CONF]
                     [--free NAME]... [--empty-cache-after-free] [--checkpoint-before-oom] [--extra-blocks N]

Remedies (where one lets the request succeed, the job notes oom_message null and prints "no oom"):
  --free NAME               delete that variable of the scenario before the request (`--free pool` also runs the
                            garbage collector, so that the MemPool is destroyed)
  --alloc-conf CONF         PYTORCH_CUDA_ALLOC_CONF for this run (set before torch is imported), e.g.
                            expandable_segments:True or max_split_size_mb:21
  --empty-cache-after-free  torch.cuda.empty_cache() right after the scenario's own frees (arena, the 20 MiB
                            tensors, the pool's tensor, the tensors left pending on the side stream)

As in oom.py: by default the error is caught and the checkpoint taken inside the `except` (notes oom_message,
oom_request_bytes, cause); --uncaught notes the request and lets the error escape (the excepthook checkpoints).
When no error comes, the checkpoint is taken after the request, with oom_message null.
--checkpoint-before-oom takes the checkpoint just before the request instead (a debugger attached there sees the
error happen; its message then goes to OUTDIR/oom_message.txt); a c10::Error that is no OOM is thrown and caught
first. --extra-blocks N keeps N more live 512-byte blocks
(`extra`), to time memprof on a larger state.

pending_free: on 2.6, while a MemPool is in use the allocator skips both the processing of finished cross-stream
events and the release-everything retry (the pool counts as a capture underway), so blocks waiting on the side
stream's events are still active_pending_free when the error is raised. 2.14 runs that retry for user pools too,
and the retry first waits for every outstanding event: there the request succeeds (no oom).
"""
import argparse
import gc
import os
import sys

CAUSES = ("full", "fragmentation", "oversize", "other_stream", "private_pool", "pending_free")
# The variables --free may delete, per cause (the tensors among them are registered by these names).
VARIABLES = {
    "full": ("big", "second"),
    "fragmentation": ("kept",),
    "oversize": ("keep",),
    "other_stream": ("keep", "side"),
    "private_pool": ("pool",),
    "pending_free": ("pool", "side"),
}
MiB = 1 << 20


def parse_args(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--cause", choices=CAUSES, required=True)
    ap.add_argument("--history", choices=("none", "python", "all"), default="none")
    ap.add_argument("--uncaught", action="store_true")
    ap.add_argument("--alloc-conf")
    ap.add_argument("--free", action="append", default=[], metavar="NAME")
    ap.add_argument("--empty-cache-after-free", action="store_true")
    # The checkpoint comes before the request (a debugger attached there sees the OOM happen); the error's
    # message then goes to OUTDIR/oom_message.txt, since the truth was written at the checkpoint.
    ap.add_argument("--checkpoint-before-oom", action="store_true")
    # N more live blocks of 512 bytes (the small pool: 4,096 to a 2 MiB segment), for timing memprof on a
    # state of that size; they take N / 2048 MiB from the device before the scenario starts.
    ap.add_argument("--extra-blocks", type=int, default=0, metavar="N")
    args = ap.parse_args(argv)
    unknown = [n for n in args.free if n not in VARIABLES[args.cause]]
    if unknown:
        ap.error(f"--free {unknown[0]}: the {args.cause} scenario's variables are {', '.join(VARIABLES[args.cause])}")
    return args


ARGS = parse_args(sys.argv[1:])
# The allocator reads its configuration once, when CUDA is first used: set it before torch is even imported.
if ARGS.alloc_conf is not None:
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = ARGS.alloc_conf

import torch  # noqa: E402

import memprof_testbed  # noqa: E402


def mib(n):
    return torch.empty(n * MiB, dtype=torch.uint8, device="cuda")


def main():
    args = ARGS
    if args.history != "none":
        torch.cuda.memory._record_memory_history(stacks=args.history)
    if args.uncaught:
        memprof_testbed.checkpoint_on_uncaught_exception()
    free = set(args.free)
    into_pool = None  # the MemPool the request is made in, if any
    extra = [torch.empty(512, dtype=torch.uint8, device="cuda") for _ in range(args.extra_blocks)]
    if extra:
        memprof_testbed.register("extra", extra)

    if args.cause == "full":
        big = mib(700)
        second = mib(200)
        request = 300 * MiB
    elif args.cause == "fragmentation":
        # Segments sized for earlier, bigger tensors, then reused by smaller ones (a batch that shrank): each
        # 12 MiB request takes the smallest cached block that fits, a whole 20 MiB segment, since the 8 MiB left
        # of the previous one is too small. With expandable segments the 20 MiB tensors share one growing
        # segment, their frees merge into one free range, and the 12 MiB ones are packed at its start instead.
        # (Holes between live tensors, e.g. three of every five 4 MiB tensors freed, would defeat expandable
        # segments as well: every 20 MiB page would keep a live tensor.)
        chunks = [mib(20) for _ in range(45)]
        del chunks
        if args.empty_cache_after_free:
            torch.cuda.empty_cache()
        kept = [mib(12) for _ in range(45)]
        request = 200 * MiB
    elif args.cause == "oversize":
        arena = mib(900)
        del arena  # cached as one unsplit 900 MiB segment
        if args.empty_cache_after_free:
            torch.cuda.empty_cache()
        # The smallest cached block that fits is the 900 MiB one: it is split, and the segment can no longer be
        # released while keep lives (unless max_split_size forbids cutting small requests from big blocks).
        keep = mib(4)
        request = 950 * MiB
    elif args.cause == "other_stream":
        side = torch.cuda.Stream()
        memprof_testbed.note("side_stream", side.cuda_stream)
        with torch.cuda.stream(side):
            arena = mib(700)
            del arena
            if args.empty_cache_after_free:
                torch.cuda.empty_cache()
            keep = mib(4)  # cut from the side stream's cached 700 MiB
        request = 500 * MiB  # on the default stream: the side stream's free 696 MiB is not usable here
    elif args.cause == "private_pool":
        pool = torch.cuda.MemPool()
        memprof_testbed.note("pool_id", list(pool.id))
        with torch.cuda.use_mem_pool(pool):
            x = mib(600)
            del x  # the pool keeps the free segment for itself
        if args.empty_cache_after_free:
            torch.cuda.empty_cache()
        request = 500 * MiB
    elif args.cause == "pending_free":
        side = torch.cuda.Stream()
        memprof_testbed.note("side_stream", side.cuda_stream)
        for _ in range(3):
            staged = mib(250)
            with torch.cuda.stream(side):
                staged.add_(1)
            # Freed while the side stream may still use it: the block waits for an event the fake device
            # completes only when something synchronises.
            staged.record_stream(side)
            del staged
        if args.empty_cache_after_free:
            torch.cuda.empty_cache()  # waits for the events, then releases the three segments
        pool = torch.cuda.MemPool()
        memprof_testbed.note("pool_id", list(pool.id))
        into_pool = pool
        request = 500 * MiB

    # The remedies that delete a variable, then the names of what is still alive.
    if "big" in free:
        del big
    if "second" in free:
        del second
    if "kept" in free:
        del kept
    if "keep" in free:
        del keep
    if "side" in free:
        del side
    if "pool" in free:
        into_pool = None
        del pool
        gc.collect()
    alive = locals()
    for name in ("big", "second", "kept", "keep"):
        if name in alive:
            memprof_testbed.register(name, alive[name])
    del alive

    memprof_testbed.note("cause", args.cause)
    memprof_testbed.note("oom_request_bytes", request)
    if args.checkpoint_before_oom:
        memprof_testbed.checkpoint()
        # First a C++ exception that is no OOM (c10::Error for a negative size): a watcher must let it through.
        try:
            torch.empty(-1, device="cuda")
        except RuntimeError:
            pass
        try:
            wanted = allocate(request, into_pool)
        except torch.OutOfMemoryError as error:
            with open(os.path.join(os.environ["MEMPROF_TESTBED_OUT"], "oom_message.txt"), "w") as f:
                f.write(str(error))
            print(f"caught: {str(error).splitlines()[0]}")
        return
    if args.uncaught:
        wanted = allocate(request, into_pool)
    else:
        try:
            wanted = allocate(request, into_pool)
        except torch.OutOfMemoryError as error:
            memprof_testbed.note("oom_message", str(error))
            memprof_testbed.checkpoint()
            print(f"caught: {str(error).splitlines()[0]}")
            return
    memprof_testbed.register("wanted", wanted)
    memprof_testbed.note("oom_message", None)
    memprof_testbed.checkpoint()
    print("no oom")


def allocate(nbytes, pool):
    if pool is None:
        return torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    with torch.cuda.use_mem_pool(pool):
        return torch.empty(nbytes, dtype=torch.uint8, device="cuda")


if __name__ == "__main__":
    main()
