# capture.py - the gdb command outputs.sh runs each memprof command through (source it after memprof.py):
#
#   compat-case ID COMMAND...   run COMMAND as a user's command line would; before it "\n@@compat begin ID\n" on
#                               stdout and stderr, after it "\n@@compat end ID STATUS\n" on stdout (STATUS 1: COMMAND
#                               raised an error, whose message goes to stderr as gdb prints it; else 0) and
#                               "\n@@compat end ID\n" on stderr. The files COMMAND wrote into the working directory
#                               are then moved to $COMPAT_FILES/ID/.
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


class Case(gdb.Command):
    """compat-case ID COMMAND: markers around COMMAND's output on both streams, its status, its files."""

    def __init__(self):
        super().__init__("compat-case", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        name, _, command = arg.strip().partition(" ")
        _mark("\n@@compat begin %s\n" % name, gdb.STDOUT)
        _mark("\n@@compat begin %s\n" % name, gdb.STDERR)
        status = 0
        try:
            gdb.execute(command, from_tty=False)
        except gdb.error as e:
            # as gdb prints the error that ends a command
            gdb.write("%s\n" % e, gdb.STDERR)
            status = 1
        _mark("\n@@compat end %s %d\n" % (name, status), gdb.STDOUT)
        _mark("\n@@compat end %s\n" % name, gdb.STDERR)
        _keep_files(name)


Case()
