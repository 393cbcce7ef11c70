#!/usr/bin/env python3
"""gen_timeline.py OUTDIR - snapshots whose trace rings come from a simulated training job, and
beside each (OUTDIR/NAME.expect.json) what the category timeline must be, per device, in the terms
of torch.profiler's MemoryProfileTimeline: a list of [time_ns, action, tensor id, numbytes,
category] events (category a profiler Category name or null), the requested bytes of the active
blocks at the end, and whether the ring agrees with the blocks.

The simulation knows every tensor's category from how it made it (the stack it allocated from, or
the 'category' key a profiler-made snapshot carries), so the expectation does not come from
memprof's classifier. The ring is cut as PyTorch's ring buffer cuts it (the oldest entries go),
so some frees have no alloc and some live blocks were allocated before the ring began."""
import json
import os
import pickle
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "categories"))
from gen_corpus import DEFAULT, STACKS  # noqa: E402 (realistic PyTorch frames)

MB = 1 << 20
SLOT = 64 * MB  # every block lives alone in a segment of this size
T0 = 1732200000000000  # time_us of the first event, as PyTorch's clock gives it


def profiler_category(name):
    """What torch.profiler calls memprof's category NAME (None: its UNKNOWN)."""
    if name is None:
        return None
    name = {"OPTSTATE": "OPTIMIZER_STATE", "TEMP": "TEMPORARY"}.get(name.upper(), name.upper())
    return None if name in ("UNKNOWN", "BUFFER") else name


class Tensor:
    def __init__(self, tid, device, addr, size, stack, category, key):
        self.id, self.device, self.addr, self.size = tid, device, addr, size
        self.stack, self.category, self.key = stack, category, key  # key: a 'category' value or None
        self.state = "active_allocated"


class Job:
    """A caching allocator that hands out slots, reusing freed addresses first, and records its ring."""

    def __init__(self, seed, ndevices=1):
        self.rng = random.Random(seed)
        self.ndevices = ndevices
        self.time = T0
        self.ring = {d: [] for d in range(ndevices)}
        self.free_slots = {d: [] for d in range(ndevices)}
        self.slots = {d: [] for d in range(ndevices)}
        self.live = {}
        self.next_id = 0
        self.events = []  # (entry, tensor, what): what the expectation is made from

    def tick(self):
        self.time += self.rng.choice([0, 1, 1, 2, 5, 40])  # equal times happen: rows coalesce
        return self.time

    def record(self, device, action, addr, size, stack=None, extra=None):
        e = {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": self.tick(),
             "frames": STACKS[stack] if stack else []}
        e.update(extra or {})
        self.ring[device].append(e)
        return e

    def alloc(self, stack, size, device=0, key=None):
        """Allocate SIZE bytes from STACK; KEY: a 'category' the data carries (a profiler-made snapshot)."""
        if self.free_slots[device]:
            addr = self.free_slots[device].pop()
        else:
            addr = 0x7F0000000000 + device * (1 << 36) + len(self.slots[device]) * SLOT
            self.slots[device].append(addr)
            self.record(device, "segment_alloc", addr, SLOT)
        rule = DEFAULT[stack]
        category = profiler_category(key if key is not None else (rule[0] if rule else None))
        t = Tensor(self.next_id, device, addr, size, stack, category, key)
        self.next_id += 1
        self.live[addr] = t
        e = self.record(device, "alloc", addr, size, stack, {"category": key} if key is not None else None)
        self.events.append((e, t, "alloc"))
        return t

    def free(self, t, pending=False, key=None):
        """Free T: free_requested, then free_completed (later when PENDING: a record_stream use)."""
        self.record(t.device, "free_requested", t.addr, t.size, t.stack)
        if pending:
            t.state = "active_pending_free"
            return
        self.complete(t, key)

    def complete(self, t, key=None):
        e = self.record(t.device, "free_completed", t.addr, t.size, t.stack,
                        {"category": key} if key is not None else None)
        self.events.append((e, t, "free"))
        del self.live[t.addr]
        self.free_slots[t.device].append(t.addr)

    def noise(self, device=0):
        self.record(device, "oom", 0, 3 * MB, None, {"device_free": 1 * MB})
        del self.ring[device][-1]["addr"]

    def snapshot(self, keep, drop_free=False):
        """The snapshot, each device's ring cut to its last KEEP entries (None: all); DROP_FREE: the
        ring loses the free_completed of an allocation it holds, whose address is not used again
        (an inconsistent ring: live in the ring, no block in the snapshot)."""
        rings = {}
        for d in range(self.ndevices):
            ring = self.ring[d]
            cut = 0 if keep is None or len(ring) <= keep else len(ring) - keep
            rings[d] = ring[cut:]
        lost = None
        if drop_free:
            ring, allocated, reused = rings[0], {e["addr"] for e in rings[0] if e["action"] == "alloc"}, set()
            for e in reversed(ring):
                if e["action"] == "free_completed" and e["addr"] in allocated and e["addr"] not in reused:
                    lost = e
                    break
                if e["action"] == "alloc":
                    reused.add(e["addr"])
            ring.remove(lost)
        segments = []
        for d in range(self.ndevices):
            for addr in self.slots[d]:
                blocks = []
                t = self.live.get(addr)
                if t is not None:
                    size = (t.size + 511) // 512 * 512
                    blocks.append({"address": addr, "size": size, "requested_size": t.size, "state": t.state,
                                   "frames": STACKS[t.stack]})
                    rest = SLOT - size
                else:
                    rest = SLOT
                if rest:
                    blocks.append({"address": addr + SLOT - rest, "size": rest, "requested_size": 0,
                                   "state": "inactive", "frames": []})
                used = sum(b["size"] for b in blocks if b["state"] != "inactive")
                segments.append({"device": d, "address": addr, "total_size": SLOT, "allocated_size": used,
                                 "active_size": used, "requested_size": used, "stream": 0,
                                 "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
                                 "frames": [], "blocks": blocks})
        snap = {"segments": segments, "device_traces": [rings[d] for d in range(self.ndevices)],
                "allocator_settings": {}}
        return snap, rings, lost

    def expect(self, rings, lost):
        """The expected profiler timeline of each device, events in the order PyTorch's
        MemoryProfile.timeline would list them before its sort (ring order, then live blocks)."""
        in_ring = {id(e) for d in rings for e in rings[d]}
        devices = {}
        for d in range(self.ndevices):
            events, seen = [], set()
            for e, t, what in self.events:
                if t.device != d or id(e) not in in_ring:
                    continue
                ns = e["time_us"] * 1000
                if what == "alloc":
                    events.append([ns, "CREATE", t.id, t.size, t.category])
                    seen.add(t.id)
                elif t.id in seen:
                    events.append([ns, "DESTROY", t.id, t.size, t.category])
                else:  # allocated before the ring: only a key on the free can tell what it was
                    cat = profiler_category(e.get("category"))
                    events.append([-1, "PREEXISTING", t.id, t.size, cat])
                    events.append([ns, "DESTROY", t.id, t.size, cat])
            for addr in self.slots[d]:
                t = self.live.get(addr)
                if t is not None and t.id not in seen:  # the block's own classification (its frames)
                    rule = DEFAULT[t.stack]
                    events.append([-1, "PREEXISTING", t.id, t.size, profiler_category(rule[0] if rule else None)])
            active = sum(t.size for t in self.live.values() if t.device == d)
            devices[str(d)] = {"timeline": events, "active_requested": active}
        return {"devices": devices, "consistent": lost is None}


def training_step(job, params, device=0, opt_state=None, key_of=None):
    """One step: a batch, forward activations, backward (autograd scratch, gradients), Adam."""
    k = key_of or (lambda cat: None)
    batch = job.alloc("dataloader", 8 * MB + 4000, device, k("INPUT"))
    acts = [job.alloc(job.rng.choice(["forward", "linear_forward"]), job.rng.randint(1, 12) * MB + 512,
                      device, k("ACTIVATION")) for _ in range(5)]
    grads = []
    for a in reversed(acts):
        scratch = job.alloc("backward_fn", a.size // 2 + 100, device, k("AUTOGRAD_DETAIL"))
        job.free(a)
        grads.append(job.alloc("accumulate_grad", 2 * MB, device, k("GRADIENT")))
        job.free(scratch)
    job.free(batch, pending=job.rng.random() < 0.3)
    if batch.state == "active_pending_free":
        job.complete(batch)
    if opt_state is not None and not opt_state:
        opt_state.extend(job.alloc("adam_init", p.size, device, k("OPTIMIZER_STATE")) for p in params)
    tmp = job.alloc("adam_scratch", 3 * MB, device, k("TEMPORARY"))
    job.free(tmp)
    job.noise(device)
    for g in grads:
        job.free(g)


def training(seed=1, steps=6, keep=220):
    job = Job(seed)
    params = [job.alloc("module_to", 4 * MB * (i + 1)) for i in range(3)]
    params.append(job.alloc("param_new", 700))
    opt = []
    for _ in range(steps):
        training_step(job, params, opt_state=opt)
    # the snapshot is taken with work in flight: a pending free and an unknown allocation
    job.free(job.alloc("plain_user", 5 * MB), pending=True)
    job.alloc("cpp_only", 1 * MB)
    return job, keep


def profiler(seed=2):
    """Categories from the data, as a profiler-made snapshot carries them (any spelling)."""
    job = Job(seed)
    spell = {"INPUT": "input", "ACTIVATION": "Activation", "GRADIENT": "GRADIENT", "AUTOGRAD_DETAIL": "autograd_detail",
             "OPTIMIZER_STATE": "Optstate", "TEMPORARY": "Temp"}
    params = [job.alloc("none", 6 * MB, key="PARAMETER") for _ in range(2)]
    old = job.alloc("none", 2 * MB, key="Buffer")
    opt = []
    for _ in range(4):
        training_step(job, params, opt_state=opt, key_of=spell.get)
    # allocated before the ring, freed in it: the free says what it was
    job.free(params[0], key="PARAMETER")
    job.free(old)
    return job, 150


def multi(seed=3):
    job = Job(seed, ndevices=3)
    for d in (0, 1):
        params = [job.alloc("linear_init", 10 * MB, d)]
        for _ in range(2 + d):
            training_step(job, params, d, opt_state=[])
    job.alloc("module_to", 3 * MB, 2)
    job.ring[2].clear()  # device 2: blocks, but no ring
    return job, 80


def write(outdir, name, job, keep, drop_free=False):
    snap, rings, lost = job.snapshot(keep, drop_free)
    with open(os.path.join(outdir, name + ".pickle"), "wb") as f:
        pickle.dump(snap, f, protocol=4)
    with open(os.path.join(outdir, name + ".expect.json"), "w") as f:
        json.dump(job.expect(rings, lost), f)


def main():
    outdir = sys.argv[1]
    job, keep = training()
    write(outdir, "training", job, keep)
    write(outdir, "whole", job, None)  # the ring never wrapped
    job, keep = profiler()
    write(outdir, "profiler", job, keep)
    job, keep = multi()
    write(outdir, "multi", job, keep)
    job, keep = training(seed=4)
    # the ring loses the free of a recent allocation: it stays live in the ring, not in the blocks
    write(outdir, "inconsistent", job, keep, drop_free=True)
    job = Job(5)
    job.alloc("forward", 1 * MB)
    job.ring[0].clear()
    write(outdir, "noring", job, None)


if __name__ == "__main__":
    main()
