# gen_ranks.py - a distributed job's rank snapshots for `memprof fleet`'s tests (the standard library only).
"""Usage: python3 gen_ranks.py OUT [--ranks N] [--layout dirs|files] [--outlier R --extra-mib M
       --module NAME] [--oom R] [--plain] [--blocks B]

Writes N ranks' snapshots as torch.cuda.memory._snapshot() returns them, protocol-4 pickles, into OUT:
OUT/rank-R/snapshot.pickle (dirs, the default) or OUT/rank-R.pickle (files). Every rank holds the same model
(model.embedding, model.encoder.layers.{0..3}.{linear1,linear2}, model.head: parameters, gradients, Adam's
two states), activations and memory no Python tensor holds, each block with the keys `snapshot save --owners`
writes ('owner', 'category', 'module'), unless --plain; the ranks differ by a few KiB. Rank --outlier holds
--extra-mib MiB more, as parameters of --module allocated at train.py:88 (forward). --oom R writes rank R's
oom-1.txt and oom-1.json as `memprof watch` leaves them. --blocks B adds B small activation blocks to each
rank (a bigger snapshot). Prints what it wrote.
"""
import argparse
import json
import os
import pickle

MIB = 1 << 20
SEG = 2 * MIB  # segments are made of whole 2 MiB pages
JOB = "/home/user/job/"


def frames(file, line, name):
    return [
        {"filename": "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", "line": 1750, "name": "_call_impl"},
        {"filename": JOB + file, "line": line, "name": name},
    ]


def tensors(rank, args):
    """(owner, category, module, size, frames) of every tensor of RANK."""
    out = [("model.embedding.weight", "PARAMETER", "model.embedding", 10 * MIB, frames("model.py", 12, "__init__"))]
    for layer in range(4):
        for lin, size in (("linear1", 8 * MIB), ("linear2", 6 * MIB)):
            mod = "model.encoder.layers.%d.%s" % (layer, lin)
            where = frames("model.py", 30 + layer, "__init__")
            out.append((mod + ".weight", "PARAMETER", mod, size, where))
            out.append((mod + ".weight.grad", "GRADIENT", mod, size, frames("train.py", 60, "train_step")))
            for state in ("exp_avg", "exp_avg_sq"):
                out.append(("optimizer.state[%s.weight].%s" % (mod, state), "OPTIMIZER_STATE", mod, size,
                            frames("train.py", 70, "train_step")))
    out.append(("model.head.weight", "PARAMETER", "model.head", 4 * MIB, frames("model.py", 40, "__init__")))
    for i in range(3):  # activations saved for backward: a few KiB more on each rank, so that ranks differ
        out.append(("hidden%d" % i, "ACTIVATION", "model.encoder.layers.%d" % i, 3 * MIB + rank * 4096,
                     frames("model.py", 55, "forward")))
    out.append((None, None, None, 5 * MIB, frames("train.py", 66, "train_step")))  # held by C++
    for i in range(args.blocks):
        out.append(("act%d" % i, "ACTIVATION", "model.encoder.layers.%d" % (i % 4), 512 * (1 + i % 8),
                    frames("model.py", 100 + i % 50, "forward")))
    if rank == args.outlier:
        out.append((args.module + ".weight", "PARAMETER", args.module, args.extra_mib * MIB,
                    frames("train.py", 88, "forward")))
    return out


def block(addr, size, state, owner=None, category=None, module=None, where=None, plain=False):
    b = {"address": addr, "size": size, "requested_size": size if state != "inactive" else 0, "state": state,
         "frames": where or []}
    if not plain and owner is not None:
        b["owner"] = owner
        if category is not None:
            b["category"] = category
        if module is not None:
            b["module"] = module
    return b


def snapshot(rank, args):
    segments, addr = [], 0x7F0000000000 + rank * (1 << 36)
    for owner, category, module, size, where in tensors(rank, args):
        total = (size + SEG - 1) // SEG * SEG
        blocks = [block(addr, size, "active_allocated", owner, category, module, where, args.plain)]
        if total > size:
            blocks.append(block(addr + size, total - size, "inactive"))
        segments.append({
            "device": args.device, "address": addr, "total_size": total, "allocated_size": size,
            "active_size": size, "requested_size": size, "stream": 0, "segment_type": "large",
            "segment_pool_id": (0, 0), "is_expandable": False, "frames": where, "blocks": blocks,
        })
        addr += total
    return {"segments": segments, "device_traces": [[]], "allocator_settings": {}}


OOM_TEXT = """OOM on device 0, stream 0
a request of 2.00 GiB (large pool); cudaMalloc would be asked for 2.00 GiB.
Found in the trace.

Why the memory did not serve it (by weight)
  device_full: 1.50 GiB (the device had no more to give)

What would have worked
  nothing of the allocator's: the device is full
"""

OOM_JSON = {
    "oom": True, "verdict": "oom",
    "request": {"source": "trace", "where": "the trace", "device": 0, "stream": 0, "size": 2 << 30},
    "causes": [{"id": "device_full", "bytes": 3 << 29, "largest_block": 0, "sufficient": True, "evidence": ""}],
    "remedies": [{"id": "none", "action": "nothing of the allocator's: the device is full"}],
}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--ranks", type=int, default=8)
    p.add_argument("--layout", choices=("dirs", "files"), default="dirs")
    p.add_argument("--outlier", type=int, default=-1)
    p.add_argument("--extra-mib", type=int, default=450)
    p.add_argument("--module", default="model.embedding")
    p.add_argument("--oom", type=int, default=-1)
    p.add_argument("--plain", action="store_true")
    p.add_argument("--blocks", type=int, default=0)
    p.add_argument("--device", type=int, default=0)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for rank in range(args.ranks):
        if args.layout == "dirs":
            d = os.path.join(args.out, "rank-%d" % rank)
            os.makedirs(d, exist_ok=True)
            path = os.path.join(d, "snapshot.pickle")
        else:
            d, path = args.out, os.path.join(args.out, "rank-%d.pickle" % rank)
        with open(path, "wb") as f:
            pickle.dump(snapshot(rank, args), f, protocol=4)
        if rank == args.oom:
            with open(os.path.join(d, "oom-1.txt"), "w") as f:
                f.write(OOM_TEXT)
            with open(os.path.join(d, "oom-1.json"), "w") as f:
                json.dump(OOM_JSON, f)
            with open(os.path.join(d, "oom-2.txt"), "w") as f:
                f.write(OOM_TEXT)
    print("%s: %d ranks" % (args.out, args.ranks))


if __name__ == "__main__":
    main()
