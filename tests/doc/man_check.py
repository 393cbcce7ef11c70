#!/usr/bin/env python3
"""man_check.py MEMPROF LIBRARY TOP MEMPROF1_TEXT GDB7_TEXT - the rendered manual pages (plain text, as
`man -l PAGE | col -b` writes it) against what the code offers, asked at test time:

memprof(1): every command `memprof --help` lists has its subsection ("memprof NAME"), and every option of
`memprof NAME -h` is in that subsection or, for the options of a target, in TARGETS (which the subsection
then names); each subsection says the command's exit status as its -h does; OPTIONS has -h/--help and
-V/--version, and the version the binary prints is the page's; EXIT STATUS has every value of enum
mp_session_status; ENVIRONMENT has every MEMPROF_* variable the sources getenv(); EXAMPLES show a core, a live
pid, a pickle, JSON, convert and gdb.

memprof-gdb(7): every command of the session's table (mp_session_command_name, through the library) has its
subsection and every option of its mp_session_command_spec is in it; an old name is told under the command it
runs; every setting of the session's table a user sets (mp_session_setting_*) is in SETTINGS; the commands,
settings and variables that gdbext/memprof.py.in itself defines (catch oom, its options, maintenance memprof,
set memprof backend, MEMPROF_* of os.environ) are there.

Prints "ok: ..." / "FAIL: ..." per check, then "N passed, M failed"; exit status 1 on any failure."""
import glob
import os
import re
import subprocess
import sys

# pymemprof's ctypes binding of the session API (_library.py declares every prototype), from the source tree.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "pymemprof"))
from memprof import _library  # noqa: E402

results = {"ok": 0, "fail": 0}


def check(cond, what):
    results["ok" if cond else "fail"] += 1
    print(("ok: " if cond else "FAIL: ") + what)


def parse(path):
    """(sections, subsections) of a rendered page: name -> its text, blanks collapsed."""
    sections, subsections, sec, sub = {}, {}, None, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line and not line[0].isspace():
                sec, sub = line.strip(), None
                sections.setdefault(sec, "")
                continue
            if re.match(r"^   \S", line):
                sub = " ".join(line.split())
                subsections.setdefault(sub, "")
            text = " " + " ".join(line.split())
            if line.lstrip().startswith("-"):  # an option's tag (a .TP item): kept apart, as a line of its own
                text += "\n@tag " + line.strip() + "\n"
            if sec is not None:
                sections[sec] += text
            if sub is not None:
                subsections[sub] += text
    return sections, subsections


def has_word(text, word):
    return re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", text) is not None


def has_item(text, opt):
    """Whether TEXT has an item (a tag line) for option OPT, not only a mention of it."""
    return re.search(r"^@tag " + re.escape(opt) + r"(?![\w-])", text, re.M) is not None


def run(*argv):
    return subprocess.run(argv, capture_output=True, text=True).stdout


def check_cli(memprof, top, path):
    sections, subs = parse(path)
    commands = re.findall(r"^  (\S+(?: \S+)?)\s{2,}", run(memprof, "--help"), re.M)
    check(len(commands) >= 10, "memprof(1): the CLI lists %d commands" % len(commands))
    targets = sections.get("TARGETS", "")
    for name in commands:
        sub = subs.get("memprof " + name)
        check(sub is not None, "memprof(1): a subsection for '%s'" % name)
        if sub is None:
            continue
        help_text = run(memprof, *name.split(), "-h")
        opts = re.findall(r"^  (-[\w-]+)", help_text.split("\nOptions:\n", 1)[-1], re.M) if "\nOptions:\n" in \
            help_text else []
        for opt in opts:
            check(has_item(sub, opt) or has_item(targets, opt),
                  "memprof(1): '%s' option %s (an item of its subsection or of TARGETS)" % (name, opt))
        if "SNAPSHOT (TARGET)" in help_text:
            check("target options" in sub, "memprof(1): '%s' points to the target options" % name)
        status = re.search(r"^Exit status: (.*)\.$", help_text, re.M)
        check(status is not None and ("Exit status: " + " ".join(status.group(1).split())) in sub,
              "memprof(1): '%s' exit status as its -h says" % name)
    opts = sections.get("OPTIONS", "")
    for opt in ("-h", "--help", "-V", "--version"):
        check(has_word(opts, opt), "memprof(1): OPTIONS has %s" % opt)
    version = run(memprof, "--version").strip()
    check(version == run(memprof, "-V").strip() == run(memprof, "version").strip() and version.startswith("memprof "),
          "memprof(1): -V, --version and version print '%s'" % version)
    with open(path, encoding="utf-8") as f:
        footer = [line for line in f if line.strip()][-1]
    check(version in footer, "memprof(1): the page is of %s" % version)
    with open(os.path.join(top, "src/session/mp_session.h")) as f:
        enum = re.search(r"enum mp_session_status \{(.*?)\};", f.read(), re.S)
        statuses = re.findall(r"MP_SESSION_\w+ = (\d+),", enum.group(1) if enum else "")
    status_text = sections.get("EXIT STATUS", "")
    check(len(statuses) >= 3, "memprof(1): %d exit statuses in enum mp_session_status" % len(statuses))
    for value in statuses:
        check(re.search(r"(^| )%s [A-Z]" % value, status_text) is not None, "memprof(1): EXIT STATUS has %s" % value)
    names = set()
    for src in glob.glob(os.path.join(top, "src/**/*.c"), recursive=True):
        with open(src, encoding="utf-8", errors="replace") as f:
            names |= set(re.findall(r'getenv\("(MEMPROF_\w+)"\)', f.read()))
        with open(src, encoding="utf-8", errors="replace") as f:  # a name passed to a function that getenv()s it
            names |= set(re.findall(r'"(MEMPROF_NO_\w+)"', f.read()))
    check(len(names) >= 2, "memprof(1): the sources read %d variables" % len(names))
    for name in sorted(names):
        check(has_word(sections.get("ENVIRONMENT", ""), name), "memprof(1): ENVIRONMENT has %s" % name)
    examples = sections.get("EXAMPLES", "")
    for what in ("memprof segsum job.core", "--pid", ".pickle", ".json", "memprof convert", "(gdb) memprof segsum",
                 "source"):
        check(what in examples, "memprof(1): EXAMPLES show '%s'" % what)


def check_gdb(library, top, path):
    sections, subs = parse(path)
    lib = _library.load(library)
    i = 0
    while (raw := lib.mp_session_command_name(i)) is not None:
        name, help_text = raw.decode(), lib.mp_session_command_help(i).decode()
        old = re.match(r"The old name of (.+)\.\n", help_text)
        if old:
            sub = subs.get("memprof " + old.group(1), "")
            check("old name %s" % name in sub, "memprof-gdb(7): the old name '%s' under '%s'" % (name, old.group(1)))
        else:
            sub = subs.get("memprof " + name)
            check(sub is not None, "memprof-gdb(7): a subsection for '%s'" % name)
            for line in lib.mp_session_command_spec(i).decode().splitlines()[1:]:
                opt = line.split()[1]
                check(sub is not None and has_item(sub, opt), "memprof-gdb(7): '%s' option %s" % (name, opt))
        i += 1
    check(i >= 10, "memprof-gdb(7): the session has %d commands" % i)
    with open(os.path.join(top, "gdbext/memprof.py.in")) as f:
        ext = f.read()
    text = " ".join(sections.values())
    for cmd in re.findall(r'super\(\).__init__\("((?:maintenance )?memprof [\w ]+)"', ext):
        check(cmd in text, "memprof-gdb(7): the extension's '%s'" % cmd)
    for sub_cmd in re.findall(r"^maintenance memprof (\w+)", ext, re.M):
        check("maintenance memprof " + sub_cmd in text, "memprof-gdb(7): 'maintenance memprof %s'" % sub_cmd)
    # the session's settings a user sets in gdb (the library's table), then the extension's own (backend)
    settings = [t.name for t in _library.settings(lib) if not t.flags & _library.SETTING_HOST]
    settings += re.findall(r'__init__\("memprof ([\w-]+)", gdb.COMMAND_\w+, gdb.PARAM', ext)
    check(len(settings) >= 6, "memprof-gdb(7): the extension has %d settings" % len(settings))
    for name in settings:
        check("set memprof " + name in sections.get("SETTINGS", ""), "memprof-gdb(7): SETTINGS has '%s'" % name)
    env = set(re.findall(r'environ\.get\("(MEMPROF_\w+)"', ext))
    with open(os.path.join(top, "gdbext/memprof-autoload.py.in")) as f:
        env |= set(re.findall(r'environ\.get\("(MEMPROF_\w+)"', f.read()))
    for name in sorted(env):
        check(has_word(sections.get("ENVIRONMENT", ""), name), "memprof-gdb(7): ENVIRONMENT has %s" % name)
    check("memprof version" in subs, "memprof-gdb(7): 'memprof version'")


def main():
    memprof, library, top, cli_page, gdb_page = sys.argv[1:6]
    check_cli(memprof, top, cli_page)
    check_gdb(library, top, gdb_page)
    print("%d passed, %d failed" % (results["ok"], results["fail"]))
    return 1 if results["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
