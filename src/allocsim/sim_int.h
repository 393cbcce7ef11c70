/* sim_int.h - the allocator model's state (private to src/allocsim): blocks, the ordered sets of free blocks,
   pools, private pools, expandable segments, events, the device, and the release's rules. The names follow the
   allocator's own (Block, BlockPool, PrivatePool, ExpandableSegment) so that the model can be read beside it. */
#ifndef MEMPROF_SIM_INT_H
#define MEMPROF_SIM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_i64map.h"
#include "mp_sim.h"
#include "mp_sim_history.h"
#include "mp_snapshot.h"

#define SIM_MIN_BLOCK 512                 /* kMinBlockSize: every size is rounded to at least this */
#define SIM_SMALL_SIZE MP_SIM_MIB         /* kSmallSize: the largest request of the small pool */
#define SIM_SMALL_BUFFER (2 * MP_SIM_MIB) /* kSmallBuffer: a small pool segment, and its expandable page */
#define SIM_LARGE_BUFFER (20 * MP_SIM_MIB) /* kLargeBuffer: a large segment for 1-10 MiB, and its page */
#define SIM_MIN_LARGE_ALLOC (10 * MP_SIM_MIB) /* kMinLargeAlloc */
#define SIM_ROUND_LARGE (2 * MP_SIM_MIB)  /* kRoundLarge */

/* How free blocks of equal size are ordered (the last keys of BlockComparatorSize). */
enum sim_order {
	SIM_ORDER_ADDR,          /* stream, size, address (up to 2.11) */
	SIM_ORDER_BLOCK,         /* stream, size, a counter every new Block takes (2.12) */
	SIM_ORDER_SEGMENT_ADDR,  /* stream, size, the segment's counter, address (2.13 on) */
};

/* ---- ordered sets (a treap): std::set<Block*, Comparison> */
typedef struct sim_node {
	struct sim_node *left, *right, *parent;
	uint32_t prio;
} sim_node;
typedef int (*sim_cmp)(const mp_sim_block *a, const mp_sim_block *b);
typedef struct sim_set {
	sim_node *root;
	sim_cmp cmp;
	size_t n;
	uint32_t seed; /* the priorities' generator: deterministic */
} sim_set;

void sim_set_init(sim_set *set, sim_cmp cmp);
void sim_set_insert(sim_set *set, mp_sim_block *b);
void sim_set_erase(sim_set *set, mp_sim_block *b);
/* The first block not less than KEY, NULL at the end. */
mp_sim_block *sim_set_lower_bound(const sim_set *set, const mp_sim_block *key);
mp_sim_block *sim_set_first(const sim_set *set);
mp_sim_block *sim_set_last(const sim_set *set);
mp_sim_block *sim_set_next(const mp_sim_block *b);
mp_sim_block *sim_set_prev(const mp_sim_block *b);
bool sim_set_contains(const sim_set *set, const mp_sim_block *b);
/* BlockComparatorSize as each release has it (enum sim_order); BlockComparatorAddress: stream, address. */
sim_cmp sim_cmp_size_for(enum sim_order order);
int sim_cmp_addr(const mp_sim_block *a, const mp_sim_block *b);

/* ---- pools */
typedef struct sim_private sim_private;
typedef struct sim_pool {
	sim_set blocks;   /* free, mapped blocks by size */
	sim_set unmapped; /* unmapped ranges of expandable segments, by address */
	bool small;
	sim_private *owner; /* NULL: a default pool */
	int64_t get_free_blocks_call_count;
} sim_pool;

struct sim_private {
	int64_t id[2];
	int use_count;
	int64_t cudamalloc_count;
	bool freeable;      /* in graph_pools_freeable */
	sim_pool large, small;
	sim_private *next;  /* graph_pools, in creation order */
};

typedef struct sim_expseg sim_expseg;

/* One stream a block was used on (stream_uses), and whether it was recorded during a capture. */
typedef struct sim_use {
	uint64_t stream;
	bool during_capture;
} sim_use;

struct mp_sim_block {
	sim_node node;         /* in pool->blocks (mapped) or pool->unmapped; first member */
	uint64_t stream;
	int64_t addr, size, requested;
	sim_pool *pool;
	bool allocated, mapped;
	bool in_set;           /* in one of its pool's sets */
	bool in_active;        /* in active_blocks (allocated or waiting for events) */
	mp_sim_block *prev, *next;
	int event_count;
	int64_t gc_count_base;
	int64_t order;         /* the counter of SIM_ORDER_BLOCK / SIM_ORDER_SEGMENT_ADDR */
	sim_expseg *es;
	sim_use *uses;         /* stream_uses */
	size_t nuses, cap_uses;
	bool deferred;         /* in needs_events_deferred_until_no_capture */
	int64_t tag;           /* mp_sim_tag's name while it waits for events, 0 */
	mp_sim_block *all_prev, *all_next; /* every live Block object, for walks */
};

/* ExpandableSegment: a reserved address range mapped in pages of SEGMENT_SIZE. */
struct sim_expseg {
	int64_t base, segment_size, max_handles;
	uint64_t stream;
	bool *handles;     /* which pages are mapped */
	int64_t nhandles;  /* handles_.size() */
	sim_expseg *next;  /* expandable_segments_ */
};

/* An event recorded on a stream for a block (cuda_events). */
typedef struct sim_event {
	uint64_t seq;
	mp_sim_block *block;
} sim_event;
typedef struct sim_stream {
	uint64_t handle;
	uint64_t synced;   /* events up to this sequence are complete (the fake's stream->synced) */
	sim_event *events; /* the deque: [head, n) */
	size_t head, n, cap;
} sim_stream;

/* A capture or MemPool context routing a stream's allocations to a private pool (captures_underway). */
typedef struct sim_capture {
	int64_t id[2];
	uint64_t stream;
} sim_capture;

/* A first-fit range of device addresses (the fake's va_arena). */
typedef struct sim_extent {
	int64_t start, size;
} sim_extent;
typedef struct sim_arena {
	sim_extent *free; /* sorted by address, coalesced */
	size_t n, cap;
} sim_arena;
void sim_arena_init(sim_arena *a, int64_t base, int64_t size);
void sim_arena_fini(sim_arena *a);
/* The lowest address with SIZE free at ALIGN; 0 when none (or out of memory). */
int64_t sim_arena_alloc(sim_arena *a, int64_t size, int64_t align);
void sim_arena_release(sim_arena *a, int64_t start, int64_t size);

/* What changed between releases: each rule says which behaviour the release has (sim_rules.c). */
typedef struct sim_rules {
	bool expandable_segments;     /* 2.1: expandable_segments exists */
	bool expandable_in_private;   /* 2.5: private pools use expandable segments too */
	bool release_skips_expandable; /* 2.5: release_available_cached_blocks and the GC pass them over (before:
					  they would release one, which asserts) */
	bool division_one_keeps;      /* up to 2.3: divisions of 1 (or more) round by divisions, and 1 keeps the
					 size as asked (no 512-byte steps) */
	bool pool_scope_no_capture;   /* 2.13: a MemPool scope is no capture: events are processed, frees record
					 events and the OOM retry runs while one is active */
	bool fraction_one_uncapped;   /* 2.10: a fraction of 1.0 caps nothing (and so turns the GC off) */
	bool fraction_rounds;         /* 2.13: the cap is rounded, not truncated */
	enum sim_order order;
} sim_rules;
void sim_rules_for(mp_sim_release r, sim_rules *out);

struct mp_sim {
	mp_sim_conf conf;
	mp_sim_release release;
	sim_rules rules;
	/* the device */
	int64_t total, outside, charged; /* charged: by this allocator (cudaMalloc'ed and mapped pages) */
	sim_arena malloc_arena, reserve_arena;
	uint64_t clock;          /* the fake's sequence: events and synchronisations */
	uint64_t device_synced;
	/* the allocator */
	sim_pool large_blocks, small_blocks;
	sim_private *graph_pools;
	sim_private *dead_pools;  /* pools the allocator deleted while blocks still used them (freed at the end) */
	sim_capture *captures;   /* captures_underway */
	size_t ncaptures, cap_captures;
	mp_sim_block **deferred; /* needs_events_deferred_until_no_capture */
	size_t ndeferred, cap_deferred;
	sim_stream *streams;     /* cuda_events, per stream */
	size_t nstreams, cap_streams;
	sim_expseg *expandable_segments;
	mp_sim_block *all;       /* every Block object */
	mp_i64map tags;          /* tag -> block waiting for events (mp_sim_tag) */
	int64_t total_allocated_memory;
	bool set_fraction;
	int64_t allowed_memory_maximum;
	mp_sim_stats stats;
	bool failed;             /* out of host memory in a step that cannot fail: the model is void */
	int64_t counter;         /* the last order given */
};

/* Whether the allocator takes a capture to be under way: any private-pool scope up to 2.12; from 2.13 only a
   stream really being captured, which the model never sees (its scopes are MemPools'). */
static inline bool sim_capturing(const mp_sim *s)
{
	return !s->rules.pool_scope_no_capture && s->ncaptures > 0;
}

/* A new Block in the model's list of blocks (NULL, and S->failed, when out of memory), cut from FROM (a split,
   a mapped or unmapped piece: it inherits the segment's order) or a new segment (NULL); its deletion. */
mp_sim_block *sim_block_new(mp_sim *s, uint64_t stream, int64_t size, sim_pool *pool, int64_t addr,
			    const mp_sim_block *from);
void sim_block_delete(mp_sim *s, mp_sim_block *b);
/* B no longer waits for events: its tag, if any, is forgotten. */
void sim_untag(mp_sim *s, mp_sim_block *b);
static inline bool sim_block_is_split(const mp_sim_block *b)
{
	return b->prev != NULL || b->next != NULL;
}
/* insert_into_blocks: into its pool's free set, with the garbage collector's age base. */
void sim_insert_into_blocks(mp_sim_block *b);
void sim_erase_from_blocks(mp_sim_block *b);

/* Statistics. */
void sim_stat_add(mp_sim_stat *st, int64_t delta);

/* The steps of malloc and free, by the allocator's names. */
sim_pool *sim_get_pool(mp_sim *s, int64_t size, uint64_t stream);
void sim_free_block(mp_sim *s, mp_sim_block *b);
int64_t sim_try_merge_blocks(mp_sim *s, mp_sim_block *dst, mp_sim_block *src, sim_pool *pool);
void sim_release_block(mp_sim *s, mp_sim_block *b);
void sim_release_blocks(mp_sim *s, sim_pool *pool);
bool sim_release_cached_blocks(mp_sim *s);
bool sim_release_available_cached_blocks(mp_sim *s, sim_pool *pool, int64_t size, uint64_t stream);
void sim_garbage_collect_cached_blocks(mp_sim *s);
void sim_process_events(mp_sim *s);
void sim_synchronize_and_free_events(mp_sim *s, const sim_private *only);
/* Expandable segments. */
mp_sim_block *sim_try_allocate_expandable_block(mp_sim *s, uint64_t stream, sim_pool *pool, int64_t size);
void sim_unmap_block(mp_sim *s, mp_sim_block *b);
void sim_release_expandable_segment(mp_sim *s, mp_sim_block *b);
void sim_expseg_delete(mp_sim *s, sim_expseg *es);
/* Private pools. */
sim_private *sim_private_find(const mp_sim *s, int64_t id0, int64_t id1);
void sim_pool_init(sim_pool *p, bool small, sim_private *owner, enum sim_order order);
/* The device: charge BYTES (false when the device does not have them); give them back. */
bool sim_device_charge(mp_sim *s, int64_t bytes);
void sim_device_uncharge(mp_sim *s, int64_t bytes);
/* The history's step before the request (sim_step.c): H->step_match, or left at −1. */
void sim_find_step(const mp_snapshot *snap, const mp_trace_entry *e, mp_sim_history *h, const mp_sim_conf *settings,
		   mp_sim_release rel);
bool sim_same_frames(const mp_snapshot *snap, mp_val a, mp_val b);
/* Streams' event queues. */
sim_stream *sim_stream_get(mp_sim *s, uint64_t handle);

#endif
