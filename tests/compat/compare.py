#!/usr/bin/env python3
"""compare.py OUT RENAMED CONVERTED - compare the two trees outputs.sh wrote (OUT/old, OUT/new) case by case.

Each tree has an index ("KIND TARGET/CASE" lines) and per case a directory with stdout, stderr, status and files/.
An output is equal when its bytes are, or else when normalise.py's masks make them so (trace times only for the
targets named in CONVERTED, a blank-separated list: the cores and processes whose clock memprof converts). RENAMED
is renamed.txt: "KIND COMMAND" lines; a case of such a command may differ in stderr by one added line only.

Prints one line per case that differs ("differ: KIND ID: what"), is allowed by RENAMED ("allowed: ...") or equal
only once normalised ("normalised: ..."), then "N commands compared, M differ". Exit status 0 when none differs.
Env: MEMPROF_COMPAT_SHOW=N prints the first N lines of each differing output's diff.
"""
import difflib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import normalise  # noqa: E402

STREAMS = ("status", "stdout", "stderr")


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def index(tree):
    with open(os.path.join(tree, "index")) as f:
        return [tuple(line.split()) for line in f if line.strip()]


def files_of(case):
    """Relative paths of the files a case wrote."""
    top = os.path.join(case, "files")
    found = []
    for root, _, names in os.walk(top):
        found += [os.path.relpath(os.path.join(root, n), top) for n in names]
    return found


def equal(rules, command, name, old, new, used):
    """Whether OLD and NEW (bytes or None) are equal, as they are or once masked (the rules used join USED)."""
    if old is None or new is None:
        return old is new
    if old == new:
        return True
    mine = set()
    if normalise.normalise(rules, command, name, old, mine) == normalise.normalise(rules, command, name, new, mine):
        used |= mine
        return True
    return False


def one_line_added(old, new):
    """The line NEW adds to OLD when that is all that differs, else None."""
    a, b = old.decode(errors="replace").splitlines(True), new.decode(errors="replace").splitlines(True)
    if len(b) != len(a) + 1:
        return None
    for i in range(len(b)):
        if b[:i] + b[i + 1:] == a:
            return b[i].rstrip("\n")
    return None


def first_diff_lines(name, old, new, n):
    diff = difflib.unified_diff((old or b"").decode(errors="replace").splitlines(),
                                (new or b"").decode(errors="replace").splitlines(), "old", "new", lineterm="", n=0)
    return ["    %s: %s" % (name, line) for line in list(diff)[2:2 + n]]


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: compare.py OUT RENAMED CONVERTED")
    out, converted = sys.argv[1], set(sys.argv[3].split())
    renamed = set()
    if os.path.exists(sys.argv[2]):
        with open(sys.argv[2]) as f:
            renamed = {tuple(line.split("#")[0].split()) for line in f if line.split("#")[0].strip()}
    nshow = int(os.environ.get("MEMPROF_COMPAT_SHOW") or 0)
    old_cases, new_cases = index(os.path.join(out, "old")), index(os.path.join(out, "new"))
    cases = sorted(set(old_cases) | set(new_cases))
    ndiff = nallowed = nnorm = 0
    for kind, ident in cases:
        target, _, name = ident.partition("/")
        command = name.split(".")[0]
        rules = ["time-of-day", "trace-times"] if target in converted else ["time-of-day"]
        o, n = (os.path.join(out, side, kind, ident) for side in ("old", "new"))
        what, used, allowed, shown = [], set(), None, []
        if (kind, ident) not in old_cases or (kind, ident) not in new_cases:
            what.append("only in old" if (kind, ident) in old_cases else "only in new")
        else:
            pairs = [(s, read(os.path.join(o, s)), read(os.path.join(n, s))) for s in STREAMS]
            for path in sorted(set(files_of(o)) | set(files_of(n))):
                pairs.append(("files: " + path, read(os.path.join(o, "files", path)),
                              read(os.path.join(n, "files", path))))
            for label, a, b in pairs:
                base = os.path.basename(label[len("files: "):]) if label.startswith("files: ") else label
                if equal(rules, command, base, a, b, used):
                    continue
                if label == "stderr" and (kind, command) in renamed and a is not None and b is not None:
                    allowed = one_line_added(a, b)
                    if allowed is not None:
                        continue
                what.append(label)
                if nshow:
                    shown += first_diff_lines(label, a, b, nshow)
        if what:
            ndiff += 1
            print("differ: %s %s: %s" % (kind, ident, ", ".join(what)))
            for line in shown:
                print(line)
            continue
        if allowed is not None:
            nallowed += 1
            print("allowed: %s %s: one stderr line added (renamed.txt): %s" % (kind, ident, allowed))
        if used:
            nnorm += 1
            print("normalised: %s %s: equal once %s masked" % (kind, ident, ", ".join(sorted(used))))
    summary = "%d commands compared, %d differ" % (len(cases), ndiff)
    if nnorm:
        summary += " (%d equal only once normalised)" % nnorm
    if nallowed:
        summary += " (%d differ only as renamed.txt allows)" % nallowed
    print(summary)
    return 1 if ndiff else 0


if __name__ == "__main__":
    sys.exit(main())
