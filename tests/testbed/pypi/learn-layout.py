#!/usr/bin/env python3
"""learn-layout.py VERSION [--base TABLE] - measure the allocator layout of PyPI's torch==VERSION from the release.

PyPI's libc10_cuda.so has no DWARF. Its layout is established from two sources, both the release's own:
- the structs of its public headers (DeviceStats, TraceEntry, CUDAAllocatorConfig, AcceleratorAllocatorConfig) from
  the DWARF of a translation unit of ours compiled against the wheel's torch/include (../c10/layouts.sh);
- the structs private to CUDACachingAllocator.cpp (NativeCachingAllocator, DeviceCachingAllocator, BlockPool,
  PrivatePool, Block, ExpandableSegment, the RingBuffer) from the memory of the scenario driver running the
  release's own libc10_cuda.so (target.sh live), where the allocator's snapshot() (the truth) says what must be
  found: each member is the one offset whose value agrees with the truth in every object of its kind (every block's
  ptr, size, stream, pool; the pool's tree of free blocks; the statistics ...). Members are searched in declaration
  order, near where the base table (the nearest known release) has them, shifted by what the members before them
  moved. A member the evidence cannot pin down makes the script fail, never guess.

Prints the layout file (format of src/symbols/layouts/, mp_layout.h) on stdout, provenance in its comments.
Needs: g++, gdb, nm, the test bed (target.sh live; reading /proc/PID/mem of its own children).
"""
import argparse
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TESTBED = os.path.dirname(HERE)
TOP = os.path.dirname(os.path.dirname(TESTBED))
TABLES = os.path.join(TOP, "src", "symbols", "layouts")


def die(msg):
    sys.stderr.write("learn-layout: error: %s\n" % msg)
    sys.exit(1)


def log(msg):
    sys.stderr.write("learn-layout: %s\n" % msg)


# ---------------------------------------------------------------------------------------------------------------
# Layout tables

def read_table(path):
    fields, keys = {}, {}
    for line in open(path):
        p = line.split()
        if len(p) == 3 and p[0] == "key":
            keys[p[1]] = p[2]
        elif len(p) == 2 and "." in p[0] and not p[0].startswith("#"):
            fields[p[0]] = None if p[1] == "-" else int(p[1], 0)
    return keys, fields


def nearest_table(version, abi, cuda_major):
    """The built-in table of the nearest release (same ABI and CUDA major preferred)."""
    minor = int(version.split(".")[1])
    best = None
    for name in sorted(os.listdir(TABLES)):
        if not name.endswith(".layout"):
            continue
        keys, _ = read_table(os.path.join(TABLES, name))
        tminor = int(keys.get("version", "2.0").split(".")[1])
        score = (abs(tminor - minor), keys.get("cxx11_abi") != str(abi),
                 keys.get("cuda_major", str(cuda_major)) != str(cuda_major))
        if best is None or score < best[0]:
            best = (score, name)
    return os.path.join(TABLES, best[1])


# ---------------------------------------------------------------------------------------------------------------
# Header structs: DWARF of our own translation unit compiled against the release's headers

TYPES_CPP = r'''
#include <c10/cuda/CUDACachingAllocator.h>
#if __has_include(<c10/cuda/CUDAAllocatorConfig.h>)
#include <c10/cuda/CUDAAllocatorConfig.h>
#define MEMPROF_CFG 1
#endif
#if __has_include(<c10/core/AllocatorConfig.h>)
#include <c10/core/AllocatorConfig.h>
#define MEMPROF_AAC 1
#endif
namespace alloc = c10::cuda::CUDACachingAllocator;
decltype(alloc::getDeviceStats(0)) memprof_stats;
#if MEMPROF_TORCH_MINOR == 0
alloc::History memprof_history; // 2.0: a Block's history records
#endif
size_t memprof_touch(alloc::TraceEntry& t) {
  size_t n = t.size_;
#ifdef MEMPROF_CFG
  n += alloc::CUDAAllocatorConfig::max_split_size();
#endif
#ifdef MEMPROF_AAC
  n += c10::CachingAllocator::AcceleratorAllocatorConfig::max_split_size();
#endif
  return n;
}
'''


def header_fields(build_env):
    flags = build_env["C10_CXXFLAGS"].split()
    incs = ["-I" + d for d in build_env["C10_INCLUDE_DIRS"].split()]
    with tempfile.TemporaryDirectory() as work:
        src, obj = os.path.join(work, "types.cpp"), os.path.join(work, "types.o")
        open(src, "w").write(TYPES_CPP)
        r = subprocess.run(["g++"] + flags + ["-g", "-O0", "-c", "-o", obj, src] + incs,
                           capture_output=True, text=True)
        if r.returncode:
            die("compiling against the release's headers failed:\n" + r.stderr[-2000:])
        out = subprocess.run([os.path.join(TESTBED, "c10", "layouts.sh"), obj], check=True,
                             capture_output=True, text=True).stdout
    fields = {}
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] == "size":
            fields[p[0] + ".sizeof"] = int(p[2])
        elif len(p) == 2 and "." in p[0]:
            fields[p[0]] = int(p[1])
    return fields


# ---------------------------------------------------------------------------------------------------------------
# A live driver's memory

class Mem:
    def __init__(self, pid):
        self.f = open("/proc/%d/mem" % pid, "rb", buffering=0)
        self.maps = []
        for line in open("/proc/%d/maps" % pid):
            p = line.split()
            lo, hi = (int(x, 16) for x in p[0].split("-"))
            self.maps.append((lo, hi, p[1], int(p[2], 16), p[5] if len(p) > 5 else ""))

    def ok(self, a):
        return any(lo <= a < hi and "r" in perm for lo, hi, perm, _, _ in self.maps)

    def read(self, a, n):
        if not 0 < a < 1 << 63:
            return b""
        try:
            return os.pread(self.f.fileno(), n, a)
        except OSError:
            return b""

    def u64(self, a):
        b = self.read(a, 8)
        return struct.unpack("<Q", b)[0] if len(b) == 8 else None

    def u32(self, a):
        b = self.read(a, 4)
        return struct.unpack("<I", b)[0] if len(b) == 4 else None

    def u8(self, a):
        b = self.read(a, 1)
        return b[0] if b else None

    def base_of(self, path):
        real = os.path.realpath(path)
        for lo, _, _, off, name in self.maps:
            if name and os.path.realpath(name) == real and off == 0:
                return lo
        die("%s is not mapped" % path)

    def in_text(self, a, path):
        real = os.path.realpath(path)
        return any(lo <= a < hi and "x" in perm and name and os.path.realpath(name) == real
                   for lo, hi, perm, _, name in self.maps)

    def chunk_size(self, a):
        """glibc's size of the malloc chunk at user pointer A (header at A-8), or None."""
        h = self.u64(a - 8)
        return None if h is None else h & ~7


class Driver:
    """One scenario of the driver, live, with its truth."""

    def __init__(self, variant, scenario, work, env):
        self.dir = os.path.join(work, scenario)
        out = subprocess.run([os.path.join(TESTBED, "target.sh"), scenario, variant, "live", self.dir],
                             capture_output=True, text=True, env=env)
        if out.returncode:
            die("%s: target.sh live failed: %s" % (scenario, out.stderr[-600:]))
        vals = dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)
        self.pid = int(vals["PID"])
        self.truth = json.load(open(vals["TRUTH"]))
        self.mem = Mem(self.pid)
        self.scenario = scenario

    def stop(self):
        subprocess.run([os.path.join(TESTBED, "target.sh"), "--stop", self.dir], capture_output=True)

    def blocks(self, device=0):
        """Truth blocks of DEVICE: {address: (block, segment)}."""
        out = {}
        for seg in self.truth["segments"]:
            if seg["device"] != device:
                continue
            for b in seg["blocks"]:
                out[b["address"]] = (b, seg)
        return out


# ---------------------------------------------------------------------------------------------------------------
# The search

class Learner:
    def __init__(self, base, lib):
        self.base = base  # the base table's fields
        self.lib = lib
        self.got = {}
        self.why = {}
        self.shift = {}  # struct -> the last learned member's offset minus the base's

    def put(self, field, value, why):
        self.got[field] = value
        self.why[field] = why
        s = field.split(".")[0]
        b = self.base.get(field)
        if value is not None and b is not None and not field.endswith(".sizeof"):
            self.shift[s] = value - b

    def guess(self, field):
        """Where the base table, shifted like the members before, puts FIELD (None: the base lacks it)."""
        b = self.base.get(field)
        if b is None:
            return None
        return b + self.shift.get(field.split(".")[0], 0)

    def pick(self, field, candidates, why, lo=None):
        """The candidate nearest the guess (at or after LO); fail when there is none."""
        cands = sorted(set(c for c in candidates if lo is None or c >= lo))
        if not cands:
            die("no offset fits %s (%s)" % (field, why))
        g = self.guess(field)
        best = min(cands, key=lambda c: abs(c - g)) if g is not None else cands[0]
        self.put(field, best, why + ("" if len(cands) == 1 else " (%d candidates, nearest the base's)" % len(cands)))
        return best


def rb_set(mem, a, lib):
    """If A holds a std::set<Block*, fnptr comparator> (comparator, header, count): its node count, else None."""
    cmp_, color, parent, left, right, count = (mem.u64(a), mem.u32(a + 8), mem.u64(a + 16), mem.u64(a + 24),
                                               mem.u64(a + 32), mem.u64(a + 40))
    if cmp_ is None or count is None or not mem.in_text(cmp_, lib) or color not in (0, 1):
        return None
    if count == 0:
        return 0 if parent == 0 and left == a + 8 and right == a + 8 else None
    if count > 10 ** 7 or not all(mem.ok(x) for x in (parent, left, right)):
        return None
    return count


def rb_values(mem, a):
    """The values (Block*) of the set at A, in order."""
    out, stack, node = [], [], mem.u64(a + 16)
    while stack or node:
        while node:
            stack.append(node)
            node = mem.u64(node + 16)
        node = stack.pop()
        out.append(mem.u64(node + 32))
        node = mem.u64(node + 24)
        if len(out) > 10 ** 6:
            die("runaway tree at 0x%x" % a)
    return out


def flat_count(mem, a):
    """num_elements of a ska flat_hash_{set,map} at A (sherwood_v3_table), or None when A holds none."""
    entries, smo, ml, elems = mem.u64(a), mem.u64(a + 8), mem.u8(a + 17), mem.u64(a + 24)
    load = mem.read(a + 20, 4)
    if entries in (None, 0) or smo is None or elems is None or len(load) < 4 or not mem.ok(entries):
        return None
    lf = struct.unpack("<f", load)[0]
    if ml > 64 or smo > 1 << 30 or (smo + 1) & smo or not 0 < lf <= 1 or elems > smo + 1:
        return None
    return elems


def flat_slots(mem, a, entry):
    """The live slots of a ska flat table at A whose slots are ENTRY bytes (an int8 distance first), by address."""
    entries, smo, ml = mem.u64(a), mem.u64(a + 8), mem.u8(a + 17)
    out = []
    for i in range(smo + ml):  # then the end marker (distance 0)
        e = entries + i * entry
        d = mem.u8(e)
        if d is not None and d < 128:
            out.append(e)
    return out


SLOT_STRUCTS = ("GraphPoolsEntry", "ActiveBlocksEntry")


def learn_slots(L):
    """The ska tables' slots (GraphPoolsEntry, ActiveBlocksEntry), as the base table gives them: every release has the
    same (allocator-facts.md §2.1). The active blocks and private pools below are found through them."""
    for field in L.base:
        if field.split(".")[0] in SLOT_STRUCTS:
            L.put(field, L.base[field], "the base table's: the truth's active blocks and private pools are found so")


def active_blocks(L, mem, dca):
    """The Block pointers of DCA's active_blocks."""
    at = dca + L.got["DeviceCachingAllocator.active_blocks"]
    return [mem.u64(e + L.got["ActiveBlocksEntry.block"]) for e in flat_slots(mem, at, L.got["ActiveBlocksEntry.sizeof"])]


def learn_allocator(L, d, nca_sym):
    mem = d.mem
    nca = mem.u64(nca_sym)
    ndev = len(d.truth["device_stats"])
    cands = []
    for off in range(0, 65536, 8):
        b, e, c = mem.u64(nca + off), mem.u64(nca + off + 8), mem.u64(nca + off + 16)
        if b and e is not None and c is not None and e - b == 8 * ndev and c >= e and mem.ok(b):
            if all(mem.ok(mem.u64(b + 8 * i) or 0) for i in range(ndev)):
                cands.append(off)
    L.pick("NativeCachingAllocator.device_allocator", cands, "vector of %d DeviceCachingAllocator*" % ndev)
    vec = mem.u64(nca + L.got["NativeCachingAllocator.device_allocator"])
    # The clock pairs (2.2 on: trace entries carry a TSC time): 1001 (wall ns, TSC) pairs, taken at start-up.
    runs = []
    for par in (0, 8):
        start = None
        for off in range(par, L.got["NativeCachingAllocator.device_allocator"] + 16, 16):
            t, tsc = mem.u64(nca + off), mem.u64(nca + off + 8)
            ok = t is not None and 1.5e18 < t < 2.5e18 and tsc is not None and 0 < tsc < 1 << 62
            if ok and start is None:
                start = off
            elif not ok and start is not None:
                runs.append((start, (off - start) // 16))
                start = None
    runs = [r for r in runs if r[1] == 1001]
    L.clock = [r[0] for r in runs]
    return nca, [mem.u64(vec + 8 * i) for i in range(ndev)]


def learn_dca(L, d, dca, hdr):
    """DeviceCachingAllocator members from the training scenario (history on)."""
    mem, t = d.mem, d.truth
    st = t["device_stats"][0]
    names = ["allocation", "segment", "active", "inactive_split", "allocated_bytes", "reserved_bytes",
             "active_bytes", "inactive_split_bytes"]
    cands = []
    for off in range(0, 8192, 8):
        if all(mem.u64(dca + off + hdr["DeviceStats." + n]) == st[n + ".all.current"] and
               mem.u64(dca + off + hdr["DeviceStats." + n] + 8) == st[n + ".all.peak"] for n in names):
            cands.append(off)
    L.pick("DeviceCachingAllocator.stats", cands, "DeviceStats whose counters are snapshot's memory_stats()")
    stats_end = L.got["DeviceCachingAllocator.stats"] + hdr["DeviceStats.sizeof"]

    blocks = d.blocks()
    def count(large):
        return sum(1 for b, s in blocks.values() if b["state"] == "inactive" and (s["segment_type"] == "large") == large
                   and tuple(s.get("segment_pool_id", [0, 0])) == (0, 0))
    sets = [off for off in range(stats_end, stats_end + 4096, 8) if rb_set(mem, dca + off, L.lib) is not None]
    large = [o for o in sets if rb_set(mem, dca + o, L.lib) == count(True)]
    L.pick("DeviceCachingAllocator.large_blocks", large, "the first set of a BlockPool: %d free large blocks"
           % count(True))
    lo = L.got["DeviceCachingAllocator.large_blocks"]
    small = [o for o in sets if o > lo and rb_set(mem, dca + o, L.lib) == count(False)]
    # BlockPool's is_small distinguishes the two pools; its sets are the ones between large_blocks and small_blocks.
    L.pick("DeviceCachingAllocator.small_blocks", small, "the next BlockPool: %d free small blocks" % count(False))
    sm = L.got["DeviceCachingAllocator.small_blocks"]
    bp = sm - lo
    inner = [o - lo for o in sets if lo <= o < sm]
    L.put("BlockPool.sizeof", bp, "small_blocks - large_blocks")
    L.put("BlockPool.blocks", 0, "the first set")
    after_sets = inner[-1] + 48
    L.put("BlockPool.unmapped", inner[-1] if len(inner) > 1 else None,
          "the last of its %d sets" % len(inner) if len(inner) > 1 else "the only set: no unmapped blocks")
    flags = [o for o in range(after_sets, bp) if mem.u8(dca + lo + o) == 0 and mem.u8(dca + sm + o) == 1]
    L.pick("BlockPool.is_small", flags, "0 in large_blocks, 1 in small_blocks")
    isl = L.got["BlockPool.is_small"]
    own = [o for o in range((isl + 8) & ~7, bp, 8) if mem.u64(dca + lo + o) == 0 and mem.u64(dca + sm + o) == 0]
    L.pick("BlockPool.owner_PrivatePool", own, "NULL in the global pools (checked on private pools below)")

    active = sum(1 for b, _ in blocks.values() if b["state"] != "inactive")
    act = [o for o in range(sm + bp, sm + bp + 2048, 8) if flat_count(mem, dca + o) == active]
    L.pick("DeviceCachingAllocator.active_blocks", act, "flat_hash_set of %d active blocks" % active)
    ab = L.got["DeviceCachingAllocator.active_blocks"]
    reserved = st["reserved_bytes.all.current"]
    tam = [o for o in range(ab + 32, ab + 2048, 8) if mem.u64(dca + o) == reserved]
    L.pick("DeviceCachingAllocator.total_allocated_memory", tam, "= reserved_bytes %d" % reserved)
    return ab


def learn_ring(L, d, dca, hdr):
    """The ring of trace entries, from the training scenario (4096 entries, not full): the capacity and the pointer
    to the vector of entries; the next-slot index is left for the history scenario (learn_ring_next)."""
    mem, t = d.mem, d.truth
    n = len(t["device_traces"][0]) + 1  # snapshot() adds its SNAPSHOT entry after the truth's copy
    te = hdr["TraceEntry.sizeof"]
    lo = L.got["DeviceCachingAllocator.total_allocated_memory"] + 8
    cands = []
    for off in range(lo, lo + 4096, 8):
        if mem.u64(dca + off) != 4096:  # the training scenario's ring
            continue
        for rel in range(8, 128, 8):
            p = mem.u64(dca + off + rel)
            if p and mem.ok(p):
                b, e = mem.u64(p), mem.u64(p + 8)
                if b and e is not None and e >= b and (e - b) == te * n:
                    cands.append((off, off + rel))
    if not cands:
        die("no RingBuffer with 4096 entries and a vector of %d TraceEntry" % n)
    g = L.guess("DeviceCachingAllocator.alloc_buffer")
    L.ring = min(cands, key=lambda c: abs(c[0] - g) if g is not None else c[0])
    m, v = L.ring
    # Until the ring is full the next slot to overwrite stays 0 (before 2.5 the three are members of the allocator
    # itself, the index first).
    L.ring_next = [o for o in range(m - 64, v + 64, 8) if o not in (m, v) and mem.u64(dca + o) == 0]
    return [o for o in range(lo, v + 64) if mem.u8(dca + o) == 1]


def learn_ring_next(L, d):
    """history: a ring of 64 entries that wrapped, so its next-slot index is neither 0 nor the capacity."""
    mem = d.mem
    dca = device_allocator(L, d)
    m, v = L.ring
    if mem.u64(dca + m) != 64:
        die("the history scenario's ring capacity is %s, not 64" % mem.u64(dca + m))
    c = [o for o in L.ring_next if 0 < (mem.u64(dca + o) or 0) < 64]
    if len(c) != 1:
        die("%d candidates for the ring's next slot (%s)" % (len(c), c))
    n = c[0]
    base = min(m, n, v)
    L.put("DeviceCachingAllocator.alloc_buffer", base, "the first of the ring's members")
    L.put("RingBuffer.alloc_trace_max_entries_", m - base, "the ring's capacity: 4096 (training), 64 (history)")
    L.put("RingBuffer.alloc_trace", v - base, "pointer to the vector of TraceEntry (training: as many as recorded)")
    L.put("RingBuffer.alloc_trace_next", n - base, "0 while not full (training), %d after wrapping (history)"
          % mem.u64(dca + n))


def learn_blocks(L, d, dca):
    """Block members: every Block in the pools' trees and the active set agrees with the truth."""
    mem = d.mem
    blocks = d.blocks()
    lb = dca + L.got["DeviceCachingAllocator.large_blocks"]
    sb = dca + L.got["DeviceCachingAllocator.small_blocks"]
    free = rb_values(mem, lb) + rb_values(mem, sb)
    active = active_blocks(L, mem, dca)
    objs = free + active
    if not objs:
        die("no Block found")
    span = 256

    def field(name, pred, lo=0, hi=span, step=8, why=""):
        c = [o for o in range(lo, hi, step) if all(pred(p, o) for p in objs)]
        return L.pick("Block." + name, c, why)

    ptr = field("ptr", lambda p, o: mem.u64(p + o) in blocks, why="a block address of the truth, in every Block")
    info = {p: blocks[mem.u64(p + ptr)] for p in objs}
    field("size", lambda p, o: mem.u64(p + o) == info[p][0]["size"], why="= the block's size")
    field("stream", lambda p, o: mem.u64(p + o) == info[p][1]["stream"], why="= the segment's stream")
    c = [o for o in range(0, span, 8) if all(mem.u64(p + o) == info[p][0]["requested_size"] for p in active)]
    L.pick("Block.requested_size", c, "= the active blocks' requested size")
    field("pool", lambda p, o: mem.u64(p + o) == (lb if info[p][1]["segment_type"] == "large" else sb),
          why="= &large_blocks or &small_blocks of its segment")
    field("allocated", lambda p, o: mem.u8(p + o) == (1 if info[p][0]["state"] == "active_allocated" else 0),
          step=1, why="1 for allocated blocks, 0 for free ones")
    def prev_ok(p, o):
        v = mem.u64(p + o)
        a = mem.u64(p + ptr)
        return v == 0 or (v in objs and mem.u64(v + ptr) + info[v][0]["size"] == a)
    def next_ok(p, o):
        v = mem.u64(p + o)
        return v == 0 or (v in objs and mem.u64(v + ptr) == mem.u64(p + ptr) + info[p][0]["size"])
    objs_set = set(objs)
    # Both must be non-NULL somewhere, or any zero word would do.
    c = [o for o in range(0, span, 8) if all(prev_ok(p, o) for p in objs) and any(mem.u64(p + o) in objs_set for p in objs)]
    L.pick("Block.prev", c, "the Block just below in its segment, or NULL")
    c = [o for o in range(0, span, 8) if all(next_ok(p, o) for p in objs) and any(mem.u64(p + o) in objs_set for p in objs)]
    L.pick("Block.next", c, "the Block just above in its segment, or NULL")
    # The allocation contexts (history on): shared_ptr to the driver's context objects, on every active block.
    def context(p, o):  # a shared_ptr (object, control block) to an object of the driver's context class
        obj, ctl = mem.u64(p + o), mem.u64(p + o + 8)
        return obj and ctl and mem.ok(obj) and mem.ok(ctl) and mem.in_text(mem.u64(mem.u64(obj)) or 0, L.driver)
    if L.minor == 0:
        learn_history(L, d, objs, active, info)
        return objs, info
    ctx = [o for o in range(0, span, 8) if all(context(p, o) for p in active) and all(mem.u64(p + o) == 0 for p in free)]
    L.pick("Block.context_when_allocated", ctx, "a shared_ptr on every active block, NULL on free ones (history)")
    return objs, info


def learn_history(L, d, objs, active, info):
    """2.0: a Block keeps a list of History records {addr, real_size, context} instead of contexts, the newest
    first: on every active block its head records the block's own allocation."""
    mem = d.mem
    hc = L.hdr["History.context"]
    for f in ("Block.context_when_allocated", "Block.context_when_segment_allocated"):
        L.put(f, None, "2.0 keeps a Block's contexts in its history list")

    def head(p, o):
        h = mem.u64(p + o)
        if not h or not mem.ok(h):
            return False
        ctx = mem.u64(h + hc)
        return (mem.u64(h) == mem.u64(p + L.got["Block.ptr"]) and mem.u64(h + 8) == info[p][0]["requested_size"]
                and ctx and mem.in_text(mem.u64(mem.u64(ctx) or 0) or 0, L.driver))
    c = [o for o in range(0, 256, 8) if all(head(p, o) for p in active)]
    why = ("on every active block a HistoryChain whose head is {its ptr, its requested size, a context of the "
           "driver's} (History.context from the headers' DWARF)")
    if len(c) == 2 and c[1] == c[0] + 8:
        # history_last follows history and points at the same record while a list holds one
        c, why = c[:1], why + "; the first of two (history, then history_last: both at a one-record list)"
    L.pick("Block.history", c, why)


def chunk_pick(L, d, field, obj, last_field, why, tail=None):
    """STRUCT.sizeof: the base's tail after LAST_FIELD (or TAIL bytes), checked against the malloc chunk OBJ lives
    in (a chunk of C bytes holds a request of C-23 to C-8 bytes)."""
    c = d.mem.chunk_size(obj)
    lo, hi = c - 23, c - 8
    base_tail = L.base.get(field) - L.base.get(last_field) if L.base.get(field) and L.base.get(last_field) else 8
    if tail is not None:
        base_tail = tail
    want = L.got[last_field] + base_tail
    if lo <= want <= hi:
        L.put(field, want, why + "; the base's tail after %s, within the malloc chunk (%d-%d)" % (last_field, lo, hi))
    else:
        v = hi & ~7
        L.put(field, v, why + "; the malloc chunk's bound (%d-%d; the base's tail would give %d)" % (lo, hi, want))


def learn_training_rest(L, d, objs):
    """training: the segment's context, mapped and device, on the Blocks learn_blocks found."""
    mem = d.mem
    if L.minor == 0:
        L.put("Block.mapped", None, "2.0 has no expandable segments: every block is mapped")
        c = [o for o in range(0, 8) if all(mem.u8(p + o) == 0 for p in objs)]
        L.pick("Block.device", c, "0 on device 0 (device 1 is checked on multi_device)")
        return
    heads = [p for p in objs if mem.u64(p + L.got["Block.prev"]) == 0]
    cwa = L.got["Block.context_when_allocated"]
    vtables = set(mem.u64(mem.u64(p + cwa)) for p in objs if mem.u64(p + cwa))
    if len(vtables) != 1:
        die("the allocation contexts are not all the driver's (%d vtables)" % len(vtables))
    vt = vtables.pop()
    def ctx_or_null(p, o):
        v = mem.u64(p + o)
        return v == 0 or mem.u64(v) == vt
    c = [o for o in range(0, 256, 8) if o != cwa and any(mem.u64(mem.u64(p + o) or 0) == vt for p in heads)
         and all(ctx_or_null(p, o) for p in objs)]
    L.pick("Block.context_when_segment_allocated", c,
           "a shared_ptr to a context or NULL in every block, a context in some segment's first block (history)")
    al = L.got["Block.allocated"]
    c = [o for o in range(0, 256) if o != al and all(mem.u8(p + o) == 1 for p in objs)]
    L.pick("Block.mapped", c, "1 in every block of a non-expandable segment", lo=al + 1)
    c = [o for o in range(0, 8) if all(mem.u8(p + o) == 0 for p in objs)]
    L.pick("Block.device", c, "0 on device 0 (device 1 is checked on multi_device)")


def device_allocator(L, d, index=0):
    """The DeviceCachingAllocator of device INDEX in driver D's memory, by what is learned so far."""
    mem = d.mem
    vec = mem.u64(mem.u64(L.nca_sym) + L.got["NativeCachingAllocator.device_allocator"])
    return mem.u64(vec + 8 * index)


def device_blocks(L, d, dca):
    """Every Block of DCA's free-block trees and active set, by what is learned so far."""
    mem = d.mem
    objs = rb_values(mem, dca + L.got["DeviceCachingAllocator.large_blocks"])
    objs += rb_values(mem, dca + L.got["DeviceCachingAllocator.small_blocks"])
    objs += active_blocks(L, mem, dca)
    return objs


def learn_pending(L, d, hist_candidates):
    """pending_free: event_count and stream_uses of the blocks freed while in use on another stream; history off."""
    mem = d.mem
    dca = device_allocator(L, d)
    blocks = d.blocks()
    objs = device_blocks(L, d, dca)
    ptr = L.got["Block.ptr"]
    pending = [p for p in objs if blocks[mem.u64(p + ptr)][0]["state"] == "active_pending_free"]
    if not pending:
        die("pending_free left no pending block")
    c = [o for o in range(0, 256, 4) if all((mem.u32(p + o) or 0) >= 1 and mem.u32(p + o) < 16 for p in pending)
         and all(mem.u32(p + o) == 0 for p in objs if p not in pending)]
    L.pick("Block.event_count", c, "the pending blocks' outstanding events (>= 1), 0 elsewhere")
    # free() moves stream_uses into the events it records, leaving every set empty (but a set: ska's header, its
    # load factor and lookup limit, is recognisable).
    c = [o for o in range(0, 256, 8) if all(flat_count(mem, p + o) == 0 for p in objs)]
    L.pick("Block.stream_uses", c, "an empty flat_hash_set in every Block (free() moved the pending blocks' into events)")
    hist = [o for o in hist_candidates if mem.u8(dca + o) == 0]
    L.pick("DeviceCachingAllocator.record_history", hist, "1 with history on (training), 0 without (pending_free)")


def learn_private(L, d):
    mem = d.mem
    dca = device_allocator(L, d)
    # 2.1 on keep graph_pools after the ring, 2.0 right after active_blocks
    lo = L.got["DeviceCachingAllocator.active_blocks"] + 32 if L.minor == 0 else L.ring[1] + 8
    c = [o for o in range(lo, lo + 1024, 8) if flat_count(mem, dca + o) == 2]
    L.pick("DeviceCachingAllocator.graph_pools", c, "a flat_hash_map of the scenario's 2 private pools")
    gp = L.got["DeviceCachingAllocator.graph_pools"]
    c = [o for o in range(gp + 32, gp + 256, 8) if flat_count(mem, dca + o) == 0]
    L.pick("DeviceCachingAllocator.graph_pools_freeable", c, "the next flat_hash_map, empty (no pool is freeable)")
    gid, gpool = L.got["GraphPoolsEntry.id"], L.got["GraphPoolsEntry.pool"]
    bp, own = L.got["BlockPool.sizeof"], L.got["BlockPool.owner_PrivatePool"]
    for e in flat_slots(mem, dca + gp, L.got["GraphPoolsEntry.sizeof"]):
        key = (mem.u64(e + gid), mem.u64(e + gid + 8))
        pp = mem.u64(e + gpool)
        c = [o for o in range(0, 512, 8) if rb_set(mem, pp + o, L.lib) is not None and mem.u64(pp + o + own) == pp
             and mem.u64(pp + o + bp + own) == pp]
        L.pick("PrivatePool.large_blocks", c, "a BlockPool whose owner_PrivatePool is the pool itself")
        L.put("PrivatePool.small_blocks", L.got["PrivatePool.large_blocks"] + bp, "the next BlockPool")
        c = [o for o in range(0, L.got["PrivatePool.large_blocks"], 8) if mem.u64(pp + o) == key[0]
             and mem.u64(pp + o + 8) == key[1] and key != (0, 0)]
        if c:
            L.pick("PrivatePool.id", c, "= its key in graph_pools (%d, %d)" % key)
        else:
            L.put("PrivatePool.id", None, "no copy of its key (%d, %d) before large_blocks" % key)
        c = [o for o in range(0, L.got["PrivatePool.large_blocks"], 4) if mem.u32(pp + o) == 1]
        L.pick("PrivatePool.use_count", c, "1: each pool used once")
        chunk_pick(L, d, "PrivatePool.sizeof", pp, "PrivatePool.small_blocks", "PrivatePool")
        break


def learn_no_expandable(L, d):
    """2.0 has no expandable segments (its allocator refuses the setting): no such members; a Block ends with its
    history list's head and tail pointers."""
    for f in ("DeviceCachingAllocator.expandable_segments_", "ExpandableSegment.ptr_", "ExpandableSegment.segment_size_",
              "ExpandableSegment.max_handles_", "Block.expandable_segment_"):
        L.put(f, None, "2.0 has no expandable segments")
    dca = device_allocator(L, d)
    chunk_pick(L, d, "Block.sizeof", device_blocks(L, d, dca)[0], "Block.history", "Block", tail=16)


def learn_expandable(L, d):
    mem, t = d.mem, d.truth
    dca = device_allocator(L, d)
    segs = {s["address"]: s for s in t["segments"] if s["device"] == 0 and s.get("is_expandable")}
    lo = L.got["DeviceCachingAllocator.total_allocated_memory"] + 8
    hi = L.got["DeviceCachingAllocator.record_history"]
    c = []
    for o in range(lo, hi, 8):
        b, e, cap = mem.u64(dca + o), mem.u64(dca + o + 8), mem.u64(dca + o + 16)
        if b and e and cap and e - b == 8 * len(segs) and cap >= e and mem.ok(b):
            c.append(o)
    L.pick("DeviceCachingAllocator.expandable_segments_", c, "a vector of the %d expandable segments" % len(segs))
    v = mem.u64(dca + L.got["DeviceCachingAllocator.expandable_segments_"])
    es = [mem.u64(v + 8 * i) for i in range(len(segs))]
    c = [o for o in range(0, 128, 8) if all(mem.u64(x + o) in segs for x in es)]
    L.pick("ExpandableSegment.ptr_", c, "= the segment's address")
    sizes = {2 << 20, 20 << 20}
    c = [o for o in range(0, 128, 8) if all(mem.u64(x + o) in sizes for x in es)]
    L.pick("ExpandableSegment.segment_size_", c, "2 MiB or 20 MiB: the pages it maps")
    ss = L.got["ExpandableSegment.segment_size_"]
    c = [o for o in range(ss + 8, 128, 8) if all(0 < (mem.u64(x + o) or 0) < 1 << 24 and
                                                  mem.u64(x + o) * mem.u64(x + ss) >= segs[mem.u64(x + L.got["ExpandableSegment.ptr_"])]["total_size"]
                                                  for x in es)]
    L.pick("ExpandableSegment.max_handles_", c, "handles x page size covers the segment")
    blocks = d.blocks()
    objs = device_blocks(L, d, dca)
    ptr = L.got["Block.ptr"]

    def seg_of(p):
        return blocks[mem.u64(p + ptr)][1]
    c = [o for o in range(0, 256, 8) if all((mem.u64(p + o) in es) if seg_of(p).get("is_expandable") else
                                          mem.u64(p + o) == 0 for p in objs)]
    L.pick("Block.expandable_segment_", c, "its ExpandableSegment*, NULL outside expandable segments")
    chunk_pick(L, d, "Block.sizeof", objs[0], "Block.expandable_segment_", "Block")


def learn_multi(L, d):
    mem = d.mem
    nca = mem.u64(L.nca_sym)
    vec = mem.u64(nca + L.got["NativeCachingAllocator.device_allocator"])
    d0, d1 = mem.u64(vec), mem.u64(vec + 8)
    lo = L.got["DeviceCachingAllocator.stats"] + L.hdr["DeviceStats.sizeof"]
    c = [o for o in range(lo, L.got["DeviceCachingAllocator.large_blocks"]) if mem.u8(d0 + o) == 0 and mem.u8(d1 + o) == 1]
    if c:
        L.pick("DeviceCachingAllocator.device_id", c, "0 in device 0's allocator, 1 in device 1's")
    else:
        L.put("DeviceCachingAllocator.device_id", None, "no byte between stats and large_blocks is 0 on device 0 and 1 on device 1")
    lb = d1 + L.got["DeviceCachingAllocator.large_blocks"]
    sb = d1 + L.got["DeviceCachingAllocator.small_blocks"]
    objs = rb_values(mem, lb) + rb_values(mem, sb)
    dev = L.got["Block.device"]
    if not objs or not all(mem.u8(p + dev) == 1 for p in objs):
        die("Block.device %d is not 1 in device 1's free blocks" % dev)
    chunk_pick(L, d, "DeviceCachingAllocator.sizeof", d0, "DeviceCachingAllocator.graph_pools_freeable",
               "DeviceCachingAllocator")


HEADER_STRUCTS = ("DeviceStats", "TraceEntry", "CUDAAllocatorConfig", "AcceleratorAllocatorConfig", "History")
# Members of 2.0 only, written after the member named when the release has them.
EXTRA_FIELDS = (("Block.history", "Block.expandable_segment_"), ("History.context", "Block.history"))


def write_table(L, version, abi, cuda_major, build_env, base_path, hdr):
    """The layout file: every field the base table lists, from the headers' DWARF or from memory."""
    minor = ".".join(version.split(".")[:2])
    whl, git = build_env["C10_WHEEL"].split()
    print("# torch-%s: PyPI's torch %s (%s, git %s, CUDA %s, %s C++ ABI)." % (
        minor, version, whl, git, build_env["C10_CUDA"], "new" if abi else "old"))
    print("# MEASURED by tests/testbed/pypi/learn-layout.py %s (base table %s):" % (version, os.path.basename(base_path)))
    print("# - header structs from the DWARF of a translation unit compiled against the wheel's torch/include;")
    print("# - the others from the memory of the test bed's driver on the release's own libc10_cuda.so, each member the")
    print("#   one offset where every object agrees with the allocator's snapshot() (the evidence above each line).")
    print("key version %s" % minor)
    print("key cxx11_abi %d" % abi)
    print("key cuda_major %d" % cuda_major)
    if "TraceEntry.time_" in hdr:
        if len(L.clock) != 1:
            die("%d runs of 1001 clock pairs in NativeCachingAllocator" % len(L.clock))
        L.put("NativeCachingAllocator.clock_converter", L.clock[0],
              "1001 (wall clock ns, TSC) pairs from start-up")
    else:
        L.put("NativeCachingAllocator.clock_converter", None, "the release's trace entries carry no time")
    order = list(L.base)
    for f, after in EXTRA_FIELDS:
        if f not in order and (hdr.get(f) if f.split(".")[0] in HEADER_STRUCTS else L.got.get(f)) is not None:
            order.insert(order.index(after) + 1, f)
    last = None
    for field in order:
        s = field.split(".")[0]
        if s != last:
            print()
            last = s
        if s in HEADER_STRUCTS:
            v = hdr.get(field)
            why = "DWARF of the headers" if v is not None else "not in the release's headers"
        elif field in L.got:
            v, why = L.got[field], L.why[field]
        else:
            die("nothing measured %s" % field)
        if s not in HEADER_STRUCTS:
            print("# %s" % why)
        print("%s %s" % (field, "-" if v is None else v))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("version")
    ap.add_argument("--base", help="the base table (default: the nearest release's)")
    ap.add_argument("--work", default=None)
    a = ap.parse_args()
    variant = "pypi-" + a.version
    c10 = subprocess.run([os.path.join(TESTBED, "c10", "build.sh"), variant], check=True, capture_output=True,
                         text=True).stdout.strip()
    env_ = dict(l.split("=", 1) for l in open(os.path.join(c10, "build.env")) if "=" in l and not l.startswith("#"))
    build_env = {k: v.strip().strip("'") for k, v in env_.items()}
    abi, cuda_major = int(build_env["C10_CXX11_ABI"]), int(build_env["C10_CUDA"].split(".")[0])
    lib = os.path.join(build_env["C10_LIBDIR"], "libc10_cuda.so")
    base_path = a.base or nearest_table(a.version, abi, cuda_major)
    _, base = read_table(base_path)
    log("torch %s (ABI %d, CUDA %d): base table %s" % (a.version, abi, cuda_major, os.path.basename(base_path)))
    hdr = header_fields(build_env)
    L = Learner(base, lib)
    L.hdr = hdr
    L.minor = int(a.version.split(".")[1])
    nm = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
    sym = [int(l.split()[0], 16) for l in nm.splitlines() if l.endswith(" _ZN3c104cuda20CUDACachingAllocator9allocatorE")]
    if len(sym) != 1:
        die("%s exports no CUDACachingAllocator::allocator" % lib)
    work = a.work or tempfile.mkdtemp(prefix="memprof-learn-")
    env = dict(os.environ)
    L.nca_sym = None
    try:
        d = Driver(variant, "training", work, env)
        L.nca_sym = d.mem.base_of(lib) + sym[0]
        L.driver = open(os.path.join(d.dir, "driver.path")).read().strip()
        try:
            _, dcas = learn_allocator(L, d, L.nca_sym)
            learn_dca(L, d, dcas[0], hdr)
            learn_slots(L)
            hist = learn_ring(L, d, dcas[0], hdr)
            objs, _ = learn_blocks(L, d, dcas[0])
            learn_training_rest(L, d, objs)
        finally:
            d.stop()
        # Each scenario shows what the others cannot: pending frees, private pools, expandable segments, 2 devices.
        steps = (("history", lambda d: learn_ring_next(L, d)),
                 ("pending_free", lambda d: learn_pending(L, d, hist)),
                 ("private_pool", lambda d: learn_private(L, d)),
                 ("training" if L.minor == 0 else "expandable",
                  lambda d: learn_no_expandable(L, d) if L.minor == 0 else learn_expandable(L, d)),
                 ("multi_device", lambda d: learn_multi(L, d)))
        for scen, fn in steps:
            d = Driver(variant, scen, work, env)
            try:
                L.nca_sym = d.mem.base_of(lib) + sym[0]
                fn(d)
            finally:
                d.stop()
    finally:
        if not a.work:
            subprocess.run(["rm", "-rf", work])
    write_table(L, a.version, abi, cuda_major, build_env, base_path, hdr)


if __name__ == "__main__":
    main()
