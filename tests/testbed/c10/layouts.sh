#!/usr/bin/env bash
# layouts.sh VARIANT|LIBDIR|FILE - print sizes and member offsets of the allocator structs from a DWARF build (gdb).
#
# Output lines: "<Type> size <n>" then "<Type>.<member> <offset>" (top-level members, bytes), for Block,
# DeviceStats, TraceEntry, BlockPool, PrivatePool, ExpandableSegment, DeviceCachingAllocator, then RingBuffer
# (of TraceEntry), CUDAAllocatorConfig, AcceleratorAllocatorConfig (2.14+, libc10), cudaDeviceProp (size
# only) and History (2.0); "<Type> missing (...)" where the DWARF has no such type. Each type is looked up under its 2.6 name, then its 2.14 one (TraceEntry and RingBuffer
# moved; DeviceStats was CUDACachingAllocator's own before 2.5). FILE: any object or library with DWARF (layouts-2.14.sh passes objects compiled against 2.14.1 headers).
# Used to verify the layout mutants (see README.md in this directory for the recorded values).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -eq 1 ] || { echo "usage: layouts.sh VARIANT|LIBDIR|FILE" >&2; exit 2; }
if [ -f "$1" ]; then
	file=$1
elif [ -d "$1" ]; then
	file=$1/libc10_cuda.so
else
	file=$("$here/build.sh" "$1")/lib/libc10_cuda.so
fi

gdb -nx -batch -ex 'python
import gdb
native = "c10::cuda::CUDACachingAllocator::Native::"
anon = native + "(anonymous namespace)::"
cca = "c10::cuda::CUDACachingAllocator::"
te26, te214 = cca + "TraceEntry", "c10::CachingDeviceAllocator::TraceEntry"
types = [
    ("Block", [anon + "Block"]),
    ("DeviceStats", ["c10::CachingDeviceAllocator::DeviceStats", cca + "DeviceStats"]),
    ("TraceEntry", [te26, te214]),
    ("BlockPool", [anon + "BlockPool"]),
    ("PrivatePool", [anon + "PrivatePool"]),
    ("ExpandableSegment", [anon + "ExpandableSegment"]),
    ("DeviceCachingAllocator", [native + "DeviceCachingAllocator"]),
    ("RingBuffer", [anon + "RingBuffer<" + te26 + ">", "c10::RingBuffer<" + te214 + ">"]),
    ("CUDAAllocatorConfig", [cca + "CUDAAllocatorConfig"]),
    ("AcceleratorAllocatorConfig", ["c10::CachingAllocator::AcceleratorAllocatorConfig"]),
    ("cudaDeviceProp", ["cudaDeviceProp"]),
    ("History", [cca + "History"]),
]
for short, names in types:
    t = None
    for name in names:
        try:
            t = gdb.lookup_type(name).strip_typedefs()
            break
        except gdb.error as e:
            err = e
    if t is None:
        print("%s missing (%s)" % (short, err))
        continue
    print("%s size %d" % (short, t.sizeof))
    if short == "cudaDeviceProp":
        continue
    for f in t.fields():
        if f.is_base_class or not hasattr(f, "bitpos") or f.name is None:
            continue
        print("%s.%s %d" % (short, f.name, f.bitpos // 8))
' "$file"
