"""memprof_testbed: what a job script run by tests/testbed/job.sh calls to mark the moment memprof looks at.

    import memprof_testbed
    memprof_testbed.register("model", model)        # optional: names for the manifest
    with memprof_testbed.mem_tracker(model, opt):   # optional: PyTorch's own MemTracker runs alongside
        ... train ...
        memprof_testbed.checkpoint()

checkpoint() writes the truth files into the runner's OUTDIR (snapshot.pickle, memory_stats.json, manifest.json,
threads.txt, mem_tracker.json when a tracker runs, notes.json: what the script noted), then, by the runner's MODE
(live, gcore and kernel also write threads-stop.txt, every thread's stack where the process then stays):
    truth   returns;
    live    writes OUTDIR/pid and OUTDIR/READY and waits, until OUTDIR/RESUME exists (then returns) or the
            process is killed;
    gcore   writes OUTDIR/READY and waits to be dumped and killed;
    kernel  aborts (SIGABRT), leaving a kernel core in the process's working directory (OUTDIR).
Outside the runner (no MEMPROF_TESTBED_OUT), checkpoint() does nothing, so a job script also runs on its own.
Only one checkpoint per run: the truth describes one moment.

Under tests/testbed/dist.sh (torchrun; MEMPROF_TESTBED_RANKS=1 and torchrun's RANK set) each rank writes into its
own OUTDIR/rank-RANK/, made on the way. checkpoint(go_on=True) in live mode writes the truth, pid and READY and
returns instead of waiting: the rank goes on to where the script makes it hang (a collective another rank never
enters), and a debugger finds it there; in the other modes go_on changes nothing.
"""
import contextlib
import faulthandler
import json
import os
import pickle
import sys
import time

from . import manifest as _manifest

_registered = []        # (name, object) in registration order
_notes = {}             # note(key, value): facts the script knows, for the truth (e.g. an OOM's message)
_trackers = []          # MemTracker instances started through mem_tracker()
_done = False


def register(name, obj):
    """Name obj (a module, an optimizer, a tensor, or a dict/list/tuple of them) in the manifest."""
    _registered.append((str(name), obj))
    return obj


def note(key, value):
    """Record a fact for the truth (notes.json), e.g. note("oom_message", str(error)); value must be JSON-able."""
    _notes[str(key)] = value
    return value


class _NoTracker(contextlib.nullcontext):
    """What mem_tracker() gives where the release has no MemTracker."""

    def reset_mod_stats(self):
        pass


def mem_tracker(*objects):
    """A started-on-enter PyTorch MemTracker (torch.distributed._tools.mem_tracker) that tracks objects
    (modules, optimizers); checkpoint() writes its breakdown next to the truth. Releases before 2.5 have no
    MemTracker: then a tracker that tracks nothing (no mem_tracker.json; a note says why)."""
    try:
        from torch.distributed._tools.mem_tracker import MemTracker
    except ImportError:
        import torch
        note("mem_tracker", "absent: torch %s has no torch.distributed._tools.mem_tracker" % torch.__version__)
        return _NoTracker()
    tracker = MemTracker()
    if objects:
        tracker.track_external(*objects)
    _trackers.append(tracker)
    return tracker


def checkpoint_on_uncaught_exception():
    """Take the checkpoint when an exception escapes the script (a crash, as a post-mortem sees it): the
    excepthook checkpoints with the exception in hand, then Python reports it and exits with status 1 as usual
    (in kernel mode the checkpoint aborts first). The runner accepts that status after such a checkpoint."""
    previous = sys.excepthook

    def hook(kind, value, traceback):
        out = _out()
        if out and not _done:
            name = f"{kind.__module__}.{kind.__qualname__}"
            note("uncaught", {"type": name, "message": str(value)})
            _write(out, "UNCAUGHT", lambda f: f.write(name + "\n"))
            checkpoint()
        previous(kind, value, traceback)

    sys.excepthook = hook


def raised_in(error, parts=("backward", "forward", "step")):
    """The first of PARTS that names a function the exception ERROR passed through (its traceback), else
    "elsewhere": where in a training step an error came from, for notes."""
    names = []
    tb = error.__traceback__
    while tb is not None:
        names.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    return next((part for part in parts if part in names), "elsewhere")


def _out():
    out = os.environ.get("MEMPROF_TESTBED_OUT")
    rank = os.environ.get("RANK")
    if out and os.environ.get("MEMPROF_TESTBED_RANKS") == "1" and rank is not None:
        out = os.path.join(out, f"rank-{int(rank)}")
        os.makedirs(out, exist_ok=True)
    return out


def _write(out, name, write, binary=False):
    """Writes OUTDIR/name through a temporary file, so a reader never sees half a truth file."""
    path = os.path.join(out, name)
    with open(path + ".tmp", "wb" if binary else "w") as f:
        write(f)
    os.replace(path + ".tmp", path)


def _write_truth(out):
    import torch
    snapshot = torch.cuda.memory._snapshot()
    # After the snapshot, so that its own work (symbolizing frames) is not in it; none of these allocate
    # device memory.
    stats = {str(d): torch.cuda.memory_stats(d) for d in range(torch.cuda.device_count())}
    _write(out, "snapshot.pickle", lambda f: pickle.dump(snapshot, f), binary=True)
    _write(out, "memory_stats.json", lambda f: json.dump(stats, f, indent=1, sort_keys=True))
    entries = _manifest.collect(_registered)
    _write(out, "manifest.json", lambda f: json.dump(entries, f, indent=1))
    # faulthandler writes to a file descriptor: give it the temporary file itself.
    _write(out, "threads.txt", lambda f: (f.flush(), faulthandler.dump_traceback(f, all_threads=True)))
    _write(out, "notes.json", lambda f: json.dump(_notes, f, indent=1))
    for i, tracker in enumerate(_trackers):
        suffix = "" if i == 0 else f".{i + 1}"
        _write(out, f"mem_tracker{suffix}.json", lambda f: json.dump(_manifest.tracker_table(tracker), f, indent=1))


def _stopped(f, stop, ready, first):
    """After the dump in _park: publish threads-stop.txt whole, say READY, and wait from then on."""
    f.flush()
    os.replace(f.name, stop)
    ready()
    first.clear()


def _park(out, resume, ready):
    """Waits until RESUME exists. First it writes threads-stop.txt: faulthandler's dump of every thread made from
    the very line the wait then sleeps on (one line: the dump, the sleep), so that what a debugger, a gcore or
    `memprof pystack` sees of the stacks is that dump; then it calls READY()."""
    stop = os.path.join(out, "threads-stop.txt")
    first = [True]
    with open(stop + ".tmp", "w") as f:
        while not os.path.exists(resume): (faulthandler.dump_traceback(f, all_threads=True), _stopped(f, stop, ready, first)) if first else time.sleep(0.05)  # noqa: E501


def _abort(out):
    """Kernel mode: the dump of every thread, then abort, in one line, so threads-stop.txt shows the stacks the
    kernel core holds (faulthandler writes to the file descriptor: the bytes are the kernel's before the abort)."""
    with open(os.path.join(out, "threads-stop.txt"), "w") as f:
        f.flush(); faulthandler.dump_traceback(f, all_threads=True) or os.abort()  # noqa: E702


def checkpoint(go_on=False):
    """Marks the moment to look at (see the module's doc); go_on: in live mode, do not wait here."""
    global _done
    out = _out()
    if not out:
        return
    if _done:
        raise RuntimeError("memprof_testbed.checkpoint() called twice: the runner takes one moment per run")
    _done = True
    mode = os.environ.get("MEMPROF_TESTBED_MODE", "truth")
    _write_truth(out)
    sys.stdout.flush()
    sys.stderr.flush()
    if mode == "truth":
        _write(out, "READY", lambda f: f.write(f"{os.getpid()}\n"))
        return
    if mode == "kernel":
        _write(out, "READY", lambda f: f.write(f"{os.getpid()}\n"))
        _abort(out)
    _write(out, "pid", lambda f: f.write(f"{os.getpid()}\n"))
    if go_on and mode == "live":
        _write(out, "READY", lambda f: f.write(f"{os.getpid()}\n"))
        return
    # live: a debugger attaches, then the runner (or a test) lets the job go on with RESUME, or kills it.
    # gcore: the runner dumps and kills the process while it waits here.
    _park(out, os.path.join(out, "RESUME"), lambda: _write(out, "READY", lambda f: f.write(f"{os.getpid()}\n")))
