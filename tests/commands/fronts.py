#!/usr/bin/env python3
"""fronts.py MEMPROF LIBRARY SNAPSHOT - every command both front ends offer, run with every option (a good
value, each kind of bad value, the value missing), an unknown option and a word too many, through the CLI
(the memprof binary) and through the debugger session (libmemprof's mp_session_run, as gdb drives it).

The commands and their options come from the session's own description of its table
(mp_session_command_spec), so a new command or option is tried without editing this file. For each run
both front ends must agree: both refuse the words with the same message, and both point to the help
when the words do not fit the command (the CLI's "Try 'memprof NAME --help'." line; the session's "(see 'help memprof
NAME')"), or both run it to the same exit status, and when that is 2, to the same error (a failure about
the snapshot is told under its file name on the command line, under the command's in the debugger:
that label is the one difference allowed). The SNAPSHOT words are a snapshot file, which both read.
Prints one "ok:"/"FAIL:" line per run, then "N passed, M failed"; exit status 1 on any failure."""
import os
import re
import subprocess
import sys
import tempfile

# pymemprof's ctypes binding of the session API (_library.py declares every prototype), from the source tree.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "pymemprof"))
from memprof import _library  # noqa: E402

# A value each kind accepts, and the values it must refuse (the parser's rules).
GOOD = {"text": "x", "file": None, "device": "0", "count": "2", "integer": "0", "size": "4KiB", "snapshot": None}
BAD = {"device": ["-1", "1024", "gpu"], "count": ["0", "many"], "integer": ["x"], "size": ["lots"],
       "choice": ["bogus"]}
# A good value for the options whose text the command reads itself.
TEXT = {"--explain": "0x0", "--state": "allocated"}


def cli_commands(memprof):
    out = subprocess.run([memprof, "--help"], capture_output=True, text=True).stdout
    return {m.group(1) for m in re.finditer(r"^  (\S+(?: \S+)?)\s{2,}", out, re.M)}


def session_commands(lib):
    """name -> (positional kinds, [(option, kind, words)]) of every command but the prefixes and aliases."""
    cmds, i = {}, 0
    while (name := lib.mp_session_command_name(i)) is not None:
        if lib.mp_session_command_flags(i) & 1:  # a prefix ("snapshot"): its subcommands are the commands
            i += 1
            continue
        spec = lib.mp_session_command_spec(i).decode()
        lines = spec.splitlines()
        pos = lines[0].split(" ", 1)[1].split() if lines else []
        opts = [(w[1], w[2], w[3:]) for w in (line.split() for line in lines[1:])]
        cmds[name.decode()] = (pos, opts)
        i += 1
    return cmds


def cases(name, pos, opts, snap, tmp):
    """(label, words) of the runs of one command."""
    base = []
    for kind in pos:
        kind = kind.strip("[]")
        base.append(snap if kind == "snapshot" else "0x0" if kind == "address" else os.path.join(tmp, "f"))
    yield "no option", base
    yield "an unknown option", base + ["--bogus"]
    yield "a word too many", base + ["extra"]
    for opt, kind, words in opts:
        if kind in ("flag", "flag-count"):
            yield opt, base + [opt]
            if kind == "flag-count":
                yield opt + " 3", base + [opt, "3"]
            continue
        good = TEXT.get(opt, words[0] if words else GOOD.get(kind))
        if good is None:  # a file: one each command can write
            good = os.path.join(tmp, name + {"timeline": ".json"}.get(name, ".out"))
        yield "%s %s" % (opt, good), base + [opt, good]
        yield opt + " without its value", base + [opt]
        for bad in BAD.get(kind, []):
            yield "%s %s" % (opt, bad), base + [opt, bad]


def relabel(err, name, snap):
    """ERR with a failure told under the snapshot's file name told under the command's."""
    for label in ("'%s': " % snap, "%s: " % snap):
        if err.startswith(label):
            return name + ": " + err[len(label):]
    return err


def cli_result(proc, name, snap):
    """(status, error) of a CLI run: the error line without "memprof: ", its target named as the session
    names it (by the command), "(usage)" after it when the CLI pointed to the help."""
    lines = [l for l in proc.stderr.splitlines() if not l.startswith(("memprof: warning:", "memprof: note:"))]
    if proc.returncode != 2 or not lines:
        return proc.returncode, None
    err = relabel(lines[0].removeprefix("memprof: "), name, snap)
    usage = len(lines) > 1 and lines[1] == "Try 'memprof %s --help'." % name
    return 2, err + (" (usage)" if usage else "")


def session_result(rc, err, name, snap):
    """The same of a session run ("(see 'help memprof NAME')" marks a usage error)."""
    if rc != 2:
        return rc, None
    err = relabel(err.removeprefix("memprof: "), name, snap)
    hint = " (see 'help memprof %s')" % name
    return 2, err[:-len(hint)] + " (usage)" if err.endswith(hint) else err


def main():
    memprof, library, snap = sys.argv[1:4]
    lib = _library.load(library)
    s = lib.mp_session_new()
    lib.mp_session_use_none(s, b"no process or core file")
    on_cli = cli_commands(memprof)
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        for name, (pos, opts) in sorted(session_commands(lib).items()):
            if name not in on_cli:
                continue
            for label, words in cases(name, pos, opts, snap, tmp):
                cli = subprocess.run([memprof] + name.split() + words, capture_output=True, text=True)
                sargv = name.split() + words
                rc = lib.mp_session_run(s, len(sargv), _library.argv(sargv))
                err = (lib.mp_session_error(s) or b"").decode()
                a, b = cli_result(cli, name, snap), session_result(rc, err, name, snap)
                what = "%s %s" % (name, label)
                if a == b:
                    passed += 1
                    print("ok: %s: both exit %d%s" % (what, a[0], ": " + a[1] if a[1] else ""))
                else:
                    failed += 1
                    print("FAIL: %s: the CLI exits %d%s; the session %d%s" % (
                        what, a[0], ": " + a[1] if a[1] else "", b[0], ": " + b[1] if b[1] else ""))
    lib.mp_session_free(s)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
