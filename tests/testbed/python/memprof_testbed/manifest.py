"""The manifest of a checkpoint: every tensor the job's modules and optimizers own, named as a user would name
it, with where its memory is. It is the truth that memprof's owner analysis (which reads the same objects from
the outside) is checked against."""
import gc
import sys
import warnings


def _tensor_entry(name, kind, tensor):
    import torch
    # A DTensor (FSDP2's sharded parameters, their gradients and optimizer state) is described by its local
    # shard, the memory this rank holds; its global shape comes along.
    local = getattr(tensor, "_local_tensor", None)
    whole = None
    if isinstance(local, torch.Tensor):
        whole = list(tensor.shape)
        tensor = local
    storage = tensor.untyped_storage()
    entry = {
        "name": name,
        "kind": kind,
        "id": id(tensor),  # CPython: the object's address, where memprof finds it

        "data_ptr": tensor.data_ptr(),
        "nbytes": tensor.numel() * tensor.element_size(),
        "storage_ptr": storage.data_ptr(),
        "storage_nbytes": storage.nbytes(),
        "device": str(tensor.device),
        "dtype": str(tensor.dtype).replace("torch.", ""),
        "shape": list(tensor.shape),
        "requires_grad": bool(tensor.requires_grad),
        "is_parameter": isinstance(tensor, torch.nn.Parameter) or whole is not None and kind == "parameter",
    }
    if whole is not None:
        entry["global_shape"] = whole
    return entry


def _module_entries(prefix, module, names):
    """Parameters, their gradients and buffers of module and its submodules, qualified by prefix; names maps
    id(parameter) -> its qualified name, for the optimizer entries."""
    out = []
    for pname, param in module.named_parameters(remove_duplicate=False):
        qual = f"{prefix}.{pname}"
        names.setdefault(id(param), qual)
        out.append(_tensor_entry(qual, "parameter", param))
        if param.grad is not None:
            out.append(_tensor_entry(qual + ".grad", "gradient", param.grad))
    for bname, buf in module.named_buffers(remove_duplicate=False):
        if buf is not None:
            out.append(_tensor_entry(f"{prefix}.{bname}", "buffer", buf))
    return out


def _optimizer_entries(prefix, optimizer, names, registered):
    """Its parameters no module holds (parameters all the same: named by their registered name, else by their
    address) and their gradients, then its state, by the parameters' names."""
    import torch
    out = []
    for group in optimizer.param_groups:
        for param in group["params"]:
            if id(param) in names:
                continue
            name = registered.get(id(param), f"<param {param.data_ptr():#x}>")
            names[id(param)] = name
            out.append(_tensor_entry(name, "parameter", param))
            if param.grad is not None:
                out.append(_tensor_entry(name + ".grad", "gradient", param.grad))
    for param, state in optimizer.state.items():
        pname = names.get(id(param), f"<param {param.data_ptr():#x}>")
        for key, value in state.items():
            if isinstance(value, torch.Tensor):
                out.append(_tensor_entry(f"{prefix}.state[{pname}].{key}", "optimizer_state", value))
    return out


def _global_names():
    """id(object) -> the name of a global of __main__ bound to it (the name a user gave it)."""
    main = sys.modules.get("__main__")
    return {id(v): k for k, v in vars(main).items()} if main else {}


def _found_objects():
    """Modules not inside another module, and optimizers, that the garbage collector knows."""
    import torch
    modules, optimizers = [], []
    with warnings.catch_warnings():
        # isinstance() on some of torch's deprecated module proxies warns.
        warnings.simplefilter("ignore")
        for obj in gc.get_objects():
            if isinstance(obj, torch.nn.Module):
                modules.append(obj)
            elif isinstance(obj, torch.optim.Optimizer):
                optimizers.append(obj)
    inner = set()
    for m in modules:
        inner.update(id(child) for child in m.modules() if child is not m)
    return [m for m in modules if id(m) not in inner], optimizers


def collect(registered):
    """The manifest: registered objects first (by their registered names), then what gc finds."""
    import torch
    entries, names, seen, tensor_names = [], {}, set(), {}
    globals_by_id = _global_names()

    def add(name, obj):
        if isinstance(obj, torch.nn.Module):
            if id(obj) not in seen:
                seen.add(id(obj))
                entries.extend(_module_entries(name, obj, names))
        elif isinstance(obj, torch.Tensor):
            tensor_names.setdefault(id(obj), name)   # names it as an optimizer's parameter
            entries.append(_tensor_entry(name, "registered", obj))
        elif isinstance(obj, dict):
            for k, v in obj.items():
                add(f"{name}[{k!r}]", v)
        elif isinstance(obj, (list, tuple)):
            for i, v in enumerate(obj):
                add(f"{name}[{i}]", v)

    later = []
    for name, obj in registered:
        if isinstance(obj, torch.optim.Optimizer):
            later.append((name, obj))
        else:
            add(name, obj)
    modules, optimizers = _found_objects()
    for m in modules:
        add(globals_by_id.get(id(m), f"{type(m).__name__}@{id(m):#x}"), m)
    # Optimizers last, so that their states are named by the parameters' qualified names.
    done = set()
    for name, opt in later + [(globals_by_id.get(id(o), f"{type(o).__name__}@{id(o):#x}"), o)
                              for o in optimizers]:
        if id(opt) not in done:
            done.add(id(opt))
            entries.extend(_optimizer_entries(name, opt, names, tensor_names))
    return entries


def tracker_table(tracker):
    """MemTracker's current and peak breakdown as plain JSON: {"current"|"peak": {device: {type: bytes}}}."""
    def plain(snap):
        return {str(dev): {str(getattr(k, "value", k)): int(v) for k, v in kinds.items()}
                for dev, kinds in snap.items()}
    table = {kind: plain(tracker.get_tracker_snapshot(kind)) for kind in ("current", "peak")}
    # Per module: MemTracker's fully qualified name and what it counts of the module's own subtree
    # (parameters and buffers of module.parameters() / module.buffers(), CUDA storages rounded up to 512 bytes).
    table["modules"] = [{"fqn": stats.mod_fqn, "parameter_mem": int(stats.parameter_mem),
                         "buffer_mem": int(stats.buffer_mem)}
                        for stats in tracker.memory_tracking.values()]
    return table
