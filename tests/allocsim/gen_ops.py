#!/usr/bin/env python3
"""gen_ops.py [--release X.Y] SEED COUNT OUTDIR - random allocator op scripts (OPS.md), reproducible from SEED.

Writes OUTDIR/s<SEED>-<NNNNN>.ops for N in 0..COUNT-1; each starts with a comment naming the seed, index and
release. The same SEED, COUNT and --release give the same files, byte for byte (Python's random.Random seeded
with strings, no dict-order or hash dependence). --release (default 2.14) keeps to what that release has:
expandable segments, MemPool spans and the list form of roundup_power2_divisions from 2.1,
max_non_split_rounding_mb from 2.6 (the strings of 2.5.1's libc10_cuda.so do not know it). Plain Python 3, no torch.

Distributions (all draws from the script's own generator, seeded "SEED:N"):

Settings and capacity.  Scripts are grouped by header, because the real side runs one process per header: COUNT
scripts share K = ceil(COUNT / 40) headers drawn first (generator "SEED:menu"); each script takes one at random.
A header's settings are, by weight: none 25; max_split_size_mb 21..400 (uniform) 14; roundup_power2_divisions
2/4/8/16 8; its list form ([256:1,512:2,>:8]-like: 1-3 power-of-two MB bounds from 64..1024, divisions
1/2/4/8/16, then >:D) 6; expandable_segments:True 10; garbage_collection_threshold 0.30..0.90 with a fraction 8;
max_split_size_mb with max_non_split_rounding_mb 21..400 5; max_split_size_mb with expandable_segments 8;
max_split_size_mb with roundup 5; garbage collection with max_split_size_mb 5; expandable with roundup 3;
expandable with garbage collection 3. A fraction line 0.50..0.95 comes with every garbage collection setting and
with 15% of the others. Capacity: log-uniform 64 MiB .. 2 GiB, a multiple of 2 MiB.

Scripts.  0-3 side streams (weights 30/30/20/20) with distinct SIDs from 1..15; a length drawn log-uniform from
20..400 ops, filled with phases until reached (cut at 400):
  burst 20       3-30 allocations of mixed sizes on one stream, some freed again at once
  fragment 10    6-40 allocations of one size class (jittered), then every other one freed
  train 12       2-6 steps of a fixed pattern: 3-8 activations, a temporary allocated and freed, the
                 activations freed in reverse; parameters allocated once before the first step
  free 15        1-8 live allocations freed
  cross 10       (side streams) an allocation used on another stream (`record`) and freed; a sync or a
                 stream sync after it half of the time
  sync 5         sync or sync_stream
  oom 8          a request larger than the device limit (fails for sure), or one of 30%..130% of the limit
                 (may fail), then frees and more allocations
  empty_cache 4, state 4
  pool 8         (2.1 on) pool_begin PID SID, a burst on SID and a few allocations on other streams,
                 pool_end; the pool's release right away or in a later phase, a pool sometimes reopened;
                 with expandable segments only once nothing of it may be live (see release_pool)
  boundary 6     sizes at the allocator's boundaries: 512, 1 MiB +-1, 2 MiB, 10 MiB +-1, 20 MiB +1,
                 max_split_size +-1, powers of two
Sizes of a "mixed" draw: small (1 B .. 1 MiB, log-uniform; a fifth of them exact powers of two or multiples of
512) 55%, medium (1 .. 10 MiB) 25%, large (10 MiB .. half the limit, log-uniform) 12%, boundary 8%.

Validity.  OPS.md forbids freeing or recording an allocation that ran out of memory, and whether one does depends
on the allocator. So each allocation is "safe" only when a conservative bound says it cannot fail: the bytes it
could pin (a small one its 2 MiB segment; a large one the largest segment its stream's pool has had since it was
last emptied, or its own; with expandable segments the pages it can touch, 2 MiB small and 20 MiB large, one
more for straddling), summed over everything that might still hold memory, must fit the limit (capacity, or
fraction x capacity). Memory allocated in a private pool counts until the pool is released, emptied and empty;
while a pool span is open, everything counts (an allocation then releases no other pool's cached memory).
Allocations that are not safe are never freed or recorded by the script (they stay until the batch reset).
"""
import math
import os
import random
import sys

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB
SMALL = 1 * MiB  # kSmallSize: up to this, the small pool
MIN_LARGE_ALLOC = 10 * MiB
LARGE_BUFFER = 20 * MiB


def round_up(n, m):
    return (n + m - 1) // m * m


def next_pow2(n):
    return 1 << (n - 1).bit_length()


# ---------------------------------------------------------------------------------------------------------------
# Headers


class Header:
    def __init__(self, settings, capacity, fraction, parts):
        self.settings = settings  # the CONF string, or "-"
        self.capacity = capacity
        self.fraction = fraction  # string or None
        self.max_split = parts.get("max_split_size_mb")
        self.roundup = "roundup_power2_divisions" in parts
        self.expandable = "expandable_segments" in parts
        self.limit = capacity if fraction is None else int(float(fraction) * capacity)


def draw_roundup(rng, release):
    if release >= (2, 1) and rng.random() < 0.45:
        bounds = sorted(rng.sample([64, 128, 256, 512, 1024], rng.randint(1, 3)))
        items = ["%d:%d" % (b, rng.choice([1, 2, 4, 8, 16])) for b in bounds]
        items.append(">:%d" % rng.choice([1, 2, 4, 8, 16]))
        return "[" + ",".join(items) + "]"
    return str(rng.choice([2, 4, 8, 16]))


def draw_header(rng, release):
    kinds = [("none", 25), ("max_split", 14), ("roundup", 14), ("gc", 8), ("max_split+roundup", 5),
             ("gc+max_split", 5)]
    if release >= (2, 1):
        kinds += [("expandable", 10), ("max_split+expandable", 8), ("expandable+roundup", 3),
                  ("expandable+gc", 3)]
    if release >= (2, 6):
        kinds += [("max_split+non_split", 5)]
    kind = rng.choices([k for k, _ in kinds], [w for _, w in kinds])[0]
    parts = {}
    for part in kind.split("+"):
        if part == "max_split":
            parts["max_split_size_mb"] = rng.randint(21, 400)
        elif part == "roundup":
            parts["roundup_power2_divisions"] = draw_roundup(rng, release)
        elif part == "expandable":
            parts["expandable_segments"] = "True"
        elif part == "gc":
            parts["garbage_collection_threshold"] = "%.2f" % rng.uniform(0.3, 0.9)
        elif part == "non_split":
            parts["max_non_split_rounding_mb"] = rng.randint(21, 400)  # 2.6 refuses 20 and below
    settings = ",".join("%s:%s" % kv for kv in parts.items()) or "-"
    capacity = round_up(int(math.exp(rng.uniform(math.log(64 * MiB), math.log(2 * GiB)))), 2 * MiB)
    fraction = None
    if "garbage_collection_threshold" in parts or rng.random() < 0.15:
        fraction = "%.2f" % rng.uniform(0.5, 0.95)
    if "max_split_size_mb" in parts:
        parts["max_split_size_mb"] *= MiB
    return Header(settings, capacity, fraction, parts)


# ---------------------------------------------------------------------------------------------------------------
# One script


class Script:
    def __init__(self, rng, header, release, sids):
        self.rng = rng
        self.h = header
        self.release = release
        self.sids = sids  # side streams
        self.ops = []
        self.next_id = 1
        self.live = {}  # id -> (size, sid, pool, pin): safe, may be freed / recorded
        self.unsafe = []  # (class, pin) of the allocations that may have failed: never freed by the script
        self.stuck = []  # (class, pin) of freed blocks that may stay busy to the end (recorded, freed in a span)
        self.created = {}  # class -> the segment sizes its allocations may have created since it was emptied
        self.open_spans = {}  # pool -> sid
        self.pool_uses = {}  # pool -> begins not yet released
        self.next_pool = 1
        self.recorded = set()

    # -- the bound: what the device may hold that no release of cached memory can give back
    def busy(self):
        """(class, pin) of every block that may be allocated or waiting for its events."""
        return [((sid, pool, size <= SMALL), p) for (size, sid, pool, p) in self.live.values()] + \
            self.unsafe + self.stuck

    def pool_kept(self, pool):
        return pool != 0 and (self.pool_uses.get(pool, 0) > 0 or any(c[1] == pool for c, _ in self.busy()))

    def pinned(self):
        if self.open_spans:
            # While a pool is being allocated to, an allocation that does not fit releases nothing beyond its
            # own pool (no full retry during a capture, 2.x): everything created may still be there.
            return sum(sum(v) for v in self.created.values())
        busy = self.busy()
        if self.h.expandable:
            # Free pages of expandable segments are unmapped by a release: a block pins only its own pages;
            # a private pool keeps what was allocated in it.
            return sum(p for c, p in busy if not self.pool_kept(c[1])) + \
                sum(sum(v) for c, v in self.created.items() if self.pool_kept(c[1]))
        total = 0
        for c, sizes in self.created.items():
            if self.pool_kept(c[1]):
                total += sum(sizes)  # a private pool in use gives nothing back
            else:
                k = sum(1 for bc, _ in busy if bc == c)  # each kept segment holds one of them at least
                total += sum(sorted(sizes, reverse=True)[:k])
        return total

    def released(self):
        """What a release of all cached memory (emptyCache, an out-of-memory retry) leaves of the bound."""
        busy = self.busy()
        for c in list(self.created):
            if self.pool_kept(c[1]):
                continue
            k = sum(1 for bc, _ in busy if bc == c)
            self.created[c] = sorted(self.created[c], reverse=True)[:k]
            if not self.created[c]:
                del self.created[c]

    def streams(self):
        return [0] + self.sids

    def pool_for(self, sid):
        for pool, s in self.open_spans.items():  # begin order: the first matching span wins
            if s == sid:
                return pool
        return 0

    def rounded(self, size):
        r = max(512, round_up(size, 512))
        return max(r, next_pow2(size)) if self.h.roundup else r

    def segment(self, size):
        """The largest segment (or, expandable, pages) that a new allocation of size may create."""
        r = self.rounded(size)
        if self.h.expandable:
            page = 2 * MiB if size <= SMALL else LARGE_BUFFER
            return (r + page - 1) // page * page + page  # one page more for straddling
        if size <= SMALL:
            return 2 * MiB
        return LARGE_BUFFER if r < MIN_LARGE_ALLOC else round_up(r, 2 * MiB)

    # -- ops
    def emit(self, line):
        self.ops.append(line)

    def alloc(self, size, sid=None, relieve=True):
        """Emits an allocation; its id if it is safe (cannot fail), else None. Under pressure, live allocations
        are freed first until it is safe (as a program frees what it no longer needs), 90% of the time with
        relieve, never without. An allocation that may fail stays to the end if it does not, so it is made only
        while all such pin at most 40% of the limit; otherwise one that cannot be made safe is left out."""
        sid = self.rng.choice(self.streams()) if sid is None else sid
        size = max(1, int(size))
        if round_up(size, 512) > self.h.limit:  # no rounding makes it smaller: it fails for sure
            self.emit_alloc(size, sid)
            if not self.open_spans:
                self.released()  # fails for sure, after releasing every cached segment; never referenced
            return None
        pool = self.pool_for(sid)
        seg = self.segment(size)
        c = (sid, pool, size <= SMALL)
        self.created.setdefault(c, []).append(seg)
        i = self.next_id
        self.live[i] = (size, sid, pool, seg)
        may_fail = sum(p for _, p in self.unsafe) + seg <= 0.4 * self.h.limit
        if not may_fail or (relieve and self.rng.random() < 0.9):
            while self.pinned() > self.h.limit and len(self.live) > 1:
                self.free(self.rng.choice([j for j in sorted(self.live) if j != i]))
        if self.pinned() <= self.h.limit:
            self.emit_alloc(size, sid)
            return i
        del self.live[i]
        if not may_fail:
            self.created[c].pop()
            return None
        self.emit_alloc(size, sid)
        self.unsafe.append((c, seg))
        return None

    def emit_alloc(self, size, sid):
        self.emit("alloc %d %d %d" % (self.next_id, size, sid))
        self.next_id += 1

    def drop(self, i):
        """Frees i if it is a live allocation of the script (not one that may have failed or was freed)."""
        if i is not None and i in self.live:
            self.free(i)

    def free(self, i):
        size, sid, pool, p = self.live.pop(i)
        self.emit("free %d" % i)
        if i in self.recorded and self.open_spans:
            # Freed with other streams' uses while a span is open: its events wait until no span is (2.x).
            self.stuck.append(((sid, pool, size <= SMALL), p))

    def free_random(self, n):
        for i in self.rng.sample(sorted(self.live), min(n, len(self.live))):
            self.free(i)

    def sync(self):
        if self.sids and self.rng.random() < 0.4:
            self.emit("sync_stream %d" % self.rng.choice(self.sids))
        else:
            self.emit("sync")

    def empty_cache(self):
        self.emit("empty_cache")
        self.released()

    # -- sizes
    def small(self):
        r = self.rng.random()
        if r < 0.1:
            return 1 << self.rng.randint(0, 20)
        if r < 0.2:
            return 512 * self.rng.randint(1, 2048)
        return int(math.exp(self.rng.uniform(0, math.log(SMALL))))

    def medium(self):
        return self.rng.randint(SMALL + 1, MIN_LARGE_ALLOC)

    def large(self):
        top = max(MIN_LARGE_ALLOC + 1, self.h.limit // 2)
        return int(math.exp(self.rng.uniform(math.log(MIN_LARGE_ALLOC), math.log(top))))

    def boundary(self):
        cands = [512, 513, SMALL - 1, SMALL, SMALL + 1, 2 * MiB, MIN_LARGE_ALLOC - 1, MIN_LARGE_ALLOC,
                 MIN_LARGE_ALLOC + 1, LARGE_BUFFER, LARGE_BUFFER + 1]
        cands += [1 << k for k in range(9, max(10, self.h.limit.bit_length() - 2))]
        if self.h.max_split:
            cands += [self.h.max_split - 1, self.h.max_split, self.h.max_split + 1]
        return self.rng.choice(cands)

    def mixed(self):
        r = self.rng.random()
        if r < 0.55:
            return self.small()
        if r < 0.80:
            return self.medium()
        if r < 0.92:
            return self.large()
        return self.boundary()

    # -- phases
    def ph_burst(self, sid=None):
        sid = self.rng.choice(self.streams()) if sid is None else sid
        for _ in range(self.rng.randint(3, 30)):
            i = self.alloc(self.mixed(), sid)
            if self.rng.random() < 0.25:
                self.drop(i)

    def ph_fragment(self):
        sid = self.rng.choice(self.streams())
        base = self.rng.choice([self.small, self.small, self.medium, self.large])()
        ids = [self.alloc(base + self.rng.randint(0, max(1, base // 16)), sid)
               for _ in range(self.rng.randint(6, 40))]
        for i in ids[::2]:
            self.drop(i)

    def ph_train(self):
        sid = self.rng.choice(self.streams())
        params = [self.alloc(self.mixed(), sid) for _ in range(self.rng.randint(1, 5))]
        acts = [self.rng.choice([self.small, self.medium, self.medium, self.large])()
                for _ in range(self.rng.randint(3, 8))]
        tmp = self.mixed()
        for _ in range(self.rng.randint(2, 6)):
            ids = [self.alloc(a, sid) for a in acts]
            t = self.alloc(tmp, sid)
            self.drop(t)
            for i in reversed(ids):
                self.drop(i)
        if self.rng.random() < 0.5:
            for i in params:
                self.drop(i)

    def ph_free(self):
        self.free_random(self.rng.randint(1, 8))

    def ph_cross(self):
        if not self.sids:
            return self.ph_burst()
        sid = self.rng.choice(self.streams())
        i = self.alloc(self.mixed(), sid)
        if i is None or not self.live:
            return
        for _ in range(self.rng.randint(1, 2)):
            other = self.rng.choice([s for s in self.streams() if s != sid])
            self.emit("record %d %d" % (i, other))
            self.recorded.add(i)
        if self.rng.random() < 0.8:
            self.drop(i)
        if self.rng.random() < 0.5:
            self.sync()

    def ph_oom(self):
        if self.rng.random() < 0.4:
            self.alloc(self.h.limit + self.rng.randint(1, 4 * MiB))  # fails for sure
        else:
            self.alloc(self.rng.uniform(0.3, 1.3) * self.h.limit, relieve=False)
        self.free_random(self.rng.randint(0, 6))
        for _ in range(self.rng.randint(1, 6)):
            self.alloc(self.mixed())

    def ph_pool(self):
        if self.release < (2, 1):
            return self.ph_burst()
        free_sids = [s for s in self.streams() if s not in self.open_spans.values()]
        if not free_sids:
            return
        reopen = [p for p, n in self.pool_uses.items() if n > 0 and p not in self.open_spans]
        if reopen and self.rng.random() < 0.3:
            pool = self.rng.choice(reopen)
        else:
            pool = self.next_pool
            self.next_pool += 1
        sid = self.rng.choice(free_sids)
        self.emit("pool_begin %d %d" % (pool, sid))
        self.open_spans[pool] = sid
        self.pool_uses[pool] = self.pool_uses.get(pool, 0) + 1
        self.ph_burst(sid)
        for _ in range(self.rng.randint(0, 3)):
            self.alloc(self.mixed())
        if self.rng.random() < 0.3 and self.live:
            self.free_random(1)
        self.emit("pool_end %d" % pool)
        del self.open_spans[pool]
        if self.rng.random() < 0.5:
            self.release_pool(pool)

    def release_pool(self, pool):
        if self.h.expandable and any(c[1] == pool for c, _ in self.busy()):
            # Not with expandable segments while it holds blocks: 2.6 and 2.14 count a pool's mappings and
            # unmappings as its cudaMallocs and frees, which need not match, and may then delete the pool under a
            # live block (a use after free, seen under valgrind). Later, or at the batch reset.
            return
        while self.pool_uses.get(pool, 0) > 0 and pool not in self.open_spans:
            self.emit("pool_release %d" % pool)
            self.pool_uses[pool] -= 1

    def ph_boundary(self):
        for _ in range(self.rng.randint(1, 6)):
            i = self.alloc(self.boundary())
            if self.rng.random() < 0.5:
                self.drop(i)

    def ph_misc(self, what):
        if what == "empty_cache":
            self.empty_cache()
        elif what == "state":
            self.emit("state")
        else:
            self.sync()

    def generate(self, target):
        phases = [("burst", 20), ("fragment", 10), ("train", 12), ("free", 15), ("cross", 10), ("sync", 5),
                  ("oom", 8), ("empty_cache", 4), ("state", 4), ("pool", 8), ("boundary", 6)]
        names, weights = [p for p, _ in phases], [w for _, w in phases]
        while len(self.ops) < target:
            what = self.rng.choices(names, weights)[0]
            if what in ("empty_cache", "state", "sync"):
                self.ph_misc(what)
            else:
                getattr(self, "ph_" + what)()
            # Pools left for a later phase get released now and then.
            for pool in [p for p, n in self.pool_uses.items() if n > 0 and p not in self.open_spans]:
                if self.rng.random() < 0.2:
                    self.release_pool(pool)
        return self.ops[:400]


def header_lines(h, sids):
    lines = ["settings %s" % h.settings, "capacity %d" % h.capacity]
    if h.fraction is not None:
        lines.append("fraction %s" % h.fraction)
    lines += ["stream %d" % s for s in sids]
    return lines


def make_script(seed, n, headers, release):
    rng = random.Random("%s:%d" % (seed, n))
    h = rng.choice(headers)
    sids = sorted(rng.sample(range(1, 16), rng.choices([0, 1, 2, 3], [30, 30, 20, 20])[0]))
    target = int(math.exp(rng.uniform(math.log(20), math.log(400))))
    ops = Script(rng, h, release, sids).generate(target)
    comment = "# gen_ops.py seed=%s index=%d release=%d.%d" % (seed, n, release[0], release[1])
    return "\n".join([comment] + header_lines(h, sids) + ops) + "\n"


def main(argv):
    release = (2, 14)
    if len(argv) >= 2 and argv[0] == "--release":
        release = tuple(int(x) for x in argv[1].split(".")[:2])
        argv = argv[2:]
    if len(argv) != 3 or not argv[1].isdigit():
        sys.stderr.write("usage: gen_ops.py [--release X.Y] SEED COUNT OUTDIR\n")
        return 2
    seed, count, outdir = argv[0], int(argv[1]), argv[2]
    menu = random.Random("%s:menu" % seed)
    headers = [draw_header(menu, release) for _ in range(max(1, math.ceil(count / 40)))]
    os.makedirs(outdir, exist_ok=True)
    for n in range(count):
        with open(os.path.join(outdir, "s%s-%05d.ops" % (seed, n)), "w") as f:
            f.write(make_script(seed, n, headers, release))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
