#!/usr/bin/env python3
"""mutate.py MUTANT TREE - edit an extracted PyTorch 2.6 c10/ copy so its allocator structs take newer layouts.

Mutants (each edit must match exactly once, or the script fails):
  2.14-stats        DeviceStats as in 2.14.1 (reserved_bytes_by_private_pools after reserved_bytes,
                    num_oom_rejections before max_split_size; 1016 B) and TraceEntry as in 2.14.1
                    (mempool_ before time_, compile_context_ and user_metadata_ strings after it; 136 B).
  block-regcounter  Block gains newer releases' `int32_t registration_counter` before `size` (168 B).
The 2.6 allocator code itself is unchanged: the new members keep their default values.
"""
import sys
from pathlib import Path


def edit(path, old, new):
    text = path.read_text()
    n = text.count(old)
    if n != 1:
        sys.exit(f"mutate.py: {path}: expected 1 match, found {n}: {old!r}")
    path.write_text(text.replace(old, new))
    print(f"mutate.py: edited {path.name}", file=sys.stderr)


def stats_2_14(tree):
    hdr = tree / "c10/core/CachingDeviceAllocator.h"
    edit(hdr, "#include <c10/util/irange.h>\n",
         "#include <c10/util/irange.h>\n#include <c10/util/flat_hash_map.h>\n\n#include <utility>\n")
    # 2.14.1: ska::flat_hash_map<MempoolId_t, StatArray, MempoolIdHash>; MempoolId_t lives in c10/cuda in 2.6,
    # so the key type and an equivalent hash are spelled out here (same size: an empty hasher, 32-byte table).
    edit(hdr, "struct DeviceStats {\n",
         "struct MemprofMutantMempoolIdHash {\n"
         "  std::size_t operator()(\n"
         "      const std::pair<unsigned long long, unsigned long long>& id) const noexcept {\n"
         "    return id.first != 0 ? id.first : id.second;\n"
         "  }\n"
         "};\n\n"
         "struct DeviceStats {\n")
    edit(hdr, "  StatArray reserved_bytes;\n",
         "  StatArray reserved_bytes;\n"
         "  // memprof mutant (2.14.1 shape): SUM: bytes reserved by each private pool\n"
         "  ska::flat_hash_map<\n"
         "      std::pair<unsigned long long, unsigned long long>,\n"
         "      StatArray,\n"
         "      MemprofMutantMempoolIdHash>\n"
         "      reserved_bytes_by_private_pools;\n")
    edit(hdr, "  int64_t max_split_size = 0;\n",
         "  // memprof mutant (2.14.1 shape): COUNT: allocations rejected by a memory fraction\n"
         "  int64_t num_oom_rejections = 0;\n\n"
         "  int64_t max_split_size = 0;\n")

    ahdr = tree / "c10/cuda/CUDACachingAllocator.h"
    edit(ahdr, "  size_t size_;\n  trace_time_ time_{};\n};\n",
         "  size_t size_;\n"
         "  MempoolId_t mempool_{0, 0}; // memprof mutant (2.14.1 shape)\n"
         "  trace_time_ time_{};\n"
         "  std::string compile_context_{\"N/A\"}; // memprof mutant (2.14.1 shape)\n"
         "  std::string user_metadata_; // memprof mutant (2.14.1 shape)\n"
         "};\n")


def block_regcounter(tree):
    cpp = tree / "c10/cuda/CUDACachingAllocator.cpp"
    edit(cpp, "  stream_set stream_uses; // streams on which the block was used\n  size_t size; // block size in bytes\n",
         "  stream_set stream_uses; // streams on which the block was used\n"
         "  int32_t registration_counter{-1}; // memprof mutant (newer releases' shape)\n"
         "  size_t size; // block size in bytes\n")


MUTANTS = {"2.14-stats": stats_2_14, "block-regcounter": block_regcounter}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in MUTANTS:
        sys.exit("usage: mutate.py {%s} TREE" % "|".join(MUTANTS))
    MUTANTS[sys.argv[1]](Path(sys.argv[2]))


if __name__ == "__main__":
    main()
