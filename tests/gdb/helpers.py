# helpers.py - gdb commands the gdb tests use around memprof's (source it after gdbext/memprof.py):
#
#   mp-capture FILE COMMAND...  run COMMAND; its output goes to FILE, memprof's warnings of it to FILE.warn,
#                               and, when it fails, gdb's error message to FILE.err (one line; no traceback)
#   mp-memsum FILE              a digest of every writable mapping of the inferior (through /proc/PID/mem, which gdb
#                               as the tracer may read; through gdb's read_memory for other targets) into FILE,
#                               one line per mapping, so two sums show whether the commands wrote anything
#   mp-timed FILE COMMAND...    as mp-capture, plus FILE.time: wall seconds of COMMAND (time.monotonic) and the
#                               target reads of it (maintenance memprof reads)
#   mp-interrupt-at-read N      a Ctrl-C during the Nth read memprof makes through gdb from now on: the
#                               KeyboardInterrupt Python raises for it, at that read callback's entry (where the
#                               glue must catch it too), in the middle of a walk however fast the walk is
import hashlib
import os
import time

import __main__
import gdb


def _warnings():
    m = getattr(__main__, "_memprof", None)
    return m.lib.mp_session_warnings(m.s).decode("utf-8", "replace") if m else ""


def _capture(arg, timed):
    path, _, command = arg.strip().partition(" ")
    for suffix in ("", ".warn", ".err"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)
    t0 = time.monotonic()
    try:
        out = gdb.execute(command, to_string=True)
        err = None
    except gdb.error as e:
        out, err = "", str(e)
    except KeyboardInterrupt:
        out, err = "", "KeyboardInterrupt escaped"
    elapsed = time.monotonic() - t0
    warn = _warnings()
    if warn and out.endswith(warn):  # memprof.py writes a command's warnings after its output
        out = out[: -len(warn)]
    with open(path, "w") as f:
        f.write(out)
    if warn:
        with open(path + ".warn", "w") as f:
            f.write(warn)
    if err is not None:
        with open(path + ".err", "w") as f:
            f.write(err + "\n")
    if timed:
        reads = gdb.execute("maintenance memprof reads", to_string=True).strip()
        with open(path + ".time", "w") as f:
            f.write("%.3f %s\n" % (elapsed, reads))


class Capture(gdb.Command):
    """mp-capture FILE COMMAND: COMMAND's output into FILE (.warn, .err beside it)."""

    def __init__(self):
        super().__init__("mp-capture", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        _capture(arg, False)


class Timed(gdb.Command):
    """mp-timed FILE COMMAND: as mp-capture, with FILE.time (seconds, reads)."""

    def __init__(self):
        super().__init__("mp-timed", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        _capture(arg, True)


class MemSum(gdb.Command):
    """mp-memsum FILE: digests of the inferior's writable mappings."""

    LIMIT = 256 << 20  # bigger mappings (the fake device's memory) are left out

    def __init__(self):
        super().__init__("mp-memsum", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        inf = gdb.selected_inferior()
        lines = []
        with open("/proc/%d/maps" % inf.pid) as maps:
            regions = [line.split() for line in maps]
        mem = open("/proc/%d/mem" % inf.pid, "rb", buffering=0)
        for r in regions:
            lo, hi = (int(x, 16) for x in r[0].split("-"))
            name = r[5] if len(r) > 5 else ""
            if "w" not in r[1] or "r" not in r[1] or hi - lo > self.LIMIT or name in ("[vvar]", "[vsyscall]"):
                continue
            try:
                mem.seek(lo)
                data = mem.read(hi - lo)
            except OSError:
                try:
                    data = bytes(inf.read_memory(lo, hi - lo))
                except gdb.MemoryError:
                    continue
            lines.append("%s %s %s\n" % (r[0], name, hashlib.blake2b(data, digest_size=16).hexdigest()))
        mem.close()
        with open(arg.strip(), "w") as f:
            f.writelines(lines)


class InterruptAtRead(gdb.Command):
    """mp-interrupt-at-read N: Ctrl-C during memprof's Nth read through gdb."""

    def __init__(self):
        super().__init__("mp-interrupt-at-read", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        # memprof.py hands its session the ctypes callback _read_cb for each command: a wrapper of the same type
        # in its place sees every read.
        m = __main__._memprof
        read, at, count = m._read, int(arg), [0]

        def counting_read(ctx, addr, buf, length):
            count[0] += 1
            if count[0] == at:
                # (_thread.interrupt_main() here was lost now and then under cuda-gdb 11.8 in a loaded make check:
                # the raise itself is what the test needs.)
                raise KeyboardInterrupt
            return read(ctx, addr, buf, length)

        m._read_cb = type(m._read_cb)(counting_read)


Capture()
Timed()
MemSum()
InterruptAtRead()
