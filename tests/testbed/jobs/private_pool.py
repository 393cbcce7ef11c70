"""A private memory pool (torch.cuda.MemPool): allocations made under use_mem_pool() come from the pool's own
segments, apart from the default pools, as CUDA graphs' memory does.

usage: private_pool.py
"""
import torch

import memprof_testbed


def main():
    outside = torch.empty(4 << 20, dtype=torch.uint8, device="cuda")
    pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(pool):
        inside = [torch.empty(n << 10, dtype=torch.uint8, device="cuda") for n in (4, 700, 3000, 9000)]
        small = torch.empty(100, device="cuda")
    del inside[1]
    after = torch.empty(1 << 20, dtype=torch.uint8, device="cuda")
    memprof_testbed.register("pooled", inside + [small])
    memprof_testbed.register("outside", [outside, after])
    memprof_testbed.checkpoint()
    del pool


if __name__ == "__main__":
    main()
