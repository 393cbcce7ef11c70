# gen_big.py - write a large, realistic protocol-4 CUDA memory snapshot pickle for the speed benchmark.
"""Usage: python3 gen_big.py [--blocks N] [--frames F] [--seed S] [--frames-as-2.1] OUT.pickle

About N blocks (default 1,000,000) in segments of realistic sizes on two devices; every active
block has F frames (default 6).  Frame strings are fresh str objects per frame, so pickle cannot
memoize them (as PyTorch up to 2.0 wrote them), except for a pool of shared frames lists (one list
object referenced by many blocks).  With --frames-as-2.1, frames as PyTorch 2.1 and later write
them (py_symbolize: one dict object per distinct frame, which every traceback showing it refers
to, so pickle writes it once and fetches it from the memo after; a list per traceback).  Device 0
gets a ~10,000-entry trace ring.  Segment sums are consistent, so _memory_viz.py's stats accepts
the file.  With the defaults the file is ~340 MB (~140 MB with --frames-as-2.1).
"""
import argparse
import pickle
import random
import sys

MB2 = 2 * 2**20
PAGE = 20 * 2**20
TORCH = "/usr/lib/python3/dist-packages/torch/"
PY_FRAMES = [
    (TORCH, "nn/modules/linear.py", "forward", 125),
    (TORCH, "nn/modules/module.py", "_call_impl", 1750),
    (TORCH, "nn/modules/module.py", "_wrapped_call_impl", 1739),
    (TORCH, "nn/modules/conv.py", "_conv_forward", 549),
    (TORCH, "nn/functional.py", "scaled_dot_product_attention", 5880),
    (TORCH, "autograd/graph.py", "_engine_run_backward", 823),
    (TORCH, "optim/adamw.py", "_multi_tensor_adamw", 585),
    (TORCH, "_tensor.py", "backward", 626),
    ("/home/user/llm/", "model/transformer_block.py", "forward", 88),
    ("/home/user/llm/", "model/attention.py", "forward", 142),
    ("/home/user/llm/", "model/mlp.py", "forward", 37),
    ("/home/user/llm/", "train.py", "train_step", 211),
    ("/home/user/llm/", "train.py", "<module>", 402),
    ("/home/user/llm/", "data/loader.py", "collate_fn", 64),
]
CPP_FRAMES = [
    ("/build/pytorch/", "aten/src/ATen/native/cuda/EmptyTensor.cpp", "at::native::empty_cuda", 0),
    ("/build/pytorch/", "c10/cuda/CUDACachingAllocator.cpp",
     "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc", 0),
    ("/usr/src/python3.11/", "Python/ceval.c", "_PyEval_EvalFrameDefault", 4769),
]
STATES = ("active_allocated", "inactive", "active_pending_free")


DISTINCT = {}  # --frames-as-2.1: the one dict object of each distinct frame


def fresh_frame(rng):
    """A frame dict whose strings are new objects (built by concatenation), as PyTorch 2.0 wrote them;
    or, once DISTINCT is in use, the dict object of that frame, made the first time it is drawn."""
    root, rel, name, line = rng.choice(PY_FRAMES) if rng.random() < 0.8 else rng.choice(CPP_FRAMES)
    frame = {"name": name[:1] + name[1:], "filename": root + rel, "line": line + rng.randrange(3)}
    if DISTINCT.get("on"):
        return DISTINCT.setdefault((frame["name"], frame["filename"], frame["line"]), frame)
    return frame


def frames_for(rng, nframes, shared):
    if rng.random() < 0.08:
        return rng.choice(shared)  # one list object, many references (pickle memo)
    return [fresh_frame(rng) for _ in range(nframes)]


def segment(rng, device, addr, nblocks, nframes, shared):
    small = rng.random() < 0.5
    unit = 512 if small else MB2 // 4
    sizes = [unit * rng.choice([1, 1, 2, 3, 4, 8]) for _ in range(nblocks)]
    total = sum(sizes)
    blocks, off = [], 0
    for sz in sizes:
        state = rng.choices(STATES, weights=(55, 35, 10))[0]
        req = sz - rng.randrange(0, min(sz, 512)) if state != "inactive" else rng.randrange(0, sz + 1)
        fr = frames_for(rng, nframes, shared) if state != "inactive" else []
        blocks.append({"address": addr + off, "size": sz, "requested_size": req, "state": state, "frames": fr})
        off += sz
    alloc = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
    active = sum(b["size"] for b in blocks if b["state"] != "inactive")
    reqs = sum(b["requested_size"] for b in blocks if b["state"] != "inactive")
    seg = {"device": device, "address": addr, "total_size": total, "allocated_size": alloc,
           "active_size": active, "requested_size": reqs, "stream": 0,
           "segment_type": "small" if small else "large", "segment_pool_id": (0, 0),
           "is_expandable": False}
    seg["blocks"] = blocks
    seg["frames"] = frames_for(rng, nframes, shared)
    return seg, total


def trace_ring(rng, segs, n, nframes, shared):
    out, live = [], []
    for i in range(n):
        t = 1_700_000_000_000_000 + i * 37
        if live and rng.random() < 0.45:
            addr, size = live.pop(rng.randrange(len(live)))
            for act in ("free_requested", "free_completed"):
                out.append({"action": act, "addr": addr, "size": size, "stream": 0, "time_us": t,
                            "frames": frames_for(rng, nframes, shared)})
        else:
            s = rng.choice(segs)
            addr, size = s["address"] + rng.randrange(s["total_size"]), rng.randrange(512, 4 * MB2)
            live.append((addr, size))
            out.append({"action": "alloc", "addr": addr, "size": size, "stream": 0, "time_us": t,
                        "frames": frames_for(rng, nframes, shared)})
    return out[:n]


def main():
    ap = argparse.ArgumentParser(description="Write a big realistic snapshot pickle.")
    ap.add_argument("--blocks", type=int, default=1_000_000)
    ap.add_argument("--frames", type=int, default=6)
    ap.add_argument("--seed", default="bench")
    ap.add_argument("--frames-as-2.1", dest="as21", action="store_true")
    ap.add_argument("out")
    a = ap.parse_args()
    DISTINCT["on"] = a.as21
    rng = random.Random(a.seed)
    shared = [[fresh_frame(rng) for _ in range(a.frames)] for _ in range(64)]
    segs, left = [], a.blocks
    for device in (0, 1):
        addr = 0x7F0000000000 + device * 0x10000000000
        while left > a.blocks // 2 * (1 - device):
            n = min(left, rng.choice([1, 4, 16, 50, 120, 400]))
            seg, total = segment(rng, device, addr, n, a.frames, shared)
            segs.append(seg)
            addr += total + MB2
            left -= n
    snap = {"segments": segs,
            "device_traces": [trace_ring(rng, segs, 10_000, a.frames, shared), []],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                                   "garbage_collection_threshold": 0.0, "expandable_segments": False,
                                   "pinned_num_register_threads": 1, "release_lock_on_cudamalloc": False,
                                   "pinned_use_cuda_host_register": False,
                                   "roundup_power2_divisions": {str(2**i): 0 for i in range(16)}},
            "external_annotations": []}
    with open(a.out, "wb") as f:
        pickle.dump(snap, f, protocol=4)
    print(f"{a.out}: {len(segs)} segments, {a.blocks - left} blocks", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
