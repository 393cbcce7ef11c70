# badinput.py - write the hostile and corrupted inputs that badinput.sh feeds to memprof.
"""Usage: python3 badinput.py --out DIR [--seed S] [--random N]
       python3 badinput.py --check LIST

Writes DIR/f/* and DIR/cases.tsv, one case per line:
    NAME  PATH  RUNS  EXPECT
RUNS says which commands badinput.sh runs: s = stats, p = convert to .pickle,
j = convert to .json, t = trace. EXPECT gives the exit status each of s, p and j
must have, comma-separated: 0, 2, or * (0, 1 or 2: a corruption may leave a valid
pickle). trace may always exit 0, 1 or 2. Whatever the status, memprof must not
crash or hang, and must print nothing but one "memprof: " line on stderr.

--check reads LIST (paths of files that `memprof convert` wrote while exiting 0) and
checks each: a .json file must be strict JSON, a .pickle file must load in CPython and
use protocol 4 at most and only the memory_viz-safe opcodes. It prints a line per bad
file and exits 1 if there is any.

The cases: a small valid snapshot pickle (base.pickle, protocol 4 with frames, memo
references, a tuple, floats, unicode) truncated at every length and with every byte
inverted; a seeded sample of random corruptions; hand-made hostile pickles (opcodes
that import or call, absurd lengths, bad memo indexes, deep nesting, mark floods,
cycles, stack underflow, a memo "billion laughs", wrong types in known keys,
invalid UTF-8); bad JSON; an empty file, a directory and a missing file.
"""
import argparse
import os
import pickle
import random
import struct

P2, P4 = b"\x80\x02", b"\x80\x04"
DEEP = 1_000_000
HOSTILE = "2,2,2"
ANY = "*,*,*"


def base_snapshot():
    fr = [{"name": "forward", "filename": "/m/model.py", "line": 12},
          {"name": "train", "filename": "t.py", "line": 3}]
    a = 0x7F0000000000
    return {
        "segments": [{
            "device": 0, "address": a, "total_size": 40 << 20, "allocated_size": 2 << 20,
            "active_size": 2 << 20, "requested_size": 2000000, "stream": 0,
            "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
            "frames": fr,
            "blocks": [{"address": a, "size": 2 << 20, "requested_size": 2000000,
                        "state": "active_allocated", "frames": fr},
                       {"address": a + (2 << 20), "size": 38 << 20, "requested_size": 0,
                        "state": "inactive", "frames": []}]}],
        "device_traces": [[
            {"action": "alloc", "addr": a, "size": 2000000, "stream": 0,
             "time_us": 1700000000000000, "frames": fr},
            {"action": "free_requested", "addr": a, "size": 2000000, "stream": 0,
             "time_us": 1700000000000100, "frames": fr}]],
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                               "garbage_collection_threshold": 0.5,
                               "expandable_segments": False},
        "external_annotations": [{"name": "step \u00e9", "stage": "START", "device": 0,
                                  "time_us": 1700000000000050}],
    }


def fragment(value):
    """Opcodes that push VALUE, without header, memo or STOP (to splice into a pickle)."""
    import io
    f = io.BytesIO()
    p = pickle.Pickler(f, 2)
    p.fast = True  # no memo: fragments can be combined freely
    p.dump(value)
    return f.getvalue()[2:-1]


def snapshot_with(extra_key, extra_ops, where="top"):
    """A valid snapshot pickle whose dict at WHERE gets EXTRA_KEY: (the value EXTRA_OPS push)."""
    snap = base_snapshot()
    if where == "trace":
        snap["device_traces"][0][0][extra_key] = None
    else:
        snap[extra_key] = None
    body = fragment(snap)
    marker = fragment(extra_key) + b"N"
    assert body.count(marker) == 1
    return P2 + body.replace(marker, fragment(extra_key) + extra_ops) + b"."


def laughs(levels):
    """Opcodes that push a list of 10 copies of a list of 10 copies of ... LEVELS deep,
    every level one memo entry: 10**LEVELS ints once expanded."""
    ops = b"]q\x00(" + b"K\x01" * 10 + b"e0"
    for i in range(1, levels):
        ops += b"]q" + bytes([i]) + b"(" + (b"h" + bytes([i - 1])) * 10 + b"e0"
    return ops + b"h" + bytes([levels - 1])


def with_value(path, value):
    """BASE with the value at PATH (a list of keys/indexes) replaced."""
    snap = base_snapshot()
    d = snap
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = value
    return pickle.dumps(snap, 4)


def refused_opcodes():
    yield "op-global", b"cposix\nsystem\n(X\x04\x00\x00\x00truetR."
    yield "op-stack-global", P4 + b"\x8c\x05posix\x8c\x06system\x93X\x04\x00\x00\x00true\x85R."
    yield "op-reduce", P4 + b"N)R."
    yield "op-build", P4 + b"}}b."
    yield "op-inst", b"(iposix\nsystem\n."
    yield "op-obj", P4 + b"(N)o."
    yield "op-newobj", P4 + b"N)\x81."
    yield "op-newobj-ex", P4 + b"N)}\x92."
    yield "op-persid", b"Pkey\n."
    yield "op-binpersid", P4 + b"NQ."
    yield "op-ext1", P4 + b"\x82\x01."
    yield "op-ext2", P4 + b"\x83\x01\x00."
    yield "op-ext4", P4 + b"\x84\x01\x00\x00\x00."
    yield "op-empty-set", P4 + b"\x8f."
    yield "op-frozenset", P4 + b"(\x91."
    yield "op-bytearray8", b"\x80\x05\x96" + struct.pack("<Q", 3) + b"abc."
    yield "op-next-buffer", b"\x80\x05\x97."
    yield "op-readonly-buffer", b"\x80\x05N\x98."
    yield "op-int", b"I1\n."
    yield "op-long", b"L1L\n."
    yield "op-float", b"F1.5\n."
    yield "op-string", b"S'a'\n."
    yield "op-binstring", b"T\x01\x00\x00\x00a."
    yield "op-unicode", b"Va\n."
    yield "op-put-get", b"Np0\ng0\n."
    yield "op-unknown-ff", P4 + b"\xff."
    yield "op-unknown-00", P4 + b"\x00."
    yield "proto-6", b"\x80\x06N."


def absurd_lengths():
    for bits, n in (("2p63", 2**63), ("2p32m1", 2**32 - 1), ("2p64m1", 2**64 - 1)):
        q = struct.pack("<Q", n)
        yield f"binunicode8-{bits}", P4 + b"\x8d" + q + b"ab."
        yield f"binbytes8-{bits}", P4 + b"\x8e" + q + b"ab."
        yield f"frame-{bits}", P4 + b"\x95" + q + b"N."
    for op, name in ((b"X", "binunicode"), (b"B", "binbytes"), (b"\x8b", "long4")):
        yield f"{name}-2p32m1", P4 + op + b"\xff\xff\xff\xff" + b"\x00" * 8 + b"."
        yield f"{name}-2p31", P4 + op + b"\x00\x00\x00\x80" + b"\x00" * 8 + b"."
    yield "long1-truncated", P4 + b"\x8a\xff" + b"\x01" * 10
    yield "short-binunicode-truncated", P4 + b"\x8c\xff" + b"a" * 10
    yield "binfloat-truncated", P4 + b"G\x00\x00"
    yield "frame-past-end", P4 + b"\x95" + struct.pack("<Q", 100) + b"N."


def memo_cases():
    yield "binget-undefined", P4 + b"h\x05."
    yield "binget-before-put", P4 + b"Nh\x00."
    yield "long-binget-max", P4 + b"j\xff\xff\xff\xff."
    yield "long-binput-max", P4 + b"Nr\xff\xff\xff\xff."
    yield "memoize-empty-stack", P4 + b"\x94."
    yield "binput-empty-stack", P4 + b"q\x00."


def structure_cases():
    yield "deep-list-append", P4 + b"]" * DEEP + b"a" * (DEEP - 1) + b"."
    yield "deep-list-mark", P4 + b"(" * DEEP + b"l" * DEEP + b"."
    yield "deep-tuple1", P4 + b")" + b"\x85" * DEEP + b"."
    yield "deep-dict", P4 + b"}\x8c\x01k" * DEEP + b"N" + b"s" * DEEP + b"."
    yield "mark-flood", P4 + b"(" * DEEP + b"N."
    yield "mark-flood-appends", P4 + b"]" + b"(" * DEEP + b"e" * DEEP + b"."
    yield "cycle-list", P4 + b"]\x94h\x00a."
    yield "cycle-appends", P4 + b"]\x94(h\x00h\x00e."
    yield "cycle-dict", P4 + b"}\x94K\x01h\x00s."
    yield "cycle-nested", P4 + b"]\x94]\x94h\x00a" + b"a."
    for op in b"as\x85\x86\x87teu012dl":
        yield f"underflow-{op:02x}", P4 + bytes([op]) + b"."
    yield "setitems-odd", P4 + b"}(K\x01u."
    yield "appends-to-dict", P4 + b"}(K\x01e."
    yield "setitems-to-list", P4 + b"](K\x01K\x02u."
    yield "trailing-after-none", P4 + b"N.xyz"  # a warning, then an error: still one line
    yield "stop-empty", P4 + b"."
    yield "stop-only", b"."
    yield "stop-at-mark", P4 + b"(."
    yield "no-stop", P4 + b"N"


def text_cases():
    for name, s in (("ff", b"\xff\xfe"), ("overlong", b"\xc0\x80"), ("cut", b"\xe2\x82"),
                    ("above-max", b"\xf4\x90\x80\x80")):
        yield f"utf8-{name}", P4 + b"\x8c" + bytes([len(s)]) + s + b".", HOSTILE
    body = pickle.dumps(base_snapshot(), 4)
    yield "utf8-in-key", body.replace(b"\x8c\x05state", b"\x8c\x05st\xffte", 1), HOSTILE


def wrong_types():
    """(name, pickle, expect): values of the wrong type in known keys."""
    must_fail = [("block-size-str", ["segments", 0, "blocks", 0, "size"], "x"),
                 ("segment-address-float", ["segments", 0, "address"], 1.5),
                 ("blocks-int", ["segments", 0, "blocks"], 3),
                 ("segments-str", ["segments"], "x"),
                 ("trace-action-int", ["device_traces", 0, 0, "action"], 5),
                 ("frames-str", ["segments", 0, "blocks", 0, "frames"], "x"),
                 ("total-size-none", ["segments", 0, "total_size"], None),
                 ("device-traces-dict", ["device_traces"], {})]
    for name, path, value in must_fail:
        yield f"type-{name}", with_value(path, value), "2,2,2"
    # Frames are checked by the analyses that format them, not by the loader.
    maybe = [("frame-line-str", ["segments", 0, "frames", 0, "line"], "x"),
             ("pool-id-str", ["segments", 0, "segment_pool_id"], "x"),
             ("expandable-str", ["segments", 0, "is_expandable"], "no"),
             ("state-int", ["segments", 0, "blocks", 0, "state"], 7),
             ("size-bool", ["segments", 0, "blocks", 0, "size"], True),
             ("size-huge", ["segments", 0, "blocks", 0, "size"], 2**70),
             ("size-negative", ["segments", 0, "blocks", 0, "size"], -5)]
    for name, path, value in maybe:
        yield f"type-{name}", with_value(path, value), ANY
    for name, root in (("none", None), ("int", 5), ("str", "x"), ("list-of-ints", [1, 2])):
        yield f"root-{name}", pickle.dumps(root, 4), HOSTILE


def valid_but_hard():
    """(name, pickle, expect) for snapshots memprof loads but cannot always write."""
    deep = b"]" * 100_000 + b"a" * 99_999
    yield "extra-deep", snapshot_with("x_deep", deep), "0,2,2"
    yield "extra-deep-in-trace", snapshot_with("x_deep", deep, "trace"), "0,2,2"
    yield "extra-laughs", snapshot_with("x_lol", laughs(30)), "0,0,2"
    yield "extra-bytes", snapshot_with("x_raw", b"C\x02\x00\xff"), "0,2,0"  # SHORT_BINBYTES
    yield "extra-bigint", snapshot_with("x_big", fragment(2**(8 * 300))), "0,2,0"
    # {[1]: 2}: CPython's unpickler refuses the list key; memprof must not write it.
    yield "extra-unhashable-key", snapshot_with("x_uh", b"}]K\x01aK\x02s"), "*,2,2"
    base = pickle.dumps(base_snapshot(), 4)
    yield "trailing-garbage", base + b"garbage", ANY
    yield "two-pickles", base + base, ANY


def json_cases():
    yield "json-open", b'{"segments": ['
    yield "json-segments-int", b'{"segments": 1}'
    yield "json-cut", b"[1, 2"
    yield "json-nan", b'{"segments": [], "x": NaN}'
    yield "json-deep", b"[" * 100_000 + b"]" * 100_000
    yield "json-nul", b'{"segments": [], "x": "a\x00b"}'
    yield "json-nul-escape", b'{"segments": [], "x": "a\\u0000b"}'
    yield "json-bad-utf8", b'{"segments": [], "x": "\xff"}'
    yield "json-bad-tag", b'{"segments": [], "x": {"__tuple__": 5}}'
    yield "json-bad-base64", b'{"segments": [], "x": {"__bytes__": "@@"}}'
    yield "json-null", b"null"
    yield "json-trailing", b'{"segments": [], "device_traces": []} x'
    yield "json-block-size-str", (b'{"segments": [{"device": 0, "address": 0, "total_size": 1, '
                                  b'"blocks": [{"size": "x", "state": "inactive"}]}]}')


def corruptions(base, rng, count):
    """Every byte inverted, then COUNT seeded random corruptions."""
    for i in range(len(base)):
        yield f"flip-{i:04d}", base[:i] + bytes([base[i] ^ 0xFF]) + base[i + 1:]
    for k in range(count):
        b = bytearray(base)
        kind = rng.randrange(4)
        if kind == 0:  # one byte, random value
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif kind == 1:  # 2-4 bytes
            for _ in range(rng.randrange(2, 5)):
                b[rng.randrange(len(b))] = rng.randrange(256)
        elif kind == 2:  # insert a byte
            b.insert(rng.randrange(len(b)), rng.randrange(256))
        else:  # delete a run
            i = rng.randrange(len(b))
            del b[i:i + rng.randrange(1, 9)]
        yield f"rand-{k:04d}", bytes(b)


SAFE_OPS = set("PROTO FRAME STOP MARK EMPTY_DICT EMPTY_LIST EMPTY_TUPLE TUPLE1 TUPLE2 TUPLE3 "
               "TUPLE SETITEM SETITEMS APPEND APPENDS BININT BININT1 BININT2 LONG1 NONE NEWTRUE "
               "NEWFALSE BINFLOAT SHORT_BINUNICODE BINUNICODE MEMOIZE BINGET LONG_BINGET".split())


def no_constant(name):
    raise ValueError(f"bare {name} is not JSON")


def check_outputs(listing):
    import json
    import pickletools
    bad = 0
    for path in open(listing).read().splitlines():
        try:
            data = open(path, "rb").read()
            if path.endswith(".json"):
                json.loads(data.decode("utf-8"), parse_constant=no_constant)
            else:
                assert data[:2] in (b"\x80\x02", b"\x80\x03", b"\x80\x04"), data[:2]
                ops = {op.name for op, _, _ in pickletools.genops(data)}
                assert ops <= SAFE_OPS, sorted(ops - SAFE_OPS)
                pickle.loads(data)
        except Exception as e:  # any failure is the finding
            bad += 1
            print(f"FAIL output {path}: {type(e).__name__}: {str(e)[:200]}")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--check")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--random", type=int, default=400)
    args = ap.parse_args()
    if args.check:
        return check_outputs(args.check)
    if not args.out:
        ap.error("--out or --check is required")
    fdir = os.path.join(args.out, "f")
    os.makedirs(fdir, exist_ok=True)
    rows = []

    def add(name, data, runs, expect, suffix=".pickle"):
        path = os.path.join(fdir, name + suffix)
        with open(path, "wb") as f:
            f.write(data)
        rows.append((name, path, runs, expect))

    base = pickle.dumps(base_snapshot(), 4)
    add("base", base, "spjt", "0,0,0")
    for n in range(len(base)):
        add(f"trunc-{n:04d}", base[:n], "sp" if n % 3 == 0 else "s", ANY)
    # Converting every corruption would double the run time for little news: a third
    # are converted to pickle, a ninth to JSON too.
    for k, (name, data) in enumerate(corruptions(base, random.Random(args.seed), args.random)):
        add(name, data, "spj" if k % 9 == 0 else "sp" if k % 3 == 0 else "s", ANY)
    for gen in (refused_opcodes, absurd_lengths, memo_cases, structure_cases):
        for name, data in gen():
            # The million-deep ones only test the reader, and take a second or two a run.
            add(name, data, "sp" if name.startswith(("deep-", "mark-")) else "spjt", HOSTILE)
    for gen in (text_cases, wrong_types, valid_but_hard):
        for name, data, expect in gen():
            add(name, data, "spjt", expect)
    for name, data in json_cases():
        add(name, data, "spjt", HOSTILE, ".json")
    add("empty", b"", "spj", HOSTILE)
    add("zeros", b"\x00" * 65536, "spj", HOSTILE)
    add("random", random.Random(args.seed).randbytes(4096), "spj", HOSTILE)
    os.makedirs(os.path.join(args.out, "a-directory.pickle"), exist_ok=True)
    rows.append(("directory", os.path.join(args.out, "a-directory.pickle"), "spj", HOSTILE))
    rows.append(("missing", os.path.join(args.out, "no-such-file.pickle"), "spj", HOSTILE))
    with open(os.path.join(args.out, "cases.tsv"), "w") as f:
        for row in rows:
            f.write("\t".join(row) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
