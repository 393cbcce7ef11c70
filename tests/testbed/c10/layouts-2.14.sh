#!/usr/bin/env bash
# layouts-2.14.sh - measure PyTorch 2.14.1's allocator layouts again and diff them against the four built-in tables
# src/symbols/layouts/torch-2.14-cuda{13,12}{,-oldabi}.layout; prints the differences, exit 1 if there are any.
#
# No 2.14.1 source can be had here (Debian sid lists pytorch 2.14.1+dfsg-1 but does not serve its files), so:
# - the structs private to CUDACachingAllocator.cpp (Block, BlockPool, PrivatePool, ExpandableSegment,
#   DeviceCachingAllocator, NativeCachingAllocator) are read from the code of the real release: libc10_cuda.so of
#   PyPI's torch 2.14.1 wheel (a CUDA 13.0, new-ABI build with .symtab), by wheel-layout.py;
# - the structs of the headers (DeviceStats, TraceEntry, RingBuffer, CUDAAllocatorConfig, and libc10's
#   AcceleratorAllocatorConfig, which holds most allocator settings from 2.14 on) and cudaDeviceProp are read
#   (layouts.sh, gdb) from the DWARF of a small object compiled against that wheel's own torch/include, four
#   times: CUDA 13 headers (tb_cuda_home) and CUDA 12.4 headers (../cuda/fetch-headers.sh), each with the new ABI
#   and with -D_GLIBCXX_USE_CXX11_ABI=0;
# - the release's own AcceleratorAllocatorConfig object (the function-local static of its instance(), which only
#   the .symtab of the wheel's libc10.so names) must be as large as the new-ABI DWARF says;
# - the CUDA 12 tables move every DeviceCachingAllocator member behind device_prop by the cudaDeviceProp size
#   difference; the old-ABI tables keep the private offsets (no string or list precedes them).
# Fields a rule does not read (Block.requested_size) are listed as unchecked (test_layout_dwarf checks them on the
# mutant-block-regcounter build).
#
# The wheel is the test bed's cut of PyPI's 2.14.1 (../pypi/wheel.sh: fetched once, libc10_cuda.so, libc10.so,
# torch/include and version.py kept). Needs python3 with pip, objdump, gdb, g++ (C++20).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "layouts-2.14: $*" >&2; }
die() { log "error: $*"; exit 1; }
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"
[ $# -eq 0 ] || die "usage: layouts-2.14.sh"
tables=$(cd "$here/../../../src/symbols/layouts" && pwd)

tb_need objdump nm gdb g++ python3
wheel=$("$here/../pypi/wheel.sh" 2.14.1) || die "no torch 2.14.1 wheel"
log "wheel: $(cat "$wheel/VERSION")"
cuda13=$(tb_cuda_home)
case $(tb_cuda_tag "$cuda13") in
cuda13.*) ;;
*) die "need CUDA 13 headers for the cuda13 tables (tb_cuda_home gave $cuda13)" ;;
esac
cuda12=$("$here/../cuda/fetch-headers.sh") || die "no CUDA 12 headers"

work=$(mktemp -d "${TMPDIR:-/tmp}/memprof-layouts214.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Our own translation unit: it only makes the header types complete in the DWARF.
cat >"$work/types.cpp" <<'EOF'
#include <c10/core/AllocatorConfig.h>
#include <c10/core/RingBuffer.h>
#include <c10/cuda/CUDAAllocatorConfig.h>
#include <c10/cuda/CUDACachingAllocator.h>
c10::CachingDeviceAllocator::DeviceStats memprof_stats;
c10::RingBuffer<c10::CachingDeviceAllocator::TraceEntry> memprof_ring;
cudaDeviceProp memprof_prop;
size_t memprof_touch(c10::CachingDeviceAllocator::TraceEntry& t) {
  return t.size_ + c10::cuda::CUDACachingAllocator::CUDAAllocatorConfig::pinned_num_register_threads() +
      c10::CachingAllocator::AcceleratorAllocatorConfig::max_split_size();
}
EOF
for v in cuda13 cuda13-oldabi cuda12 cuda12-oldabi; do
	home=$cuda13
	[ "${v#cuda12}" = "$v" ] || home=$cuda12
	abi=1
	[ "${v%-oldabi}" = "$v" ] || abi=0
	g++ -std=c++20 -g -O0 -D_GLIBCXX_USE_CXX11_ABI=$abi -I"$wheel/include" -I"$home/include" \
		-c -o "$work/$v.o" "$work/types.cpp" 2>"$work/$v.log" || {
		cat "$work/$v.log" >&2
		die "compiling against the 2.14.1 headers failed ($v)"
	}
	"$here/layouts.sh" "$work/$v.o" >"$work/$v.dwarf"
done
python3 "$here/wheel-layout.py" "$wheel/lib/libc10_cuda.so" >"$work/code.txt"
# AcceleratorAllocatorConfig::instance()'s static and its guard, as the release's .symtab has them ("ADDR SIZE b NAME").
nm -S --defined-only "$wheel/lib/libc10.so" |
	grep 'AcceleratorAllocatorConfig8instanceEvE8instance$' >"$work/symtab.txt" || true

python3 - "$work" "$tables" <<'EOF'
import os, sys
work, tables = sys.argv[1], sys.argv[2]

def pairs(path):
    out = {}
    for line in open(path):
        parts = line.split()
        if len(parts) == 3 and parts[1] == "size":
            out[parts[0] + ".sizeof"] = int(parts[2])
        elif len(parts) == 2 and "." in parts[0] and not parts[0].startswith("#"):
            out[parts[0]] = None if parts[1] == "-" else int(parts[1], 0)
    return out

code = pairs(os.path.join(work, "code.txt"))
# The release's AcceleratorAllocatorConfig object (memprof finds it by this .symtab name): a local .bss/.data
# object whose st_size is the struct's size, with its guard variable.
syms = {}
for line in open(os.path.join(work, "symtab.txt")):
    addr, size, kind, name = line.split()
    syms[name] = (int(size, 16), kind)
obj = syms.get("_ZZN3c1016CachingAllocator26AcceleratorAllocatorConfig8instanceEvE8instance")
guard = syms.get("_ZGVZN3c1016CachingAllocator26AcceleratorAllocatorConfig8instanceEvE8instance")
if obj is None or guard is None or obj[1] not in "bd":
    sys.exit("layouts-2.14: the release's libc10.so .symtab lacks AcceleratorAllocatorConfig::instance()'s "
             "object or guard: %r" % syms)
prop_at = code.pop("DeviceCachingAllocator.device_prop")
prop13 = code.pop("cudaDeviceProp.sizeof")
header_structs = ("DeviceStats", "TraceEntry", "RingBuffer", "CUDAAllocatorConfig", "AcceleratorAllocatorConfig")
ndiff = nchecked = 0
for v in ("cuda13", "cuda13-oldabi", "cuda12", "cuda12-oldabi"):
    dwarf = pairs(os.path.join(work, v + ".dwarf"))
    prop = dwarf["cudaDeviceProp.sizeof"]
    if v == "cuda13" and prop != prop13:
        sys.exit("layouts-2.14: the release's cudaDeviceProp is %d bytes, CUDA 13 headers say %d" % (prop13, prop))
    if v == "cuda13" and dwarf.get("AcceleratorAllocatorConfig.sizeof") != obj[0]:
        sys.exit("layouts-2.14: the release's AcceleratorAllocatorConfig object is %d bytes, its headers say %s"
                 % (obj[0], dwarf.get("AcceleratorAllocatorConfig.sizeof")))
    nchecked += v == "cuda13"
    want = {}
    for k, off in code.items():
        if k.startswith("DeviceCachingAllocator.") and off >= prop_at + prop13:
            off += prop - prop13
        want[k] = off
    name = "torch-2.14-%s.layout" % v
    path = os.path.join(tables, name)
    table, keys = pairs(path), {}
    for line in open(path):
        p = line.split()
        if len(p) == 3 and p[0] == "key":
            keys[p[1]] = p[2]
    want_keys = {"version": "2.14", "cxx11_abi": "0" if v.endswith("oldabi") else "1", "cuda_major": v[4:6]}
    for k, val in want_keys.items():
        if keys.get(k) != val:
            print("%s: key %s is %s, measured %s" % (name, k, keys.get(k), val))
            ndiff += 1
    for k in table:
        s = k.split(".")[0]
        if s in header_structs:
            want[k] = dwarf.get(k)  # absent from 2.14.1's DWARF: the table must say "-"
    unchecked = []
    for k in sorted(table):
        if k not in want:
            unchecked.append(k)
            continue
        nchecked += 1
        if table[k] != want[k]:
            print("%s: %s is %s, measured %s" % (name, k, "-" if table[k] is None else table[k],
                                                   "-" if want[k] is None else want[k]))
            ndiff += 1
    for k in sorted(set(want) - set(table)):
        print("%s: %s missing, measured %s" % (name, k, want[k]))
        ndiff += 1
    if unchecked:
        print("%s: unchecked here: %s" % (name, " ".join(unchecked)))
print("layouts-2.14: %d fields checked in 4 tables, %d differ" % (nchecked, ndiff))
sys.exit(1 if ndiff else 0)
EOF
