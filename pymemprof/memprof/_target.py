# _target.py - a target opened once (a core, a live process or a snapshot file) and every analysis of it as a
# method. The walk (or the file's read) is done by the first method that needs it and kept for the others.
import collections
import io
import json
import os
import pickle
import tempfile

from . import _commands
from ._session import MemprofError, Session

_ELF = b"\x7fELF"
_LOADED = "target"  # the session's name for a snapshot file it has read


class _PlainUnpickler(pickle.Unpickler):
    """memprof's pickles hold dicts, lists, str, int, float, bool and None: anything else is refused."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError("memprof's snapshot names a class (%s.%s): refused" % (module, name))


def _unpickle(data):
    return _PlainUnpickler(io.BytesIO(data)).load()


def _is_core(path):
    """Whether PATH is an ELF file (a core); FileNotFoundError and the like as Python raises them."""
    with open(os.fspath(path), "rb") as f:
        return f.read(4) == _ELF


def _word(path):
    """PATH as a command's word: one that starts with '-' would read as an option."""
    path = os.fspath(path)
    return "./" + path if path.startswith("-") else path


def _options(**opts):
    """Command words from keyword options: True a flag, None or False left out, a value after its option."""
    words = []
    for key, value in opts.items():
        if value is None or value is False:
            continue
        words.append(("-" if len(key) == 1 else "--") + key.replace("_", "-"))
        if value is not True:
            words.append(str(value))
    return words


class Target:
    """A core (path), a live process (pid=) or a snapshot file (path: a pickle from _dump_snapshot(), or
    memprof JSON). Use as a context manager, or close() it. sysroot/solib_path as the CLI's --sysroot and
    --solib-path for a core. The other keyword arguments are the session's settings (memprof.settings() lists
    them with their help: units, device, layout, max_blocks, frames, stop); a switch takes True or False. A live
    process is held still (ptrace, as the CLI's --stop) while each method reads it and goes on between them;
    with stop=False it is read while it runs (as --no-stop: read again when it moves under the read, a
    MemprofError "the job was running: use --stop" when it keeps moving). The analyses are methods made from
    memprof's command table: help(memprof.Target.categories) gives a command's keyword arguments."""

    def __init__(self, target=None, *, pid=None, sysroot=None, solib_path=None, **settings):
        self.word = None  # the snapshot file's name in the session; None: the session's own target
        if (target is None) == (pid is None):
            raise TypeError("memprof: give a target (a core or snapshot file) or pid=, not both")
        self._session = Session()
        self._stats_snapshot = None
        try:
            self._session.configure(settings)
            self._open(target, pid, sysroot, solib_path)
        except BaseException:
            self.close()
            raise

    def _open(self, target, pid, sysroot, solib_path):
        s = self._session
        if pid is not None:
            pid = int(pid)
            if pid <= 0 or not os.path.exists("/proc/%d" % pid):
                raise ProcessLookupError("memprof: no process %d" % pid)
            s.use_pid(pid)
            self.origin = "pid %d" % pid
            return
        path = os.fspath(target)
        self.origin = path
        if _is_core(path):
            s.use_core(path, sysroot, solib_path)
            return
        s.use_none("'%s' is a snapshot file, not a process or core" % path)
        s.run(["snapshot", "load", _word(path), _LOADED])
        self.word = _LOADED

    def close(self):
        if getattr(self, "_session", None) is not None:
            self._session.close()
            self._session = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<memprof.Target %s>" % getattr(self, "origin", "?")

    def _at(self):
        """The snapshot word of a command whose snapshot is optional: none for the session's own target (so
        that commands reading more than the allocator, owners or pystack, reach the core or process)."""
        return [] if self.word is None else [self.word]

    def _named(self):
        """The snapshot word of a command that needs one."""
        return "now" if self.word is None else self.word

    def _text(self, *words, **opts):
        return self._run(*words, **opts).decode("utf-8", "replace")

    def _run(self, command, *words, **opts):
        if self._session is None:
            raise ValueError("memprof: the target is closed")
        return self._session.run(command.split() + list(words) + _options(**opts))

    # -- PyTorch's own shapes
    def snapshot(self, owners=False):
        """The dict torch.cuda.memory._snapshot() returns (same keys, types and order); with owners=True each
        block also gets 'owner' and 'category' from the Python heap (keys PyTorch's tools pass over)."""
        snap = _unpickle(self._run("snapshot save", self._named(), "-", format="pickle", owners=owners))
        if self.word is None:
            snap.pop("device_stats", None)  # a walk's snapshot carries them always; _snapshot()'s does not
        return snap

    def memory_stats(self, device=0):
        """The dict torch.cuda.memory_stats(device) returns (an OrderedDict, its keys sorted, as PyTorch's)."""
        if self._stats_snapshot is None:
            self._stats_snapshot = _unpickle(self._run("snapshot save", self._named(), "-", format="pickle",
                                                       stats=True))
        stats = self._stats_snapshot.get("device_stats")
        if not isinstance(stats, list) or not stats:
            raise MemprofError("%s: no memory_stats() here (a snapshot file carries them only when memprof "
                               "saved it with --stats)" % self.origin)
        if not 0 <= device < len(stats):
            raise MemprofError("%s: no device %d (devices 0 to %d)" % (self.origin, device, len(stats) - 1))
        return collections.OrderedDict(sorted(stats[device].items()))

    def summary(self, device=0, abbreviated=False):
        """The text torch.cuda.memory_summary(device, abbreviated) returns."""
        return self._text("summary", *self._at(), device=device, abbreviated=abbreviated)

    # -- _memory_viz's analyses: the text its functions return (the CLI prints it, with print's newline)
    def compare(self, after):
        """The folded flame-graph lines _memory_viz's compare(self's segments, AFTER's) returns: AFTER another
        Target, a core or a snapshot file."""
        if isinstance(after, Target):
            return self._compare_with(after)
        if _is_core(after):
            with Target(after) as t:
                return self._compare_with(t)
        return self._compare_file(_word(after))

    def _compare_with(self, after):
        # Another session's snapshot reaches this one as a file.
        with tempfile.NamedTemporaryFile(suffix=".pickle") as f:
            f.write(after._run("snapshot save", after._named(), "-", format="pickle"))
            f.flush()
            return self._compare_file(f.name)

    def _compare_file(self, path):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "compare.txt")
            self._run("compare", self._named(), path, o=out)  # stdout: only_before/only_after, as PyTorch prints
            with open(out, encoding="utf-8", errors="replace") as f:
                return f.read()

    def block(self, address):
        return self._text("block", "0x%x" % address if isinstance(address, int) else str(address), *self._at())

    def command(self, *words):
        """Any command of `memprof help` on this target, as the CLI's words after the command's name: its text."""
        if not words:
            raise TypeError("memprof: command() needs a command name")
        return self._text(words[0], *words[1:], *self._at())


def install_analyses(lib):
    """Give Target a method per analysis of the command table (_commands.py) that it does not define itself
    (those above keep PyTorch's shapes); their names."""
    names = []
    for command in _commands.analyses(lib):
        if not hasattr(Target, command.name):
            setattr(Target, command.name, _commands.method_for(command))
            names.append(command.name)
    return names
