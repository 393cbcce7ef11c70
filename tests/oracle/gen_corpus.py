# gen_corpus.py - write a seeded, varied corpus of CUDA memory snapshot pickles for the differential test.
"""Usage: python3 gen_corpus.py --seed S --count N --out DIR [--edge]

Normal set: DIR/snap-NNNN.pickle (N files, deterministic per seed), every one accepted by both
oracles except where index.tsv's oracle_crash column names a command (bare lists and dicts
without device_traces make trace() raise KeyError).  DIR/pairs.tsv lists BEFORE AFTER pairs for
`compare` (self pairs, "after" variants with segments added/removed/resized, unrelated pairs).
--edge: instead write DIR/edge-NNNN.pickle, inputs on which an oracle is expected to raise.
--real DIR2: also copy the snapshots real jobs wrote (DIR2/*.pickle, tests/data/real) into the normal set, as
real-NAME, each paired with itself.

index.tsv columns: file, protocol, traces (1 = some device_traces entry), legacy (1 = blocks
with history / without frames), annotate (1 = 2.14-style annotate entries), oracle_crash
(comma list of CMD or CMD@SUITE expected to raise, '-' if none), notes.
"""
import argparse
import copy
import os
import pickle
import random
import sys

PAGE = 20 * 2**20
MB2 = 2 * 2**20
I63 = 2**63 - 1
STATES = ("active_allocated", "inactive", "active_pending_free")

REAL_FRAMES = [
    ("forward", "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", 125),
    ("_call_impl", "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", 1750),
    ("_wrapped_call_impl", "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", 1739),
    ("forward", "/home/alice/proj/model/attention.py", 57),
    ("train_step", "/home/alice/proj/train.py", 88),
    ("<module>", "/home/alice/proj/train.py", 203),
    ("backward", "/usr/lib/python3/dist-packages/torch/autograd/__init__.py", 347),
    ("step", "/usr/lib/python3/dist-packages/torch/optim/adam.py", 213),
    ("at::native::empty_cuda(c10::ArrayRef<long>, std::optional<c10::ScalarType>)",
     "/build/pytorch/aten/src/ATen/native/cuda/EmptyTensor.cpp", 0),
    ("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)",
     "??", 0),
    ("main", "train.py", 12),
    ("collate", "data.py", 0),
]
FILTERED_FRAMES = [  # every one of these is dropped by _frame_filter
    ("_PyEval_EvalFrameDefault", "/usr/src/python3.11/Python/ceval.c", 4769),
    ("PyEval_EvalCode", "Python/ceval.c", 1148),
    ("_start", "??", 0),
    ("__libc_start_main", "libc.so.6", 0),
    ("data_start_hook", "model.py", 3),
    ("unwind::unwind()", "/build/torch/csrc/profiler/unwind/unwind.cpp", 10),
    ("torch::CapturedTraceback::gather(bool, bool, bool)", "/build/torch/csrc/profiler/combined_traceback.cpp", 79),
    ("torch::gather_with_cpp()", "traceback.cpp", 1),
    ("_PyObject_Call", "Objects/call.c", 343),
    ("PyFunction_Vectorcall", "call.c", 1),
    ("c10::impl::call_functor_with_args", "/build/aten/src/ATen/core/boxing/impl/make_boxed.h", 7),
    ("at::(anonymous namespace)::wrapper_CUDA_add", "/build/aten/src/ATen/RegisterCUDA.cpp", 1),
    ("at::redispatch::add", "/build/aten/src/ATen/RedispatchFunctions.h", 2),
    ("_PyRun_SimpleFileObject", "Python/pythonrun.c", 440),
    ("Py_RunMain", "Modules/main.c", 680),
    ("method_vectorcall_O", "Objects/methodobject.c", 481),
    ("_PyEval_Vector", "Include/internal/pycore_ceval.h", 73),
    ("callit", "myceval.cpp", 9),
    ("_PyObject_VectorcallTstate", "Include/cpython/abstract.h", 114),
]
NEAR_MISS_FRAMES = [  # look filtered, are not
    ("PyEvalLoop", "/usr/lib/ceval.py", 1),
    ("register_buffer", "/src/register.py", 2),
    ("start", "Register.py", 3),
]
WEIRD = ["semi;colon", "with space", "it's", 'say "hi"', "both ' and \"", "back\\slash\\",
         "caf\u00e9", "\u4e2d\u6587", "emoji \U0001F600", "new\nline", "tab\there", "cr\rret",
         "bell\x07", "del\x7f", "", "   ", "<non-python>", "<gaps> 12", "a;b c 123"]
WEIRD_RARE = ["nbsp\xa0x", "zw\u200bsp", "ls\u2028x", "nul\x00byte"]
FLOATS = [0.0, -0.0, 1.5, 0.1, 1e-07, 1e16, 12345678901234567.0, 3.141592653589793, 1e300,
          5e-324, float("inf"), float("-inf"), float("nan"), 2.5e-05, 100.0]
INTS = [0, 1, -1, 255, 256, 65535, 2**31 - 1, 2**31, -2**31 - 1, 2**32, 2**53 + 1, I63, -I63 - 1]


class Gen:
    """Builds one snapshot; all randomness from RNG, protocol-dependent value kinds from PROTO."""

    def __init__(self, rng, proto):
        self.rng, self.proto = rng, proto
        self.tracebacks = []  # shared list objects (pickle memo)
        self.frame_objs = []  # shared frame dicts
        self.weird_rate = 0.05
        self.legacy = False

    # -- values -------------------------------------------------------------------------
    def text(self):
        r = self.rng
        if r.random() < 0.02:
            return r.choice(WEIRD_RARE)
        return r.choice(WEIRD) if r.random() < 0.5 else r.choice(["x", "alpha", "model.layer.3", "cuda:0"])

    def value(self, depth=0):
        r = self.rng
        k = r.randrange(10 if depth < 2 else 6)
        if k == 0:
            return r.choice(INTS)
        if k == 1:
            return r.choice(FLOATS)
        if k == 2:
            return self.text()
        if k == 3:
            return r.choice([None, True, False])
        if k == 4:
            return r.randrange(-10**6, 10**6)
        if k == 5:
            return r.choice([b"\x00\xffab'\"\n", b"", bytes(range(256)) + b"x" * 50]) if self.proto >= 3 else "no-bytes"
        if k == 6:
            return [self.value(depth + 1) for _ in range(r.randrange(3))]
        if k == 7:
            return tuple(self.value(depth + 1) for _ in range(r.randrange(5)))
        if k == 8:
            return {self.text(): self.value(depth + 1) for _ in range(r.randrange(3))}
        return {}

    def extras(self, d, rate):
        """Add unknown keys (a round trip must keep them, analyses must ignore them)."""
        while self.rng.random() < rate:
            d[f"x_extra_{self.rng.randrange(100)}"] = self.value()

    # -- frames -------------------------------------------------------------------------
    def frame(self):
        r = self.rng
        if self.frame_objs and r.random() < 0.2:
            return r.choice(self.frame_objs)  # the same dict object in several lists
        x = r.random()
        if x < self.weird_rate:
            name, fn, line = self.text(), r.choice(["/w/" + self.text(), self.text(), "/dir/", ""]), 1
        elif x < 0.25:
            name, fn, line = r.choice(FILTERED_FRAMES + NEAR_MISS_FRAMES)
        else:
            name, fn, line = r.choice(REAL_FRAMES)
        if r.random() < 0.03:
            line = r.choice([0, -1, 2**31 + 5, I63])
        f = {"name": "".join(name), "filename": "".join(fn), "line": line}  # fresh str copies
        self.frame_objs.append(f)
        return f

    def traceback(self, allow_huge=True):
        r = self.rng
        if self.tracebacks and r.random() < 0.35:
            return r.choice(self.tracebacks)  # shared list object
        n = r.choice([1, 2, 3, 5, 8, 12]) if not (allow_huge and r.random() < 0.02) else r.randrange(100, 180)
        tb = [self.frame() for _ in range(n)]
        self.tracebacks.append(tb)
        return tb

    # -- segments -----------------------------------------------------------------------
    def total_size(self):
        r = self.rng
        k = r.random()
        if k < 0.25:
            return r.choice([512, 4096, MB2])
        if k < 0.55:
            return r.randrange(1, 40) * MB2
        if k < 0.85:
            return r.choice([PAGE - 1, PAGE, PAGE + 1, 2 * PAGE, 3 * PAGE, 7 * PAGE + 1, PAGE - 512,
                             2 * PAGE - 1, 5 * PAGE + 4096, 64 * PAGE])
        return r.randrange(1, 10**8)

    def cuts(self, total):
        """Split TOTAL into block sizes (Σ == TOTAL), sometimes on page boundaries or in tenths."""
        r = self.rng
        if total == 0:
            return []
        mode = r.random()
        if mode < 0.07 and total % PAGE == 0:
            return [PAGE // 10] * (10 * (total // PAGE))  # float frac sums to 0.9999999999999999
        if mode < 0.15 and total > PAGE:
            pts = sorted({j * PAGE for j in range(1, total // PAGE + 1) if j * PAGE < total})
        else:
            n = r.choice([1, 1, 2, 3, 5, 8, 12, 30]) if r.random() > 0.03 else r.randrange(100, 400)
            unit = 512 if total % 512 == 0 else 1
            slots = total // unit
            pts = sorted({r.randrange(0, slots + 1) * unit for _ in range(n - 1)})
            if r.random() < 0.05 and pts:
                pts.append(pts[-1])  # a zero-size block
        edges = [0] + [p for p in pts if 0 <= p <= total] + [total]
        return [b - a for a, b in zip(edges, edges[1:])]

    def requested(self, size, state):
        r = self.rng
        k = r.random()
        if size == 0 or k < 0.05:
            return 0
        if k < 0.45 and state == "active_allocated":
            return size
        if k < 0.75:
            return max(0, size - r.randrange(0, 512))
        return r.randrange(0, size + 1)

    def block(self, addr, size):
        r = self.rng
        state = r.choices(STATES, weights=(6, 3, 1))[0]
        req = self.requested(size, state)
        if self.legacy and r.random() < 0.7:
            b = {"address": addr} if r.random() < 0.5 else {}
            b.update(size=size, state=state)
            k = r.random()
            if k < 0.5:
                hist = []
                for j in range(r.choice([1, 1, 2, 3])):
                    h = {"addr": addr + 512 * j, "real_size": req if j == 0 else r.randrange(0, 4096)}
                    if r.random() < 0.7:
                        h["frames"] = self.traceback()
                    hist.append(h)
                b["history"] = hist
            elif k < 0.8:
                b["requested_size"] = req
            return b  # else: neither frames nor requested_size
        frames = self.traceback() if state != "inactive" or r.random() < 0.1 else []
        b = {"address": addr, "size": size, "requested_size": req, "state": state, "frames": frames}
        self.extras(b, 0.03)
        return b

    def segment(self, device, addr, total):
        r = self.rng
        blocks, off = [], 0
        for sz in self.cuts(total):
            blocks.append(self.block(addr + off, sz))
            off += sz
        act = lambda b: b["state"] != "inactive"  # noqa: E731
        alloc = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
        active = sum(b["size"] for b in blocks if act(b))
        req = sum(b.get("requested_size", b["size"]) for b in blocks if act(b))
        stream = 0 if r.random() < 0.6 else r.choice([94371234567890, 140737488355328 - 4096, 7])
        s = {"device": device, "address": addr, "total_size": total, "allocated_size": alloc,
             "active_size": active, "requested_size": req, "stream": stream,
             "segment_type": "small" if total <= MB2 else "large",
             "segment_pool_id": (0, 0) if r.random() < 0.8 else (r.randrange(1, 9), r.randrange(0, 99)),
             "is_expandable": r.random() < 0.15}
        if self.legacy and r.random() < 0.5:
            for k in ("requested_size", "segment_pool_id", "is_expandable"):
                del s[k]
        seg_frames = self.traceback(False) if r.random() < 0.4 else []
        if not seg_frames:
            s["frames"] = []
        s["blocks"] = blocks
        if seg_frames:
            s["frames"] = seg_frames
        self.extras(s, 0.05)
        return s

    def segments(self, ndev, nseg):
        r, segs = self.rng, []
        for d in range(ndev):
            addr = 0x7F0000000000 + d * 0x10000000000 + r.randrange(0, 64) * MB2
            for _ in range(nseg):
                total = self.total_size()
                segs.append(self.segment(d, addr, total))
                addr += total + r.choice([0, MB2, 512 * r.randrange(1, 100)])
        if r.random() < 0.6:
            r.shuffle(segs)  # real snapshots are sorted by device then address; the oracle does not care
        return segs

    # -- traces -------------------------------------------------------------------------
    def trace_entry(self, action, addr, size, new_shape, device_free=None):
        r = self.rng
        e = {"action": action}
        if action == "oom":
            e["device_free"] = device_free
        else:
            e["addr"] = addr
        e["size"] = size
        e["stream"] = 0 if r.random() < 0.8 else 94371234567890
        if r.random() < 0.95:
            e["time_us"] = 1_700_000_000_000_000 + r.randrange(10**9)
        if new_shape:
            e["compile_context"] = "" if r.random() < 0.8 else "[0/0] torch_dynamo " + self.text()
            e["user_metadata"] = "" if r.random() < 0.7 else self.text()
        if r.random() < 0.5:
            e["frames"] = self.traceback()
        if action not in ("alloc", "free_requested", "free_completed", "segment_alloc", "segment_free"):
            self.extras(e, 0.15)
        return e

    def trace(self, segs, device, n, new_shape):
        """N entries for DEVICE: allocs inside trace segments, snapshot segments (own device,
        allocated part, unallocated tail, other devices) or nowhere; frees of known and unknown addrs."""
        r, out, live, tsegs = self.rng, [], [], []
        mine = [s for s in segs if s.get("device") == device and s["total_size"] > 0]
        others = [s for s in segs if s.get("device") != device and s["total_size"] > 0]
        for _ in range(n):
            a = r.choices(["alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
                           "segment_map", "segment_unmap", "snapshot", "oom", "user_defined", "annotate"],
                          weights=[30, 12, 12, 6, 3, 2, 2, 2, 2, 2, 4 if new_shape else 0])[0]
            size = r.choice([512, 1024, 4096, MB2, 3 * PAGE, r.randrange(0, 10**7)])
            if a == "alloc":
                k, addr = r.random(), None
                if k < 0.25 and tsegs:
                    sa, ss = r.choice(tsegs)
                    addr = sa + r.randrange(0, ss + 1)  # ss itself: just past its end
                elif k < 0.55 and mine:
                    s = r.choice(mine)
                    addr = s["address"] + r.randrange(0, max(1, s["allocated_size"]))
                elif k < 0.7 and any(s["allocated_size"] < s["total_size"] for s in mine):
                    s = r.choice([s for s in mine if s["allocated_size"] < s["total_size"]])
                    addr = s["address"] + r.randrange(s["allocated_size"], s["total_size"])  # differs with fix 3
                elif k < 0.8 and others:
                    s = r.choice(others)  # another device's segment: differs with fix 4
                    addr = s["address"] + r.randrange(0, s["total_size"])
                if addr is None:
                    addr = r.randrange(0x1000, 2**47)
                live.append((addr, size))
                out.append(self.trace_entry(a, addr, size, new_shape))
            elif a in ("free_requested", "free_completed", "annotate"):
                if live and r.random() < 0.75:
                    addr, size = live.pop(r.randrange(len(live))) if a == "free_completed" else r.choice(live)
                else:
                    addr = r.randrange(0x1000, 2**47)
                out.append(self.trace_entry(a, addr, 0 if a == "annotate" else size, new_shape))
            elif a == "segment_alloc":
                addr = 0x7E0000000000 + r.randrange(0, 2**30) * 512
                tsegs.append((addr, size))
                out.append(self.trace_entry(a, addr, size, new_shape))
            elif a == "segment_free":
                addr, size = r.choice(tsegs) if tsegs and r.random() < 0.8 else (r.randrange(2**40), size)
                out.append(self.trace_entry(a, addr, size, new_shape))
            elif a == "oom":
                out.append(self.trace_entry(a, None, size, new_shape, device_free=r.choice([0, 1024, 2**34])))
            else:
                addr = 0 if a == "snapshot" else r.randrange(2**40)
                out.append(self.trace_entry(a, addr, size, new_shape))
        return out


def allocator_settings(rng):
    return {"PYTORCH_CUDA_ALLOC_CONF": rng.choice(["", "expandable_segments:True", "max_split_size_mb:128"]),
            "max_split_size": rng.choice([-1, 134217728]), "garbage_collection_threshold": 0.0,
            "expandable_segments": rng.random() < 0.5, "pinned_num_register_threads": 1,
            "release_lock_on_cudamalloc": False, "pinned_use_cuda_host_register": False,
            "roundup_power2_divisions": {str(2**i): 0 for i in range(16)}}


def make_snapshot(rng, proto, i):
    """Return (object_to_pickle, info dict) for normal-corpus file I."""
    g = Gen(rng, proto)
    g.legacy = i % 7 == 3 or rng.random() < 0.05
    g.weird_rate = 0.3 if i % 5 == 2 else 0.04
    info = {"traces": 0, "legacy": int(g.legacy), "annotate": 0, "crash": [], "notes": []}
    kind = i % 23
    if kind == 0:
        ndev, nseg = 1, 0  # no segments at all
        info["notes"].append("empty")
    elif kind == 11:
        ndev, nseg = rng.randrange(1, 3), rng.randrange(40, 120)
        info["notes"].append("many-segments")
    else:
        ndev, nseg = rng.choice([1, 1, 1, 2, 4]), rng.randrange(1, 12)
    segs = g.segments(ndev, nseg)
    if kind == 5 and segs:
        segs.append(copy.deepcopy(segs[0]))  # a duplicate (address, total_size) key
        info["notes"].append("duplicate-segment")
    if kind == 7:
        segs.append(g.segment(0, 0x100000, 0))  # a zero-size segment without blocks
        info["notes"].append("zero-size-segment")
    if kind == 13 and segs and segs[0]["blocks"]:
        big = "L" * 70000 + "\u00e9"  # > 64 KiB string: BINUNICODE, not SHORT_BINUNICODE
        b = segs[0]["blocks"][0]
        where = b if "frames" in b else (b["history"][0] if b.get("history") else None)
        if where is not None:
            where["frames"] = [{"name": big, "filename": "/x/" + big, "line": 1}]
        b["x_long"] = big
        info["notes"].append("long-string")
    if i % 9 == 4:  # bare list of segments (old `_snapshot()`-less dumps)
        info["crash"].append("trace")
        info["notes"].append("bare-list")
        return segs, info
    snap = {"segments": segs}
    if i % 11 == 6:
        info["crash"].append("trace")
        info["notes"].append("no-device_traces")
    else:
        new_shape = i % 3 == 1
        ntr = ndev + rng.choice([0, 0, 1])
        traces = []
        for d in range(ntr):
            n = 0 if rng.random() < 0.3 else rng.choice([1, 5, 30, 120])
            if kind == 17 and d == 0:
                n = 900  # names beyond z9: a10, b10, ...
            traces.append(g.trace(segs, d, n, new_shape))
        snap["device_traces"] = traces
        info["traces"] = int(any(traces))
        info["annotate"] = int(any(e["action"] == "annotate" for t in traces for e in t))
        if new_shape:
            info["notes"].append("2.14-shape")
    if rng.random() < 0.7:
        snap["allocator_settings"] = allocator_settings(rng)
    if rng.random() < 0.4:
        snap["external_annotations"] = [{"name": g.text(), "stage": rng.choice(["START", "END"]),
                                         "device": 0, "time_us": 1_700_000_000_000_000 + j} for j in range(3)]
    g.extras(snap, 0.2)
    return snap, info


def make_variant(rng, base, proto):
    """An "after" snapshot of BASE: segments removed, added and resized, the rest kept as-is."""
    g = Gen(rng, proto)
    v = copy.deepcopy(base)
    segs = v if isinstance(v, list) else v["segments"]
    for _ in range(min(len(segs), rng.randrange(0, 3))):
        segs.pop(rng.randrange(len(segs)))
    if segs and rng.random() < 0.6:
        j = rng.randrange(len(segs))
        s = segs[j]
        segs[j] = g.segment(s.get("device", 0), s["address"], s["total_size"] + MB2)  # same address, new size
    if segs and rng.random() < 0.5:
        s = segs[rng.randrange(len(segs))]  # same key, new blocks: compare must not report it
        segs[segs.index(s)] = g.segment(s.get("device", 0), s["address"], s["total_size"])
    for _ in range(rng.randrange(0, 3)):
        segs.append(g.segment(0, 0x600000000000 + rng.randrange(2**20) * MB2, g.total_size()))
    return v


def edge_cases(rng):
    """(name, object or raw bytes, crash list, notes) for inputs on which an oracle raises."""
    g = Gen(rng, 4)
    seg = lambda: g.segment(0, 0x7F0000000000, 4 * MB2)  # noqa: E731
    out = []
    s = seg(); s["blocks"] = []
    out.append(({"segments": [s], "device_traces": []}, ["stats"], "blocks-missing-sum-mismatch"))
    s = seg(); s["blocks"] = [{"size": s["total_size"], "state": "active_allocated", "history": []}]
    out.append(({"segments": [s], "device_traces": []}, ["stats"], "empty-history"))
    s = seg(); b = s["blocks"][-1]; b["state"] = "active_allocated"; b["requested_size"] = b["size"] + 10 * PAGE
    out.append(({"segments": [s], "device_traces": []}, ["stats"], "requested-beyond-segment"))
    s = seg(); del s["blocks"][0]["requested_size"]; s["blocks"][0]["state"] = "active_allocated"
    out.append(({"segments": [s], "device_traces": []}, ["stats", "segments", "memory"],
                "frames-without-requested_size"))
    s = seg(); s["blocks"][0]["frames"] = [{"name": 123, "filename": "x.py", "line": 1}]
    out.append(({"segments": [s], "device_traces": []}, ["segments", "memory"], "int-frame-name"))
    s = seg(); s["blocks"][0]["frames"] = [{"name": "bad\udc80surrogate", "filename": "x.py", "line": 1}]
    out.append(({"segments": [s], "device_traces": []}, ["segments", "memory"], "lone-surrogate"))
    out.append(({"device_traces": []}, ["stats", "segments", "memory", "compare"], "no-segments-key"))
    out.append(({"segments": None, "device_traces": []}, ["stats", "segments", "memory", "compare"],
                "segments-None"))
    out.append(({"segments": [], "device_traces": [[{"action": "alloc", "size": 8}]]}, ["trace"], "alloc-no-addr"))
    out.append(({"segments": [], "device_traces": [[{"action": "oom", "size": 8, "stream": 0}]]}, ["trace"],
                "oom-no-device_free"))
    out.append(({"segments": [], "device_traces": [[{"action": "annotate", "size": 0, "user_metadata": "m"}]]},
                ["trace@sid"], "annotate-no-addr"))
    good = pickle.dumps({"segments": [seg()], "device_traces": []}, protocol=4)
    out.append((good[: len(good) // 2], ["stats", "segments", "memory", "trace", "compare"], "truncated-pickle"))
    out.append((b"", ["stats", "segments", "memory", "trace", "compare"], "empty-file"))
    out.append((b"not a pickle\n", ["stats", "segments", "memory", "trace", "compare"], "not-a-pickle"))
    return out


def write_index(out, rows):
    with open(os.path.join(out, "index.tsv"), "w", encoding="utf-8") as f:
        f.write("file\tprotocol\ttraces\tlegacy\tannotate\toracle_crash\tnotes\n")
        for r in rows:
            f.write("\t".join(str(x) for x in r) + "\n")


def add_real(real, rows, pairs, out):
    """Snapshots real jobs wrote, copied as they are; their columns read from the files."""
    for name in sorted(n for n in os.listdir(real) if n.endswith(".pickle")):
        with open(os.path.join(real, name), "rb") as f:
            blob = f.read()
        obj = pickle.loads(blob)
        traces = obj.get("device_traces", []) if isinstance(obj, dict) else []
        annotate = int(any(e.get("action") == "annotate" for t in traces for e in t))
        proto = blob[1] if blob[:1] == b"\x80" else 0
        with open(os.path.join(out, "real-" + name), "wb") as f:
            f.write(blob)
        rows.append(("real-" + name, proto, int(any(traces)), 0, annotate, "-", "real-job"))
        pairs.append(("real-" + name, "real-" + name))


def gen_normal(seed, count, out, real=None):
    rows, pairs, objs = [], [], []
    for i in range(count):
        rng = random.Random(f"{seed}:{i}")
        proto = (2, 3, 4, 5)[i % 4]
        if i % 10 == 1 and objs:  # "after" variant of the previous file (bytes values need protocol >= 3)
            proto = max(proto, rows[-1][1])
            info = dict(objs[-1][1], notes=["variant-of-" + rows[-1][0]])
            obj = make_variant(rng, objs[-1][0], proto)
            pairs += [(rows[-1][0], f"snap-{i:04d}.pickle"), (f"snap-{i:04d}.pickle", rows[-1][0])]
        else:
            obj, info = make_snapshot(rng, proto, i)
        name = f"snap-{i:04d}.pickle"
        blob = pickle.dumps(obj, protocol=proto)
        assert b"_codecs" not in blob, "bytes pickled with protocol 2 need a GLOBAL: not wanted"
        with open(os.path.join(out, name), "wb") as f:
            f.write(blob)
        objs = [(obj, info)]
        rows.append((name, proto, info["traces"], info["legacy"], info["annotate"],
                     ",".join(info["crash"]) or "-", ",".join(info["notes"]) or "-"))
        if i % 13 == 0:
            pairs.append((name, name))
    rng = random.Random(f"{seed}:pairs")
    for _ in range(count // 10):
        pairs.append((rows[rng.randrange(count)][0], rows[rng.randrange(count)][0]))
    if real:
        add_real(real, rows, pairs, out)
    write_index(out, rows)
    with open(os.path.join(out, "pairs.tsv"), "w") as f:
        f.writelines(f"{a}\t{b}\n" for a, b in pairs)


def gen_edge(seed, out):
    rows, pairs = [], []
    for i, (obj, crash, notes) in enumerate(edge_cases(random.Random(f"{seed}:edge"))):
        name = f"edge-{i:04d}.pickle"
        with open(os.path.join(out, name), "wb") as f:
            f.write(obj if isinstance(obj, bytes) else pickle.dumps(obj, protocol=4))
        traces = obj.get("device_traces", []) if isinstance(obj, dict) else []
        annotate = int(any(e.get("action") == "annotate" for t in traces for e in t))
        rows.append((name, 4, int(any(traces)), 0, annotate, ",".join(crash), notes))
        pairs.append((name, name))
    write_index(out, rows)
    with open(os.path.join(out, "pairs.tsv"), "w") as f:
        f.writelines(f"{a}\t{b}\n" for a, b in pairs)


def main():
    ap = argparse.ArgumentParser(description="Write a seeded snapshot-pickle corpus.")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--out", required=True)
    ap.add_argument("--edge", action="store_true", help="write the oracle-crash edge set instead")
    ap.add_argument("--real", help="a directory of snapshots real jobs wrote, added to the normal set")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.edge:
        gen_edge(a.seed, a.out)
    else:
        gen_normal(a.seed, a.count, a.out, a.real)
    return 0


if __name__ == "__main__":
    sys.exit(main())
