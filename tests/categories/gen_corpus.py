#!/usr/bin/env python3
"""gen_corpus.py OUTDIR - snapshots with realistic PyTorch training tracebacks and, beside each,
what memprof categories must say about every block (OUTDIR/NAME.expect.json):
{"args": [...], "blocks": {addr: [category, source, rule]}, "tracker": {addr: category}}.
Also user rules files and bad rules files with the error each must give."""
import json
import os
import pickle
import random
import sys

TORCH = "/usr/lib/python3/dist-packages/torch"
USER = "/home/alice/proj"
SITE = "/opt/venv/lib/python3.11/site-packages"


def fr(filename, name, line=10):
    return {"filename": filename, "name": name, "line": line}


# Tracebacks are innermost first, as PyTorch writes them.
TRAIN = fr(USER + "/train.py", "main", 88)
LOOP = fr(USER + "/train.py", "train_epoch", 51)
CALL = [fr(TORCH + "/nn/modules/module.py", "_call_impl", 1747),
        fr(TORCH + "/nn/modules/module.py", "_wrapped_call_impl", 1736)]
STACKS = {
    "adam_init": [fr(TORCH + "/optim/adam.py", "_init_group", 176), fr(TORCH + "/optim/adam.py", "step", 230),
                  fr(TORCH + "/optim/optimizer.py", "wrapper", 493), LOOP, TRAIN],
    "adagrad_ctor": [fr(TORCH + "/optim/adagrad.py", "__init__", 95), fr(USER + "/train.py", "make_opt", 20), TRAIN],
    "sgd_momentum": [fr(TORCH + "/optim/sgd.py", "_single_tensor_sgd", 390), fr(TORCH + "/optim/sgd.py", "sgd", 330),
                     fr(TORCH + "/optim/sgd.py", "step", 125), LOOP, TRAIN],
    "adam_scratch": [fr(TORCH + "/optim/adam.py", "_multi_tensor_adam", 610), fr(TORCH + "/optim/adam.py", "adam", 900),
                     fr(TORCH + "/optim/adam.py", "step", 247), LOOP, TRAIN],
    "opt_load": [fr(TORCH + "/optim/optimizer.py", "_process_value_according_to_param_policy", 870),
                 fr(TORCH + "/optim/optimizer.py", "load_state_dict", 920), fr(USER + "/train.py", "resume", 33), TRAIN],
    "accumulate_grad": [fr("/pytorch/c10/cuda/CUDACachingAllocator.cpp", "c10::cuda::CUDACachingAllocator::Native::malloc", 1200),
                        fr("/pytorch/torch/csrc/autograd/functions/accumulate_grad.h", "torch::autograd::AccumulateGrad::accumulateGrad<>", 260),
                        fr("/pytorch/torch/csrc/autograd/engine.cpp", "torch::autograd::Engine::evaluate_function", 1100),
                        fr("??", "start_thread", 0)],
    "backward_fn": [fr("/pytorch/aten/src/ATen/native/cuda/Blas.cpp", "at::native::addmm_out_cuda_impl", 300),
                    fr("/pytorch/torch/csrc/autograd/generated/Functions.cpp", "torch::autograd::generated::AddmmBackward0::apply", 700),
                    fr("/pytorch/torch/csrc/autograd/engine.cpp", "torch::autograd::Engine::evaluate_function", 1100)],
    "py_backward": [fr(TORCH + "/autograd/graph.py", "_engine_run_backward", 825),
                    fr(TORCH + "/autograd/__init__.py", "backward", 347), fr(TORCH + "/_tensor.py", "backward", 581), LOOP, TRAIN],
    "module_to": [fr(TORCH + "/nn/modules/module.py", "convert", 1340), fr(TORCH + "/nn/modules/module.py", "_apply", 942),
                  fr(TORCH + "/nn/modules/module.py", "to", 1355), fr(USER + "/train.py", "build", 70), TRAIN],
    "linear_init": [fr(TORCH + "/nn/modules/linear.py", "__init__", 106), fr(USER + "/model.py", "__init__", 14),
                    fr(USER + "/train.py", "build", 68), TRAIN],
    "param_new": [fr(TORCH + "/nn/parameter.py", "__new__", 46), fr(USER + "/model.py", "__init__", 18), TRAIN],
    "dataloader": [fr(TORCH + "/utils/data/_utils/pin_memory.py", "pin_memory", 64),
                   fr(TORCH + "/utils/data/dataloader.py", "__next__", 701), LOOP, TRAIN],
    "accelerate": [fr("/usr/lib/python3/dist-packages/accelerate/utils/operations.py", "send_to_device", 180),
                   fr(USER + "/train.py", "train_epoch", 49), TRAIN],
    "forward": [fr(TORCH + "/nn/functional.py", "gelu", 2000), fr(USER + "/model.py", "forward", 40)] + CALL + [LOOP, TRAIN],
    "linear_forward": [fr(TORCH + "/nn/modules/linear.py", "forward", 125)] + CALL + [fr(USER + "/model.py", "forward", 38)] + CALL + [LOOP, TRAIN],
    "user_cache": [fr(USER + "/model.py", "make_kv_cache", 77), fr(USER + "/model.py", "forward", 42)] + CALL + [LOOP, TRAIN],
    "plain_user": [fr(USER + "/train.py", "scratch", 12), TRAIN],
    "cpp_only": [fr("/pytorch/aten/src/ATen/native/TensorFactories.cpp", "at::native::empty_cuda", 50)],
    "none": [],
    # for --sites: a pseudo-file, a package's __init__, frames _memory_viz's filter drops, another line
    "stdin": [fr("<stdin>", "<module>", 1)],
    "pkg_init": [fr(TORCH + "/tensor_factory.py", "zeros", 3), fr(SITE + "/mylib/__init__.py", "make_buffer", 5),
                 fr(USER + "/train.py", "main", 90)],
    "pkg_mod": [fr(SITE + "/mylib/ops/fused.py", "fused_op", 31), fr(USER + "/model.py", "forward", 44)],
    "filtered": [fr("Python/ceval.c", "_PyEval_EvalFrameDefault", 0), fr("??", "PyObject_Call", 0),
                 fr("/usr/lib/python3.11/core/boxing/x.py", "call", 2)],
    "scratch_other_line": [fr(USER + "/train.py", "scratch", 14), TRAIN],
}
# What the default rules make of each (category, rule); None: UNKNOWN.
DEFAULT = {
    "adam_init": ("OPTIMIZER_STATE", "optimizer-state-init"),
    "adagrad_ctor": ("OPTIMIZER_STATE", "optimizer-state-init"),
    "sgd_momentum": ("OPTIMIZER_STATE", "sgd-momentum-buffer"),
    "adam_scratch": ("UNKNOWN", "optimizer-step-scratch"),
    "opt_load": ("OPTIMIZER_STATE", "optimizer-load-state-dict"),
    "accumulate_grad": ("GRADIENT", "accumulate-grad"),
    "backward_fn": ("AUTOGRAD_DETAIL", "autograd-engine"),
    "py_backward": ("AUTOGRAD_DETAIL", "autograd-backward"),
    "module_to": ("PARAMETER", "module-to"),
    "linear_init": ("PARAMETER", "module-init"),
    "param_new": ("PARAMETER", "parameter-new"),
    "dataloader": ("INPUT", "data-loader"),
    "accelerate": ("INPUT", "accelerate-send-to-device"),
    "forward": ("ACTIVATION", "module-forward"),
    "linear_forward": ("ACTIVATION", "module-forward"),
    "user_cache": ("ACTIVATION", "module-forward"),
    "plain_user": None, "cpp_only": None, "none": None,
    "stdin": None, "pkg_init": None, "pkg_mod": None, "filtered": None, "scratch_other_line": None,
}
TRACKER = {"PARAMETER": "Parameter", "OPTIMIZER_STATE": "Optstate", "INPUT": "Unknown", "TEMPORARY": "Temp",
           "ACTIVATION": "Activation", "GRADIENT": "Gradient", "AUTOGRAD_DETAIL": "Temp", "BUFFER": "Buffer",
           "UNKNOWN": "Unknown"}
MB = 1 << 20


class Builder:
    def __init__(self):
        self.segments, self.traces, self.expect = [], {}, {}
        self.next_addr = 0x7F0000000000

    def segment(self, device=0, stream=0, seg_type="large", pool=(0, 0)):
        seg = {"device": device, "address": self.next_addr, "total_size": 0, "allocated_size": 0,
               "active_size": 0, "requested_size": 0, "stream": stream, "segment_type": seg_type,
               "segment_pool_id": pool, "is_expandable": False, "frames": [], "blocks": []}
        self.segments.append(seg)
        return seg

    def block(self, seg, stack, size, expect, state="active_allocated", extra=None, requested=None):
        addr = seg["address"] + seg["total_size"]
        b = {"address": addr, "size": size, "requested_size": size if requested is None else requested,
             "state": state, "frames": STACKS[stack]}
        b.update(extra or {})
        seg["blocks"].append(b)
        seg["total_size"] += size
        if state != "inactive":
            seg["allocated_size"] += size
            seg["active_size"] += size
            self.expect[str(addr)] = list(expect)
        self.next_addr = max(self.next_addr, seg["address"] + seg["total_size"] + 32 * MB)
        return addr

    def default(self, seg, stack, size, state="active_allocated", requested=None):
        d = DEFAULT[stack]
        return self.block(seg, stack, size, (d[0], "rule", d[1]) if d else ("UNKNOWN", "unknown", None), state,
                          requested=requested)

    def trace(self, device, action, addr, size, extra=None):
        e = {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": 1000 + len(self.traces.get(device, [])),
             "frames": []}
        e.update(extra or {})
        self.traces.setdefault(device, []).append(e)

    def snapshot(self):
        ndev = 1 + max([s["device"] for s in self.segments] + list(self.traces))
        return {"segments": self.segments, "device_traces": [self.traces.get(d, []) for d in range(ndev)],
                "allocator_settings": {}}


def training():
    """Every default rule, two devices, inactive blocks, a small segment."""
    b = Builder()
    s = b.segment(0)
    for i, stack in enumerate(STACKS):
        b.default(s, stack, (i + 1) * MB)
    b.block(s, "forward", 3 * MB, None, state="inactive")
    b.default(s, "forward", 5 * MB, state="active_pending_free")
    s1 = b.segment(1, stream=7)
    b.default(s1, "accumulate_grad", 64 * MB)
    b.default(s1, "module_to", 32 * MB)
    b.block(s1, "none", 16 * MB, None, state="inactive")
    small = b.segment(0, seg_type="small")
    b.default(small, "adam_init", 512)
    b.default(small, "plain_user", 1024)
    return b


def profiler():
    """Categories in the data: on trace entries and on a block; data wins over rules."""
    b = Builder()
    s = b.segment(0)
    a = b.block(s, "forward", 2 * MB, ("GRADIENT", "trace", None))
    b.trace(0, "alloc", a, 2 * MB, {"category": "GRADIENT"})
    c = b.block(s, "plain_user", 4 * MB, ("INPUT", "trace", None))
    b.trace(0, "alloc", c, 4 * MB, {"category": "INPUT"})
    # freed and allocated again without a category: the old one must not stick
    d = b.block(s, "adam_init", 1 * MB, ("OPTIMIZER_STATE", "rule", "optimizer-state-init"))
    b.trace(0, "alloc", d, 1 * MB, {"category": "ACTIVATION"})
    b.trace(0, "free_completed", d, 1 * MB)
    b.trace(0, "alloc", d, 1 * MB)
    # a category on the block itself
    b.block(s, "none", 8 * MB, ("PARAMETER", "block", None), extra={"category": "PARAMETER"})
    # profiler spelling in lower case, and the MemTracker name
    e = b.block(s, "none", 1 * MB, ("AUTOGRAD_DETAIL", "trace", None))
    b.trace(0, "alloc", e, 1 * MB, {"category": "autograd_detail"})
    f = b.block(s, "none", 3 * MB, ("OPTIMIZER_STATE", "trace", None))
    b.trace(0, "alloc", f, 3 * MB, {"category": "Optstate"})
    # a value that names no category: rules decide (with a warning)
    b.block(s, "dataloader", 1 * MB, ("INPUT", "rule", "data-loader"), extra={"category": "WEIGHTS"})
    return b


def sites():
    """For --sites and --segsum: three devices, segments of several 20 MiB pages whose blocks mix
    categories inside pages, pending frees and free blocks across pages, requested sizes below the
    block's (and zero), ties in bytes, and more call sites than the default top 10."""
    rng = random.Random(6)
    names = sorted(STACKS)
    b = Builder()
    for device, nseg in ((0, 5), (1, 2), (2, 1)):
        for _ in range(nseg):
            s = b.segment(device, stream=rng.choice([0, 0, 3]))
            for _ in range(rng.randint(3, 14)):
                state = rng.choice(["active_allocated"] * 6 + ["active_pending_free", "inactive", "inactive"])
                size = rng.choice([512 * 1024, MB, 3 * MB, 7 * MB, 13 * MB, 24 * MB, 45 * MB])
                requested = rng.choice([size, size, size - 1024, size // 2, 0])
                if state == "inactive":
                    b.block(s, "none", size, None, state="inactive")
                else:
                    b.default(s, rng.choice(names), size, state=state, requested=requested)
    # equal bytes at two sites of one device: the names decide the order, not the block order
    s = b.segment(3)
    b.default(s, "pkg_mod", 5 * MB)
    b.default(s, "stdin", 5 * MB)
    small = b.segment(2, seg_type="small")
    b.default(small, "scratch_other_line", 512)
    return b


USER_RULES = {"rules": [
    {"name": "kv-cache", "category": "ACTIVATION",
     "frames": {"file": "*/model.py", "function": "make_kv_cache", "where": "innermost_user"}},
    {"name": "scratch-is-temp", "category": "TEMPORARY",
     "frames": {"function": "scratch", "where": "innermost_user"}, "max_size": 2 * MB},
    {"name": "big-pending", "category": "TEMPORARY", "state": "pending", "min_size": 4 * MB},
    {"name": "stream-7-grads", "category": "GRADIENT", "stream": 7, "segment_type": "large", "pool": [0, 0]},
    {"name": "model-init-buffers", "category": "Buffer",
     "frames": [{"file": "*/model.py", "function": "__init__"}, {"file": "*/torch/nn/parameter.py"}]},
    {"name": "forward-wins-over-linear", "category": "AUTOGRAD_DETAIL",
     "frames": {"file": ["*/model.py", "*/nothing.py"], "function": "forward", "where": "innermost_user"},
     "min_size": 100 * MB},
]}


def with_user_rules():
    """The training corpus again, with user rules that come before the defaults."""
    b = training()
    for seg in b.segments:
        for blk in seg["blocks"]:
            key = str(blk["address"])
            if key not in b.expect:
                continue
            stack = next(k for k, v in STACKS.items() if v is blk["frames"])
            if stack == "user_cache":
                b.expect[key] = ["ACTIVATION", "rule", "kv-cache"]
            elif stack == "plain_user" and blk["size"] <= 2 * MB:
                b.expect[key] = ["TEMPORARY", "rule", "scratch-is-temp"]
            elif blk["state"] == "active_pending_free" and blk["size"] >= 4 * MB:
                b.expect[key] = ["TEMPORARY", "rule", "big-pending"]
            elif seg["stream"] == 7:
                b.expect[key] = ["GRADIENT", "rule", "stream-7-grads"]
            elif stack == "param_new":
                b.expect[key] = ["BUFFER", "rule", "model-init-buffers"]
    return b


BAD_RULES = [
    ("not-json", "{\"rules\": [", "not valid JSON"),
    ("top-key", {"rules": [], "extra": 1}, "unknown key 'extra'"),
    ("no-list", {"rule": []}, "unknown key 'rule'"),
    ("no-name", {"rules": [{"category": "GRADIENT"}]}, "rules[0]: no 'name'"),
    ("bad-category", {"rules": [{"name": "a", "category": "GRADIENT"}, {"name": "b", "category": "WEIGHTS"}]},
     "rules[1] ('b'): 'category' must name a category"),
    ("unknown-key", {"rules": [{"name": "x", "category": "INPUT", "fram": {}}]}, "rules[0] ('x'): unknown key 'fram'"),
    ("glob-type", {"rules": [{"name": "g", "category": "INPUT", "frames": {"file": 3}}]},
     "rules[0] ('g'): 'frames.file' must be a glob or a non-empty list of globs"),
    ("where", {"rules": [{"name": "w", "category": "INPUT", "frames": {"where": "outer"}}]},
     "rules[0] ('w'): 'frames.where' must be \"any\" or \"innermost_user\""),
    ("frame-key", {"rules": [{"name": "k", "category": "INPUT", "frames": {"files": "*"}}]},
     "rules[0] ('k'): unknown key 'frames.files'"),
    ("size", {"rules": [{"name": "s", "category": "INPUT", "min_size": -1}]}, "rules[0] ('s'): 'min_size' must not be negative"),
    ("size-order", {"rules": [{"name": "o", "category": "INPUT", "min_size": 10, "max_size": 5}]},
     "rules[0] ('o'): 'min_size' is above 'max_size'"),
    ("pool", {"rules": [{"name": "p", "category": "INPUT", "pool": [1]}]}, "rules[0] ('p'): 'pool' must be a list of two whole numbers"),
    ("state", {"rules": [{"name": "st", "category": "INPUT", "state": "busy"}]}, "rules[0] ('st'): 'state':"),
    ("segment-type", {"rules": [{"name": "t", "category": "INPUT", "segment_type": "huge"}]},
     "rules[0] ('t'): 'segment_type' must be \"large\" or \"small\""),
]


def write(outdir, name, builder, args, rules=None):
    snap = builder.snapshot()
    with open(os.path.join(outdir, name + ".pickle"), "wb") as f:
        pickle.dump(snap, f, protocol=4)
    if rules is not None:
        with open(os.path.join(outdir, name + ".rules.json"), "w") as f:
            json.dump(rules, f, indent=1)
    tracker = {a: TRACKER[e[0]] for a, e in builder.expect.items()}
    # the profiler has no buffers: it calls them INPUT, as its data flow calls the state a forward reads that no
    # gradient updates (the source still says which rule)
    blocks = {a: ["INPUT" if e[0] == "BUFFER" else e[0]] + e[1:] for a, e in builder.expect.items()}
    with open(os.path.join(outdir, name + ".expect.json"), "w") as f:
        json.dump({"args": args, "blocks": blocks, "tracker": tracker}, f, indent=1)


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    write(outdir, "training", training(), [])
    write(outdir, "profiler", profiler(), [])
    write(outdir, "sites", sites(), [])
    write(outdir, "user", with_user_rules(), ["--rules", os.path.join(outdir, "user.rules.json")], USER_RULES)
    with open(os.path.join(outdir, "bad.list"), "w") as lst:
        for name, content, message in BAD_RULES:
            path = os.path.join(outdir, "bad-" + name + ".json")
            with open(path, "w") as f:
                f.write(content if isinstance(content, str) else json.dumps(content))
            lst.write(path + "\t" + message + "\n")


if __name__ == "__main__":
    main()
