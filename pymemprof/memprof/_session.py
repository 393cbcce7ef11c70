# _session.py - one libmemprof session (mp_session.h) as a Python object: a target, commands run on it, their
# output as bytes, failures as MemprofError, warnings through the warnings module.
import os
import threading
import warnings

from . import _library

_lib = None
_lib_lock = threading.Lock()


class MemprofError(Exception):
    """A memprof command failed. str() is memprof's one-line reason; .warnings what it warned of first."""

    def __init__(self, message, warnings=()):
        super().__init__(message)
        self.warnings = list(warnings)


class MemprofWarning(UserWarning):
    """Something memprof read was damaged or not as expected; the result is partial or says how."""


def library_path():
    """MEMPROF_LIBRARY, else the libmemprof.so.0 this package carries (a wheel's)."""
    env = os.environ.get("MEMPROF_LIBRARY")
    if env:
        return env
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lib", "libmemprof.so.0")


def library():
    """libmemprof, loaded once (MemprofError when it cannot be)."""
    global _lib
    with _lib_lock:
        if _lib is None:
            try:
                from ._version import version
            except ImportError:  # the package run from the source tree: any built library
                version = None
            try:
                _lib = _library.load(library_path(), version, "this memprof package")
            except _library.LoadError as e:
                raise MemprofError(str(e)) from None
        return _lib


class Session:
    """A session on one target. Not for use from two threads at once (each thread: its own Session)."""

    def __init__(self):
        self.lib = library()
        self.s = self.lib.mp_session_new()
        if not self.s:
            raise MemoryError("memprof: out of memory")
        self._lock = threading.Lock()

    def close(self):
        if self.s:
            self.lib.mp_session_free(self.s)
            self.s = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def use_none(self, why):
        self.lib.mp_session_use_none(self._live(), _library.encode(why))

    def use_pid(self, pid):
        self.lib.mp_session_use_pid(self._live(), int(pid))

    def use_core(self, path, sysroot=None, solib_path=None):
        enc = lambda v: _library.encode(os.fspath(v)) if v is not None else None
        self.lib.mp_session_use_core(self._live(), enc(path), enc(sysroot), enc(solib_path))

    def set(self, name, value):
        s = self._live()
        if self.lib.mp_session_set(s, _library.encode(name), _library.encode(str(value))) != 0:
            raise MemprofError(_library.decode(self.lib.mp_session_error(s)))

    def configure(self, settings):
        """Set SETTINGS, keyword arguments named as the session's settings ("max-blocks": max_blocks); None
        keeps a default; a switch (on/off) takes a bool. TypeError for a name the table does not have."""
        table = {t.name.replace("-", "_"): t for t in _library.settings(self.lib)}
        for key, value in settings.items():
            if key not in table:
                raise TypeError("memprof: no setting %s= (settings: %s)" % (key, ", ".join(table)))
            if value is None:
                continue
            if table[key].is_switch() and isinstance(value, bool):
                value = "on" if value else "off"
            self.set(table[key].name, value)

    def run(self, words):
        """Run command WORDS (["segsum", "now"]): its output as bytes. A failure raises MemprofError; "found
        nothing" (status 1) is a result, which the output says. The GIL is released meanwhile."""
        with self._lock:
            s = self._live()
            rc = self.lib.mp_session_run(s, len(words), _library.argv(words))
            out = _library.output(self.lib, s)
            warned = [w for w in _library.decode(self.lib.mp_session_warnings(s)).splitlines() if w]
            error = _library.decode(self.lib.mp_session_error(s))
        if rc == _library.ERROR:
            raise MemprofError(error or "memprof %s failed" % words[0], warned)
        for w in warned:
            warnings.warn(w, MemprofWarning, stacklevel=3)
        return out

    def _live(self):
        if not self.s:
            raise ValueError("memprof: the session is closed")
        return self.s
