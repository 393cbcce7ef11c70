/* walk_int.h - what the walker's files share: the walk in progress, checked reads of the
   target, and the libstdc++ / ska containers PyTorch's structs are made of. Private. */
#ifndef MEMPROF_WALK_INT_H
#define MEMPROF_WALK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mp_layout.h"
#include "mp_target.h"
#include "mp_walk.h"

/* Caps that keep a damaged target from costing unbounded time or memory. */
#define WK_MAX_DEVICES 120            /* C10_COMPILE_TIME_MAX_GPUS */
#define WK_MAX_BLOCKS_DEFAULT MP_WALK_MAX_BLOCKS_DEFAULT
#define WK_MAX_TRACE (16u << 20)      /* ring entries per device */
#define WK_MAX_STRING (1u << 20)      /* bytes of one std::string */
#define WK_MAX_STRUCT 4096            /* bytes of one struct read at once */
#define WK_MAX_ENTRY 512              /* bytes of one TraceEntry */
#define WK_MAX_TREE_DEPTH 128         /* a red-black tree of 2^64 nodes is shallower */
#define WK_MAX_FLAT_SLOTS (1ull << 32) /* ska flat_hash slots */
#define WK_MAX_FLAT_ENTRY 512          /* bytes of one ska flat_hash entry */
#define WK_MAX_PRIVATE_POOLS (1u << 14) /* pools in DeviceStats.reserved_bytes_by_private_pools */
#define WK_RING_HEADER 64               /* bytes of a RingBuffer read (its size in every version) */

/* The walk in progress. */
struct walk {
	mp_target *t;
	const mp_layout *L;
	mp_diag *diag;
	int cxx11_abi; /* std::string flavour */
	mp_walk *w;    /* the result being filled */
	size_t seg_cap, blk_cap, trace_cap;
	size_t max_blocks;
	bool block_limit_hit; /* max_blocks reached and said (once) */
	const mp_walk_opts *opts;
	size_t next_progress;
};

/* Offset of field F in the walk's layout. */
#define OFF(wk, F) ((wk)->L->off[MP_L_##F])
#define HAS(wk, F) ((wk)->L->off[MP_L_##F] != MP_LAYOUT_ABSENT)

/* Scalars out of a struct image read from the target (OFF must be inside it). */
static inline uint64_t wk_u64(const unsigned char *img, int32_t off)
{
	uint64_t v;

	memcpy(&v, img + off, sizeof v);
	return v;
}

static inline int64_t wk_i64(const unsigned char *img, int32_t off)
{
	return (int64_t)wk_u64(img, off);
}

static inline int32_t wk_i32(const unsigned char *img, int32_t off)
{
	int32_t v;

	memcpy(&v, img + off, sizeof v);
	return v;
}

static inline uint8_t wk_u8(const unsigned char *img, int32_t off)
{
	return img[off];
}

/* Read LEN bytes at ADDR (no diag: callers say what they were reading). */
mp_err wk_read(struct walk *wk, uint64_t addr, void *buf, size_t len) MP_WUR;
mp_err wk_read_u64(struct walk *wk, uint64_t addr, uint64_t *out) MP_WUR;

/* A std::vector's [begin, end) with ELEM-sized elements: checks begin <= end <= capacity,
   alignment of the size, and at most MAX elements. */
mp_err wk_vector(struct walk *wk, uint64_t addr, size_t elem, size_t max, uint64_t *begin,
		 size_t *n) MP_WUR;

/* A RingBuffer<T> (TraceEntry, AnnotationEntry) at RING: its vector's entries of ESIZE bytes, at most MAX,
   the oldest at slot NEXT once it has wrapped (allocator-facts §3.7). */
struct wk_ring {
	uint64_t max_entries, next, vector, begin;
	size_t n;
};
/* MP_OK (N 0 and VECTOR 0: never recorded), MP_E_TRUNCATED when the header cannot be read, MP_E_CORRUPT
   when the vector or the indexes are not sound. */
mp_err wk_ring(struct walk *wk, uint64_t ring, size_t esize, size_t max, struct wk_ring *out) MP_WUR;

/* The annotations the native allocator's ring keeps (2.5 on), into W->annotations. */
mp_err wk_annotations(struct walk *wk, uint64_t allocator) MP_WUR;

/* Call FN with the key and value of each element of the std::unordered_map<std::string,
   std::string> at ADDR, in its iteration order (at most MAX elements, else MP_E_LIMIT); FN takes the
   malloc'd strings. */
typedef mp_err (*wk_pair_fn)(struct walk *wk, char *key, char *value, void *ctx);
mp_err wk_string_map_each(struct walk *wk, uint64_t addr, size_t max, wk_pair_fn fn, void *ctx) MP_WUR;

/* A std::string at ADDR (either C++ ABI) as a malloc'd NUL-terminated copy. */
mp_err wk_string(struct walk *wk, uint64_t addr, char **out) MP_WUR;

/* Call FN with each value (a Block* etc.) of the std::set at ADDR, in order. Stops at the first
   error FN returns; a damaged tree is MP_E_CORRUPT/MP_E_CYCLE with a warning. */
typedef mp_err (*wk_value_fn)(struct walk *wk, uint64_t value, void *ctx);
mp_err wk_rbtree_each(struct walk *wk, uint64_t addr, wk_value_fn fn, void *ctx) MP_WUR;

/* The red-black tree's node count, with its header checked. */
mp_err wk_rbtree_count(struct walk *wk, uint64_t addr, uint64_t *count) MP_WUR;

/* Call FN with the image of each live entry of the ska flat_hash_set/map at ADDR (entries of
   ENTRY bytes, at most WK_MAX_FLAT_ENTRY; where the value's members are, the layout's slots say:
   GraphPoolsEntry, ActiveBlocksEntry), in slot order. */
typedef mp_err (*wk_entry_fn)(struct walk *wk, const unsigned char *entry, void *ctx);
mp_err wk_flat_each(struct walk *wk, uint64_t addr, size_t entry, wk_entry_fn fn, void *ctx) MP_WUR;

/* The flat table's element count / the slots wk_flat_each reads, with its header checked. */
mp_err wk_flat_count(struct walk *wk, uint64_t addr, uint64_t *count) MP_WUR;
mp_err wk_flat_slots(struct walk *wk, uint64_t addr, uint64_t *slots) MP_WUR;

/* One Block, decoded through the layout. */
struct wk_block {
	uint64_t addr; /* where the Block object itself lives */
	uint64_t ptr, size, requested_size;
	uint64_t stream, pool, prev, next;
	uint64_t ctx_alloc, ctx_segment, expandable;
	uint64_t stream_uses;
	int64_t event_count;
	int device;
	bool allocated, mapped;
};

mp_err wk_read_block(struct walk *wk, uint64_t addr, struct wk_block *b) MP_WUR;

/* The state snapshot() gives B. */
enum mp_walk_state wk_block_state(const struct wk_block *b);

/* What the segment walk needs of a Block that is not its segment's head: struct wk_block less
   what only the head gives (stream, contexts and expandable segment of the whole segment). */
struct wk_link {
	uint64_t ptr, size, requested_size, ctx_alloc, pool, prev, next;
	int8_t device;
	uint8_t state;  /* enum mp_walk_state */
	bool mapped;
	bool damaged;   /* in a blockset: the Block was unreadable or failed its invariants */
};

void wk_link_of(const struct wk_block *b, struct wk_link *l);

/* One device's candidate Blocks (its pools' free blocks and its active blocks), each read once:
   the addresses are collected first, then read in address order (so that a live process is read
   page after page, not once per block in hash order) and kept decoded for the segment walk,
   which would otherwise read every Block a second time along `next`. */
struct wk_blockset {
	uint64_t *addr;        /* collected; after wk_blockset_read sorted and distinct */
	struct wk_link *links; /* after wk_blockset_read: the Block at addr[i] */
	size_t n, cap;
	size_t finger;         /* the last one found: walks along `next` mostly ask for the one after */
	bool full;             /* more candidates than the walk's block limit: the rest were dropped */
};

/* Add the Block at ADDR. MP_E_LIMIT once the set holds the walk's block limit. */
mp_err wk_blockset_add(struct walk *wk, struct wk_blockset *bs, uint64_t addr) MP_WUR;

/* Called by wk_blockset_read for each distinct Block in address order: B is NULL when it is
   unreadable or damaged; TIMES is how often it was added. */
typedef mp_err (*wk_block_fn)(struct walk *wk, uint64_t addr, const struct wk_block *b, size_t times,
			      void *ctx);

/* Sort and deduplicate the addresses, read each Block and call FN with it. */
mp_err wk_blockset_read(struct walk *wk, struct wk_blockset *bs, wk_block_fn fn, void *ctx) MP_WUR;

/* The Block at ADDR: from the set when it is there, else read from the target. Same errors as
   wk_read_block. */
mp_err wk_blockset_link(struct walk *wk, struct wk_blockset *bs, uint64_t addr, struct wk_link *l) MP_WUR;

void wk_blockset_free(struct wk_blockset *bs);

/* Find the native allocator object and its device allocators, checking RTTI and the vector. */
mp_err wk_find_allocator(struct walk *wk, const mp_c10 *c10, uint64_t *obj) MP_WUR;
mp_err wk_device_allocators(struct walk *wk, uint64_t obj, uint64_t **das, size_t *n) MP_WUR;

/* A layout for the allocator at OBJ (the native allocator) when no table fits: PRIOR's, with every member an
   invariant can place searched in memory (walk_infer.c). OUT is named "inferred", its source says from what and
   how surely. MP_E_NOTFOUND with REASON naming the member that could not be placed. The caller walks with it
   under the usual self-check. */
mp_err wk_infer_layout(struct walk *wk, uint64_t obj, const mp_layout *prior, const mp_c10 *c10, mp_layout *out,
		       mp_diag *reason) MP_WUR;

/* The minor version in "2.14" or "2.4.1+cu121" (14, 4); -1 when there is none. */
long wk_version_minor(const char *v);

/* Check the walk's layout against the allocator's memory (before trusting it): structural
   invariants of pools, trees, tables, the ring and a sample of blocks. MP_OK or MP_E_CORRUPT
   with the first failed check in DIAG. */
mp_err wk_layout_check(struct walk *wk, const uint64_t *das, size_t n) MP_WUR;

/* Per device: its segments and blocks, its stats, its trace ring. */
mp_err wk_segments(struct walk *wk, mp_walk_device *dev) MP_WUR;
mp_err wk_stats(struct walk *wk, mp_walk_device *dev) MP_WUR;

/* The memory_stats() keys of one private pool in DeviceStats.reserved_bytes_by_private_pools
   (2.14): "reserved_bytes_by_private_pools.<ID0>_<ID1>.<all|small_pool|large_pool>.<current|peak|
   allocated|freed>" (the ids in decimal), WK_POOL_NKEYS of them in that order, their values
   from the 96-byte StatArray image STATS. KEYS receives the texts, OUT the keys (pointing into
   KEYS) and values. This function can't fail. */
#define WK_POOL_NKEYS 12
#define WK_POOL_KEY_MAX 96 /* 32 + 2 * 20 + 1 + 21 bytes and the NUL fit */
void wk_pool_stat_keys(uint64_t id0, uint64_t id1, const unsigned char *stats,
		       char (*keys)[WK_POOL_KEY_MAX], mp_memstat *out);
mp_err wk_trace(struct walk *wk, mp_walk_device *dev) MP_WUR;

/* Warn when DEV's statistics disagree with its blocks (segments from FIRST_SEGMENT on). */
void wk_stats_cross_check(struct walk *wk, const mp_walk_device *dev, size_t first_segment);

/* The allocator settings: CUDAAllocatorConfig through C10's instance pointer and, where the
   layout puts settings there (2.14), libc10's AcceleratorAllocatorConfig. What cannot be read
   is a warning, and allocator_settings is left out; MP_E_NOMEM only. */
mp_err wk_settings(struct walk *wk, const mp_c10 *c10) MP_WUR;

/* Convert the ring's raw time stamps to the microseconds snapshot() reports. */
void wk_convert_times(struct walk *wk, uint64_t allocator);

/* Say that the result is partial, with a warning. */
void wk_damaged(struct walk *wk, const char *fmt, ...) MP_PRINTF(2, 3);

#endif
