"""memprof: where a PyTorch job's GPU memory went, read from outside the job.

memprof reads the CUDA caching allocator's state from a core dump, a live process (pid=) or a snapshot file that
torch.cuda.memory._dump_snapshot() wrote, without torch and without the job's help:

    >>> import memprof
    >>> snap = memprof.snapshot("core.1234")        # what torch.cuda.memory._snapshot() returned in the job
    >>> from torch.cuda import _memory_viz
    >>> print(_memory_viz.segsum(snap))
    >>> memprof.memory_stats("core.1234", device=0)  # torch.cuda.memory_stats(0)
    >>> memprof.categories("core.1234")["devices"]   # bytes per category, as data

Every function takes the target first (a path, or pid=PID); memprof.open(target) keeps one walk for several
analyses. Failures raise MemprofError with memprof's one-line reason; a damaged target gives a partial result
and a MemprofWarning. The library releases the GIL while it reads. The CLI is `memprof` (`memprof --help`);
`python -m memprof.gdb` tells gdb where the command set is.
"""
from ._session import MemprofError, MemprofWarning, library
from ._target import Target

try:
    from ._version import version as __version__
except ImportError:  # the package run from the source tree
    __version__ = "unknown"

__all__ = ["MemprofError", "MemprofWarning", "Target", "open", "snapshot", "memory_stats", "summary", "segsum",
           "segments", "memory", "trace", "compare", "categories", "owners", "oom", "pystack", "timeline", "info",
           "library_version"]


def open(target=None, *, pid=None, sysroot=None, solib_path=None, frames=True, stop=True):
    """A Target: a core or snapshot file (a path) or a live process (pid=), read once for every analysis (a live
    process: held still while each analysis reads it, unless stop=False)."""
    return Target(target, pid=pid, sysroot=sysroot, solib_path=solib_path, frames=frames, stop=stop)


def library_version():
    """The version of the libmemprof this package loaded."""
    return library().mp_session_version().decode()


def _one_shot(name):
    """A module-level function: open the target, run Target.NAME, close it."""
    method = getattr(Target, name)

    def run(target=None, *args, pid=None, sysroot=None, solib_path=None, frames=True, stop=True, **kwargs):
        with Target(target, pid=pid, sysroot=sysroot, solib_path=solib_path, frames=frames, stop=stop) as t:
            return method(t, *args, **kwargs)

    run.__name__ = run.__qualname__ = name
    run.__doc__ = (method.__doc__ or "Target.%s on TARGET." % name) + \
        "\n\nTARGET: a core or snapshot file path, or pid=PID (see memprof.open)."
    return run


snapshot = _one_shot("snapshot")
memory_stats = _one_shot("memory_stats")
summary = _one_shot("summary")
segsum = _one_shot("segsum")
segments = _one_shot("segments")
memory = _one_shot("memory")
trace = _one_shot("trace")
categories = _one_shot("categories")
owners = _one_shot("owners")
oom = _one_shot("oom")
pystack = _one_shot("pystack")
timeline = _one_shot("timeline")
info = _one_shot("info")


def compare(before, after, *, sysroot=None, solib_path=None, frames=True):
    """_memory_viz's compare(before, after) text: BEFORE and AFTER cores, snapshot files or Targets."""
    if isinstance(before, Target):
        return before.compare(after)
    with Target(before, sysroot=sysroot, solib_path=solib_path, frames=frames) as t:
        return t.compare(after)
