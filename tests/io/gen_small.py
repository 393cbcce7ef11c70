# gen_small.py - write small snapshot pickles with the odd values a round trip must keep (or refuse).
"""Usage: python3 gen_small.py --out DIR

Complements tests/oracle/gen_corpus.py: every Python type memprof keeps (None, bool,
int of any size, float incl. nan/inf/-0.0, str incl. NUL, surrogates and 70000-byte
strings, bytes, list, tuple, dict with non-str or tag-shaped keys), long containers
(batches of 1000, memo indexes past 255), shared objects (frames as PyTorch shares them),
deep nesting and the legacy
forms, each written with protocols 2 to 5 (bytes only from protocol 3: protocol 2
pickles them through a REDUCE that memprof refuses). Files are DIR/small-NAME-pP.pickle.
"""
import argparse
import os
import pickle


def frames(*names):
    return [{"name": n, "filename": "/src/" + n + ".py", "line": i + 1} for i, n in enumerate(names)]


def snapshot(extra, blocks_extra=None, settings=None):
    """A valid two-segment snapshot carrying EXTRA under unknown keys."""
    shared = frames("main", "train_step", "forward")
    blocks = [
        {"address": 0x7F0000000000, "size": 1 << 20, "requested_size": 1000000,
         "state": "active_allocated", "frames": shared},
        {"address": 0x7F0000100000, "size": 1 << 20, "requested_size": 0, "state": "inactive",
         "frames": []},
    ]
    if blocks_extra is not None:
        blocks[0]["x_block_extra"] = blocks_extra
    seg = {"device": 0, "address": 0x7F0000000000, "total_size": 2 << 20,
           "allocated_size": 1 << 20, "active_size": 1 << 20, "requested_size": 1000000,
           "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0),
           "is_expandable": False, "frames": shared, "blocks": blocks}
    trace = [{"action": "alloc", "addr": 0x7F0000000000, "size": 1000000, "stream": 0,
              "time_us": 1700000000000000, "frames": shared},
             {"action": "oom", "device_free": 12345, "size": 1 << 30, "stream": 0,
              "time_us": 1700000000000001}]
    return {"segments": [seg], "device_traces": [trace, []],
            "allocator_settings": settings if settings is not None else
            {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
             "garbage_collection_threshold": 0.0, "expandable_segments": False,
             "roundup_power2_divisions": {str(1 << i): 0 for i in range(16)}},
            "external_annotations": [{"name": "step", "stage": "START", "device": 0,
                                      "time_us": 1700000000000002}],
            "x_top_extra": extra}


def sharing(lists):
    """Frames shared as PyTorch's _snapshot() shares them (one list per traceback, one dict per frame,
    whoever shows it): trace entries, some of which trace prints whole, whose frames are made of a
    block's frame dicts, and (LISTS) are a block's list; a block's list that an earlier block holds."""
    snap = snapshot(None)
    blocks = snap["segments"][0]["blocks"]
    mine = frames("step", "backward")
    blocks[0]["frames"] = mine
    blocks[1]["frames"] = mine
    snap["segments"][0]["frames"] = []
    trace = snap["device_traces"][0]
    trace[0]["frames"] = list(mine) if not lists else mine
    mixed = [mine[1], {"name": "new", "filename": "/src/new.py", "line": 7}, mine[0]]
    trace += [
        {"action": "segment_map", "addr": 0x7F0000000000, "size": 2 << 20, "stream": 0,
         "time_us": 1700000000000003, "frames": mine if lists else [mine[1]]},
        {"action": "snapshot", "addr": 0, "size": 0, "stream": 0, "time_us": 1700000000000004,
         "frames": mixed},
        {"action": "segment_unmap", "addr": 0x7F0000000000, "size": 2 << 20, "stream": 0,
         "time_us": 1700000000000005, "frames": [mine[0]]},
        {"action": "user_defined", "addr": 0, "size": 0, "stream": 0, "time_us": 1700000000000006,
         "frames": mixed}]
    return snap


def nested(depth):
    v = []
    for _ in range(depth):
        v = [v]
    return v


def cases(proto):
    ints = [0, 1, -1, 255, 256, 65535, 65536, 2**31 - 1, -2**31, 2**31, 2**53, 2**53 + 1,
            2**59 - 1, -2**59, 2**59, 2**63 - 1, -2**63, 2**64, -2**100, 2**(8 * 255 - 1) - 1]
    floats = [0.0, -0.0, 1.0, 0.1, 1.5, 1e16, 1e300, 5e-324, float("inf"), float("-inf"),
              float("nan")]
    strs = ["", "x", "h\u00e9llo \u20ac \U0001F600", "nul\x00byte", "lone \ud800 surrogate",
            "\udcff", "ctl \x01\x1f\x7f \n\t\"'\\", "y" * 300, "z" * 70000,
            "__tuple__", '{"__int__": "1"}']
    tuples = [(), (1,), (1, 2), (1, "a", None), (1, 2, 3, 4), ((1,), ()), ((), [()])]
    dicts = [{}, {1: "one", (1, 2): "pair", None: "none", 2.5: "float", ("a", (2,)): 3},
             {"__tuple__": 1}, {"__dict__": [1, 2]}, {"__int__": "5", "x": 1},
             {"__float__": "nan"}, {"k\x00": 1}, {"\ud800": 2}]
    names = [f"name{i}" for i in range(600)]
    shared = [1, 2, 3]
    yield "types", snapshot({"ints": ints, "floats": floats, "strs": strs, "tuples": tuples,
                             "dicts": dicts, "bools": [None, True, False]},
                            blocks_extra=(1, 2.5, "x"))
    yield "long", snapshot({"list": list(range(2500)), "dict": {i: i * i for i in range(1500)},
                            "memo": names + names, "shared": [shared, {"s": shared}, shared]})
    yield "deep", snapshot({"lists": nested(400), "tuples": [(((((),),),),)] * 3})
    yield "shared-dicts", sharing(False)
    yield "shared-lists", sharing(True)
    yield "settings", snapshot(None, settings=[1, (2.0, "x"), {"a": float("nan")}])
    yield "legacy", [{"device": 0, "address": 4096, "total_size": 8192, "allocated_size": 4096,
                      "active_size": 4096, "stream": 0, "segment_type": "small",
                      "blocks": [{"size": 4096, "state": "active_allocated",
                                  "history": [{"addr": 4096, "real_size": 4000,
                                               "frames": frames("f")}]},
                                 {"size": 4096, "state": "inactive"}]}]
    yield "bigint", snapshot({"wide": 2**(8 * 300), "neg": -2**(8 * 256)})  # no pickle (LONG4)
    yield "hugeint", snapshot({"huge": 10**5000})  # no pickle, no JSON (over 4300 digits)
    if proto >= 3:
        yield "bytes", snapshot({"bytes": [b"", b"\x00\xff", bytes(range(256))]})  # no pickle


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for proto in (2, 3, 4, 5):
        for name, value in cases(proto):
            with open(os.path.join(args.out, f"small-{name}-p{proto}.pickle"), "wb") as f:
                pickle.dump(value, f, protocol=proto)


if __name__ == "__main__":
    main()
