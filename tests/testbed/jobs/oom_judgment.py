"""Out-of-memory errors on which a rule of thumb gives the wrong answer, so that memprof's claims about them are
checked by running the job again (tests/oom/judgment.sh). The device is FAKECUDA_CAPACITY (the list sets it per
case); sizes below assume it.

  page        (138 MiB) `big` 120 MiB, then 8 MiB asked: cudaMalloc is asked for 20 MiB, 18 MiB is free. With
              expandable_segments:True the large pool maps pages of 20 MiB, so the request cannot be mapped in the
              18 MiB either: an OOM all the same (a model of 2 MiB pages says it fits)
  holes       (490 MiB) `arena` 400 MiB freed, then 20 tensors of 19 MiB cut from its cached segment and every other
              one deleted (`kept`: 19 MiB live blocks between 19 MiB holes), then 120 MiB asked. With expandable
              segments the holes hold no whole 20 MiB page: they would not help (counting 2 MiB pages says they do)
  own_split   (140 MiB, the job sets max_split_size_mb:21) `a` and `b` 60 MiB freed (cached), `c` and `d` 45 MiB
              each take a whole 60 MiB segment (max_split_size keeps it from being split), then `e` and `f` 12 MiB:
              `f` runs out. Without the job's own setting the 15 MiB rests serve both

  step        (256 MiB) a training loop whose every step makes the same requests from the same lines (a batch, a
              forward that saves activations, a backward in the autograd engine's thread, an update), and keeps
              16 MiB more each step (`kept`), until a request of some step runs out: the ring holds the steps
              before, so claims can be made for the whole step

usage: oom_judgment.py --case CASE [--history none|python|all] [--alloc-conf CONF] [--free NAME]...
                       [--empty-cache-after LINE] [--until-step K]

The error is caught and the checkpoint taken inside the `except` (notes oom_message, oom_request_bytes); when no
error comes, after the request, with oom_message null ("no oom"). --alloc-conf sets PYTORCH_CUDA_ALLOC_CONF before
torch is imported (the re-runs of memprof's claims); "-" unsets it. --empty-cache-after LINE calls
torch.cuda.empty_cache() each time a line of this script's main() runs right after LINE did (a line tracer on
this file's frames only), as memprof's "empty_cache() after the free at oom_judgment.py:LINE" asks.
"""
import argparse
import os
import sys

CASES = ("page", "holes", "own_split", "step")
MiB = 1 << 20

ap = argparse.ArgumentParser()
ap.add_argument("--case", choices=CASES, required=True)
ap.add_argument("--history", choices=("none", "python", "all"), default="none")
ap.add_argument("--alloc-conf")
ap.add_argument("--free", action="append", default=[], metavar="NAME")
ap.add_argument("--empty-cache-after", type=int, metavar="LINE")
# step: stop once step K is complete (a re-run of a claim about the OOM's step)
ap.add_argument("--until-step", type=int, metavar="K")
ARGS = ap.parse_args()
if ARGS.alloc_conf is not None:
    if ARGS.alloc_conf == "-":
        os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    else:
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = ARGS.alloc_conf

import torch  # noqa: E402

import memprof_testbed  # noqa: E402


def mib(n):
    return torch.empty(int(n * MiB), dtype=torch.uint8, device="cuda")


def empty_cache_after(line):
    """A tracer that calls empty_cache() once LINE of this file has run (at the next line event of its frame)."""
    here = os.path.abspath(__file__)
    last = {}  # frame -> the line it ran last

    def local(frame, event, arg):
        if event == "line":
            if last.get(id(frame)) == line and frame.f_lineno != line:
                torch.cuda.empty_cache()
            last[id(frame)] = frame.f_lineno
        return local

    def calls(frame, event, arg):
        return local if event == "call" and os.path.abspath(frame.f_code.co_filename) == here else None

    sys.settrace(calls)


def main():
    if ARGS.history != "none":
        torch.cuda.memory._record_memory_history(stacks=ARGS.history)
    live = {}
    if ARGS.case == "page":
        live["big"] = mib(120)
        request = 8 * MiB
    elif ARGS.case == "holes":
        arena = mib(400)
        del arena  # one cached 400 MiB segment
        pieces = [mib(19) for _ in range(20)]  # cut from it, one after the other
        live["kept"] = pieces[0::2]
        del pieces  # the odd ones go: 19 MiB holes between 19 MiB live blocks
        request = 120 * MiB
    elif ARGS.case == "step":
        return steps()
    else:
        a, b = mib(60), mib(60)
        del a, b  # two cached 60 MiB segments
        live["c"], live["d"] = mib(45), mib(45)
        live["e"] = mib(12)
        request = 12 * MiB
    for name in ARGS.free:
        live.pop(name, None)
    for name, value in live.items():
        memprof_testbed.register(name, value)
    memprof_testbed.note("case", ARGS.case)
    memprof_testbed.note("oom_request_bytes", request)
    try:
        wanted = torch.empty(request, dtype=torch.uint8, device="cuda")
    except torch.OutOfMemoryError as error:
        memprof_testbed.note("oom_message", str(error))
        memprof_testbed.checkpoint()
        print(f"caught: {str(error).splitlines()[0]}")
        return
    memprof_testbed.register("wanted", wanted)
    memprof_testbed.note("oom_message", None)
    memprof_testbed.checkpoint()
    print("no oom")


def steps():
    """The step case: a forward that saves activations, a backward (the autograd engine's own thread, no Python
    frames) that frees them, an optimizer's update; the same requests every step and 16 MiB more kept each
    time; notes the step that ran out."""
    weight = torch.zeros(MiB // 4, dtype=torch.float32, device="cuda", requires_grad=True)  # 1 MiB: the big
    # requests are the main thread's (a batch, what is kept), so that the OOM's state is the one read
    kept = []
    memprof_testbed.register("kept", kept)
    step = 0
    try:
        while ARGS.until_step is None or step <= ARGS.until_step:
            batch = mib(30)
            temporary = mib(20)
            workspace = mib(10)
            activation = weight * 2  # saved for backward
            hidden = activation * activation  # saved too
            loss = hidden.sum()
            loss.backward()  # frees what the graph saved, makes weight.grad once
            kept.append(mib(16))
            del batch
            grads = mib(40)
            with torch.no_grad():
                weight -= 0.1 * weight.grad  # a temporary of the update
            del temporary, workspace, grads, activation, hidden, loss
            step += 1
    except torch.OutOfMemoryError as error:
        memprof_testbed.note("oom_step", step)
        memprof_testbed.note("oom_message", str(error))
        memprof_testbed.checkpoint()
        print(f"caught in step {step}: {str(error).splitlines()[0]}")
        return
    memprof_testbed.note("oom_message", None)
    memprof_testbed.checkpoint()
    print(f"no oom: {step} steps")


if __name__ == "__main__":
    if ARGS.empty_cache_after is not None:
        empty_cache_after(ARGS.empty_cache_after)  # before main() is called, so that its frame is traced
    sys.exit(main())
