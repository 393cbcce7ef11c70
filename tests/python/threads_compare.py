#!/usr/bin/env python3
"""threads_compare.py DUMP JSON [PLAIN] [--ids IDS] [--exception TYPE:MESSAGE] - memprof's `pystack` against
faulthandler's dump_traceback(all_threads=True) taken at the same stop (tests/python/threads.sh,
tests/python/jobs_pystack.sh, tests/gdb/pystack.sh).

DUMP is faulthandler's text, JSON memprof's `pystack --format json`, PLAIN (optional) its plain text. The same
threads (by pthread id) must be there with the same frames (file, line, function), innermost first; faulthandler
writes at most 100 frames (then "  ...", which 3.13.0 leaves out), strings cut at 500 characters and non-ASCII escaped, so memprof's are
put the same way first. The thread faulthandler calls current must be the one memprof marks as main when it is
the main thread (IDS: NAME PTHREAD_ID NATIVE_ID lines, "main" first; native ids must match memprof's LWPs where
the version has them). --exception: the current thread must be handling TYPE with message MESSAGE.
--gil-current: the current thread must be the only one holding the GIL (a core of a process that aborted from
Python code). Prints one
line; exit 0 when equal, 1 otherwise."""
import json
import re
import sys

MAX_DEPTH = 100
MAX_STRING = 500


def ascii_like_faulthandler(s):
    """A string as faulthandler's _Py_DumpASCII writes it (cut, then escaped)."""
    cut = len(s) > MAX_STRING
    out = []
    for ch in s[:MAX_STRING]:
        c = ord(ch)
        if 32 <= c < 127:
            out.append(ch)
        elif c <= 0xff:
            out.append("\\x%02x" % c)
        elif c <= 0xffff:
            out.append("\\u%04x" % c)
        else:
            out.append("\\U%08x" % c)
    return "".join(out) + ("..." if cut else "")


def parse_dump(text):
    """{thread_id: {"current": bool, "frames": [(file, line, name)], "more": bool}}"""
    threads, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^(Current thread|Thread) 0x([0-9a-f]+) \(most recent call first\):$", line)
        if m:
            cur = {"current": m.group(1) == "Current thread", "frames": [], "more": False}
            threads[int(m.group(2), 16)] = cur
            continue
        m = re.match(r'^  File "(.*)", line (\d+|\?\?\?) in (.*)$', line)
        if m and cur is not None:
            cur["frames"].append((m.group(1), int(m.group(2)) if m.group(2).isdigit() else -1, m.group(3)))
        elif line == "  ..." and cur is not None:
            cur["more"] = True
    return threads


def parse_plain(text):
    """{thread_id: [(file, line, name)]} from memprof's plain output."""
    threads, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^Thread 0x([0-9a-f]+)\b", line)
        if m:
            cur = threads[int(m.group(1), 16)] = []
            continue
        m = re.match(r'^  File "(.*)", line (\d+|\?), in (.*)$', line)
        if m and cur is not None:
            cur.append((m.group(1), int(m.group(2)) if m.group(2).isdigit() else -1, m.group(3)))
    return threads


def main(argv):
    args, ids_path, exc, gil = [], None, None, False
    it = iter(argv)
    for a in it:
        if a == "--ids":
            ids_path = next(it)
        elif a == "--exception":
            exc = next(it)
        elif a == "--gil-current":
            gil = True
        else:
            args.append(a)
    with open(args[0], encoding="ascii", errors="replace") as f:
        dump = parse_dump(f.read())
    with open(args[1]) as f:
        mine = {t["thread_id"]: t for t in json.load(f)}
    plain = None
    if len(args) > 2:
        with open(args[2]) as f:
            plain = parse_plain(f.read())
    errors = []
    if not dump:
        errors.append("faulthandler's dump has no thread")
    if sorted(dump) != sorted(mine):
        errors.append("threads: faulthandler %s, memprof %s" % (sorted(map(hex, dump)), sorted(map(hex, mine))))
    nframes = 0
    for tid, d in dump.items():
        m = mine.get(tid)
        if m is None:
            continue
        got = [(ascii_like_faulthandler(f["file"]), -1 if f["line"] is None else f["line"],
                ascii_like_faulthandler(f["function"])) for f in m["frames"]]
        want = d["frames"]
        # 3.13.0 stops at 100 frames without its "  ..." line
        if d["more"] or len(want) == MAX_DEPTH:
            ok = len(got) > len(want) and got[:len(want)] == want
        else:
            ok = got == want
        nframes += len(want)
        if not ok:
            first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            errors.append("thread 0x%x: frame %d: memprof %s, faulthandler %s (%d against %d frames%s)" % (
                tid, first, got[first] if first < len(got) else None, want[first] if first < len(want) else None,
                len(got), len(want), ", then more" if d["more"] else ""))
        if plain is not None and plain.get(tid) != [(f["file"], -1 if f["line"] is None else f["line"],
                                                      f["function"]) for f in m["frames"]]:
            errors.append("thread 0x%x: the plain output's frames differ from the JSON's" % tid)
        if m["holds_gil"] not in (True, False):
            errors.append("thread 0x%x: whether it holds the GIL is not known" % tid)
    if sum(1 for t in mine.values() if t["holds_gil"]) > 1:
        errors.append("more than one thread holds the GIL")
    if ids_path is not None:
        with open(ids_path) as f:
            ids = [line.split() for line in f if line.strip()]
        for name, pthread, native in ids:
            m = mine.get(int(pthread))
            if m is None:
                errors.append("thread %s (0x%x) not found" % (name, int(pthread)))
                continue
            if m["main_thread"] != (name == "main"):
                errors.append("thread %s: main_thread %s" % (name, m["main_thread"]))
            want_native = int(native) or None
            if m["native_thread_id"] != want_native:
                errors.append("thread %s: LWP %s, not %s" % (name, m["native_thread_id"], want_native))
    if exc is not None:
        etype, emsg = exc.split(":", 1)
        cur = [tid for tid, d in dump.items() if d["current"]]
        e = mine[cur[0]]["exception"] if cur and cur[0] in mine else None
        # qualified as Python names it, whether tp_name carries the module (a static type: torch 2.6's
        # "torch.OutOfMemoryError") or __module__ does (a heap type: 2.14's)
        if e is None or e["type"] != etype or e["message"] != emsg or e["state"] != "handling":
            errors.append("the current thread's exception: %s, not handling %s" % (e, exc))
    if gil:
        holders = [hex(tid) for tid, t in mine.items() if t["holds_gil"]]
        cur = [hex(tid) for tid, d in dump.items() if d["current"]]
        if holders != cur:
            errors.append("the GIL's holder: %s, not the current thread %s" % (holders, cur))
    if errors:
        print("; ".join(errors))
        return 1
    print("%d threads, %d frames equal" % (len(dump), nframes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
