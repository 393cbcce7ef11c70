#!/usr/bin/env bash
# layouts.sh VARIANT|LIBDIR - print sizes and member offsets of the allocator structs from a DWARF build (gdb).
#
# Output lines: "<Type> size <n>" then "<Type>.<member> <offset>" (top-level members, bytes), for Block,
# DeviceStats, TraceEntry, BlockPool, PrivatePool, ExpandableSegment, DeviceCachingAllocator.
# Used to verify the layout mutants (see README.md in this directory for the recorded values).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -eq 1 ] || { echo "usage: layouts.sh VARIANT|LIBDIR" >&2; exit 2; }
if [ -d "$1" ]; then
	libdir=$1
else
	libdir=$("$here/build.sh" "$1")/lib
fi

gdb -nx -batch -ex 'python
import gdb
native = "c10::cuda::CUDACachingAllocator::Native::"
anon = native + "(anonymous namespace)::"
types = [
    ("Block", anon + "Block"),
    ("DeviceStats", "c10::CachingDeviceAllocator::DeviceStats"),
    ("TraceEntry", "c10::cuda::CUDACachingAllocator::TraceEntry"),
    ("BlockPool", anon + "BlockPool"),
    ("PrivatePool", anon + "PrivatePool"),
    ("ExpandableSegment", anon + "ExpandableSegment"),
    ("DeviceCachingAllocator", native + "DeviceCachingAllocator"),
]
for short, name in types:
    try:
        t = gdb.lookup_type(name).strip_typedefs()
    except gdb.error as e:
        print("%s missing (%s)" % (short, e))
        continue
    print("%s size %d" % (short, t.sizeof))
    for f in t.fields():
        if f.is_base_class or not hasattr(f, "bitpos") or f.name is None:
            continue
        print("%s.%s %d" % (short, f.name, f.bitpos // 8))
' "$libdir/libc10_cuda.so"
