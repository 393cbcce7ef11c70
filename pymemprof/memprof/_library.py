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
# enum mp_session_catch_action.
CATCH_PASS, CATCH_STOP, CATCH_GO_ON, CATCH_FAILED = 0, 1, 2, 3
# enum mp_session_setting_flags.
SETTING_HOST = 1 << 0

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
    "mp_session_catch_location": (_s, [_p]),
    "mp_session_catch_registers": (_s, []),
    "mp_session_catch_throw": (_i, [_p, ctypes.c_uint64, ctypes.c_uint64]),
    "mp_session_setting_name": (_s, [_i]),
    "mp_session_setting_help": (_s, [_i]),
    "mp_session_setting_spec": (_s, [_i]),
    "mp_session_setting_default": (_s, [_i]),
    "mp_session_setting_flags": (_u, [_i]),
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


class Setting:
    """One setting of the session's table (mp_session_setting_*): NAME, HELP, KIND ("choice", "device",
    "number", "file"), WORDS (a choice's values; the special words a device or file setting also takes),
    DEFAULT, FLAGS (SETTING_HOST: the front end sets it, not the user)."""

    def __init__(self, name, help, spec, default, flags):
        kind, *words = spec.split()
        self.name, self.help, self.kind, self.words, self.default, self.flags = \
            name, help, kind, words, default, flags

    def is_switch(self):
        return self.kind == "choice" and self.words == ["on", "off"]


def _table(lib, table, make):
    """The rows of one of the session's tables (mp_session_TABLE_name(i) ... until NULL), each MAKE(lib, i, name)."""
    out = []
    name_of = getattr(lib, "mp_session_%s_name" % table)
    while True:
        name = name_of(len(out))
        if name is None:
            return out
        out.append(make(lib, len(out), decode(name)))


def settings(lib):
    """The session's settings, in the table's order."""
    return _table(lib, "setting", lambda lib, i, name: Setting(
        name, decode(lib.mp_session_setting_help(i)), decode(lib.mp_session_setting_spec(i)),
        decode(lib.mp_session_setting_default(i)), lib.mp_session_setting_flags(i)))


class Option:
    """One option of a command's spec line "option NAME KIND [WORDS...]"."""

    def __init__(self, line):
        _, self.name, self.kind, *self.words = line.split()


class Command:
    """One command of the session's table (mp_session_command_*): NAME ("segsum", "snapshot take"), HELP (its
    first line the summary), FLAGS (PREFIX, EXPRESSION), POSITIONAL (its words' kinds, "[snapshot]"), OPTIONS."""

    def __init__(self, name, help, flags, spec):
        self.name, self.help, self.flags = name, help, flags
        self.positional, self.options = "", []
        for line in spec.splitlines():
            if line.startswith("positional"):
                self.positional = line[len("positional"):].strip()
            elif line.startswith("option "):
                self.options.append(Option(line))


def commands(lib):
    """The session's commands, in help order; index I of the list is the table's I."""
    return _table(lib, "command", lambda lib, i, name: Command(
        name, decode(lib.mp_session_command_help(i)), lib.mp_session_command_flags(i),
        decode(lib.mp_session_command_spec(i))))
