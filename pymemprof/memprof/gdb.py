"""python -m memprof.gdb: where this package's gdb command set is, and how gdb loads it.

    python -m memprof.gdb              print the `source` line to add to ~/.gdbinit (or type in gdb)
    python -m memprof.gdb --path       print only the script's path
    python -m memprof.gdb --install    append the `source` line to ~/.gdbinit (once)

memprof-gdb [GDB ARGS...] (launch() below) runs gdb with the command set loaded and no library's symbols read
(gdbext/memprof-gdb.in): it attaches to a PyTorch job in a fraction of a second.
"""
import os
import sys

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_gdb", "memprof.py")
LAUNCHER = os.path.join(os.path.dirname(SCRIPT), "memprof-gdb")


def source_line():
    return "source %s" % SCRIPT


def install(gdbinit=None):
    """Add the source line to GDBINIT (default ~/.gdbinit) unless it is there; return what was done."""
    gdbinit = gdbinit or os.path.expanduser("~/.gdbinit")
    line = source_line()
    try:
        with open(gdbinit) as f:
            if line in f.read().splitlines():
                return "%s already loads %s" % (gdbinit, SCRIPT)
    except FileNotFoundError:
        pass
    with open(gdbinit, "a") as f:
        f.write("# memprof's gdb commands (python -m memprof.gdb)\n%s\n" % line)
    return "added to %s: %s" % (gdbinit, line)


def main(argv):
    if not os.path.exists(SCRIPT):
        sys.stderr.write("memprof: %s is missing: this memprof package was not built as a wheel\n" % SCRIPT)
        return 2
    if argv == ["--path"]:
        print(SCRIPT)
    elif argv == ["--install"]:
        print(install())
    elif not argv:
        print(source_line())
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


def launch():
    """The `memprof-gdb` a wheel puts on PATH: the launcher it carries, on its own command set."""
    if not os.access(LAUNCHER, os.X_OK):
        sys.stderr.write("memprof-gdb: %s is missing: this memprof package was not built as a wheel\n" % LAUNCHER)
        return 2
    os.environ["MEMPROF_GDB_SCRIPT"] = SCRIPT
    os.execv(LAUNCHER, [LAUNCHER] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
