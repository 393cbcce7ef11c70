"""profiler_oracle: PyTorch's own memory profiler as an oracle for memprof's categories, allocation by allocation.

    import profiler_oracle
    with profiler_oracle.recording("parity", stacks="python"):
        ... a few training steps ...

Inside the block two recorders run over the same allocations:
  * the caching allocator's memory history (torch.cuda.memory._record_memory_history(stacks=STACKS)), started
    first; on exit torch.cuda.memory._snapshot() is pickled to OUTDIR/snapshot.pickle (history stays on: turning
    it off with enabled=None would clear the trace ring, which a later checkpoint may want);
  * torch.profiler.profile(profile_memory=True, record_shapes=True, with_stack=True), the three options the memory
    profiler requires; on exit prof._memory_profile() (torch.profiler._memory_profiler.MemoryProfile over the
    profiler's kineto results) gives every tensor version its category, and OUTDIR/profiler_categories.json lists
    every CUDA allocation the profiler saw:

    {"allocations": [{"address", "size", "alloc_us", "free_us", "category", "categories", "tensor_id",
                      "allocation_id", "device", "source", ...}, ...],
     "clock": {...}, "activities": ["CPU", "CUDA"], "cuda_activity_listed": true,
     "cuda_activity_events": {"kineto_events", "cuda_memory_events", "cuda_device_events"},
     "torch": "2.14.1+cu130", "stacks": "python", "counts": {...}, "memory_profile_seconds": ...}

  address      the device pointer the allocator reported to the profiler (the block's ptr)
  size         the bytes it reported (the block's size, rounded by the allocator; the trace ring's alloc entry
               holds the size the caller asked for)
  alloc_us     the profiler's time of the allocation event (ns / 1000, a float); null for a tensor that was
               alive before the profiler started (source "preexisting")
  free_us      the time of its free event; null when it was still alive when the profiler stopped
  category     the memory profiler's category of the tensor's version 0, the version its allocation creates
               (what MemoryProfileTimeline charges the bytes to at creation): PARAMETER, OPTIMIZER_STATE, INPUT,
               TEMPORARY, ACTIVATION, GRADIENT, AUTOGRAD_DETAIL, or null (no tensor, or not categorized)
  parameter_source  where category is PARAMETER: "tracer" (a module's parameter or an optimizer's, as the
               Python tracer saw them) or "data_flow" (the fallback that deduces parameters from the data flow)
  category_per_storage  the same, from per_storage_profile(): each storage its own tensor (the profiler's
               tensor identity joins storages through reused TensorImpl addresses)
  categories   [[version, category, from_us], ...]: every version the data-flow graph knows, with the time the
               version began (an in-place op's start; version 0 at alloc_us); a later version can change category
  tensor_id    the profiler's TensorID (several storages can carry one id); null for memory no op's tensor
               metadata named (workspaces, the allocator's own uses): such allocations are never categorized
  size/total_* also: tensor_nbytes (the bytes the memory timeline charges: the tensor metadata's storage size),
               total_allocated / total_reserved (the allocator's aggregate stats the event carried)
  source       "allocation" (an allocation event, with its free if any), "free_only" (a free event whose
               allocation came before the profiler started), "preexisting" (a tensor the profiler's ops used that
               it never saw allocated nor freed: address and size from its tensor metadata, times null)

Clocks: the trace ring's time_us is the allocator's TSC stamp (c10::getApproximateTime) converted at _snapshot() by
c10's ApproximateClockToUnixTimeConverter to Unix-epoch nanoseconds (std::chrono::system_clock, i.e.
CLOCK_REALTIME, as time.time_ns()), then divided by 1000 (an integer). The profiler's event start_time_ns is on the
same Unix-epoch clock, converted by the profiler itself when it stops: on 2.14.1 on the fake device the profiler's
alloc/free time minus the ring's time_us is -0.2 to +13 us, median +0.5 to +1.0 us (the allocator writes its
trace entry, then reports to the profiler; the ring truncates to whole microseconds). "clock" in the JSON holds
time.time_ns() around the profiler and the profiler's first and last event times, to check that on other hosts.
"""
import contextlib
import json
import os
import pickle
import time

import torch

def _activities(cuda_activity):
    acts = [torch.profiler.ProfilerActivity.CPU]
    if cuda_activity:
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    return acts


def _name(category):
    return None if category is None else category.name


def per_storage_profile(prof):
    """The memory profiler run again over PROF's results with each storage its own tensor: MemoryProfile keys
    its categories by TensorKey.id, the profiler's TensorID, which is transitive over shared TensorImpl addresses
    and storages (torch/csrc/profiler/data_flow.cpp); a TensorImpl address the host heap hands out again (the
    temporary a Parameter was made from, a freed activation's) joins unrelated allocations into one id, and one
    label reaches them all: on a generated CNN one id held 250 storages, forward convolution outputs among them,
    all GRADIENT through one .grad; on a transformer, forward outputs joined a parameter's id are PARAMETER and
    stop the flood of activations after them. Here TensorKey._make takes the storage's allocation id as the
    tensor id, and every pass runs as before. Look a key up with storage_key()."""
    from torch.profiler import _memory_profiler as m

    make = m.TensorKey._make

    def per_storage(tensor_id, storage_ptr, allocation_id, device):
        return make(None if tensor_id is None else allocation_id, storage_ptr, allocation_id, device)

    m.TensorKey._make = staticmethod(per_storage)
    try:
        return m.MemoryProfile(prof.profiler.kineto_results)
    finally:
        m.TensorKey._make = staticmethod(make)


def storage_key(key):
    """KEY as per_storage_profile() names it."""
    return type(key)(key.device, key.storage.allocation_id, key.storage)


def categorized_allocations(mp, narrow=None):
    """Every CUDA allocation in MemoryProfile MP (torch.profiler._memory_profiler.MemoryProfile), as dicts (the
    module's doc), in the order of their first event. NARROW: per_storage_profile()'s result, for
    category_per_storage."""
    from torch._C._profiler import _EventType
    from torch.profiler._memory_profiler import Action, TensorKey, extract_parameters

    cats = mp._categories
    # The parameters the Python tracer saw (modules' parameters at their forward, optimizers' param groups): a
    # PARAMETER label on any other tensor comes from the data-flow fallback (_set_parameters_using_data_flow).
    traced = {key.id for e in mp._op_tree.dfs() for key in extract_parameters(e) if key is not None}
    # Versions of each tensor key and when each began, from the memory profiler's own timeline.
    version_start = {}
    for t, action, (key, version), _ in mp.timeline:
        if isinstance(key, TensorKey) and action == Action.INCREMENT_VERSION:
            version_start[(key, version + 1)] = t
    versions = {}
    for key, version in mp._category_snapshot():
        versions.setdefault(key, set()).add(version)
    for key, version in version_start:
        versions.setdefault(key, set()).add(version)

    def describe(key, alloc_ns):
        if key is None:
            return None, []
        rows = []
        for v in sorted(versions.get(key, {0}) | {0}):
            start = alloc_ns if v == 0 else version_start.get((key, v))
            rows.append([v, _name(cats.get(key, v)), None if start is None else start / 1000])
        return _name(cats.get(key, 0)), rows

    events = [e for e in mp._op_tree.sorted_nodes if e.typed[0] == _EventType.Allocation]
    live = {}   # allocation_id (else (ptr, device)) -> record
    out = []
    seen_keys = set()
    for e in events:
        f = e.typed[1]
        if f.device.type != "cuda":
            continue
        ident = f.allocation_id if f.allocation_id is not None else (f.ptr, str(f.device))
        key = TensorKey.from_allocation(f)
        if key is not None:
            seen_keys.add(key)
        if f.alloc_size > 0:
            rec = {"address": f.ptr, "size": f.alloc_size, "alloc_us": e.start_time_ns / 1000, "free_us": None,
                   "device": f.device.index, "tensor_id": f.id, "allocation_id": f.allocation_id,
                   "source": "allocation", "total_allocated": f.total_allocated,
                   "total_reserved": f.total_reserved, "_key": key, "_ns": e.start_time_ns}
            live[ident] = rec
            out.append(rec)
        else:
            rec = live.pop(ident, None)
            if rec is None:
                rec = {"address": f.ptr, "size": -f.alloc_size, "alloc_us": None, "free_us": None,
                       "device": f.device.index, "tensor_id": f.id, "allocation_id": f.allocation_id,
                       "source": "free_only", "total_allocated": None, "total_reserved": None, "_key": key,
                       "_ns": None}
                out.append(rec)
            rec["free_us"] = e.start_time_ns / 1000
            if rec["_key"] is None:
                rec["_key"] = key
    # Tensors the ops used that the profiler never saw allocated nor freed (alive throughout).
    for key in sorted(versions):
        if key.device.type != "cuda" or key in seen_keys:
            continue
        try:
            size = mp._size_map[key]
        except KeyError:
            size = None
        out.append({"address": key.storage.ptr, "size": size, "alloc_us": None, "free_us": None,
                    "device": key.device.index, "tensor_id": key.id, "allocation_id": key.storage.allocation_id,
                    "source": "preexisting", "total_allocated": None, "total_reserved": None, "_key": key,
                    "_ns": None})
    for rec in out:
        key = rec.pop("_key")
        rec["category"], rec["categories"] = describe(key, rec.pop("_ns"))
        if rec["category"] == "PARAMETER":
            rec["parameter_source"] = "tracer" if key.id in traced else "data_flow"
        if narrow is not None:
            rec["category_per_storage"] = None if key is None else _name(narrow._categories.get(storage_key(key), 0))
        if key is not None:
            try:
                rec["tensor_nbytes"] = mp._size_map[key]   # the bytes the timeline charges (tensor metadata)
            except KeyError:
                rec["tensor_nbytes"] = None
    return out


def device_activity_events(prof):
    """How many of the profiler's kineto events are on a CUDA device: the allocator's "[memory]" events (with or
    without CUDA activity) and the rest (kernels, memcpys: CUPTI's records; none where CUPTI did not initialize, as
    on the fake device, though supported_activities() still lists CUDA)."""
    try:
        events = prof.profiler.kineto_results.events()
        on_cuda = [e for e in events if str(e.device_type()).endswith("CUDA")]
        memory = sum(1 for e in on_cuda if e.name() == "[memory]")
        return {"kineto_events": len(events), "cuda_memory_events": memory, "cuda_device_events": len(on_cuda) - memory}
    except Exception as error:  # an API this release lacks: say so rather than fail the job
        return "unknown: %s" % error


@contextlib.contextmanager
def recording(outdir, stacks="python", cuda_activity=True, max_entries=None):
    """Records the block's allocations with both recorders and writes OUTDIR/snapshot.pickle and
    OUTDIR/profiler_categories.json on a normal exit (the module's doc). CUDA_ACTIVITY False profiles the CPU
    only (the allocator reports CUDA memory events to the profiler either way). Yields the profiler."""
    os.makedirs(outdir, exist_ok=True)
    hist = {"enabled": "all", "context": "all", "stacks": stacks}
    if max_entries is not None:
        hist["max_entries"] = max_entries
    torch.cuda.synchronize()
    torch.cuda.memory._record_memory_history(**hist)
    acts = _activities(cuda_activity)
    prof = torch.profiler.profile(activities=acts, profile_memory=True, record_shapes=True, with_stack=True)
    clock = {"time_ns_before_profiler": time.time_ns(), "monotonic_ns_before_profiler": time.monotonic_ns()}
    with prof:
        clock["time_ns_profiler_started"] = time.time_ns()
        yield prof
        torch.cuda.synchronize()
        clock["time_ns_profiler_stopping"] = time.time_ns()
    clock["time_ns_profiler_stopped"] = time.time_ns()
    snapshot = torch.cuda.memory._snapshot()
    clock["time_ns_snapshot_taken"] = time.time_ns()
    with open(os.path.join(outdir, "snapshot.pickle.tmp"), "wb") as f:
        pickle.dump(snapshot, f)
    os.replace(os.path.join(outdir, "snapshot.pickle.tmp"), os.path.join(outdir, "snapshot.pickle"))

    t0 = time.monotonic()
    mp = prof._memory_profile()
    allocations = categorized_allocations(mp, per_storage_profile(prof))
    all_ns = [e.start_time_ns for e in mp._op_tree.sorted_nodes]
    clock.update({
        "profiler_first_event_us": min(all_ns) / 1000 if all_ns else None,
        "profiler_last_event_us": max(all_ns) / 1000 if all_ns else None,
        "note": "alloc_us/free_us: the profiler's event start_time_ns / 1000; the trace ring's time_us: the "
                "allocator's TSC converted to Unix-epoch ns at _snapshot(), / 1000 (integer); both on "
                "time.time_ns()'s clock (CLOCK_REALTIME), each converted by its own recorder",
    })
    counts = {"allocations": len(allocations)}
    for rec in allocations:
        counts["source:" + rec["source"]] = counts.get("source:" + rec["source"], 0) + 1
        c = "category:%s" % rec["category"]
        counts[c] = counts.get(c, 0) + 1
    doc = {"torch": torch.__version__, "stacks": stacks, "activities": [a.name for a in acts],
           "cuda_activity_listed": torch.profiler.ProfilerActivity.CUDA in torch.profiler.supported_activities(),
           "cuda_activity_events": device_activity_events(prof), "clock": clock, "counts": counts,
           "memory_profile_seconds": round(time.monotonic() - t0, 3), "allocations": allocations}
    path = os.path.join(outdir, "profiler_categories.json")
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(path + ".tmp", path)
