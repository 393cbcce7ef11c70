# differential.py - compare memprof's stats/segments/memory/trace/compare/convert with the _memory_viz.py oracles.
"""Usage: python3 differential.py --oracle-dir DIR --corpus DIR [--edge DIR] (--memprof PATH | --oracle-only)
                                  [--jobs N] [--keep DIR]

--oracle-dir  fetch-oracle.sh's cache (holds trixie/ and sid/, each _memory_viz.py + _memory_viz_fixed.py)
--corpus      gen_corpus.py output (index.tsv, pairs.tsv); --edge: the --edge set
--oracle-only no memprof: check that the oracles raise exactly where index.tsv says, and that the
              unfixed trace() differs from the fixed one only as TRACE-DEVIATIONS.md lists
--annotate-suite  trace on files with annotate entries is compared with this version only
              (default sid: 2.6 prints those entries as repr, 2.14.1 as "# annotate NAME: META")

Each comparison counts once per oracle version; the last line is "N passed, M failed";
exit 1 if M > 0.  Accepted memprof exits: 0; 1 only where the oracle's result is empty (no
segments for stats, empty trace text, no folded lines) and the output still matches (an absent
-o file then counts as empty); on an input where the oracle is expected to raise, either exit 2
with stderr lines all starting "memprof: " (one error, any number of "memprof: warning:"),
or exit 0/1 with any output (logged as crash-vs-output).  On the edge set memprof may also
reject a malformed file with exit 2 where the oracle's command did not trip over it
(logged as error-vs-output).
"""
import argparse
import difflib
import math
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402

SUITES = ("trixie", "sid")
FILE_CMDS = ("stats", "segments", "memory", "trace")
TIMEOUT = 120
MODS = {}  # (suite, fixed?) -> module, per worker process
OPTS = None

BYTES_RE = r"-?\d+\.\d(?:[KMGTPEZY]i)?B"
ALLOC_RE = re.compile(r"^([a-z]\d*) = \S+\[-?\d+:" + BYTES_RE + r"\]$")


def init_worker(opts):
    global OPTS
    OPTS = opts
    for s in SUITES:
        for fixed in (False, True):
            path = os.path.join(opts.oracle_dir, s, "_memory_viz_fixed.py" if fixed else "_memory_viz.py")
            MODS[s, fixed] = oracle.load_memviz(path, f"_memory_viz_oracle_{s}_{int(fixed)}")


def expect_crash(crash, cmd, suite):
    return cmd in crash or f"{cmd}@{suite}" in crash


def oracle_result(suite, cmd, data, data2=None, fixed=False):
    """(stdout, out, None) or (None, None, 'Type: msg') when the oracle raises."""
    if isinstance(data, Exception):
        return None, None, oracle.one_line(data)
    if isinstance(data2, Exception):
        return None, None, oracle.one_line(data2)
    try:
        so, out = oracle.run(MODS[suite, fixed], cmd, data, data2)
        return so, out, None
    except Exception as e:
        return None, None, oracle.one_line(e)


def load(path):
    try:
        return oracle.read_snapshot(path)
    except Exception as e:
        return e


def run_memprof(args, tmp):
    """Run memprof ARGS (an -o file in TMP is added by the caller); return (rc, stdout, stderr)."""
    try:
        p = subprocess.run([OPTS.memprof] + args, capture_output=True, timeout=TIMEOUT, cwd=tmp)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", b"", b""


def diff_text(exp, got, name):
    e = exp.decode("utf-8", "backslashreplace").splitlines(True)
    g = got.decode("utf-8", "backslashreplace").splitlines(True)
    lines = list(difflib.unified_diff(e, g, f"oracle/{name}", f"memprof/{name}", n=2))
    more = f"    ... ({len(lines) - 30} more diff lines)\n" if len(lines) > 30 else ""
    return "".join("    " + ln if ln.endswith("\n") else "    " + ln + "\n" for ln in lines[:30]) + more


def stderr_ok(err):
    lines = err.decode("utf-8", "replace").splitlines()
    errors = [ln for ln in lines if not ln.startswith("memprof: warning:")]
    return len(errors) == 1 and all(ln.startswith("memprof: ") for ln in lines)


class Check:
    """Collects (ok, message) results of one task."""

    def __init__(self):
        self.results, self.notes, self.keep = [], [], []

    def ok(self):
        self.results.append((True, None))

    def fail(self, msg, keep=None):
        self.results.append((False, msg))
        if keep:
            self.keep.append(keep)


def check_one(ck, label, crash, suite, cmd, orc, mem, empty_ok, inputs, edge=False):
    """Judge memprof run MEM = (rc, stdout, out) against oracle result ORC = (stdout, out, exc).

    On EDGE files (malformed snapshots) memprof may also reject the whole input with exit 2
    where this command of the oracle happens not to look at the broken part."""
    o_so, o_out, exc = orc
    if exc is not None and not expect_crash(crash, cmd, suite):
        return ck.fail(f"{label}: oracle raised unexpectedly: {exc}")
    if exc is None and expect_crash(crash, cmd, suite):
        return ck.fail(f"{label}: index.tsv expects the oracle to raise, it did not")
    if mem is None:  # --oracle-only
        return ck.ok()
    rc, so, out, err = mem
    if exc is not None:
        if rc == 2 and stderr_ok(err):
            ck.notes.append(f"{label}: crash-vs-error: oracle {exc} | {err.decode('utf-8', 'replace').strip()}")
            return ck.ok()
        if rc in (0, 1):
            ck.notes.append(f"{label}: crash-vs-output (exit {rc}): oracle {exc}")
            return ck.ok()
        return ck.fail(f"{label}: oracle raised ({exc}); memprof exit {rc}, stderr: {err[:300]!r}")
    if edge and rc == 2 and stderr_ok(err):
        ck.notes.append(f"{label}: error-vs-output: {err.decode('utf-8', 'replace').strip()}")
        return ck.ok()
    if rc != 0 and not (rc == 1 and empty_ok):
        return ck.fail(f"{label}: memprof exit {rc}, stderr: {err[:300]!r}",
                       (label, inputs, {"expected.stdout": o_so, "actual.stderr": err}))
    msgs = []
    if so is not None and so != o_so:
        msgs.append(diff_text(o_so, so, "stdout"))
    if o_out is not None and (out or b"") != o_out:
        msgs.append(diff_text(o_out, out or b"", "out.txt"))
    if msgs:
        keep = (label, inputs, {"expected.stdout": o_so, "actual.stdout": so or b"",
                                "expected.out": o_out or b"", "actual.out": out or b""})
        return ck.fail(f"{label}: output differs\n" + "".join(msgs), keep)
    return ck.ok()


def memprof_cmd(cmd, inputs, tmp, with_out):
    if OPTS.memprof is None:
        return None
    outp = os.path.join(tmp, "out.txt")
    if os.path.exists(outp):
        os.unlink(outp)
    # _memory_viz's stats is memprof's segsum (memprof's 'stats' is that command's old name)
    words = [{"stats": "segsum"}.get(cmd, cmd)] + inputs + (["-o", outp] if with_out else [])
    rc, so, err = run_memprof(words, tmp)
    out = None
    if with_out and os.path.exists(outp):
        with open(outp, "rb") as f:
            out = f.read()
    return rc, (so if cmd in ("stats", "trace", "compare") else None), out, err


def trace_deviation_ok(orig, fixed):
    """True if ORIG (unfixed trace text) differs from FIXED only in TOTAL MEM and alloc lines."""
    ol = re.sub(r"(TOTAL MEM: " + BYTES_RE + ")", r"\1\n", orig).split("\n")
    fl = fixed.split("\n")
    if len(ol) != len(fl):
        return False
    for a, b in zip(ol, fl):
        if a == b or (a.startswith("TOTAL MEM: ") and b.startswith("TOTAL MEM: ")):
            continue
        ma, mb = ALLOC_RE.match(a), ALLOC_RE.match(b)
        if not (ma and mb and ma.group(1) == mb.group(1)):
            return False
    return True


def same(a, b):
    """Strict structural equality: same types, same dict key order, NaN equals NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(same(x, y) and same(a[x], b[y]) for x, y in zip(a, b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return a == b


def task_file(path, crash, edge, annotate):
    ck, name = Check(), os.path.basename(path)
    data = load(path)
    with tempfile.TemporaryDirectory() as tmp:
        for cmd in FILE_CMDS:
            mem = memprof_cmd(cmd, [path], tmp, cmd in ("segments", "memory"))
            for s in SUITES:
                if cmd == "trace" and annotate and s != OPTS.annotate_suite and mem is not None:
                    continue  # annotate lines differ between versions; memprof follows one
                orc = oracle_result(s, cmd, data, fixed=(cmd == "trace"))
                empty = orc[2] is None and {"stats": len(data.get("segments") or []) == 0,
                                            "trace": orc[0] == b"\n"}.get(cmd, orc[1] == b"")
                check_one(ck, f"{name} {cmd}@{s}", crash, s, cmd, orc, mem, empty, [path], edge)
                if cmd == "trace" and orc[2] is None:
                    unf = oracle_result(s, cmd, data, fixed=False)
                    if unf[2] is None and trace_deviation_ok(unf[0].decode()[:-1], orc[0].decode()[:-1]):
                        ck.ok()
                    else:
                        ck.fail(f"{name} trace-deviation@{s}: unfixed trace differs from the fixed one "
                                f"beyond TRACE-DEVIATIONS.md ({unf[2] or 'output'})")
        if OPTS.memprof is not None and not edge:
            check_convert(ck, name, path, data, tmp)
    return ck


def has_bytes(v):
    """Whether V holds a bytes value anywhere (snapshots never do; the corpus puts some in extra keys)."""
    if isinstance(v, bytes):
        return True
    if isinstance(v, dict):
        return any(has_bytes(k) or has_bytes(x) for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return any(has_bytes(x) for x in v)
    return False


def check_convert(ck, name, path, data, tmp):
    outp = os.path.join(tmp, "converted.pickle")
    rc, so, err = run_memprof(["convert", path, outp], tmp)
    if has_bytes(oracle.read_snapshot(path)):
        # The memory_viz page reads no bytes opcodes, so memprof refuses to write them.
        lines = err.decode("utf-8", "replace").splitlines()
        if rc == 2 and len(lines) == 1 and lines[0].startswith("memprof: ") and "bytes" in lines[0]:
            return ck.ok()
        return ck.fail(f"{name} convert: a bytes value should be refused in one line, got exit {rc}: {err[:300]!r}")
    if rc != 0:
        return ck.fail(f"{name} convert: memprof exit {rc}, stderr: {err[:300]!r}",
                       (f"{name} convert", [path], {"actual.stderr": err}))
    back = load(outp)
    if isinstance(back, Exception):
        return ck.fail(f"{name} convert: output does not unpickle: {oracle.one_line(back)}")
    if not same(oracle.read_snapshot(path), back):
        return ck.fail(f"{name} convert: round trip changed the snapshot", (f"{name} convert", [path, outp], {}))
    # _memory_viz.py itself must accept memprof's pickle and say the same of it.
    for suite in sorted({s for s, _ in MODS}):
        for cmd in ("stats", "segments", "memory", "trace"):
            want = oracle_result(suite, cmd, data)
            got = oracle_result(suite, cmd, back)
            if got != want:
                return ck.fail(f"{name} convert: _memory_viz.py {cmd}@{suite} reads memprof's pickle "
                               f"differently ({got[2] or 'output differs'})")
    return ck.ok()


def task_pair(a, b, crash, edge):
    ck = Check()
    label = f"{os.path.basename(a)} {os.path.basename(b)} compare"
    da, db = load(a), load(b)
    with tempfile.TemporaryDirectory() as tmp:
        mem = memprof_cmd("compare", [a, b], tmp, True)
        for s in SUITES:
            orc = oracle_result(s, "compare", da, db)
            check_one(ck, f"{label}@{s}", crash, s, "compare", orc, mem, orc[1] == b"", [a, b], edge)
    return ck


def run_task(t):
    return t[0], (task_file(*t[1:]) if t[0] == "file" else task_pair(*t[1:]))


def read_tsv(path):
    with open(path, encoding="utf-8") as f:
        rows = [ln.rstrip("\n").split("\t") for ln in f]
    return rows[1:] if rows and rows[0][0] == "file" else rows


def tasks_for(d, edge):
    rows = read_tsv(os.path.join(d, "index.tsv"))
    crash = {r[0]: set(r[5].split(",")) - {"-"} for r in rows}
    tasks = [("file", os.path.join(d, r[0]), crash[r[0]], edge, r[4] == "1") for r in rows]
    for a, b in read_tsv(os.path.join(d, "pairs.tsv")):
        c = {x for x in crash[a] | crash[b] if x.startswith("compare")}
        tasks.append(("pair", os.path.join(d, a), os.path.join(d, b), c, edge))
    return tasks


def keep_failed(keep_dir, item):
    label, inputs, outputs = item
    d = os.path.join(keep_dir, re.sub(r"[^\w.@-]+", "_", label))
    os.makedirs(d, exist_ok=True)
    for p in inputs:
        if os.path.exists(p):
            shutil.copy(p, d)
    for k, v in outputs.items():
        with open(os.path.join(d, k), "wb") as f:
            f.write(v or b"")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memprof")
    ap.add_argument("--oracle-only", action="store_true")
    ap.add_argument("--oracle-dir", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--edge")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--keep")
    ap.add_argument("--annotate-suite", choices=SUITES, default="sid",
                    help="the version whose trace() memprof follows on files with annotate entries")
    opts = ap.parse_args()
    if opts.oracle_only == bool(opts.memprof):
        ap.error("give exactly one of --memprof and --oracle-only")
    if opts.memprof:
        opts.memprof = os.path.abspath(opts.memprof)
    tasks = tasks_for(opts.corpus, False) + (tasks_for(opts.edge, True) if opts.edge else [])
    passed = failed = 0
    notes = []
    with multiprocessing.Pool(opts.jobs, init_worker, (opts,)) as pool:
        for _, ck in pool.imap_unordered(run_task, tasks, chunksize=4):
            notes += ck.notes
            for ok, msg in ck.results:
                if ok:
                    passed += 1
                else:
                    failed += 1
                    print(f"FAIL {msg}", flush=True)
            if opts.keep:
                for item in ck.keep:
                    keep_failed(opts.keep, item)
    for n in sorted(notes):
        print(f"note: {n}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
