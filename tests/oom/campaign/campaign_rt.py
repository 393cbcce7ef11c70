"""campaign_rt - the harness side of a generated campaign job (gen.py writes the job; this file is copied next
to it). The job itself is ordinary training code; it calls this module for four things only:

    import campaign_rt as rt
    cfg = rt.setup()              # before `import torch`: its knobs (spec + --set), PYTORCH_CUDA_ALLOC_CONF
    import torch
    rt.started()                  # memory fraction, memory history, then the test bed's checkpoint (a watch
                                  # attaches there in live mode), and the --empty-cache-after tracer
    for step in range(cfg["steps"]):
        with rt.step(step):       # one optimizer step; an OOM in it ends the job (recorded), and so does the
            ...                   # end of --stop-after-step

The record (OUTDIR/record.json, OUTDIR being the working directory that tests/testbed/job.sh gives the job):
  steps         [{"step", "completed", "allocations"}]: allocations = memory_stats()["allocation.all.allocated"]
                at the step's end (allocations made so far: the order of requests does not depend on allocator
                settings, so a re-run with other settings makes the same ones)
  oom           null, or {"step", "ordinal", "message"}: ordinal = allocations made before it + 1 (the
                failing request is the next one, counted from 1)
  peaks         per step {"allocated", "reserved"} (peak bytes of the step; the calibration run sizes the device)
  conf          the PYTORCH_CUDA_ALLOC_CONF the job ran with (null: unset); empty_cache_calls: how many times the
                tracer called torch.cuda.empty_cache()

Arguments (after the job's own script path): SPEC.json [--set KEY=JSON]... [--conf VALUE | --no-conf]
[--empty-cache-after FILE:LINE] [--stop-after-step N].
  --conf VALUE / --no-conf       PYTORCH_CUDA_ALLOC_CONF for this run instead of the spec's "alloc_conf"
  --empty-cache-after FILE:LINE  torch.cuda.empty_cache() each time that line (FILE: a base name, as memprof
                                 prints it) has run: a line tracer on the code objects of files of that name
                                 (sys.settrace: CPython 3.11 and 3.13 alike)
  --set KEY=JSON                 change one knob of the spec (a holder remedy: batch, checkpointing, autocast)
"""
import json
import os
import sys

_state = {"cfg": None, "record": None, "stop_after": None, "torch": None, "empty_cache_after": None}


def _out():
    return os.environ.get("MEMPROF_TESTBED_OUT") or os.getcwd()


def _write_record():
    rec = _state["record"]
    path = os.path.join(_out(), "record.json")
    with open(path + ".tmp", "w") as f:
        json.dump(rec, f, indent=1)
    os.replace(path + ".tmp", path)


def _parse(argv):
    if not argv:
        raise SystemExit("usage: JOB.py SPEC.json [--set KEY=JSON]... [--conf VALUE|--no-conf] "
                         "[--empty-cache-after FILE:LINE] [--stop-after-step N]")
    with open(argv[0]) as f:
        cfg = json.load(f)
    conf = cfg.get("alloc_conf")
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--set":
            key, _, value = argv[i + 1].partition("=")
            cfg[key] = json.loads(value)
            i += 2
        elif a == "--conf":
            conf = argv[i + 1]
            i += 2
        elif a == "--no-conf":
            conf = None
            i += 1
        elif a == "--empty-cache-after":
            f, _, line = argv[i + 1].rpartition(":")
            _state["empty_cache_after"] = (f, int(line))
            i += 2
        elif a == "--stop-after-step":
            _state["stop_after"] = int(argv[i + 1])
            i += 2
        else:
            raise SystemExit("campaign_rt: unknown argument %r" % a)
    cfg["alloc_conf"] = conf if conf else None
    return cfg


def setup():
    """The job's knobs; sets PYTORCH_CUDA_ALLOC_CONF (read once, when CUDA is first used) before torch loads."""
    cfg = _parse(sys.argv[1:])
    if cfg["alloc_conf"]:
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = cfg["alloc_conf"]
    else:
        os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    _state["cfg"] = cfg
    _state["record"] = {"seed": cfg.get("seed"), "conf": cfg["alloc_conf"], "steps": [], "oom": None, "peaks": [],
                        "empty_cache_calls": 0, "stop_after_step": _state["stop_after"],
                        "overrides": [a for a in sys.argv[2:]]}
    return cfg


def _allocations():
    return int(_state["torch"].cuda.memory_stats().get("allocation.all.allocated", 0))


def _install_tracer(torch, target):
    """torch.cuda.empty_cache() after each run of FILE:LINE: a local tracer on the frames of code objects
    whose file has that base name; the line has run when the frame reaches its next line or returns."""
    base, line = target
    after = {}  # frame -> True once the target line started in it

    def fire():
        torch.cuda.empty_cache()
        _state["record"]["empty_cache_calls"] += 1

    def local(frame, event, arg):
        if event == "line":
            if after.pop(frame, False):
                fire()
            if frame.f_lineno == line:
                after[frame] = True
        elif event == "return":
            if after.pop(frame, False):
                fire()
        return local

    def glob(frame, event, arg):
        if event == "call" and os.path.basename(frame.f_code.co_filename) == base:
            return local
        return None

    sys.settrace(glob)
    import threading
    threading.settrace(glob)


def started():
    """After `import torch`: the memory fraction, the memory history, the checkpoint, the tracer."""
    import torch
    import memprof_testbed
    _state["torch"] = torch
    cfg = _state["cfg"]
    torch.cuda.init()
    if cfg.get("memory_fraction"):
        torch.cuda.set_per_process_memory_fraction(cfg["memory_fraction"])
    if cfg.get("history") in ("python", "all"):
        torch.cuda.memory._record_memory_history(stacks=cfg["history"], max_entries=cfg.get("history_entries",
                                                                                            100000))
    # live mode: the job waits here for the watch to attach (the runner touches RESUME once it is)
    memprof_testbed.checkpoint()
    if _state["empty_cache_after"] is not None:
        _install_tracer(torch, _state["empty_cache_after"])
    _write_record()


class step:
    """One optimizer step of the job: its completion, its allocations and peaks, and its OOM."""

    def __init__(self, i):
        self.i = i

    def __enter__(self):
        self.torch = _state["torch"]
        self.torch.cuda.reset_peak_memory_stats()
        return self

    def __exit__(self, kind, value, tb):
        torch = self.torch
        rec = _state["record"]
        stats = torch.cuda.memory_stats()
        rec["peaks"].append({"allocated": int(stats.get("allocated_bytes.all.peak", 0)),
                             "reserved": int(stats.get("reserved_bytes.all.peak", 0))})
        if kind is not None and issubclass(kind, torch.OutOfMemoryError):
            sys.settrace(None)
            rec["steps"].append({"step": self.i, "completed": False, "allocations": _allocations()})
            rec["oom"] = {"step": self.i, "ordinal": _allocations() + 1, "message": str(value)}
            _write_record()
            print("campaign: OOM at step %d, request #%d" % (self.i, rec["oom"]["ordinal"]))
            sys.stdout.flush()
            os._exit(0)  # the job ends at its first OOM (no unwinding that could allocate)
        if kind is not None:
            return False
        rec["steps"].append({"step": self.i, "completed": True, "allocations": _allocations()})
        _write_record()
        if _state["stop_after"] is not None and self.i >= _state["stop_after"]:
            sys.settrace(None)
            print("campaign: stopped after step %d" % self.i)
            sys.stdout.flush()
            os._exit(0)
        return False


def finished():
    """The job ran all its steps without an OOM."""
    _write_record()
