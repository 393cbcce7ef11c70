#!/usr/bin/env python3
"""reduce.py SCRIPT A B [OUT] - the smallest op script (greedy) whose logs from A and B still differ.

A and B are commands that replay one op script given as their last argument and print its log (OPS.md): a
variant's replay (`tests/testbed/replay/run.sh debian-2.6`, or the binary with its loader, faster) or the model
(`_build/tests/allocsim/replay_ops --release 2.6`), each as one shell word list, e.g.
    reduce.py s1-00029.ops "tests/testbed/replay/run.sh debian-2.6" "tests/testbed/replay/run.sh pypi-2.14.1"
Lines starting with "###" or "streams" are not compared (process-specific). A candidate on which either side
refuses an op (an `error` line) or exits with a status other than 0 does not count as differing. Ops are removed
in chunks, halving down to single ops (an alloc goes together with the frees and records of its ID), then the
header's stream lines no op uses. Writes OUT (default SCRIPT.min) and prints it.
"""
import shlex
import subprocess
import sys
import tempfile


def log_of(cmd, text):
    with tempfile.NamedTemporaryFile("w", suffix=".ops") as f:
        f.write(text)
        f.flush()
        p = subprocess.run(shlex.split(cmd) + [f.name], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True)
    lines = [l for l in p.stdout.splitlines() if not l.startswith(("###", "streams"))]
    if p.returncode != 0 or any(l.startswith("error") for l in lines):
        return None
    return lines


def differ(a, b, header, ops):
    text = "\n".join(header + ops) + "\n"
    la = log_of(a, text)
    lb = log_of(b, text) if la is not None else None
    return la is not None and lb is not None and la != lb


def ids_of(op):
    w = op.split()
    return {w[1]} if w[0] in ("alloc", "free", "record") else set()


def without(ops, drop):
    """ops less the indexes in drop and every op naming an allocation that an alloc in drop made."""
    gone = set()
    for i in drop:
        if ops[i].startswith("alloc "):
            gone |= ids_of(ops[i])
    return [op for i, op in enumerate(ops) if i not in drop and not (ids_of(op) & gone)]


def main(argv):
    if len(argv) not in (3, 4):
        sys.stderr.write(__doc__)
        return 2
    path, a, b = argv[:3]
    out = argv[3] if len(argv) == 4 else path + ".min"
    lines = [l for l in open(path).read().splitlines() if l and not l.startswith("#")]
    header = [l for l in lines if l.split()[0] in ("settings", "capacity", "fraction", "stream")]
    ops = lines[len(header):]
    if not differ(a, b, header, ops):
        sys.stderr.write("reduce: the logs of %s do not differ\n" % path)
        return 1
    chunk = max(1, len(ops) // 2)
    while True:
        i, changed = 0, False
        while i < len(ops):
            candidate = without(ops, set(range(i, min(i + chunk, len(ops)))))
            if len(candidate) < len(ops) and differ(a, b, header, candidate):
                ops, changed = candidate, True
            else:
                i += chunk
        if chunk == 1 and not changed:
            break
        chunk = max(1, chunk // 2)
    used = {op.split()[3] for op in ops if op.startswith("alloc ")} | \
        {op.split()[2] for op in ops if op.split()[0] in ("record", "pool_begin")} | \
        {op.split()[1] for op in ops if op.startswith("sync_stream ")}
    header = [h for h in header if not h.startswith("stream ") or h.split()[1] in used]
    with open(out, "w") as f:
        f.write("\n".join(header + ops) + "\n")
    print("\n".join(header + ops))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
