/* mp_walk.h - the CUDA caching allocator's state read out of a target's memory: per device its
   segments (rebuilt from head blocks as snapshot() does), blocks and their states, statistics,
   and the trace ring in time order. Plain data: the snapshot model is built from it above. */
#ifndef MEMPROF_WALK_H
#define MEMPROF_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_c10.h"
#include "mp_err.h"
#include "mp_layout.h"
#include "mp_memstats.h"
#include "mp_target.h"

/* Block states, as torch/csrc/cuda/Module.cpp names them. */
enum mp_walk_state {
	MP_WS_ACTIVE_ALLOCATED,
	MP_WS_ACTIVE_PENDING_FREE,
	MP_WS_INACTIVE,
};

typedef struct mp_walk_block {
	uint64_t ptr;
	uint64_t size;
	uint64_t requested_size;
	uint64_t context; /* GatheredContext* of the allocation (0: none) */
	enum mp_walk_state state;
} mp_walk_block;

typedef struct mp_walk_segment {
	int device;
	uint64_t address;
	uint64_t stream;
	uint64_t total_size, allocated_size, active_size, requested_size;
	uint64_t pool_id[2]; /* (0, 0) outside private pools */
	uint64_t context;    /* the head's context_when_segment_allocated */
	bool is_large;
	bool is_expandable;
	size_t first_block, nblocks; /* into mp_walk.blocks */
} mp_walk_segment;

/* Trace actions (TraceEntry::Action); mp_walk_action_name gives the snapshot's string. */
enum { MP_WALK_ACTION_MAX = 9 };

typedef struct mp_walk_trace {
	int action;
	int device;
	uint64_t addr; /* device_free for oom entries */
	uint64_t size;
	uint64_t stream;
	uint64_t tsc;    /* raw time stamp as the ring holds it */
	int64_t time_us; /* converted as snapshot() converts it (see mp_walk.time_exact) */
	uint64_t context;
	uint64_t mempool[2];
	char *compile_context; /* NULL when the layout has none */
	char *user_metadata;
} mp_walk_trace;

/* What a record_function call left in the native allocator's annotation ring while history was
   recorded (2.5 on): the snapshot's external_annotations. */
typedef struct mp_walk_annotation {
	int device;
	uint64_t tsc;    /* raw time stamp */
	int64_t time_us; /* converted as the trace's */
	size_t nmeta;
	char **meta; /* NMETA key, value pairs (2 * NMETA strings) in the map's iteration order */
} mp_walk_annotation;

typedef struct mp_walk_device {
	int index;
	uint64_t address; /* of its DeviceCachingAllocator */
	mp_memstats stats;
	char *stat_keys;  /* the text of the per-private-pool keys of STATS (2.14), owned; others are static */
	size_t first_trace, ntrace; /* into mp_walk.trace, oldest first */
	bool record_history;
	uint64_t ring_max_entries;
} mp_walk_device;

/* The allocator's settings, for the snapshot's allocator_settings: 2.6 keeps them all in
   CUDAAllocatorConfig, 2.14 most in libc10's AcceleratorAllocatorConfig. Sizes PyTorch keeps as
   size_t are reported as int64, so "no limit" (SIZE_MAX) reads -1, as snapshot() has it. */
typedef struct mp_walk_settings {
	bool present;
	char *last_settings; /* PYTORCH_CUDA_ALLOC_CONF as last parsed */
	int64_t max_split_size;
	double garbage_collection_threshold;
	bool expandable_segments;
	int64_t pinned_num_register_threads;
	bool release_lock_on_cudamalloc;
	bool pinned_use_cuda_host_register;
	bool has_graph_capture_record_stream_reuse; /* the version has it (2.14) */
	bool graph_capture_record_stream_reuse;
	bool has_pinned_limits; /* the version has max_round_threshold and max_cached_size (2.14) */
	int64_t max_round_threshold; /* pinned_max_round_threshold_mb in bytes */
	int64_t max_cached_size;     /* pinned_max_cached_size_mb in bytes */
	int64_t roundup_power2_divisions[16];
} mp_walk_settings;

typedef struct mp_walk {
	mp_c10 c10;       /* the library walked */
	mp_layout layout; /* the layout that passed the self-check */
	uint64_t allocator; /* the NativeCachingAllocator object */
	mp_walk_device *devices;
	size_t ndevices;
	mp_walk_segment *segments; /* device order, then address */
	size_t nsegments;
	mp_walk_block *blocks;
	size_t nblocks;
	mp_walk_trace *trace;
	size_t ntrace;
	mp_walk_annotation *annotations; /* oldest first */
	size_t nannotations;
	mp_walk_settings settings;
	bool time_exact; /* times converted on the process's own TSC timeline (same boot) */
	bool partial;    /* something was damaged: see the warnings */
} mp_walk;

/* How many blocks a walk reads at most when its options name no cap (a damaged target's lists end there). */
#define MP_WALK_MAX_BLOCKS_DEFAULT_MI 64 /* in Mi (2^20) blocks */
#define MP_WALK_MAX_BLOCKS_DEFAULT ((size_t)MP_WALK_MAX_BLOCKS_DEFAULT_MI << 20)

typedef struct mp_walk_opts {
	const mp_layout *layout;  /* --layout: use only this one */
	size_t max_blocks;        /* cap on blocks in all (0: MP_WALK_MAX_BLOCKS_DEFAULT) */
	bool no_trace;            /* skip the trace ring */
	/* Called now and then during long walks with blocks read so far. */
	void (*progress)(void *ctx, size_t blocks);
	void *progress_ctx;
	/* Asked every few thousand blocks (with PROGRESS_CTX); true stops the walk with
	   MP_E_INTERRUPTED (a debugger's Ctrl-C). */
	bool (*interrupted)(void *ctx);
} mp_walk_opts;

/* Walk the allocator of T. Finds libc10_cuda (C10: NULL = mp_c10_find), picks the first layout
   that passes the self-check on memory, and reads everything. Damage past that point gives a
   partial result with damage warnings in DIAG (W->partial set); MP_E_NOTFOUND when there is no
   allocator to walk (not a CUDA PyTorch process, another backend, never initialised). On a running
   process the device statistics, trace rings and mutexes are guarded (mp_target_guard) before the
   devices are walked: whoever reads it checks mp_target_moved once done and reads again. */
mp_err mp_walk_run(mp_target *t, const mp_c10 *c10, const mp_walk_opts *opts, mp_walk **out,
		   mp_diag *diag) MP_WUR;

void mp_walk_free(mp_walk *w);

/* The snapshot's string for ACTION ("alloc", ..., "oom", "annotate"), NULL when unknown. */
const char *mp_walk_action_name(int action);

/* The snapshot's string for STATE. */
const char *mp_walk_state_name(enum mp_walk_state state);

#endif
