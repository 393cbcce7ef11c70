#!/usr/bin/env python3
"""make_example.py - write example.pickle, the small training-job snapshot the README runs memprof on.

It has the shape torch.cuda.memory._snapshot() gives for a small model mid-training step:
parameters, gradients, Adam state, activations and a freed temporary, with frames from
real PyTorch code paths. Deterministic: running it again rewrites the same bytes."""
import pickle
import sys

MiB = 1 << 20
TORCH = "/usr/lib/python3/dist-packages/torch"


def frames(*stack):
    """Innermost first, as PyTorch records them."""
    return [{"filename": f, "line": l, "name": n} for f, l, n in stack]


USER = ("/home/alice/train.py", 88, "main")
PARAM = frames((f"{TORCH}/nn/modules/module.py", 1326, "convert"),
               (f"{TORCH}/nn/modules/module.py", 942, "_apply"),
               (f"{TORCH}/nn/modules/module.py", 1340, "to"), ("/home/alice/train.py", 41, "build_model"), USER)
GRAD = frames((f"{TORCH}/autograd/graph.py", 825, "_engine_run_backward"),
              (f"{TORCH}/_tensor.py", 626, "backward"), ("/home/alice/train.py", 63, "train_step"), USER)
ADAM = frames((f"{TORCH}/optim/adam.py", 176, "_init_group"), (f"{TORCH}/optim/adam.py", 229, "step"),
              (f"{TORCH}/optim/optimizer.py", 487, "wrapper"), ("/home/alice/train.py", 64, "train_step"), USER)
ACT = frames((f"{TORCH}/nn/functional.py", 1704, "relu"), (f"{TORCH}/nn/modules/activation.py", 133, "forward"),
             (f"{TORCH}/nn/modules/module.py", 1750, "_call_impl"), ("/home/alice/model.py", 22, "forward"),
             ("/home/alice/train.py", 60, "train_step"), USER)


def segment(address, blocks, stream=0, kind="large"):
    total = sum(b["size"] for b in blocks)
    out, off = [], 0
    for b in blocks:
        out.append({"address": address + off, "size": b["size"], "requested_size": b["requested_size"],
                    "state": b["state"], "frames": b["frames"]})
        off += b["size"]
    active = [b for b in out if b["state"] != "inactive"]
    return {"device": 0, "address": address, "total_size": total,
            "allocated_size": sum(b["size"] for b in out if b["state"] == "active_allocated"),
            "active_size": sum(b["size"] for b in active),
            "requested_size": sum(b["requested_size"] for b in active),
            "stream": stream, "segment_type": kind, "segment_pool_id": (0, 0), "is_expandable": False,
            "frames": [], "blocks": out}


def blk(size, requested, state, fr):
    return {"size": size, "requested_size": requested, "state": state, "frames": fr if state != "inactive" else []}


segments = [
    segment(0x7F3A00000000, [blk(16 * MiB, 16 * MiB, "active_allocated", PARAM),
                             blk(16 * MiB, 16 * MiB, "active_allocated", PARAM),
                             blk(8 * MiB, 8 * MiB - 4096, "active_allocated", PARAM)]),
    segment(0x7F3A02800000, [blk(16 * MiB, 16 * MiB, "active_allocated", GRAD),
                             blk(16 * MiB, 16 * MiB, "active_allocated", ADAM),
                             blk(8 * MiB, 0, "inactive", [])]),
    segment(0x7F3A05000000, [blk(30 * MiB, 30 * MiB - 512, "active_allocated", ACT),
                             blk(12 * MiB, 12 * MiB, "active_pending_free", ACT),
                             blk(18 * MiB, 0, "inactive", [])], stream=140031113265152),
    segment(0x7F3A08C00000, [blk(512, 400, "active_allocated", ACT), blk(1536, 0, "inactive", []),
                             blk(2 * MiB - 2048, 0, "inactive", [])], kind="small"),
]
trace = [
    {"action": "segment_alloc", "addr": 0x7F3A05000000, "size": 60 * MiB, "stream": 0, "time_us": 1700000000000000},
    {"action": "alloc", "addr": 0x7F3A05000000, "size": 30 * MiB - 512, "stream": 0, "time_us": 1700000000000100,
     "frames": ACT},
    {"action": "alloc", "addr": 0x7F3A06E00000, "size": 12 * MiB, "stream": 0, "time_us": 1700000000000200,
     "frames": ACT},
    {"action": "free_requested", "addr": 0x7F3A06E00000, "size": 12 * MiB, "stream": 0,
     "time_us": 1700000000000300, "frames": ACT},
    {"action": "oom", "device_free": 3 * MiB, "size": 64 * MiB, "stream": 0, "time_us": 1700000000000400},
]
snapshot = {"segments": segments, "device_traces": [trace],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                                   "garbage_collection_threshold": 0.0, "expandable_segments": False}}
with open(sys.argv[1] if len(sys.argv) > 1 else "example.pickle", "wb") as f:
    pickle.dump(snapshot, f, protocol=4)
