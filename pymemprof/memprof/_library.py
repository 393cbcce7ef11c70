# _library.py - libmemprof's session API (src/session/mp_session.h) through ctypes: the one place its C
# prototypes are declared in Python. The Python package and the gdb command set (gdbext/memprof.py) both load
# the library through load(); neither needs a compiler, and ctypes releases the GIL for every call into it.
import ctypes
import os

# Callback types of mp_session_use_callback and mp_session_set_poll.
READ_FN = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t)
POLL_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)

# enum mp_session_status, the CLI's exit statuses.
OK, NOTHING, ERROR = 0, 1, 2
# enum mp_session_command_flags.
PREFIX, EXPRESSION = 1 << 0, 1 << 1

_p, _i, _s, _u, _sz = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint, ctypes.c_size_t
_PROTOTYPES = {
    "mp_session_version": (_s, []),
    "mp_session_new": (_p, []),
    "mp_session_free": (None, [_p]),
    "mp_session_use_none": (_i, [_p, _s]),
    "mp_session_use_pid": (_i, [_p, _i]),
    "mp_session_use_core": (_i, [_p, _s, _s, _s]),
    "mp_session_use_callback": (_i, [_p, _s, _i, READ_FN, _p, _s]),
    "mp_session_invalidate": (None, [_p]),
    "mp_session_set_poll": (None, [_p, POLL_FN, _p]),
    "mp_session_set": (_i, [_p, _s, _s]),
    "mp_session_show": (_s, [_p, _s]),
    "mp_session_run": (_i, [_p, _i, ctypes.POINTER(_s)]),
    "mp_session_output": (_p, [_p]),
    "mp_session_output_len": (_sz, [_p]),
    "mp_session_error": (_s, [_p]),
    "mp_session_warnings": (_s, [_p]),
    "mp_session_reads": (ctypes.c_uint64, [_p]),
    "mp_session_command_name": (_s, [_i]),
    "mp_session_command_help": (_s, [_i]),
    "mp_session_command_spec": (_s, [_i]),
    "mp_session_command_flags": (_u, [_i]),
    "mp_session_complete": (_s, [_p, _i, _s, _s]),
}


class LoadError(Exception):
    """libmemprof could not be loaded: missing, not a memprof library, or of another version."""


def load(path, version=None, client="this extension"):
    """The library at PATH with its prototypes declared; with VERSION, refuse a library of another version
    (CLIENT names who wanted VERSION in the message)."""
    if not os.path.exists(path):
        raise LoadError("%s not found (set MEMPROF_LIBRARY to libmemprof.so.0)" % path)
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise LoadError("cannot load %s: %s" % (path, e))
    for name, (res, args) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise LoadError("%s has no %s: not a memprof library" % (path, name))
        fn.restype, fn.argtypes = res, args
    found = lib.mp_session_version().decode()
    if version is not None and found != version:
        raise LoadError("%s is version %s, %s is %s" % (path, found, client, version))
    return lib


def encode(text):
    """A str as the library takes it (file names that are not UTF-8 survive)."""
    return text.encode("utf-8", "surrogateescape")


def decode(raw):
    return (raw or b"").decode("utf-8", "replace")


def argv(words):
    """WORDS as a NULL-terminated char *[] for mp_session_run."""
    return (ctypes.c_char_p * (len(words) + 1))(*[encode(w) for w in words], None)


def output(lib, session):
    """The bytes the session's last run produced (binary for `snapshot save ... -`)."""
    out, n = lib.mp_session_output(session), lib.mp_session_output_len(session)
    return ctypes.string_at(out, n) if out and n else b""
