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
from . import _library
from ._session import MemprofError, MemprofWarning, library
from ._target import Target, install_analyses

try:
    from ._version import version as __version__
except ImportError:  # the package run from the source tree
    __version__ = "unknown"

_OPEN_WORDS = ("pid", "sysroot", "solib_path")


def open(target=None, *, pid=None, sysroot=None, solib_path=None, **settings):
    """A Target: a core or snapshot file (a path) or a live process (pid=), read once for every analysis (a live
    process: held still while each analysis reads it, unless stop=False). SETTINGS: see settings()."""
    return Target(target, pid=pid, sysroot=sysroot, solib_path=solib_path, **settings)


def library_version():
    """The version of the libmemprof this package loaded."""
    return library().mp_session_version().decode()


def settings():
    """The session's settings memprof.open() takes, {keyword: (default, help)}, from the library's table."""
    return {t.name.replace("-", "_"): (t.default, t.help) for t in _library.settings(library())}


def _one_shot(name):
    """A module-level function: open the target (with the settings among the keyword arguments), run
    Target.NAME, close it."""
    method = getattr(Target, name)

    def run(target=None, *args, **kwargs):
        opening = set(_OPEN_WORDS) | set(settings())
        opts = {k: kwargs.pop(k) for k in list(kwargs) if k in opening}
        with Target(target, **opts) as t:
            return method(t, *args, **kwargs)

    run.__name__ = run.__qualname__ = name
    run.__doc__ = (method.__doc__ or "Target.%s on TARGET." % name) + \
        "\n\nTARGET: a core or snapshot file path, or pid=PID; the settings of memprof.open() as keywords too."
    return run


def compare(before, after, *, sysroot=None, solib_path=None, **settings):
    """_memory_viz's compare(before, after) text: BEFORE and AFTER cores, snapshot files or Targets."""
    if isinstance(before, Target):
        return before.compare(after)
    with Target(before, sysroot=sysroot, solib_path=solib_path, **settings) as t:
        return t.compare(after)


_own = ["snapshot", "memory_stats", "summary"]
try:
    _analyses = install_analyses(library())
    _load_error = None
except MemprofError as e:  # no library: memprof.X raises why when used
    _analyses, _load_error = [], e
for _name in _own + _analyses:
    globals()[_name] = _one_shot(_name)

__all__ = ["MemprofError", "MemprofWarning", "Target", "open", "compare", "library_version", "settings"] + \
    _own + _analyses


def __getattr__(name):
    if _load_error is not None and not name.startswith("_"):
        raise _load_error
    raise AttributeError("module 'memprof' has no attribute '%s'" % name)
