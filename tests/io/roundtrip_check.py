# roundtrip_check.py - judge the `memprof convert` outputs that roundtrip.sh produced.
"""Usage: python3 roundtrip_check.py WORKDIR

WORKDIR/cases lists one source pickle per line; WORKDIR/out/K/ (K = line number) holds
what roundtrip.sh made of it: out.pickle, out.json, back.pickle, each with .rc (exit
status) and .err (stderr). For each source F:
  - out.pickle (F -> pickle): loads in CPython to a value strictly equal to F's (types,
    key order, NaN == NaN), has protocol <= 4 and only the opcodes that PyTorch's
    memory_viz page reads;
  - out.json (F -> JSON): strict JSON whose memprof tags decode to F's value (integral
    floats may come back as ints; segment_pool_id is a plain list);
  - back.pickle (out.json -> pickle): as out.pickle, but equal in Python's sense (1 == 1.0);
  - where F holds what a format cannot carry (bytes or ints over 255 bytes for the
    pickle writer, ints over 4300 digits for JSON), the conversion must instead fail
    with exit status 2 and exactly one stderr line starting "memprof: ".
Prints a line per failing source, then "N passed, M failed"; exits 1 on any failure.
"""
import base64
import json
import math
import multiprocessing
import os
import pickle
import pickletools
import sys

sys.set_int_max_str_digits(0)
sys.setrecursionlimit(20000)

ALLOWED = set("PROTO FRAME STOP MARK EMPTY_DICT EMPTY_LIST EMPTY_TUPLE TUPLE1 TUPLE2 TUPLE3 TUPLE "
              "SETITEM SETITEMS APPEND APPENDS BININT BININT1 BININT2 LONG1 NONE NEWTRUE NEWFALSE "
              "BINFLOAT SHORT_BINUNICODE BINUNICODE MEMOIZE BINGET LONG_BINGET".split())
TAGS = {"__tuple__", "__bytes__", "__int__", "__float__", "__dict__", "__str__"}


class Mismatch(Exception):
    pass


def walk(v):
    """Every value inside V (iteratively: corpora nest deeply)."""
    stack = [v]
    while stack:
        x = stack.pop()
        yield x
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())


def is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def can_carry(v):
    """Whether the pickle writer (no bytes, ints of at most 255 bytes: LONG1) and the
    JSON writer (ints of at most 4300 digits) can write V."""
    p_ok = j_ok = True
    for x in walk(v):
        if isinstance(x, bytes):
            p_ok = False
        elif is_int(x) and not -2**63 <= x < 2**63:
            p_ok = p_ok and len(pickle.encode_long(x)) <= 255
            j_ok = j_ok and len(str(abs(x))) <= 4300
    return p_ok, j_ok


def equal(a, b, loose):
    """SAME, with repr() as the fast path: it tells types, key order, -0.0 and NaN apart."""
    if repr(a) != repr(b):
        same(a, b, loose)


def same(a, b, loose, path="value"):
    """A strict deep comparison; LOOSE accepts an int for an integral float (JSON) and a
    list for the segment_pool_id tuple. Raises Mismatch with the place."""
    if loose and is_int(a) and isinstance(b, float) and not isinstance(b, bool):
        if a != b:
            raise Mismatch(f"{path}: {a!r} != {b!r}")
        return
    if loose and path.endswith("['segment_pool_id']") and isinstance(a, list) and isinstance(b, tuple):
        a = tuple(a)
    if type(a) is not type(b):
        raise Mismatch(f"{path}: {type(a).__name__} {a!r:.60} vs {type(b).__name__} {b!r:.60}")
    if isinstance(a, float):
        if not ((a != a and b != b) or (a == b and math.copysign(1, a) == math.copysign(1, b))):
            raise Mismatch(f"{path}: {a!r} != {b!r}")
    elif isinstance(a, (list, tuple)):
        if len(a) != len(b):
            raise Mismatch(f"{path}: length {len(a)} != {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, loose, f"{path}[{i}]")
    elif isinstance(a, dict):
        if len(a) != len(b):
            raise Mismatch(f"{path}: {len(a)} keys != {len(b)}")
        for (k, x), (l, y) in zip(a.items(), b.items()):
            same(k, l, loose, f"{path} key")
            same(x, y, loose, f"{path}[{k!r:.40}]")
    elif a != b:
        raise Mismatch(f"{path}: {a!r:.60} != {b!r:.60}")


def untag(v):
    """Decode memprof's JSON tags (SCHEMA.md) in a json.load result; segment_pool_id
    lists become tuples again, as memprof's reader does."""
    if isinstance(v, list):
        return [untag(x) for x in v]
    if not isinstance(v, dict):
        return v
    if len(v) == 1:
        (k, x), = v.items()
        if k in TAGS:
            if k == "__tuple__":
                return tuple(untag(y) for y in x)
            if k == "__dict__":
                return {untag(p[0]): untag(p[1]) for p in x}
            if k == "__int__":
                return int(x)
            if k == "__float__":
                return float(x)
            raw = base64.b64decode(x, validate=True)
            return raw if k == "__bytes__" else raw.decode("utf-8", "surrogatepass")
    return {k: tuple(x) if k == "segment_pool_id" and isinstance(x, list) else untag(x)
            for k, x in v.items()}


def check_pickle(path, want, loose):
    data = open(path, "rb").read()
    if data[:2] not in (b"\x80\x02", b"\x80\x03", b"\x80\x04"):
        raise Mismatch(f"{path}: header {data[:2]!r}, want protocol 2-4")
    bad = {op.name for op, _, _ in pickletools.genops(data)} - ALLOWED
    if bad:
        raise Mismatch(f"{path}: opcodes outside the memory_viz set: {sorted(bad)}")
    equal(pickle.loads(data), want, loose)


def check_json(path, want):
    def no_constant(name):
        raise Mismatch(f"{path}: bare {name} is not JSON")
    with open(path, encoding="utf-8") as f:
        equal(untag(json.load(f, parse_constant=no_constant)), want, True)


def result(d, name):
    rc = int(open(os.path.join(d, name + ".rc")).read())
    err = open(os.path.join(d, name + ".err"), errors="replace").read().splitlines()
    return rc, err


def expect(d, name, ok, check):
    rc, err = result(d, name)
    if ok:
        if rc != 0:
            raise Mismatch(f"{name}: exit {rc}: {' | '.join(err)[:300]}")
        if any(not line.startswith("memprof: warning: ") for line in err):
            raise Mismatch(f"{name}: unexpected stderr: {' | '.join(err)[:300]}")
        check(os.path.join(d, name))
    elif rc != 2 or len(err) != 1 or not err[0].startswith("memprof: "):
        raise Mismatch(f"{name}: want a refusal (exit 2, one 'memprof: ' line), got exit {rc}: "
                       f"{' | '.join(err)[:300]}")


def check_case(src, d):
    want = pickle.load(open(src, "rb"))
    p_ok, j_ok = can_carry(want)
    expect(d, "out.pickle", p_ok, lambda p: check_pickle(p, want, False))
    expect(d, "out.json", j_ok, lambda p: check_json(p, want))
    if j_ok:
        expect(d, "back.pickle", p_ok, lambda p: check_pickle(p, want, True))


def judge(job):
    """The failure line of source JOB = (K, SRC), or None."""
    k, src = job
    try:
        check_case(src, os.path.join(WORK, "out", str(k)))
    except (Mismatch, pickle.UnpicklingError, ValueError, OSError, EOFError) as e:
        return f"FAIL {os.path.basename(src)}: {e}"
    return None


def main():
    global WORK
    WORK = sys.argv[1]
    sources = open(os.path.join(WORK, "cases")).read().splitlines()
    with multiprocessing.Pool(2) as pool:
        failures = [f for f in pool.map(judge, enumerate(sources), chunksize=4) if f]
    for line in failures:
        print(line)
    print(f"{len(sources) - len(failures)} passed, {len(failures)} failed")
    return 1 if failures or not sources else 0


if __name__ == "__main__":
    sys.exit(main())
