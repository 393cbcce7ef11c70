#!/usr/bin/env python3
"""wheel-layout.py LIBC10_CUDA - measure the private allocator layouts of a release libc10_cuda.so from its code.

PyTorch's release wheels ship libc10_cuda.so without DWARF but with a .symtab, so the functions of
CUDACachingAllocator.cpp have names. The struct offsets of Block, BlockPool, PrivatePool, ExpandableSegment,
DeviceCachingAllocator and NativeCachingAllocator (types private to the .cpp) are read from the instructions of a
few of those functions (objdump -d): the inlined constructors, the operator new sizes, and the members that
map_block, releasePool, recordHistory and friends touch. Each rule says which source statement it reads.

The rules were written against torch 2.14.1 (+cu130, git 5c4886908584029761b579af026dcfb627c84070, gcc -O2) and widened
for 2.11.0 (+cu130, git 70d99e998b4955e0049d13a98d77ae1b14db1f45, gcc 13.3), where they give the same 2.14.1 numbers;
another build may compile differently, and then a rule fails loudly instead of guessing.
Prints "Struct.member OFFSET" lines (the layout-file format, mp_layout.h) plus
"DeviceCachingAllocator.device_prop OFFSET" and "cudaDeviceProp.sizeof N" (for deriving other CUDA majors).
"""
import re
import subprocess
import sys

HEX = r"0x([0-9a-f]+)"


def die(msg):
    sys.stderr.write("wheel-layout: error: %s\n" % msg)
    sys.exit(1)


def functions(lib):
    """Demangled function name -> list of instruction texts (objdump -d, AT&T syntax)."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", lib], check=True,
                         capture_output=True, text=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        m = re.match(r"^\s+[0-9a-f]+:\s+(.*)$", line)
        if m and cur is not None:
            cur.append(m.group(1).strip())
    return funcs


def func(funcs, prefix):
    """The instructions of the one function whose (namespace-stripped) name starts with PREFIX."""
    hits = []
    for name, ins in funcs.items():
        short = name.replace("c10::cuda::CUDACachingAllocator::Native::", "").replace("(anonymous namespace)::", "")
        if short.startswith(prefix) and "[clone" not in short:
            hits.append(ins)
    if len(hits) != 1:
        die("%d functions named %s..." % (len(hits), prefix))
    return hits[0]


def find(ins, pattern, what, start=0):
    """Index and match of the first instruction at or after START that matches PATTERN."""
    for i in range(start, len(ins)):
        m = re.search(pattern, ins[i])
        if m:
            return i, m
    die("no instruction for %s (%s)" % (what, pattern))


def all_disp(ins, pattern):
    return [int(m.group(1), 16) for m in (re.search(pattern, s) for s in ins) if m]


def new_size_then(ins, what, start=0):
    """The size operand of the first `mov $N,%edi` that is followed by a call to operator new."""
    for i in range(start, len(ins) - 1):
        m = re.match(r"mov\s+\$" + HEX + r",%edi$", ins[i])
        if m:
            for j in range(i + 1, min(i + 40, len(ins))):
                if "call" in ins[j]:
                    if "operator new" in ins[j]:
                        return i, int(m.group(1), 16)
                    break
    die("no operator new for " + what)


def comparator_stores(ins, name, base, what, start=0):
    """Where the address of function NAME, loaded into a register by lea, is stored relative to %BASE
    (until that register is loaded with something else)."""
    k, m = find(ins, r"lea\s+.*,%(r\w+)\s+# [0-9a-f]+ <.*\b" + name + r"\(", what, start)
    reg, out = m.group(1), []
    for s in ins[k + 1:]:
        st = re.match(r"mov\s+%" + reg + r"," + HEX + r"\(%" + base + r"\)$", s)
        if st:
            out.append(int(st.group(1), 16))
        elif re.search(r",%" + reg + r"$", s) or s.startswith(("ret", "jmp")):
            break
        elif s.startswith("call") and reg not in ("rbx", "rbp", "r12", "r13", "r14", "r15"):
            break  # a caller-saved register does not survive the call
    return sorted(out)


def object_stores(ins, start, src_pat, limit=160):
    """Offsets, relative to the object returned by the operator new call at or after START, of the stores
    `mov %SRC,D(%BASE)` where BASE holds the object's address plus a known amount (followed through
    mov %rax,%reg and lea D(%reg),%reg) and SRC is either a register loaded with `lea ... # <NAME(` matching
    SRC_PAT, or (SRC_PAT None) a register holding the object's own address (owner_PrivatePool = this).
    Written for 2.11.0's createOrIncrefPool, whose inlined PrivatePool constructor addresses the object
    through %r14 and through %rax moved 0x30 on."""
    k, _ = find(ins, r"call.*operator new", "operator new", start)
    alias = {"rax": 0}  # register -> object address + value
    src = set()
    out = []
    for s in ins[k + 1:k + 1 + limit]:
        if s.startswith(("call", "ret", "jmp")):
            break
        m = re.match(r"mov\s+%(r\w+),(-?0x[0-9a-f]+)?\(%(r\w+)\)$", s)
        if m and m.group(3) in alias:
            d = int(m.group(2) or "0", 16) + alias[m.group(3)]
            if (src_pat is None and alias.get(m.group(1)) == 0) or (src_pat is not None and m.group(1) in src):
                out.append(d)
            continue
        m = re.match(r"mov\s+%(r\w+),%(r\w+)$", s)
        if m:
            alias.pop(m.group(2), None)
            src.discard(m.group(2))
            if m.group(1) in alias:
                alias[m.group(2)] = alias[m.group(1)]
            continue
        m = re.match(r"lea\s+(-?0x[0-9a-f]+)?\(%(r\w+)\),%(r\w+)$", s)
        if m:
            base = alias.get(m.group(2))
            alias.pop(m.group(3), None)
            src.discard(m.group(3))
            if base is not None:
                alias[m.group(3)] = base + int(m.group(1) or "0", 16)
            continue
        m = re.match(r"lea\s+.*,%(r\w+)\s+# [0-9a-f]+ <(.*)>$", s)
        if m:
            alias.pop(m.group(1), None)
            src.discard(m.group(1))
            if src_pat is not None and re.search(r"\b" + src_pat + r"\(", m.group(2)):
                src.add(m.group(1))
            continue
        m = re.search(r",%(r\w+|e\w+)$", s)  # anything else written to a register ends what it held
        if m and not s.startswith(("cmp", "test")):
            reg = m.group(1)
            reg = "r" + reg[1:] if reg.startswith("e") and len(reg) == 3 else reg
            alias.pop(reg, None)
            src.discard(reg)
    return sorted(out)


def main():
    if len(sys.argv) != 2:
        die("usage: wheel-layout.py LIBC10_CUDA")
    funcs = functions(sys.argv[1])
    r = {}

    # NativeCachingAllocator::init(int): device_allocator.resize(n), then for each device
    # device_allocator[i] = std::make_unique<DeviceCachingAllocator>(i), the constructor inlined.
    init = func(funcs, "NativeCachingAllocator::init(int)")
    loads = all_disp(init[:12], r"mov\s+" + HEX + r"\(%rdi\),%r\w+$")
    if len(loads) != 2 or abs(loads[0] - loads[1]) != 8:
        die("device_allocator begin/end loads not found in init")
    r["NativeCachingAllocator.device_allocator"] = min(loads)
    i_new, dca_size = new_size_then(init, "DeviceCachingAllocator")
    r["DeviceCachingAllocator.sizeof"] = dca_size
    ctor = init[i_new:]
    # stats: the DeviceStats members are zeroed first (rep stos from &stats.allocation).
    _, m = find(ctor, r"lea\s+" + HEX + r"\(%rax\),%rdi$", "stats")
    r["DeviceCachingAllocator.stats"] = int(m.group(1), 16)
    # device_id(device): the one byte stored from a register.
    _, m = find(ctor, r"mov\s+%r\w+b," + HEX + r"\(%rbx\)$", "device_id")
    r["DeviceCachingAllocator.device_id"] = int(m.group(1), 16)
    # large_blocks(/*small=*/false), small_blocks(/*small=*/true): BlockPool's blocks set takes
    # BlockComparatorSizeCounterAddress (2.14; BlockComparatorSize before), the others BlockComparatorAddress.
    pools = comparator_stores(init, "BlockComparatorSize\\w*", "rbx", "the size comparator")
    if len(pools) != 2:
        die("expected 2 BlockPools in DeviceCachingAllocator, found %d" % len(pools))
    large, small = pools
    r["DeviceCachingAllocator.large_blocks"] = large
    r["DeviceCachingAllocator.small_blocks"] = small
    r["BlockPool.sizeof"] = small - large
    addr_sets = [d - large for d in comparator_stores(init, "BlockComparatorAddress", "rbx", "the address comparator")
                 if large < d < small]
    _, m = find(ctor, r"movb\s+\$0x1," + HEX + r"\(%rbx\)$", "small_blocks.is_small = true")
    r["BlockPool.is_small"] = int(m.group(1), 16) - small
    # device_prop: zero-initialised with rep stos (sizeof(cudaDeviceProp) / 8 qwords), then
    # cudaGetDeviceProperties(&device_prop, device).
    for k in range(len(ctor) - 1):
        m1 = re.match(r"lea\s+" + HEX + r"\(%rbx\),%rdi$", ctor[k])
        if m1:
            m2 = re.match(r"mov\s+\$" + HEX + r",%ecx$", ctor[k + 1])
            if m2 and int(m2.group(1), 16) * 8 > 900:
                r["DeviceCachingAllocator.device_prop"] = int(m1.group(1), 16)
                r["cudaDeviceProp.sizeof"] = int(m2.group(1), 16) * 8
                break
    else:
        # 2.11.0: device_prop is not zeroed first; cudaGetDeviceProperties(&device_prop, device) is called on
        # the member directly (lea X(%rbx),%rdi shortly before the call). Its size is not in the code then:
        # sizeof(cudaDeviceProp) comes from the CUDA 13 headers' DWARF (reported as 0 here).
        k, _ = find(ctor, r"call.*<cudaGetDeviceProperties@plt>", "cudaGetDeviceProperties(&device_prop, device)")
        for j in range(k - 1, max(k - 40, 0), -1):
            m1 = re.match(r"lea\s+" + HEX + r"\(%rbx\),%rdi$", ctor[j])
            if m1:
                r["DeviceCachingAllocator.device_prop"] = int(m1.group(1), 16)
                r["cudaDeviceProp.sizeof"] = 0
                break
            if re.search(r",%rdi$|,%edi$|call", ctor[j]):
                die("no &device_prop before cudaGetDeviceProperties")
        else:
            die("no cudaDeviceProp in the DeviceCachingAllocator constructor")
    # alloc_buffer: RingBuffer's constructor allocates its std::vector<TraceEntry> (24 bytes) into
    # alloc_trace (RingBuffer + 56, measured from DWARF).
    k, n = new_size_then(ctor, "RingBuffer::alloc_trace", 0)
    while n != 0x18:
        k, n = new_size_then(ctor, "RingBuffer::alloc_trace", k + 1)
    k, _ = find(ctor, r"call.*operator new", "RingBuffer's new", k)
    _, m = find(ctor, r"mov\s+%rax," + HEX + r"\(%rbx\)$", "alloc_trace", k)
    r["DeviceCachingAllocator.alloc_buffer"] = int(m.group(1), 16) - 56

    # DeviceCachingAllocator::map_block: pool.unmapped.erase(to_map), new Block(...) for the rest,
    # try_merge_blocks(to_map, to_map->prev/next), total_allocated_memory += mapped_range.size.
    mb = func(funcs, "DeviceCachingAllocator::map_block(")
    _, m = find(mb, r"movzbl\s+" + HEX + r"\(%rsi\),", "Block.mapped")
    r["Block.mapped"] = int(m.group(1), 16)
    r["Block.allocated"] = r["Block.mapped"] - 1  # bool allocated; bool mapped; (stored together as a word below)
    k, m = find(mb, r"cmp\s+%rdx," + HEX + r"\(%rsi\)$", "Block.size (size <= to_map->size)")
    r["Block.size"] = int(m.group(1), 16)
    k, m = find(mb, r"cmpq\s+\$0x0," + HEX + r"\(%rsi\)$", "Block.context_when_allocated", k)
    r["Block.context_when_allocated"] = int(m.group(1), 16)
    k, m = find(mb, r"mov\s+" + HEX + r"\(%rsi\),%rdi$", "Block.expandable_segment_", k)
    r["Block.expandable_segment_"] = int(m.group(1), 16)
    k, m = find(mb, r"mov\s+" + HEX + r"\(%rsi\),%rsi$", "Block.ptr", k)
    r["Block.ptr"] = int(m.group(1), 16)
    k, _ = find(mb, r"call.*ExpandableSegment::map\(", "ExpandableSegment::map call", k)
    k, m = find(mb, r"mov\s+" + HEX + r"\(%rbx\),%r15$", "Block.pool", k)
    r["Block.pool"] = int(m.group(1), 16)
    k2, m = find(mb, r"lea\s+" + HEX + r"\(%r15\),%rax$", "BlockPool.unmapped", k)
    find(mb[k2:k2 + 6], r"call.*_Rb_tree<.*>::erase\(", "unmapped.erase")
    r["BlockPool.unmapped"] = int(m.group(1), 16)
    _, r["Block.sizeof"] = new_size_then(mb, "Block", k2)
    # The new Block (the unmapped rest): device and stream copied from to_map; allocated and mapped
    # cleared together (one 16-bit store).
    _, m = find(mb, r"mov\s+%dl,(?:" + HEX + r")?\(%r13\)$", "Block.device", k2)
    r["Block.device"] = int(m.group(1) or "0", 16)
    _, m = find(mb, r"mov\s+%rax," + HEX + r"\(%r13\)$", "Block.stream", k2)
    r["Block.stream"] = int(m.group(1), 16)
    # 2.11.0: the zero word comes from %si (2.14.1: %cx).
    # A 16-bit store of a register last written by xor %eR,%eR: %cx in 2.14.1, %si in 2.11.0
    # (not the `mov %cx` of stream_uses' hash policy and max_lookups, which 2.11.0 also has).
    for j in range(k2, len(mb)):
        m = re.match(r"mov\s+%([a-d]x|si|di),(?:" + HEX + r")?\(%r13\)$", mb[j])
        if not m:
            continue
        r16 = m.group(1)
        names = {"e" + r16, "r" + r16, r16, r16[0] + "l" if r16.endswith("x") else r16 + "l"}
        last = [y for y in mb[k2:j] if re.search(r",%(\w+)$", y) and re.search(r",%(\w+)$", y).group(1) in names]
        if last and re.match(r"xor\s+%e" + r16 + r",%e" + r16 + r"$", last[-1]):
            break
    else:
        die("no Block.allocated (allocated and mapped = false)")
    r["Block.allocated"] = int(m.group(2) or "0", 16)
    # stream_uses: the flat_hash_set gets its first table (operator new) right after the Block.
    k3, _ = find(mb, r"call.*operator new", "new Block", k2)
    k3, _ = find(mb, r"call.*operator new", "stream_uses' table", k3 + 1)
    _, m = find(mb, r"mov\s+%rax," + HEX + r"\(%r13\)$", "Block.stream_uses", k3)
    r["Block.stream_uses"] = int(m.group(1), 16)
    _, m = find(mb, r"movl\s+\$0x0," + HEX + r"\(%r13\)$", "Block.event_count{0}", k3)
    r["Block.event_count"] = int(m.group(1), 16)
    # if (!to_map->prev && !to_map->context_when_segment_allocated) to_map->context_when_segment_allocated = ctx;
    for j in range(len(mb) - 2):
        m = re.match(r"mov\s+%rax," + HEX + r"\(%rbx\)$", mb[j])
        if m and re.search(r"call.*__shared_count<.*>::operator=", mb[j + 1] + mb[j + 2]):
            r["Block.context_when_segment_allocated"] = int(m.group(1), 16)
            break
    else:
        die("no Block.context_when_segment_allocated")
    k, m = find(mb, r"mov\s+" + HEX + r"\(%rbx\),%rsi$", "Block.prev", k2)
    find(mb[k:k + 4], r"call.*try_merge_blocks", "try_merge_blocks(prev)")
    r["Block.prev"] = int(m.group(1), 16)
    k, m = find(mb, r"mov\s+" + HEX + r"\(%rbx\),%rsi$", "Block.next", k + 1)
    r["Block.next"] = int(m.group(1), 16)
    # 2.14.1 calls BlockPool::insert_into_blocks(to_map); 2.11.0 has no such function and inserts into
    # pool.blocks directly: _Rb_tree::_M_insert_unique on the pool's own address (the Block.pool register).
    if any("BlockPool::insert_into_blocks" in x for x in mb):
        k, _ = find(mb, r"call.*BlockPool::insert_into_blocks", "insert_into_blocks", k)
        base = "rdi"
    else:
        pool_reg = re.match(r"mov\s+0x[0-9a-f]+\(%rbx\),%(r\w+)$",
                            [x for x in mb if re.match(r"mov\s+0x%x\(%%rbx\),%%r\w+$" % r["Block.pool"], x)][0]).group(1)
        k, _ = find(mb, r"call.*_Rb_tree<.*Block\*.*>::_M_insert_unique", "pool.blocks.insert(to_map)", k)
        if not re.match(r"mov\s+%" + pool_reg + r",%rdi$", mb[k - 1]) and not any(
                re.match(r"mov\s+%" + pool_reg + r",%rdi$", x) for x in mb[k - 6:k]):
            die("pool.blocks.insert is not on the pool's own address")
        # `this` was saved at entry (mov %rdi,SLOT) and is reloaded from there into the base register.
        _, m0 = find(mb, r"mov\s+%rdi,(-0x[0-9a-f]+\(%rbp\))$", "this saved")
        _, m1 = find(mb, r"mov\s+" + re.escape(m0.group(1)) + r",%(r\w+)$", "this reloaded", k)
        base = m1.group(1)
    r["BlockPool.blocks"] = 0
    _, m = find(mb, r"add\s+%r\w+," + HEX + r"\(%" + base + r"\)$", "total_allocated_memory", k)
    r["DeviceCachingAllocator.total_allocated_memory"] = int(m.group(1), 16)
    _, m = find(mb, r"movzbl\s+" + HEX + r"\(%r\w+\),%edx$", "pool->is_small (get_stat_types_for_pool)", k)
    if int(m.group(1), 16) != r["BlockPool.is_small"]:
        die("BlockPool.is_small differs between the constructor and map_block")
    if r["BlockPool.unmapped"] not in addr_sets:
        die("BlockPool.unmapped is not one of the address-ordered sets")

    # BlockPool::insert_into_blocks: block->gc_count_base = get_free_blocks_call_count; then blocks.insert(block)
    # on the pool's own address and blocks_by_addr.insert(block) (2.14) on another set.
    if not any("BlockPool::insert_into_blocks(" in n for n in funcs):
        # 2.11.0: no insert_into_blocks and no blocks_by_addr: one address-ordered set (unmapped) per pool,
        # and map_block inserts into the set at the pool's own address (checked above).
        if addr_sets != [r["BlockPool.unmapped"]]:
            die("2.11: expected one address-ordered set (unmapped) per BlockPool, found %r" % addr_sets)
    else:
        ib = func(funcs, "BlockPool::insert_into_blocks(")
        k, _ = find(ib, r"call.*_Rb_tree<", "blocks.insert")
        moved = [re.match(r"(?:lea|mov)\s+(?:" + HEX + r")?\(%rdi\),%rdi$|mov\s+%r\w+,%rdi$", x) for x in ib[:k]]
        if any(moved):
            die("insert_into_blocks does not insert into the set at the pool's address")
        r["BlockPool.blocks"] = 0
        _, m = find(ib, r"lea\s+" + HEX + r"\(%r\w+\),%rdi$", "blocks_by_addr.insert", k)
        by_addr = int(m.group(1), 16)
        if by_addr == r["BlockPool.unmapped"] or by_addr not in addr_sets:
            die("blocks_by_addr is not the other address-ordered set")

    # free_block: active_blocks.erase(block) decrements the flat_hash_set's num_elements (+24).
    fb = func(funcs, "DeviceCachingAllocator::free_block(")
    # (2.14.1 on %rdi; 2.11.0 on %rcx.) DeviceStats' counters, the other `subq $1`s, all lie before
    # device_id; active_blocks lies behind small_blocks.
    subs = sorted(set(d for d in all_disp(fb, r"subq\s+\$0x1," + HEX + r"\(%r\w+\)$")
                      if d - 24 >= r["DeviceCachingAllocator.small_blocks"] + r["BlockPool.sizeof"]))
    if len(subs) != 1:
        die("active_blocks.erase not found in free_block (%r)" % subs)
    r["DeviceCachingAllocator.active_blocks"] = subs[0] - 24

    # getExpandableSegmentSizes: for (auto& segment : expandable_segments_) (begin and end loads).
    es = func(funcs, "NativeCachingAllocator::getExpandableSegmentSizes(")
    # The DeviceCachingAllocator* is the register loaded from device_allocator[device] (an indexed load):
    # %rax in 2.14.1, %r13 in 2.11.0.
    _, m = find(es, r"mov\s+\(%r\w+,%r\w+,8\),%(r\w+)$", "device_allocator[device]")
    loads = all_disp(es, r"mov\s+" + HEX + r"\(%" + m.group(1) + r"\),%r\w+$")
    pair = [d for d in loads if d > 0x100]
    if len(pair) < 2 or abs(pair[0] - pair[1]) != 8:
        die("expandable_segments_ begin/end not found")
    r["DeviceCachingAllocator.expandable_segments_"] = min(pair[:2])

    # recordHistory: record_history = enabled (the first byte stored from a register).
    rh = func(funcs, "NativeCachingAllocator::recordHistory(")
    _, m = find(rh, r"mov\s+%\w+l," + HEX + r"\(%rbx\)$", "record_history")
    r["DeviceCachingAllocator.record_history"] = int(m.group(1), 16)

    # DeviceCachingAllocator::releasePool: graph_pools.find(id) (hash shift at +16),
    # then graph_pools_freeable.emplace(id, pool).
    rp = func(funcs, "DeviceCachingAllocator::releasePool(")
    # `this` is the register %rdi is copied to at entry (%rbp in 2.14.1, %rbx in 2.11.0).
    _, m = find(rp[:12], r"mov\s+%rdi,%(r\w+)$", "this")
    this = m.group(1)
    _, m = find(rp, r"movsbl\s+" + HEX + r"\(%" + this + r"\),%ecx$", "graph_pools hash policy")
    r["DeviceCachingAllocator.graph_pools"] = int(m.group(1), 16) - 16
    # --pool->use_count: one `subl $1` (2.14.1), or load, lea -1, store back to the same place (2.11.0).
    k = None
    for j, x in enumerate(rp):
        m = re.match(r"subl\s+\$0x1," + HEX + r"\(%r\w+\)$", x)
        if m:
            k, uc = j, int(m.group(1), 16)
            break
        m = re.match(r"mov\s+" + HEX + r"\((%r\w+)\),%(e\w+)$", x)
        if m and j + 2 < len(rp):
            m2 = re.match(r"lea\s+-0x1\(%r" + m.group(3)[1:] + r"\),%(e\w+)$", rp[j + 1])
            if m2 and re.match(r"mov\s+%" + m2.group(1) + r",0x" + m.group(1) + r"\(" + m.group(2) + r"\)$",
                               rp[j + 2]):
                k, uc = j + 2, int(m.group(1), 16)
                break
    if k is None:
        die("no --pool->use_count in releasePool")
    r["PrivatePool.use_count"] = uc
    _, m = find(rp, r"lea\s+" + HEX + r"\(%" + this + r"\),%rdi$", "graph_pools_freeable", k)
    r["DeviceCachingAllocator.graph_pools_freeable"] = int(m.group(1), 16)

    # createOrIncrefPool: std::make_unique<PrivatePool>(mempool_id, allocator), constructor inlined.
    cp = func(funcs, "NativeCachingAllocator::createOrIncrefPool(")
    k, r["PrivatePool.sizeof"] = new_size_then(cp, "PrivatePool")
    pp = cp[k:k + 120]
    ppools = comparator_stores(cp, "BlockComparatorSize\\w*", "rax", "the size comparator in createOrIncrefPool", k)
    if len(ppools) != 2:  # 2.11.0: the object is addressed through %r14 and %rax+0x30 (object_stores)
        ppools = object_stores(cp, k, "BlockComparatorSize\\w*")
    if len(ppools) != 2 or ppools[1] - ppools[0] != r["BlockPool.sizeof"]:
        die("PrivatePool's two BlockPools not found")
    r["PrivatePool.large_blocks"], r["PrivatePool.small_blocks"] = ppools
    _, m = find(pp, r"movups\s+%xmm\d+,\(%rax\)$", "PrivatePool.id")
    r["PrivatePool.id"] = 0
    # BlockPool(small, this): owner_PrivatePool is the one member set to the object's own address.
    owners = sorted(all_disp(pp, r"mov\s+%rax," + HEX + r"\(%rax\)$"))
    if len(owners) != 2:  # 2.11.0: mov %r14,D(%r14)
        owners = object_stores(cp, k, None)
    if len(owners) != 2:
        die("PrivatePool's owner_PrivatePool stores not found")
    r["BlockPool.owner_PrivatePool"] = owners[0] - ppools[0]

    # ExpandableSegment::map: (range.ptr - ptr_) / segment_size_; the constructor reserves
    # segment_size_ * max_handles_ bytes of address space at &ptr_.
    em = func(funcs, "ExpandableSegment::map(")
    loads = all_disp(em[:20], r"mov\s+" + HEX + r"\(%rbx\),%r\w+$")
    if len(loads) < 2:  # 2.11.0: read through `this` in %rdi before it is copied to %rbx
        loads = all_disp(em[:20], r"mov\s+" + HEX + r"\(%rdi\),%r\w+$")
    if len(loads) < 2:
        die("ExpandableSegment::map: ptr_ and segment_size_ loads not found")
    r["ExpandableSegment.ptr_"], r["ExpandableSegment.segment_size_"] = loads[0], loads[1]
    if any("ExpandableSegment::ExpandableSegment(" in n for n in funcs):
        ec = func(funcs, "ExpandableSegment::ExpandableSegment(")
        _, m = find(ec, r"imul\s+" + HEX + r"\(%rbx\),%rsi$", "max_handles_")
        r["ExpandableSegment.max_handles_"] = int(m.group(1), 16)
    else:
        # 2.11.0: the constructor is inlined into DeviceCachingAllocator::alloc_block:
        # cuMemAddressReserve_(&ptr_, segment_size_ * max_handles_, 0, 0, 0) through DriverAPI's table:
        # lea PTR(%rX),%rdi; imul MAX(%rX),%rsi; call *..., with PTR the ptr_ that map() reads.
        ab = func(funcs, "DeviceCachingAllocator::alloc_block(")
        hits = []
        for j, x in enumerate(ab):
            m = re.match(r"imul\s+" + HEX + r"\((%r\w+)\),%rsi$", x)
            if not m:
                continue
            near = ab[max(j - 6, 0):j + 6]
            lea = [re.match(r"lea\s+" + HEX + r"\(" + m.group(2) + r"\),%rdi$", y) for y in near]
            lea = [int(y.group(1), 16) for y in lea if y]
            if lea == [r["ExpandableSegment.ptr_"]] and any(re.match(r"call\s+\*", y) for y in ab[j:j + 6]):
                hits.append(int(m.group(1), 16))
        if len(hits) != 1:
            die("max_handles_ (inlined ExpandableSegment constructor in alloc_block): %r" % hits)
        r["ExpandableSegment.max_handles_"] = hits[0]
        # The constructor's local `cudaDeviceProp prop{}` is zeroed (rep stos, N qwords) at the address that
        # cudaGetDeviceProperties then fills: the release's sizeof(cudaDeviceProp).
        if r.get("cudaDeviceProp.sizeof") == 0:
            for j, x in enumerate(ab):
                if "cudaGetDeviceProperties" not in x:
                    continue
                dst = [re.match(r"lea\s+(-0x[0-9a-f]+\(%rbp\)),%rdi$", y) for y in ab[max(j - 12, 0):j]]
                dst = [y.group(1) for y in dst if y]
                if not dst:
                    continue
                for i2 in range(j - 1, max(j - 20, 0), -1):
                    if ab[i2].startswith("rep stos"):
                        n_ = [re.match(r"mov\s+\$" + HEX + r",%ecx$", y) for y in ab[max(i2 - 8, 0):i2]]
                        n_ = [int(y.group(1), 16) for y in n_ if y]
                        z = [re.match(r"lea\s+(-0x[0-9a-f]+\(%rbp\)),%rdi$", y) for y in ab[max(i2 - 8, 0):i2]]
                        z = [y.group(1) for y in z if y]
                        if n_ and z and z[-1] == dst[-1]:
                            r["cudaDeviceProp.sizeof"] = n_[-1] * 8
                        break
                if r["cudaDeviceProp.sizeof"]:
                    break
            if not r["cudaDeviceProp.sizeof"]:
                die("sizeof(cudaDeviceProp) not found in alloc_block")

    # NativeCachingAllocator::snapshot: clock_converter.makeConverter().
    sn = func(funcs, "NativeCachingAllocator::snapshot(")
    k, _ = find(sn, r"call.*ApproximateClockToUnixTimeConverter::makeConverter", "makeConverter")
    # `this` arrives in %rsi (the SnapshotInfo is returned through %rdi); 2.14.1 adds the offset to %rsi itself,
    # 2.11.0 reloads `this` from the stack slot it saved %rsi to at entry into another register first.
    _, ms = find(sn[:20], r"mov\s+%rsi,(0x[0-9a-f]+\(%rsp\))$", "this saved") if any(
        re.match(r"mov\s+%rsi,0x[0-9a-f]+\(%rsp\)$", x) for x in sn[:20]) else (None, None)
    for j in range(k - 1, max(k - 6, 0), -1):
        m = re.match(r"lea\s+" + HEX + r"\(%(r\w+)\),%rsi$", sn[j])
        if not m:
            continue
        base = m.group(2)
        if base != "rsi":
            loads = [i for i in range(j - 1, max(j - 8, 0), -1) if re.search(r",%" + base + r"$", sn[i])]
            if not (ms and loads and sn[loads[0]].split()[-1] == "%s,%%%s" % (ms.group(1), base)):
                die("clock_converter: %%%s is not `this`" % base)
        r["NativeCachingAllocator.clock_converter"] = int(m.group(1), 16)
        break
    else:
        die("clock_converter not found")

    for key in sorted(r):
        print("%s %s" % (key, "-" if r[key] is None else r[key]))


if __name__ == "__main__":
    main()
