/* allocator_image.h - a whole CUDA caching allocator laid out by hand in a byte buffer, as a
   layout table (torch-2.6, torch-2.14-*, either string ABI) places it, and served to the walker
   by the callback target: the walker's unit tests drive mp_walk_run on it without any ELF
   library (the mp_c10 it needs is filled in here, the layout passed as opts->layout).

   What the image holds (allocator-facts §2, §3):
   - the std::atomic<CUDAAllocator*> libc10_cuda exports, pointing to a NativeCachingAllocator
     with a vptr whose typeinfo names MP_NATIVE_ALLOCATOR_RTTI, its clock_converter (1001
     (ns, tsc) pairs of a made-up 3 GHz clock) and its device_allocator vector;
   - per device a DeviceCachingAllocator: DeviceStats that agree with its blocks (allocation,
     segment, active, *_bytes, requested_bytes per StatArray pool), total_allocated_memory equal
     to reserved_bytes, device_id (2.14), the large and small BlockPools (is_small 0/1, owner 0)
     whose `blocks` std::set (an _Rb_tree of Block*) holds the free mapped blocks and `unmapped`
     the unmapped ones, active_blocks (a ska flat_hash_set<Block*>) the allocated and pending
     ones, graph_pools / graph_pools_freeable (ska maps MempoolId_t -> PrivatePool*), 2.14's
     empty reserved_bytes_by_private_pools map, record_history and the alloc_buffer RingBuffer
     whose heap std::vector<TraceEntry> holds the trace, rotated so that slot `next` is the
     oldest entry;
   - Blocks linked prev/next into segments, with device, stream, size, requested_size, pool,
     device address, allocated/mapped, event_count, stream_uses (a ska set) and contexts;
     expandable segments (an ExpandableSegment object, unmapped Blocks between mapped runs);
   - PrivatePools (2.14: with their id) with their own two BlockPools (owner = the pool);
   - CUDAAllocatorConfig behind its instance pointer and, for 2.14, AcceleratorAllocatorConfig
     and its guard, for allocator_settings.

   Everything placed is recorded (addresses of Blocks, tree nodes, tables, ...) so that a test
   can damage one thing and see what the walker makes of it; ai_hole makes the pages of a range
   unreadable (the callback returns only the bytes before them), and an image built with
   `isolate` gives each object pages of its own, so that a hole takes out that object only.
   Any failure of the fixture itself aborts. */
#ifndef MEMPROF_TEST_ALLOCATOR_IMAGE_H
#define MEMPROF_TEST_ALLOCATOR_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_c10.h"
#include "mp_layout.h"
#include "mp_target.h"
#include "mp_walk.h"

/* ---- the model: what the allocator holds, before it is laid out */

enum ai_state {
	AI_FREE,          /* free and mapped: in its pool's `blocks` set */
	AI_ALLOC,         /* allocated: in active_blocks */
	AI_PENDING_EVENT, /* freed, waiting for an event (event_count 1): in active_blocks */
	AI_PENDING_USE,   /* freed, used on another stream (stream_uses not empty): in active_blocks */
	AI_UNMAPPED,      /* an expandable segment's unmapped piece: in its pool's `unmapped` set */
};

struct ai_block {
	uint64_t size;
	uint64_t requested; /* requested_size */
	enum ai_state state;
	uint64_t context;   /* context_when_allocated (a GatheredContext*; never followed) */
	/* Filled by ai_build: */
	uint64_t addr;      /* the Block object */
	uint64_t ptr;       /* its device address */
	uint64_t node;      /* its _Rb_tree node (AI_FREE, AI_UNMAPPED), else 0 */
};

enum { AI_OWN_POOLS = -1 }; /* ai_segment.private_pool: the device's large/small pools */

struct ai_segment {
	int private_pool; /* AI_OWN_POOLS, or an index into ai_device.pools */
	bool small;       /* in the small BlockPool (is_small 1) */
	bool expandable;  /* one ExpandableSegment: each mapped run is a segment of the snapshot */
	uint64_t stream;
	uint64_t context; /* the head's context_when_segment_allocated */
	struct ai_block *blocks;
	size_t nblocks, cap;
	/* Filled by ai_build: */
	uint64_t ptr;     /* device address of the first block */
	uint64_t es;      /* the ExpandableSegment object, or 0 */
};

struct ai_private_pool {
	uint64_t id[2];   /* MempoolId_t */
	bool freeable;    /* also in graph_pools_freeable */
	/* Filled by ai_build: */
	uint64_t addr;    /* the PrivatePool object */
};

struct ai_trace {
	int action;
	uint64_t addr, size, stream, time, context;
	uint64_t mempool[2];                         /* 2.14 */
	const char *compile_context, *user_metadata; /* 2.14; NULL: "" */
};

enum { AI_MAX_DEVICES = 4, AI_MAX_SEGMENTS = 16, AI_MAX_POOLS = 4, AI_MAX_TRACE = 32 };

struct ai_device {
	struct ai_segment segments[AI_MAX_SEGMENTS];
	size_t nsegments;
	struct ai_private_pool pools[AI_MAX_POOLS];
	size_t npools;
	struct ai_trace trace[AI_MAX_TRACE]; /* oldest first */
	size_t ntrace;
	bool record_history; /* false with no trace: alloc_trace is NULL (never recorded) */
	uint64_t ring_max;   /* alloc_trace_max_entries_ (0: 64) */
	size_t ring_next;    /* alloc_trace_next: the slot of the oldest entry (< ntrace) */
	int64_t num_ooms, num_alloc_retries;
	/* Filled by ai_build: */
	uint64_t dca;                 /* the DeviceCachingAllocator */
	uint64_t large, small;        /* its two BlockPools */
	uint64_t active_entries;      /* active_blocks' entry array */
	uint64_t graph_pools_entries; /* graph_pools' entry array, 0 when empty */
	uint64_t ring_vector;         /* the RingBuffer's std::vector object, 0 when NULL */
	uint64_t ring_begin;          /* its first TraceEntry */
};

struct ai_model {
	struct ai_device devices[AI_MAX_DEVICES];
	size_t ndevices;
	const char *settings; /* PYTORCH_CUDA_ALLOC_CONF as last parsed */
};

/* A model with no device; a device, a private pool (its index), a segment, a block. Adding
   never fails (the fixture aborts). Block pointers stay valid until the next ai_block_add on
   the same segment. */
void ai_model_init(struct ai_model *m);
void ai_model_free(struct ai_model *m);
struct ai_device *ai_device_add(struct ai_model *m);
int ai_pool_add(struct ai_device *d, uint64_t id0, uint64_t id1, bool freeable);
struct ai_segment *ai_segment_add(struct ai_device *d, int private_pool, bool small, uint64_t stream);
struct ai_block *ai_block_add(struct ai_segment *s, uint64_t size, uint64_t requested, enum ai_state state);
struct ai_trace *ai_trace_add(struct ai_device *d, int action, uint64_t addr, uint64_t size, uint64_t stream);

/* The model most tests start from (the normal walk checks all of it). Device 0: a 20 MiB large
   segment on stream 0x5100 [alloc 2 MiB, free 8 MiB, pending (event) 4 MiB, alloc 6 MiB]; a
   2 MiB small segment on stream 0 [alloc 512 B, pending (stream use) 1 KiB, free 1.5 MiB - 1.5
   KiB, alloc 512 KiB]; a 2 MiB segment of private pool (1, 7) (also freeable) [alloc 1 MiB,
   free 1 MiB]; an expandable large segment [alloc 2 MiB, free 2 MiB, unmapped 4 MiB, alloc 2
   MiB, unmapped 10 MiB] (two mapped runs: two segments); 8 trace entries in a ring of 8 whose
   oldest is in slot 3. Device 1: one small segment [free 2 MiB], history never recorded. */
void ai_model_standard(struct ai_model *m);

/* ---- the image */

struct ai_hole {
	uint64_t lo, hi;
};

enum { AI_PAGE = 4096 };

struct ai_image {
	const mp_layout *L;
	bool isolate;       /* every ai_alloc on pages of its own */
	unsigned char *mem; /* [base, base + cap) of the target; bytes past `used` unreadable */
	uint64_t base;
	size_t cap, used;
	struct ai_hole holes[16];
	size_t nholes;
	mp_c10 c10;         /* what mp_c10_find would have found */
	/* Filled by ai_build: */
	uint64_t allocator; /* the NativeCachingAllocator */
	uint64_t das;       /* the device_allocator vector's elements */
	uint64_t rtti_name;
	uint64_t cfg, aac;  /* CUDAAllocatorConfig, AcceleratorAllocatorConfig (2.14) */
};

/* An empty image of CAP bytes for layout L (the c10's ABI is L's). */
void ai_image_init(struct ai_image *img, const mp_layout *l, size_t cap);
void ai_image_free(struct ai_image *img);

/* Lay out model M (its ai_build outputs filled), first taking out of M what IMG's release cannot hold (unmapped
   blocks and map/unmap entries before 2.1, segments' contexts in 2.0). */
void ai_build(struct ai_image *img, struct ai_model *m);

/* The read callback over IMG (CTX): bytes up to the first hole or the end of what was built. */
size_t ai_read(void *ctx, uint64_t addr, void *buf, size_t len);

/* A callback target over IMG. */
mp_target *ai_target(struct ai_image *img);

/* Room for SIZE bytes (zeroed, 16-aligned; page-aligned when IMG->isolate) in the image. */
uint64_t ai_alloc(struct ai_image *img, size_t size);

/* Make the pages of [ADDR, ADDR + LEN) unreadable (memory is readable or not by pages). */
void ai_hole(struct ai_image *img, uint64_t addr, uint64_t len);

/* Bytes of the image (the address range must lie inside what was allocated). */
void ai_put(struct ai_image *img, uint64_t addr, const void *v, size_t len);
void ai_put64(struct ai_image *img, uint64_t addr, uint64_t v);
void ai_put32(struct ai_image *img, uint64_t addr, uint32_t v);
void ai_put8(struct ai_image *img, uint64_t addr, uint8_t v);
uint64_t ai_get64(const struct ai_image *img, uint64_t addr);

/* Address of member F (an MP_L_* field) of the object at OBJ. */
uint64_t ai_at(const struct ai_image *img, uint64_t obj, enum mp_layout_field f);

/* Containers (allocator-facts §2). A std::vector at VEC over N elements of ELEM bytes at
   BEGIN; a std::string at AT (the layout's ABI); a std::set at TREE of the N VALUES in that
   order, balanced (node addresses into NODES when not NULL); a ska table at TABLE of N
   entries of ENTRY bytes (their distance byte set here) from ENTRIES, returning the entry array. */
void ai_vector(struct ai_image *img, uint64_t vec, uint64_t begin, size_t n, size_t elem);
void ai_string(struct ai_image *img, uint64_t at, const char *s);
void ai_rbtree(struct ai_image *img, uint64_t tree, const uint64_t *values, size_t n, uint64_t *nodes);
uint64_t ai_flat(struct ai_image *img, uint64_t table, const void *entries, size_t n, size_t entry);

/* rb-tree node and header members (std::_Rb_tree, allocator-facts §2). */
enum { AI_RB_ROOT = 16, AI_RB_LEFTMOST = 24, AI_RB_RIGHTMOST = 32, AI_RB_COUNT = 40 };
enum { AI_RBN_COLOR = 0, AI_RBN_PARENT = 8, AI_RBN_LEFT = 16, AI_RBN_RIGHT = 24, AI_RBN_VALUE = 32 };
/* ska table members. */
enum { AI_FLAT_ENTRIES = 0, AI_FLAT_SLOTS_MINUS_ONE = 8, AI_FLAT_MAX_LOOKUPS = 17, AI_FLAT_LOAD = 20,
       AI_FLAT_COUNT = 24 };

#endif
