/* mp_sim.h - a model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp) for one device:
   the same pools, ordered free sets, splitting, merging, rounding, cudaMalloc sizes, retries, expandable segments,
   private pools, cross-stream events and statistics, step by step, so that a sequence of requests replayed
   through it ends in the state, and runs out of memory at the request, that the real allocator would.

   It is proven against the real thing: tests/allocsim/ replays random op sequences through PyTorch's own
   libc10_cuda.so on the test bed's fake device and through this model, and the two must agree on every
   segment, every block, every statistic and every OOM (tests/allocsim/OPS.md). Where releases differ, the
   rules follow the release asked for (sim_rules.c).

   The device is modelled as the fake device behaves: a capacity that cudaMalloc and cuMemCreate charge, and
   address ranges handed out first fit (which only matters to break ties between free blocks of equal size).
   Events complete when a synchronisation covers them (mp_sim_sync*) or when the caller says so
   (mp_sim_complete), which is how a recorded trace replays them. */
#ifndef MEMPROF_SIM_H
#define MEMPROF_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"

#define MP_SIM_MIB ((int64_t)1 << 20)
#define MP_SIM_NONE INT64_MAX /* max_split_size when not set (the allocator's SIZE_MAX) */
#define MP_SIM_INTERVALS 16 /* roundup_power2_divisions: one per power of two from 1 MiB to 32 GiB and up */
#define MP_SIM_MAX_SIZE ((int64_t)1 << 50) /* no device has more: a larger request is a damaged input */

/* A release of PyTorch, for its rules: 2.0 to 2.14 are known (mp_sim_release_known). */
typedef struct mp_sim_release {
	int major, minor;
} mp_sim_release;
bool mp_sim_release_known(mp_sim_release r);

/* The allocator's settings: what PYTORCH_CUDA_ALLOC_CONF sets, defaults where it does not. */
typedef struct mp_sim_conf {
	int64_t max_split_size;         /* bytes; MP_SIM_NONE */
	int64_t max_non_split_rounding; /* bytes; 20 MiB by default (large_segment_size from 2.11) */
	int64_t large_segment_size;     /* bytes (2.11's large_segment_size_mb): the 1-10 MiB segment, the large
					   pool's expandable page; 20 MiB (kLargeBuffer) by default */
	double fraction;                /* per_process_memory_fraction (2.10): the cap, −1 none */
	bool throw_on_cudamalloc_oom;   /* 2.12: a request over the fraction's cap runs out before any retry */
	int64_t divisions[MP_SIM_INTERVALS];
	bool expandable;
	double gc_threshold;            /* 0: off */
	bool release_lock_on_cudamalloc; /* no effect on decisions; kept to write the settings back */
} mp_sim_conf;

/* The defaults. */
void mp_sim_conf_default(mp_sim_conf *c);
/* Parse TEXT, PYTORCH_CUDA_ALLOC_CONF's syntax ("expandable_segments:True,max_split_size_mb:128",
   "roundup_power2_divisions:[256:1,512:2,>:8]"), on top of C, as release R's parser reads it: its keys, checks
   (max_split_size_mb above 20 MiB, or from 2.10 at least 20, from 2.11 at least large_segment_size_mb) and fill
   rules. MP_E_USAGE with the allocator's complaint in DIAG; MP_E_UNSUPPORTED for backend:cudaMallocAsync (not
   this allocator). Host-memory keys are accepted where the release has them, and ignored. */
mp_err mp_sim_conf_parse(mp_sim_conf *c, const char *text, mp_sim_release r, mp_diag *diag) MP_WUR;
/* C as PYTORCH_CUDA_ALLOC_CONF text, only what differs from the defaults ("" for none), in BUF of N bytes. */
const char *mp_sim_conf_format(const mp_sim_conf *c, char *buf, size_t n);

/* The size the allocator makes of a request of SIZE bytes under C (round_size: 512-byte steps, or the next of
   roundup_power2_divisions' steps). */
int64_t mp_sim_round_size(const mp_sim_conf *c, mp_sim_release r, int64_t size);
/* What cudaMalloc is asked for a request of ROUNDED bytes (get_allocation_size): 2 MiB for the small pool,
   large_segment_size (20 MiB) up to 10 MiB, else ROUNDED rounded up to 2 MiB. */
int64_t mp_sim_allocation_size(const mp_sim_conf *c, int64_t rounded);

typedef struct mp_sim mp_sim;
typedef struct mp_sim_block mp_sim_block;

/* A model of one device's allocator under CONF and release R's rules. TOTAL is the device's memory (what
   cudaGetDeviceProperties says: expandable segments reserve 9/8 of it as address space), OUTSIDE the bytes of it
   in use by others (the CUDA context, other libraries and processes): cudaMalloc fails beyond TOTAL − OUTSIDE.
   NULL when out of memory. */
mp_sim *mp_sim_new(const mp_sim_conf *conf, mp_sim_release r, int64_t total, int64_t outside);
void mp_sim_free_all(mp_sim *s);

/* Whether the model had to stop (out of host memory, or a device address range exhausted, which the real
   allocator raises as a driver error): nothing it says afterwards holds. */
bool mp_sim_failed(const mp_sim *s);

/* torch.cuda.set_per_process_memory_fraction(F). */
void mp_sim_set_fraction(mp_sim *s, double f);
/* The cap a fraction sets, in bytes, when it is known that way (an OOM message's "allowed"). */
void mp_sim_set_allowed(mp_sim *s, int64_t bytes);
/* Change the settings, as torch.cuda.memory._set_allocator_settings does (the state stays). */
void mp_sim_set_conf(mp_sim *s, const mp_sim_conf *conf);
const mp_sim_conf *mp_sim_conf_of(const mp_sim *s);

/* Request SIZE bytes on STREAM (a cudaStream_t value; 0 the default stream). MP_OK with *OUT the block;
   MP_E_NOMEM when the allocator would raise OutOfMemoryError (its retry included; a size beyond
   MP_SIM_MAX_SIZE or below 0 runs out at once); MP_E_UNSUPPORTED when the
   model would have to do something the real allocator refuses (a device address range exhausted). */
mp_err mp_sim_malloc(mp_sim *s, int64_t size, uint64_t stream, mp_sim_block **out);
/* Free B (an allocated block): it waits for events on the streams recorded with mp_sim_record_stream, else
   goes back to its pool at once. */
void mp_sim_free(mp_sim *s, mp_sim_block *b);
/* B was used on STREAM (recordStream). */
void mp_sim_record_stream(mp_sim *s, mp_sim_block *b, uint64_t stream);
/* Name B by TAG (not 0) while it waits for events after its free, so that its completion can be told later
   (B itself may be gone by then: the allocator's own synchronisation completes it and merges it away). */
void mp_sim_tag(mp_sim *s, mp_sim_block *b, int64_t tag);
/* The block freed under TAG has no pending events left and the allocator has seen it (a trace's free_completed);
   nothing when the allocator completed it already. */
void mp_sim_complete(mp_sim *s, int64_t tag);
/* cudaDeviceSynchronize / cudaStreamSynchronize: the events recorded so far (on STREAM) complete; the allocator
   notices at its next look at them. */
void mp_sim_sync(mp_sim *s);
void mp_sim_sync_stream(mp_sim *s, uint64_t stream);
/* torch.cuda.empty_cache(). */
void mp_sim_empty_cache(mp_sim *s);
/* Allocations on STREAM go to private pool ID (beginAllocateToPool / endAllocateToPool), and the pool's
   release (releasePool: a MemPool destroyed, a graph reset). */
void mp_sim_pool_begin(mp_sim *s, int64_t id0, int64_t id1, uint64_t stream);
void mp_sim_pool_end(mp_sim *s, int64_t id0, int64_t id1);
void mp_sim_pool_release(mp_sim *s, int64_t id0, int64_t id1);

/* What a block says of itself. */
int64_t mp_sim_block_addr(const mp_sim_block *b);
int64_t mp_sim_block_size(const mp_sim_block *b);
uint64_t mp_sim_block_stream(const mp_sim_block *b);

/* The allocator's DeviceStats (aggregate), as memory_stats() reports them. */
typedef struct mp_sim_stat {
	int64_t current, peak, allocated, freed;
} mp_sim_stat;
typedef struct mp_sim_stats {
	mp_sim_stat allocation, segment, active, inactive_split;
	mp_sim_stat allocated_bytes, reserved_bytes, active_bytes, inactive_split_bytes, requested_bytes;
	int64_t num_alloc_retries, num_ooms, num_sync_all_streams, num_device_alloc, num_device_free;
	mp_sim_stat oversize_allocations, oversize_segments;
} mp_sim_stats;
const mp_sim_stats *mp_sim_stats_of(const mp_sim *s);
/* Free device memory as cudaMemGetInfo reports it. */
int64_t mp_sim_device_free(const mp_sim *s);

/* The state as snapshot() reports it: segments by address (an expandable segment as one segment per mapped
   run), each with its blocks in address order. */
typedef struct mp_sim_seg_info {
	int64_t addr, total_size;
	uint64_t stream;
	bool small, expandable;
	int64_t pool_id[2]; /* (0, 0): the default pools */
} mp_sim_seg_info;
enum mp_sim_block_state { MP_SIM_ACTIVE_ALLOCATED, MP_SIM_ACTIVE_PENDING_FREE, MP_SIM_INACTIVE };
typedef struct mp_sim_block_info {
	int64_t addr, size, requested;
	enum mp_sim_block_state state;
	const mp_sim_block *block;
} mp_sim_block_info;
/* Call SEG for each segment and BLOCK for each of its blocks, in snapshot()'s order. MP_E_NOMEM. */
typedef void (*mp_sim_seg_fn)(void *ctx, const mp_sim_seg_info *seg);
typedef void (*mp_sim_block_fn)(void *ctx, const mp_sim_block_info *blk);
mp_err mp_sim_walk(const mp_sim *s, mp_sim_seg_fn seg, mp_sim_block_fn block, void *ctx) MP_WUR;

/* Where the model's device memory lies: expandable segments' reservations from MP_SIM_RESERVE_BASE (up to
   64 TiB), cudaMalloc'ed ranges from MP_SIM_MALLOC_BASE above them, as on the fake device (which only matters to
   the order of segments in a snapshot and of equal free blocks). */
#define MP_SIM_RESERVE_BASE ((int64_t)1 << 44)
#define MP_SIM_MALLOC_BASE ((int64_t)1 << 47)

#endif
