#!/usr/bin/env python3
"""drive.py LIBRARY KIND WHAT [COMMAND...] - run session commands the way a debugger front end does,
without a debugger: so that the sanitizer pass (where gdb cannot load the instrumented library) still
drives src/session over real targets.

KIND WHAT: core PATH | pid PID | callback PID (memory through a Python read function over
/proc/PID/mem and mappings in `info proc mappings` form, as gdb's callback backend gives them).
Each COMMAND is one command line; "!interrupt-after N" makes the poll callback ask for a stop from its
N+1-th call on (0: at once), "!go" lets walks run again.
Prints, per command, "== COMMAND", the status, the error line, then the output."""
import ctypes
import os
import sys

# pymemprof's ctypes binding of the session API (_library.py declares every prototype), from the source tree.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "pymemprof"))
from memprof import _library  # noqa: E402


def gdb_style_maps(pid):
    """/proc/PID/maps as gdb's `info proc mappings` prints it (with the Perms column)."""
    lines = ["process %d" % pid, "Mapped address spaces:", "",
             "          Start Addr           End Addr       Size     Offset  Perms  objfile"]
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.split(None, 5)
            start, end = (int(x, 16) for x in parts[0].split("-"))
            path = parts[5].strip() if len(parts) > 5 else ""
            lines.append("  %#18x %#18x %#10x %#10x  %s   %s" % (start, end, end - start, int(parts[2], 16),
                                                                parts[1], path))
    return "\n".join(lines) + "\n"


def main():
    lib = _library.load(sys.argv[1])
    kind, what, commands = sys.argv[2], sys.argv[3], sys.argv[4:]
    s = lib.mp_session_new()
    budget = [None]  # polls left before a stop is asked for; None: never

    def poll_once(_ctx):
        if budget[0] is None:
            return 0
        budget[0] -= 1
        return 1 if budget[0] < 0 else 0
    poll = _library.POLL_FN(poll_once)
    lib.mp_session_set_poll(s, poll, None)
    keep = []
    if kind == "core":
        lib.mp_session_use_core(s, what.encode(), None, None)
    elif kind == "pid":
        lib.mp_session_use_pid(s, int(what))
    else:
        mem = os.open("/proc/%s/mem" % what, os.O_RDONLY)

        def read(_ctx, addr, buf, length):
            try:
                data = os.pread(mem, length, addr)
            except OSError:
                return 0
            ctypes.memmove(buf, data, len(data))
            return len(data)
        keep.append(_library.READ_FN(read))
        lib.mp_session_use_callback(s, b"test callback", int(what), keep[0], None,
                                    gdb_style_maps(int(what)).encode())
    for line in commands:
        if line.startswith("!interrupt-after "):
            budget[0] = int(line.split()[1])
            continue
        if line == "!go":
            budget[0] = None
            continue
        words = line.split()
        rc = lib.mp_session_run(s, len(words), _library.argv(words))
        out = _library.decode(_library.output(lib, s))
        print("== %s\nstatus %d\nerror %s" % (line, rc, lib.mp_session_error(s).decode()))
        sys.stdout.write(out)
    if kind == "callback":
        print("== reads\n%d" % lib.mp_session_reads(s))
    lib.mp_session_free(s)


if __name__ == "__main__":
    main()
