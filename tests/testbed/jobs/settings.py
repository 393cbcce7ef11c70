"""Allocator settings other than the defaults, and private pools come and gone: a PYTORCH_CUDA_ALLOC_CONF string as a
user writes it, given to torch.cuda.memory._set_allocator_settings (the same parser; the scenario list cannot carry a
comma in an environment value), and two torch.cuda.MemPools, the first deleted before the checkpoint (2.14's
memory_stats() keeps reserved_bytes_by_private_pools keys for every pool ever used).

usage: settings.py
"""
import torch

import memprof_testbed

# Options that 2.6 and 2.14 both know; 2.14 adds the pinned host allocator's limits.
CONF = ("max_split_size_mb:64,garbage_collection_threshold:0.6,roundup_power2_divisions:[256:1,512:2,1024:4,>:8],"
        "release_lock_on_cudamalloc:True,pinned_use_cuda_host_register:True,pinned_num_register_threads:4")
CONF_2_14 = ",pinned_max_round_threshold_mb:16,pinned_max_cached_size_mb:64"


def set_allocator_settings(conf):
    # 2.14 deprecates torch.cuda.memory._set_allocator_settings for this, which 2.6 lacks.
    setter = getattr(torch._C, "_accelerator_setAllocatorSettings", None)
    (setter or torch.cuda.memory._set_allocator_settings)(conf)


def main():
    set_allocator_settings(CONF + (CONF_2_14 if torch.__version__ >= "2.14" else ""))
    outside = [torch.empty(n << 20, dtype=torch.uint8, device="cuda") for n in (3, 70)]
    gone = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(gone):
        scratch = torch.empty(6 << 20, dtype=torch.uint8, device="cuda")
    del scratch, gone
    torch.cuda.empty_cache()
    kept = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(kept):
        inside = [torch.empty(n << 10, dtype=torch.uint8, device="cuda") for n in (8, 3000)]
    memprof_testbed.register("pooled", inside)
    memprof_testbed.register("outside", outside)
    memprof_testbed.checkpoint()
    del kept


if __name__ == "__main__":
    main()
