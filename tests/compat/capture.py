# capture.py - the gdb command outputs.sh runs each memprof command through (source it after memprof.py):
#
#   compat-case ID COMMAND...   run COMMAND as a user's command line would; before it "\n@@compat begin ID\n" on
#                               stdout and stderr, after it "\n@@compat end ID STATUS\n" on stdout (STATUS 1: COMMAND
#                               raised an error, whose message goes to stderr as gdb prints it; else 0) and
#                               "\n@@compat end ID\n" on stderr. The files COMMAND wrote into the working directory
#                               are then moved to $COMPAT_FILES/ID/.
#   compat-begin ID, compat-end ID   the same markers around the command lines between them, as gdb reads them from
#                               the script: gdb.execute drops a line's trailing blanks, which `complete memprof `
#                               needs. Status 0: a failing command there would end the script (no end marker).
#
# What COMMAND prints goes where gdb sends it (not to_string, which would merge memprof's warnings into its output):
# split.py cuts gdb's stdout and stderr at the markers, so each stream of each command is compared on its own, in
# the order gdb wrote it.
import os
import shutil

import gdb


def _mark(text, stream):
    gdb.flush()
    gdb.write(text, stream)
    gdb.flush()


def _keep_files(name):
    """Move what the command wrote into the (otherwise empty) working directory to $COMPAT_FILES/NAME/."""
    keep = os.environ.get("COMPAT_FILES")
    here = os.getcwd()
    entries = sorted(os.listdir(here))
    if not keep or not entries:
        return
    dest = os.path.join(keep, name)
    os.makedirs(dest, exist_ok=True)
    for entry in entries:
        shutil.move(os.path.join(here, entry), os.path.join(dest, entry))


def _begin(name):
    _mark("\n@@compat begin %s\n" % name, gdb.STDOUT)
    _mark("\n@@compat begin %s\n" % name, gdb.STDERR)


def _end(name, status):
    _mark("\n@@compat end %s %d\n" % (name, status), gdb.STDOUT)
    _mark("\n@@compat end %s\n" % name, gdb.STDERR)
    _keep_files(name)


class Case(gdb.Command):
    """compat-case ID COMMAND: markers around COMMAND's output on both streams, its status, its files."""

    def __init__(self):
        super().__init__("compat-case", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        name, _, command = arg.strip().partition(" ")
        _begin(name)
        status = 0
        try:
            gdb.execute(command, from_tty=False)
        except gdb.error as e:
            # as gdb prints the error that ends a command
            gdb.write("%s\n" % e, gdb.STDERR)
            status = 1
        _end(name, status)


class Begin(gdb.Command):
    """compat-begin ID: the markers before the command lines that follow."""

    def __init__(self):
        super().__init__("compat-begin", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        _begin(arg.strip())


class End(gdb.Command):
    """compat-end ID: the markers after them (status 0), their files."""

    def __init__(self):
        super().__init__("compat-end", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        _end(arg.strip(), 0)


Case()
Begin()
End()
