"""campaign_rt - the harness side of a generated campaign job (gen.py writes the job; this file is copied next
to it). The job itself is ordinary training code; it calls this module for four things only:

    import campaign_rt as rt
    cfg = rt.setup()              # before `import torch`: its knobs (spec + --set), PYTORCH_CUDA_ALLOC_CONF
    import torch
    rt.started()                  # memory fraction, memory history, then the test bed's checkpoint (a watch
                                  # attaches there in live mode)
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
                job called torch.cuda.empty_cache() where --empty-cache-after wrote it

Arguments (after the job's own script path): SPEC.json [--set KEY=JSON]... [--conf VALUE | --no-conf]
[--empty-cache-after FILE:LINE] [--stop-after-step N] [--parity DIR].
  --conf VALUE / --no-conf       PYTORCH_CUDA_ALLOC_CONF for this run instead of the spec's "alloc_conf"
  --empty-cache-after FILE:LINE  torch.cuda.empty_cache() written after that line of the job (FILE: its base
                                 name, as memprof prints it): the job runs again from its top, compiled from its
                                 source with the call inserted (line numbers kept), so the call runs each time the
                                 line has run, in any thread (checkpointed blocks run again in autograd's)
  --set KEY=JSON                 change one knob of the spec (a holder remedy: batch, checkpointing, autocast)
  --parity DIR                   record the steps with PyTorch's memory profiler beside the memory history
                                 (tests/categories/parity/profiler_oracle.py, copied next to the job): DIR (under
                                 the working directory) gets snapshot.pickle and profiler_categories.json when the
                                 job stops (its end, or --stop-after-step); the test bed's checkpoint comes then,
                                 not at the start
"""
import json
import os
import sys

_state = {"cfg": None, "record": None, "stop_after": None, "torch": None, "empty_cache_after": None, "parity": None,
          "recording": None}


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
        elif a == "--parity":
            _state["parity"] = argv[i + 1]
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
    if _state["empty_cache_after"] is not None and not _state.get("patched"):
        _run_patched(_state["empty_cache_after"])
    _state["cfg"] = cfg
    _state["record"] = {"seed": cfg.get("seed"), "conf": cfg["alloc_conf"], "steps": [], "oom": None, "peaks": [],
                        "empty_cache_calls": 0, "stop_after_step": _state["stop_after"],
                        "overrides": [a for a in sys.argv[2:]]}
    return cfg


def _allocations():
    return int(_state["torch"].cuda.memory_stats().get("allocation.all.allocated", 0))


def fire_empty_cache():
    """What --empty-cache-after writes into the job after its line."""
    _state["torch"].cuda.empty_cache()
    _state["record"]["empty_cache_calls"] += 1


def _insert_after(tree, line):
    """Writes fire_empty_cache() after each statement of TREE that starts at LINE (before it, where nothing after
    it runs: `return X` becomes `_rt_ret = X`, the call, `return _rt_ret`); the new nodes carry LINE, every other
    statement keeps its own. Returns how many were written."""
    import ast

    def fire(at):
        stmt = ast.parse("__import__('campaign_rt').fire_empty_cache()").body[0]
        for n in ast.walk(stmt):
            n.lineno, n.end_lineno, n.col_offset, n.end_col_offset = at.lineno, at.end_lineno, at.col_offset, at.col_offset
        return stmt

    written = 0
    for node in list(ast.walk(tree)):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list) or not any(isinstance(s, ast.stmt) and s.lineno == line for s in stmts):
                continue
            out = []
            for s in stmts:
                if not isinstance(s, ast.stmt) or s.lineno != line:
                    out.append(s)
                elif isinstance(s, ast.Return) and s.value is not None:
                    keep = ast.copy_location(ast.Assign([ast.Name("_rt_ret", ast.Store())], s.value), s)
                    back = ast.copy_location(ast.Return(ast.Name("_rt_ret", ast.Load())), s)
                    out += [keep, fire(s), back]
                elif isinstance(s, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
                    out += [fire(s), s]
                else:
                    out += [s, fire(s)]
                written += isinstance(s, ast.stmt) and s.lineno == line
            setattr(node, field, out)
    ast.fix_missing_locations(tree)
    return written


def _run_patched(target):
    """The job run again from its top with fire_empty_cache() written after its line TARGET (FILE: the job's
    base name), as a user writes torch.cuda.empty_cache() after a line: then it runs in whatever thread runs the
    line (autograd's threads recompute checkpointed blocks in backward; a line tracer, set per thread, misses
    those). Line numbers stay the job's. Does not return."""
    import ast
    main = sys.modules["__main__"]
    base, line = target
    if os.path.basename(main.__file__) != base:
        raise SystemExit("campaign_rt: --empty-cache-after %s:%d names no line of the job (%s)" % (
            base, line, os.path.basename(main.__file__)))
    with open(main.__file__) as f:
        tree = ast.parse(f.read(), main.__file__)
    if _insert_after(tree, line) == 0:
        raise SystemExit("campaign_rt: no statement of %s starts at line %d" % (base, line))
    _state["patched"] = True
    exec(compile(tree, main.__file__, "exec"), main.__dict__)
    sys.exit(0)


def started():
    """After `import torch`: the memory fraction, the memory history, the checkpoint."""
    import torch
    import memprof_testbed
    _state["torch"] = torch
    cfg = _state["cfg"]
    torch.cuda.init()
    if cfg.get("memory_fraction"):
        torch.cuda.set_per_process_memory_fraction(cfg["memory_fraction"])
    if _state["parity"] is not None:  # both recorders, from here to the job's stop
        import profiler_oracle
        _state["recording"] = profiler_oracle.recording(os.path.join(_out(), _state["parity"]),
                                                        stacks=cfg.get("history") or "python")
        _state["recording"].__enter__()
    elif cfg.get("history") in ("python", "all"):
        torch.cuda.memory._record_memory_history(stacks=cfg["history"], max_entries=cfg.get("history_entries",
                                                                                            100000))
    # live mode: the job waits here for the watch to attach (the runner touches RESUME once it is); a parity
    # job stops where its recording ends instead (gcore: the core holds what the profiler saw)
    if _state["parity"] is None:
        memprof_testbed.checkpoint()
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
            _stop_recording()
            print("campaign: stopped after step %d" % self.i)
            sys.stdout.flush()
            os._exit(0)
        return False


def _stop_recording():
    if _state["recording"] is not None:
        _state["recording"].__exit__(None, None, None)
        _state["recording"] = None
        import memprof_testbed
        memprof_testbed.checkpoint()


def finished():
    """The job ran all its steps without an OOM."""
    _stop_recording()
    _write_record()
