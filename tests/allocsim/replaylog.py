#!/usr/bin/env python3
"""replaylog.py - the text side of differential.sh: OPS.md logs split, checked on their own and compared.

  replaylog.py split BATCH_OUT LOGDIR         one LOGDIR/NAME.log per script of a replay batch's output (NAME the
                                              script's file name less .ops); prints "NAME STATUS" per script
                                              (ok, error, unfinished); exit 1 if a reset failed
  replaylog.py check LOG...                   the real side's own checks (below); prints one line per failure
  replaylog.py same LOGDIR_A LOGDIR_B NAME... the same scripts' logs from two processes agree (but for streams)
  replaylog.py model-script OPS LOG OUT       OPS with the stream handles of LOG written into its stream lines
  replaylog.py compare REAL MODEL             exit 0 if equal (OPS.md: a "-" value of a stats line is not
                                              compared), else print the first differing line of each side
  replaylog.py model REPLAY_OPS RELEASE OPSDIR LOGDIR WORKDIR RESULTS NAME...
                                              for each script NAME: its model script (handles from its real log)
                                              run by REPLAY_OPS --release RELEASE, the log compared with the real
                                              one; a difference keeps the script, both logs and the first differing
                                              lines under RESULTS/NAME/; prints one line per difference and exits 1
                                              if there was one
  replaylog.py count LOG...                   "SCRIPTS OPS OOMS" over the logs

Own checks of a real log: every state block's reserved= equals the sum of its segments' sizes and each segment's
blocks tile it exactly; its allocated= equals the sum of the active_allocated blocks; every allocation that is
live (its alloc line gave an address, no free since) is an active_allocated block at that address, with the
requested size, and nothing else is active_allocated; the result of each alloc line lies inside a segment of the
next state block if it is still live there.
"""
import os
import re
import sys

OP_LINE = re.compile(r"^(\d+) (.*) => (\S+) reserved=(\d+) allocated=(\d+)$")


def addr(text):
    """m+0x10 -> ('m', 16)."""
    kind, off = text.split("+", 1)
    return kind, int(off, 16)


def parse(lines):
    """Yields ('op', n, opline, result, reserved, allocated) and ('state', n, stats, segments)."""
    i = 0
    while i < len(lines):
        line = lines[i]
        m = OP_LINE.match(line)
        if m:
            yield ("op", int(m.group(1)), m.group(2), m.group(3), int(m.group(4)), int(m.group(5)))
        elif line.startswith("state "):
            n = int(line.split()[1])
            stats = dict(kv.split("=", 1) for kv in lines[i + 1].split()[1:])
            segments = []
            i += 2
            while lines[i] != "end":
                w = lines[i].split()
                if w[0] == "segment":
                    segments.append({"addr": addr(w[1]), "size": int(w[2]), "sid": w[3], "kind": w[4],
                                     "pool": w[5], "exp": w[6], "blocks": []})
                else:
                    segments[-1]["blocks"].append({"addr": addr(w[1]), "size": int(w[2]), "req": w[3],
                                                   "state": w[4]})
                i += 1
            yield ("state", n, stats, segments)
        i += 1


def check_log(path):
    with open(path) as f:
        lines = f.read().splitlines()
    problems = []
    live = {}  # id -> (address, size)
    pending = []  # alloc results to find in the next state block: (n, id, address)
    try:
        for item in parse(lines):
            if item[0] == "op":
                _, n, opline, result, _, _ = item
                w = opline.split()
                if w[0] == "alloc" and result != "oom":
                    live[w[1]] = (addr(result), int(w[2]))
                    pending.append((n, w[1], addr(result)))
                elif w[0] == "free":
                    live.pop(w[1], None)
                continue
            _, n, stats, segments = item
            where = "%s: state %d" % (os.path.basename(path), n)
            if sum(s["size"] for s in segments) != int(stats["reserved"]):
                problems.append("%s: reserved=%s but the segments sum to %d" %
                                (where, stats["reserved"], sum(s["size"] for s in segments)))
            allocated = {}
            for s in segments:
                at = s["addr"]
                for b in s["blocks"]:
                    if b["addr"] != at:
                        problems.append("%s: block at %s+0x%x does not follow its neighbour" % (where, *b["addr"]))
                    at = (at[0], at[1] + b["size"])
                    if b["state"] == "active_allocated":
                        allocated[b["addr"]] = b
                if at != (s["addr"][0], s["addr"][1] + s["size"]):
                    problems.append("%s: the blocks of segment %s+0x%x do not tile it" % (where, *s["addr"]))
            if sum(b["size"] for b in allocated.values()) != int(stats["allocated"]):
                problems.append("%s: allocated=%s but the active_allocated blocks sum to %d" %
                                (where, stats["allocated"], sum(b["size"] for b in allocated.values())))
            for ident, (a, size) in live.items():
                b = allocated.get(a)
                if b is None:
                    problems.append("%s: live allocation %s at %s+0x%x is no active_allocated block" %
                                    (where, ident, *a))
                elif b["req"] not in ("-", str(size)):
                    problems.append("%s: allocation %s's block says requested %s, not %d" %
                                    (where, ident, b["req"], size))
            if len(allocated) != len(live):
                problems.append("%s: %d active_allocated blocks for %d live allocations" %
                                (where, len(allocated), len(live)))
            for n_alloc, ident, a in pending:
                if ident in live and not any(s["addr"][0] == a[0] and s["addr"][1] <= a[1] < s["addr"][1] + s["size"]
                                             for s in segments):
                    problems.append("%s: alloc %d's result %s+0x%x lies in no segment" % (where, n_alloc, *a))
            pending = []
    except (StopIteration, IndexError, KeyError, ValueError) as e:
        problems.append("%s: unreadable log (%s: %s)" % (os.path.basename(path), type(e).__name__, e))
    return problems


def split(batch_out, logdir):
    os.makedirs(logdir, exist_ok=True)
    bad = False
    out = None
    with open(batch_out) as f:
        for line in f:
            if line.startswith("### begin "):
                name = os.path.basename(line[len("### begin "):].strip())
                name = name[:-4] if name.endswith(".ops") else name
                out = open(os.path.join(logdir, name + ".log"), "w")
            elif line.startswith("### end "):
                out.close()
                out = None
                print("%s %s" % (name, line.split()[-1]))
            elif line.startswith("### reset-failed"):
                sys.stderr.write(line[4:])
                bad = True
            elif line.startswith("### "):
                pass  # the batch's header, a restart
            elif out is not None:
                out.write(line)
    if out is not None:
        out.close()
        print("%s unfinished" % name)  # the process died inside this script
    return 1 if bad else 0


def body(path):
    with open(path) as f:
        return [l for l in f.read().splitlines() if not l.startswith("streams")]


def same(dir_a, dir_b, names):
    bad = 0
    for name in names:
        a, b = body(os.path.join(dir_a, name + ".log")), body(os.path.join(dir_b, name + ".log"))
        if a != b:
            n = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
            print("%s: differs between two processes at line %d: %r vs %r" %
                  (name, n + 2, a[n] if n < len(a) else "<end>", b[n] if n < len(b) else "<end>"))
            bad = 1
    return bad


def model_script(ops, log, out):
    with open(log) as f:
        handles = dict(kv.split("=") for kv in f.readline().split()[1:])
    with open(ops) as f, open(out, "w") as o:
        for line in f:
            w = line.split()
            if len(w) >= 2 and w[0] == "stream":
                line = "stream %s %s\n" % (w[1], handles[w[1]])
            o.write(line)
    return 0


def same_line(a, b):
    if a == b:
        return True
    wa, wb = a.split(), b.split()
    if not (wa and wb and wa[0] == wb[0] == "stats" and len(wa) == len(wb)):
        return False
    for x, y in zip(wa[1:], wb[1:]):
        kx, vx = x.split("=", 1)
        ky, vy = y.split("=", 1)
        if kx != ky or (vx != vy and "-" not in (vx, vy)):
            return False
    return True


def compare(real, model):
    with open(real) as f:
        a = f.read().splitlines()
    with open(model) as f:
        b = f.read().splitlines()
    for k in range(max(len(a), len(b))):
        x = a[k] if k < len(a) else "<end of log>"
        y = b[k] if k < len(b) else "<end of log>"
        if x.startswith("error ") and y.endswith("=> unsupported") and x.split()[1] == y.split()[0]:
            return 0  # the real allocator raised an internal error at this op, and the model refused it
        if not same_line(x, y):
            print("line %d\n  real:  %s\n  model: %s" % (k + 1, x, y))
            return 1
    return 0


def model(replay_ops, release, opsdir, logdir, workdir, results, names):
    import contextlib
    import io
    import shutil
    import subprocess
    os.makedirs(workdir, exist_ok=True)
    differ = 0
    for name in names:
        real = os.path.join(logdir, name + ".log")
        script = os.path.join(workdir, name + ".ops")
        mlog = os.path.join(workdir, name + ".log")
        model_script(os.path.join(opsdir, name + ".ops"), real, script)
        with open(mlog, "w") as o:
            rc = subprocess.call([replay_ops, "--release", release, script], stdout=o, stderr=subprocess.STDOUT)
        first = io.StringIO()
        with contextlib.redirect_stdout(first):
            same_log = compare(real, mlog) == 0
        if same_log and rc in (0, 3):
            continue
        differ = 1
        keep = os.path.join(results, name)
        os.makedirs(keep, exist_ok=True)
        shutil.copy(script, os.path.join(keep, name + ".ops"))
        shutil.copy(real, os.path.join(keep, "real.log"))
        shutil.copy(mlog, os.path.join(keep, "model.log"))
        with open(os.path.join(keep, "first-difference"), "w") as f:
            f.write("replay_ops exit status %d\n%s" % (rc, first.getvalue()))
        with open(script) as f:
            seed = f.readline().strip().lstrip("# ")
        text = first.getvalue().strip().replace("\n", " |") or "the logs agree but replay_ops exited %d" % rc
        print("DIFF %s (%s) kept in %s: %s" % (name, seed, keep, text))
    return differ


def count(logs):
    ops = ooms = 0
    for path in logs:
        with open(path) as f:
            for line in f:
                m = OP_LINE.match(line)
                if m:
                    ops += 1
                    ooms += m.group(3) == "oom"
    print(len(logs), ops, ooms)
    return 0


def main(argv):
    cmd, args = (argv[0], argv[1:]) if argv else ("", [])
    if cmd == "split" and len(args) == 2:
        return split(*args)
    if cmd == "check":
        problems = [p for path in args for p in check_log(path)]
        for p in problems:
            print(p)
        return 1 if problems else 0
    if cmd == "same" and len(args) >= 2:
        return same(args[0], args[1], args[2:])
    if cmd == "model-script" and len(args) == 3:
        return model_script(*args)
    if cmd == "compare" and len(args) == 2:
        return compare(*args)
    if cmd == "model" and len(args) >= 6:
        return model(*args[:6], args[6:])
    if cmd == "count":
        return count(args)
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
