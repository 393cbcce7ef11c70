/* walk_segments.c - one device's segments rebuilt as DeviceCachingAllocator::snapshot() does:
   every head block among the pools' free blocks and the active blocks starts a segment that
   runs along `next` while blocks are mapped; segments are then sorted by address. Each of those
   Blocks is read once (walk_blockset.c): the walk along `next` takes them from there. */
#include <stdlib.h>

#include "mp_array.h"
#include "walk_int.h"

/* What is known about one BlockPool (a device has 2, each private pool 2 more). */
struct pool_info {
	uint64_t addr;
	bool is_small;
	uint64_t owner; /* PrivatePool* or 0 */
	uint64_t id[2];
};

struct seg_walk {
	uint64_t dca;
	int device;                /* its index */
	struct wk_blockset blocks; /* the candidates: the pools' free blocks and the active blocks */
	struct wk_block *heads;    /* the candidates that start a segment, by address */
	size_t nheads, heads_cap;
	size_t dup_heads;          /* heads that are in more than one pool set (counted again) */
	struct pool_info *pools;
	size_t npools, pools_cap;
	/* PrivatePool* -> id, from graph_pools and graph_pools_freeable (2.6 has no id member). */
	uint64_t (*private_ids)[3];
	size_t nprivate, private_cap;
};

static mp_err note_private(struct walk *wk, const unsigned char *e, void *ctx)
{
	struct seg_walk *sw = ctx;
	mp_err err;

	err = mp_array_grow((void **)&sw->private_ids, &sw->private_cap, sw->nprivate + 1, sizeof *sw->private_ids);
	if (err != MP_OK)
		return err;
	/* the slot: the key (MempoolId_t: first, second) and the pool pointer */
	sw->private_ids[sw->nprivate][0] = wk_u64(e, OFF(wk, GPE_POOL));
	sw->private_ids[sw->nprivate][1] = wk_u64(e, OFF(wk, GPE_ID));
	sw->private_ids[sw->nprivate][2] = wk_u64(e, OFF(wk, GPE_ID) + 8);
	sw->nprivate++;
	return MP_OK;
}

static mp_err pool_info(struct walk *wk, struct seg_walk *sw, uint64_t pool, const struct pool_info **out)
{
	struct pool_info pi = { .addr = pool };
	uint8_t is_small;
	mp_err err;

	for (size_t i = 0; i < sw->npools; i++)
		if (sw->pools[i].addr == pool) {
			*out = &sw->pools[i];
			return MP_OK;
		}
	if ((err = mp_target_read_u8(wk->t, pool + (uint64_t)OFF(wk, BP_IS_SMALL), &is_small, NULL)) != MP_OK ||
	    (err = wk_read_u64(wk, pool + (uint64_t)OFF(wk, BP_OWNER_PRIVATEPOOL), &pi.owner)) != MP_OK)
		return err;
	if (is_small > 1)
		return MP_E_CORRUPT;
	pi.is_small = is_small;
	if (pi.owner != 0 && HAS(wk, PP_ID)) {
		if ((err = wk_read(wk, pi.owner + (uint64_t)OFF(wk, PP_ID), pi.id, sizeof pi.id)) != MP_OK)
			return err;
	} else if (pi.owner != 0) {
		bool found = false;

		for (size_t i = 0; i < sw->nprivate && !found; i++)
			if (sw->private_ids[i][0] == pi.owner) {
				pi.id[0] = sw->private_ids[i][1];
				pi.id[1] = sw->private_ids[i][2];
				found = true;
			}
		if (!found)
			wk_damaged(wk, "private pool 0x%llx is in neither graph_pools nor graph_pools_freeable; its id reads (0, 0)",
				   (unsigned long long)pi.owner);
	}
	if ((err = mp_array_grow((void **)&sw->pools, &sw->pools_cap, sw->npools + 1, sizeof *sw->pools)) != MP_OK)
		return err;
	sw->pools[sw->npools] = pi;
	*out = &sw->pools[sw->npools++];
	return MP_OK;
}

/* A candidate starts a segment unless its predecessor is mapped (then it is inside one). */
static mp_err consider(struct walk *wk, uint64_t block, const struct wk_block *b, size_t times, void *ctx)
{
	struct seg_walk *sw = ctx;
	mp_err err;

	if (b == NULL) {
		wk_damaged(wk, "block 0x%llx of device allocator 0x%llx is unreadable or damaged; skipped",
			   (unsigned long long)block, (unsigned long long)sw->dca);
		return MP_OK;
	}
	if (b->prev != 0) {
		uint8_t prev_mapped = 1;

		/* Only expandable segments have unmapped blocks: skip the read otherwise. */
		if (b->expandable != 0 &&
		    mp_target_read_u8(wk->t, b->prev + (uint64_t)OFF(wk, BLOCK_MAPPED), &prev_mapped, NULL) != MP_OK) {
			wk_damaged(wk, "block 0x%llx has an unreadable prev 0x%llx", (unsigned long long)block,
				   (unsigned long long)b->prev);
			return MP_OK;
		}
		if (prev_mapped)
			return MP_OK;
	}
	if (!b->mapped)
		return MP_OK;
	/* The rest of a segment is checked against its head: the head against its allocator (else a
	   segment of one block would be reported under another device). */
	if (b->device != sw->device) {
		wk_damaged(wk, "block 0x%llx of device allocator 0x%llx says device %d; skipped", (unsigned long long)block,
			   (unsigned long long)sw->dca, b->device);
		return MP_OK;
	}
	if ((err = mp_array_grow((void **)&sw->heads, &sw->heads_cap, sw->nheads + 1, sizeof *sw->heads)) != MP_OK)
		return err;
	sw->heads[sw->nheads++] = *b;
	sw->dup_heads += times - 1;
	return MP_OK;
}

/* The walk holds max_blocks blocks and more are left: say so, once for the whole walk. */
static void block_limit(struct walk *wk)
{
	if (!wk->block_limit_hit)
		wk_damaged(wk, "more than %zu blocks: the walk stops here", wk->max_blocks);
	wk->block_limit_hit = true;
}

/* A candidate, read later with the others. */
static mp_err collect(struct walk *wk, uint64_t block, void *ctx)
{
	struct seg_walk *sw = ctx;

	return wk_blockset_add(wk, &sw->blocks, block);
}

static mp_err collect_entry(struct walk *wk, const unsigned char *e, void *ctx)
{
	return collect(wk, wk_u64(e, OFF(wk, ABE_BLOCK)), ctx);
}

/* Candidates from a pool's free set; a damaged tree costs that pool only. */
static mp_err pool_candidates(struct walk *wk, struct seg_walk *sw, uint64_t pool, const char *what)
{
	mp_err err = wk_rbtree_each(wk, pool + (uint64_t)OFF(wk, BP_BLOCKS), collect, sw);

	if (err == MP_E_NOMEM || (err == MP_E_LIMIT && sw->blocks.full))
		return err;
	if (err != MP_OK)
		wk_damaged(wk, "the free-block tree of %s (pool 0x%llx) is damaged (%s); its blocks may be missing",
			   what, (unsigned long long)pool, mp_strerror(err));
	return MP_OK;
}

static mp_err private_pool_candidates(struct walk *wk, const unsigned char *e, void *ctx)
{
	uint64_t pp = wk_u64(e, OFF(wk, GPE_POOL));
	mp_err err;

	if (pp == 0)
		return MP_OK;
	if ((err = pool_candidates(wk, ctx, pp + (uint64_t)OFF(wk, PP_SMALL_BLOCKS), "a private pool's small blocks")) != MP_OK)
		return err;
	return pool_candidates(wk, ctx, pp + (uint64_t)OFF(wk, PP_LARGE_BLOCKS), "a private pool's large blocks");
}

static mp_err add_block(struct walk *wk, const struct wk_link *b, uint64_t address)
{
	mp_walk *w = wk->w;
	mp_err err;

	if (w->nblocks >= wk->max_blocks)
		return MP_E_LIMIT;
	if ((err = mp_array_grow((void **)&w->blocks, &wk->blk_cap, w->nblocks + 1, sizeof *w->blocks)) != MP_OK)
		return err;
	w->blocks[w->nblocks++] = (mp_walk_block){
		.ptr = address,
		.size = b->size,
		.requested_size = b->requested_size,
		.context = b->ctx_alloc,
		.state = (enum mp_walk_state)b->state,
	};
	if (wk->opts->interrupted != NULL && w->nblocks % 4096 == 0 && wk->opts->interrupted(wk->opts->progress_ctx))
		return MP_E_INTERRUPTED;
	if (wk->opts->progress != NULL && w->nblocks >= wk->next_progress) {
		wk->opts->progress(wk->opts->progress_ctx, w->nblocks);
		wk->next_progress = w->nblocks + (1u << 16);
	}
	return MP_OK;
}

/* The segment headed by FIRST: its mapped run along `next`. */
static mp_err walk_segment(struct walk *wk, struct seg_walk *sw, mp_walk_device *dev, const struct wk_block *first)
{
	mp_walk *w = wk->w;
	const struct pool_info *pi;
	struct wk_link b;
	mp_walk_segment seg = { .device = dev->index };
	uint64_t offset = 0, at = first->addr;
	mp_err err;

	if ((err = pool_info(wk, sw, first->pool, &pi)) != MP_OK) {
		if (err == MP_E_NOMEM)
			return err;
		wk_damaged(wk, "block 0x%llx points to an unreadable pool 0x%llx; its segment is left out",
			   (unsigned long long)first->addr, (unsigned long long)first->pool);
		return MP_OK;
	}
	seg.device = first->device;
	seg.address = first->ptr;
	seg.stream = first->stream;
	seg.is_large = !pi->is_small;
	seg.is_expandable = first->expandable != 0;
	seg.pool_id[0] = pi->id[0];
	seg.pool_id[1] = pi->id[1];
	seg.context = first->ctx_segment;
	seg.first_block = w->nblocks;
	wk_link_of(first, &b);
	for (;;) {
		enum mp_walk_state st = (enum mp_walk_state)b.state;
		uint64_t end = b.ptr + b.size, next = b.next;

		if ((err = add_block(wk, &b, seg.address + offset)) != MP_OK) {
			if (err != MP_E_LIMIT)
				return err;
			block_limit(wk);
			break;
		}
		offset += b.size;
		seg.total_size += b.size;
		if (st == MP_WS_ACTIVE_ALLOCATED)
			seg.allocated_size += b.size;
		if (st != MP_WS_INACTIVE) {
			seg.active_size += b.size;
			seg.requested_size += b.requested_size;
		}
		if (next == 0)
			break;
		if ((err = wk_blockset_link(wk, &sw->blocks, next, &b)) != MP_OK) {
			wk_damaged(wk, "segment 0x%llx: block after 0x%llx is unreadable or damaged; segment cut short",
				   (unsigned long long)seg.address, (unsigned long long)at);
			break;
		}
		if (!b.mapped)
			break;
		/* Linked both ways, contiguous, same segment: else stop (this also ends cycles). */
		if (b.prev != at || b.ptr != end || b.pool != first->pool || b.device != first->device) {
			wk_damaged(wk, "segment 0x%llx: block 0x%llx does not follow 0x%llx (prev, address or pool differ); segment cut short",
				   (unsigned long long)seg.address, (unsigned long long)next, (unsigned long long)at);
			break;
		}
		at = next;
	}
	seg.nblocks = w->nblocks - seg.first_block;
	if ((err = mp_array_grow((void **)&w->segments, &wk->seg_cap, w->nsegments + 1, sizeof *w->segments)) != MP_OK)
		return err;
	w->segments[w->nsegments++] = seg;
	return MP_OK;
}

static int cmp_segment(const void *a, const void *b)
{
	const mp_walk_segment *x = a, *y = b;

	return (x->address > y->address) - (x->address < y->address);
}

mp_err wk_segments(struct walk *wk, mp_walk_device *dev)
{
	struct seg_walk sw = { .dca = dev->address, .device = dev->index };
	mp_walk *w = wk->w;
	size_t first_seg = w->nsegments;
	mp_err err;

	/* Private pool ids first (2.6 keeps them only as the graph_pools keys): from both tables, each
	   read to its end or its damage (a pool in graph_pools_freeable is in graph_pools too, so
	   either may give its id). */
	err = wk_flat_each(wk, dev->address + (uint64_t)OFF(wk, DCA_GRAPH_POOLS), (size_t)OFF(wk, GPE_SIZEOF), note_private,
			   &sw);
	if (wk_flat_each(wk, dev->address + (uint64_t)OFF(wk, DCA_GRAPH_POOLS_FREEABLE), (size_t)OFF(wk, GPE_SIZEOF),
			 note_private, &sw) != MP_OK ||
	    err != MP_OK)
		wk_damaged(wk, "device %d: the private pool tables are damaged; pool ids may be missing", dev->index);
	/* Candidates from snapshot()'s sets: small, large, private pools, then active blocks. */
	err = pool_candidates(wk, &sw, dev->address + (uint64_t)OFF(wk, DCA_SMALL_BLOCKS), "the small pool");
	if (err == MP_OK)
		err = pool_candidates(wk, &sw, dev->address + (uint64_t)OFF(wk, DCA_LARGE_BLOCKS), "the large pool");
	if (err == MP_OK) {
		err = wk_flat_each(wk, dev->address + (uint64_t)OFF(wk, DCA_GRAPH_POOLS), (size_t)OFF(wk, GPE_SIZEOF),
				   private_pool_candidates, &sw);
		if (err != MP_OK && err != MP_E_NOMEM && !sw.blocks.full) {
			wk_damaged(wk, "device %d: graph_pools is damaged (%s)", dev->index, mp_strerror(err));
			err = MP_OK;
		}
	}
	if (err == MP_OK) {
		err = wk_flat_each(wk, dev->address + (uint64_t)OFF(wk, DCA_ACTIVE_BLOCKS), (size_t)OFF(wk, ABE_SIZEOF),
				   collect_entry, &sw);
		if (err != MP_OK && err != MP_E_NOMEM && !sw.blocks.full) {
			wk_damaged(wk, "device %d: the active block table is damaged (%s); active blocks may be missing",
				   dev->index, mp_strerror(err));
			err = MP_OK;
		}
	}
	if (err == MP_E_LIMIT && sw.blocks.full) {
		block_limit(wk);
		err = MP_OK;
	}
	/* Heads come in address order, as snapshot() sorts them. */
	if (err == MP_OK)
		err = wk_blockset_read(wk, &sw.blocks, consider, &sw);
	if (err == MP_OK) {
		/* A head reached twice (damage, or a block in two sets) gives one segment. */
		if (sw.dup_heads != 0)
			wk_damaged(wk, "device %d: %zu blocks are in more than one pool set", dev->index, sw.dup_heads);
		/* The limit is on the whole walk: reached between two segments (of this device or an
		   earlier one), the segments left are missing as surely as blocks cut off inside one. */
		for (size_t i = 0; i < sw.nheads && err == MP_OK; i++) {
			if (w->nblocks >= wk->max_blocks) {
				block_limit(wk);
				break;
			}
			err = walk_segment(wk, &sw, dev, &sw.heads[i]);
		}
	}
	/* (w->segments is still NULL when a walk stops before its first segment: qsort must not see it.) */
	if (w->nsegments > first_seg)
		mp_sort(w->segments + first_seg, w->nsegments - first_seg, sizeof *w->segments, cmp_segment);
	wk_blockset_free(&sw.blocks);
	free(sw.heads);
	free(sw.pools);
	free(sw.private_ids);
	return err;
}
