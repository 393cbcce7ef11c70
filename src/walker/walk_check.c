/* walk_check.c - is this layout the one the process was built with? Checked on the memory
   itself before anything is walked (allocator-facts §10): a wrong version table fails here,
   with the reason, and the next candidate is tried. */
#include <stdarg.h>
#include <stdio.h>

#include "walk_int.h"

/* Blocks sampled per device: enough to catch a wrong Block layout, cheap on a huge heap. */
enum { SAMPLE_BLOCKS = 16, CHECK_DEVICES = 8 };

struct sample {
	uint64_t dca, small, large;
	int device;
	unsigned seen;
	const char *why;
};

static mp_err check_fail(struct walk *wk, const char *fmt, ...) MP_PRINTF(2, 3);

static mp_err check_fail(struct walk *wk, const char *fmt, ...)
{
	char line[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	return mp_fail(wk->diag, MP_E_CORRUPT, "layout %s does not fit: %s", wk->L->name, line);
}

/* The bytes the walker reads of member F: a StatArray is 96 bytes, a Stat and a ska flat_hash_map
   or set 32 (Block.stream_uses: its count at +24), a MempoolId_t 16; other members are read 8
   bytes at most. */
static int32_t member_width(enum mp_layout_field f)
{
	if (f >= MP_L_DS_ALLOCATION && f <= MP_L_DS_REQUESTED_BYTES)
		return 96;
	if (f == MP_L_DS_OVERSIZE_ALLOCATIONS || f == MP_L_DS_OVERSIZE_SEGMENTS ||
	    f == MP_L_DS_RESERVED_BYTES_BY_PRIVATE_POOLS || f == MP_L_BLOCK_STREAM_USES)
		return 32;
	return f == MP_L_TE_MEMPOOL ? 16 : 8;
}

/* Each member must lie inside its struct: the walker reads a struct's image into a buffer and
   takes the members from there. A RingBuffer has no sizeof in layouts: its first WK_RING_HEADER
   bytes are read. */
static mp_err check_layout_itself(struct walk *wk)
{
	static const struct {
		enum mp_layout_field size, first, last;
		int32_t max;
	} structs[] = {
		{ MP_L_BLOCK_SIZEOF, MP_L_BLOCK_DEVICE, MP_L_BLOCK_HISTORY, WK_MAX_STRUCT },
		{ MP_L_TE_SIZEOF, MP_L_TE_ACTION, MP_L_TE_USER_METADATA, WK_MAX_ENTRY },
		{ MP_L_DS_SIZEOF, MP_L_DS_ALLOCATION, MP_L_DS_RESERVED_BYTES_BY_PRIVATE_POOLS, WK_MAX_STRUCT },
	};

	for (size_t s = 0; s < sizeof structs / sizeof structs[0]; s++) {
		int32_t size = wk->L->off[structs[s].size];

		if (size <= 0 || size > structs[s].max)
			return check_fail(wk, "%s.sizeof %d is out of range", mp_layout_struct_name(structs[s].size), size);
		for (int f = (int)structs[s].first; f <= (int)structs[s].last; f++) {
			int32_t off = wk->L->off[f];
			int32_t width = member_width((enum mp_layout_field)f);

			if (off != MP_LAYOUT_ABSENT && (off < 0 || off + width > size))
				return check_fail(wk, "%s.%s at %d is outside its %d bytes", mp_layout_struct_name(f),
						  mp_layout_member_name(f), off, size);
		}
	}
	for (int f = MP_L_RB_MAX_ENTRIES; f <= MP_L_RB_VECTOR; f++)
		if (wk->L->off[f] < 0 || wk->L->off[f] + 8 > WK_RING_HEADER)
			return check_fail(wk, "%s.%s at %d is outside the %d bytes read of it", mp_layout_struct_name(f),
					  mp_layout_member_name(f), wk->L->off[f], WK_RING_HEADER);
	return MP_OK;
}

static mp_err sample_block(struct walk *wk, uint64_t block, void *ctx)
{
	struct sample *s = ctx;
	struct wk_block b, n;
	uint8_t is_small;

	if (s->seen >= SAMPLE_BLOCKS)
		return MP_E_INTERRUPTED; /* enough: stop the iteration */
	s->seen++;
	if (wk_read_block(wk, block, &b) != MP_OK)
		return s->why = "a block fails Block's invariants", MP_E_CORRUPT;
	if (b.device != s->device)
		return s->why = "a block's device is not its allocator's", MP_E_CORRUPT;
	if (b.pool != s->small && b.pool != s->large) {
		uint64_t owner;

		/* A private pool's BlockPool: its owner is set. */
		if (mp_target_read_u8(wk->t, b.pool + (uint64_t)OFF(wk, BP_IS_SMALL), &is_small, NULL) != MP_OK ||
		    is_small > 1 || wk_read_u64(wk, b.pool + (uint64_t)OFF(wk, BP_OWNER_PRIVATEPOOL), &owner) != MP_OK ||
		    owner == 0)
			return s->why = "a block's pool is none of its allocator's pools", MP_E_CORRUPT;
	}
	if (b.next != 0) {
		if (wk_read_block(wk, b.next, &n) != MP_OK || n.prev != block)
			return s->why = "a block's next does not point back to it", MP_E_CORRUPT;
		if (b.mapped && n.mapped && b.ptr + b.size != n.ptr)
			return s->why = "a block and its next are not contiguous", MP_E_CORRUPT;
	}
	return MP_OK;
}

static mp_err sample_entry(struct walk *wk, const unsigned char *e, void *ctx)
{
	return sample_block(wk, wk_u64(e, OFF(wk, ABE_BLOCK)), ctx);
}

static mp_err check_pool(struct walk *wk, uint64_t pool, int small, uint64_t *cmp)
{
	uint64_t owner, count, c;
	uint8_t is_small;

	if (mp_target_read_u8(wk->t, pool + (uint64_t)OFF(wk, BP_IS_SMALL), &is_small, NULL) != MP_OK ||
	    wk_read_u64(wk, pool + (uint64_t)OFF(wk, BP_OWNER_PRIVATEPOOL), &owner) != MP_OK ||
	    wk_read_u64(wk, pool + (uint64_t)OFF(wk, BP_BLOCKS), &c) != MP_OK)
		return MP_E_CORRUPT;
	if (is_small != small || owner != 0 || c == 0 || (*cmp != 0 && c != *cmp))
		return MP_E_CORRUPT;
	*cmp = c;
	if (wk_rbtree_count(wk, pool + (uint64_t)OFF(wk, BP_BLOCKS), &count) != MP_OK ||
	    (HAS(wk, BP_UNMAPPED) && wk_rbtree_count(wk, pool + (uint64_t)OFF(wk, BP_UNMAPPED), &count) != MP_OK))
		return MP_E_CORRUPT;
	return MP_OK;
}

static mp_err check_stats(struct walk *wk, uint64_t dca)
{
	unsigned char img[WK_MAX_STRUCT];
	uint64_t total;

	if (wk_read(wk, dca + (uint64_t)OFF(wk, DCA_STATS), img, (size_t)OFF(wk, DS_SIZEOF)) != MP_OK ||
	    wk_read_u64(wk, dca + (uint64_t)OFF(wk, DCA_TOTAL_ALLOCATED_MEMORY), &total) != MP_OK)
		return MP_E_CORRUPT;
	for (int f = MP_L_DS_ALLOCATION; f <= MP_L_DS_REQUESTED_BYTES; f++)
		for (int p = 0; p < 3; p++) {
			int64_t cur = wk_i64(img, wk->L->off[f] + p * 32), peak = wk_i64(img, wk->L->off[f] + p * 32 + 8);

			if (cur < 0 || peak < cur)
				return MP_E_CORRUPT;
		}
	/* What the allocator holds from CUDA is what its statistics say it reserved. */
	return (uint64_t)wk_i64(img, OFF(wk, DS_RESERVED_BYTES)) == total ? MP_OK : MP_E_CORRUPT;
}

static mp_err check_ring(struct walk *wk, uint64_t dca)
{
	unsigned char hdr[WK_RING_HEADER];
	uint64_t max, next, vec, begin;
	size_t n;

	if (wk_read(wk, dca + (uint64_t)OFF(wk, DCA_ALLOC_BUFFER), hdr, sizeof hdr) != MP_OK)
		return MP_E_CORRUPT;
	max = wk_u64(hdr, OFF(wk, RB_MAX_ENTRIES));
	next = wk_u64(hdr, OFF(wk, RB_NEXT));
	vec = wk_u64(hdr, OFF(wk, RB_VECTOR));
	if (max == 0)
		return MP_E_CORRUPT;
	if (vec == 0)
		return next == 0 ? MP_OK : MP_E_CORRUPT;
	if (wk_vector(wk, vec, (size_t)OFF(wk, TE_SIZEOF), WK_MAX_TRACE, &begin, &n) != MP_OK)
		return MP_E_CORRUPT;
	return (n == 0 ? next == 0 : next < n) && n <= max ? MP_OK : MP_E_CORRUPT;
}

static mp_err check_device(struct walk *wk, uint64_t dca, int index)
{
	struct sample s = { .dca = dca, .device = index };
	uint64_t cmp = 0, count;
	mp_err err;

	s.small = dca + (uint64_t)OFF(wk, DCA_SMALL_BLOCKS);
	s.large = dca + (uint64_t)OFF(wk, DCA_LARGE_BLOCKS);
	if (HAS(wk, DCA_DEVICE_ID)) {
		uint8_t id;

		if (mp_target_read_u8(wk->t, dca + (uint64_t)OFF(wk, DCA_DEVICE_ID), &id, NULL) != MP_OK || id != index)
			return check_fail(wk, "device allocator %d has another device_id", index);
	}
	if (check_pool(wk, s.large, 0, &cmp) != MP_OK || check_pool(wk, s.small, 1, &cmp) != MP_OK)
		return check_fail(wk, "device %d: the large/small BlockPools are not where the layout puts them", index);
	if (wk_flat_count(wk, dca + (uint64_t)OFF(wk, DCA_ACTIVE_BLOCKS), &count) != MP_OK ||
	    wk_flat_count(wk, dca + (uint64_t)OFF(wk, DCA_GRAPH_POOLS), &count) != MP_OK ||
	    wk_flat_count(wk, dca + (uint64_t)OFF(wk, DCA_GRAPH_POOLS_FREEABLE), &count) != MP_OK)
		return check_fail(wk, "device %d: active_blocks or graph_pools is not a hash table there", index);
	if (check_ring(wk, dca) != MP_OK)
		return check_fail(wk, "device %d: alloc_buffer is not a trace ring there", index);
	if (check_stats(wk, dca) != MP_OK)
		return check_fail(wk, "device %d: the statistics do not add up (reserved bytes vs total_allocated_memory)",
				  index);
	err = wk_flat_each(wk, dca + (uint64_t)OFF(wk, DCA_ACTIVE_BLOCKS), (size_t)OFF(wk, ABE_SIZEOF), sample_entry, &s);
	if (err == MP_OK || err == MP_E_INTERRUPTED) {
		s.seen = 0;
		err = wk_rbtree_each(wk, s.large + (uint64_t)OFF(wk, BP_BLOCKS), sample_block, &s);
	}
	if (err != MP_OK && err != MP_E_INTERRUPTED)
		return check_fail(wk, "device %d: %s", index, s.why != NULL ? s.why : "its blocks cannot be walked");
	return MP_OK;
}

mp_err wk_layout_check(struct walk *wk, const uint64_t *das, size_t n)
{
	mp_err err = check_layout_itself(wk);

	for (size_t i = 0; i < n && i < CHECK_DEVICES && err == MP_OK; i++)
		err = check_device(wk, das[i], (int)i);
	return err;
}
