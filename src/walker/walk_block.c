/* walk_block.c - one Block of the allocator, read through the layout and sanity-checked. */
#include "walk_int.h"

/* Offset of the element count inside a ska flat_hash_set (Block::stream_uses). */
enum { FLAT_NUM_ELEMENTS = 24 };

/* The contexts a Block was allocated with. 2.1 on keeps them in the Block; 2.0 keeps a list of
   History records ({addr, real_size, context}, the newest first, older ones of the memory merged
   into the block after it): its head's context is the allocation's (what PyTorch's _memory_viz.py
   takes of a 2.0 snapshot, history[0]), and segments keep none. */
static void read_contexts(struct walk *wk, const unsigned char *img, struct wk_block *b)
{
	uint64_t head;

	if (HAS(wk, BLOCK_CONTEXT_WHEN_ALLOCATED)) {
		b->ctx_alloc = wk_u64(img, OFF(wk, BLOCK_CONTEXT_WHEN_ALLOCATED));
		b->ctx_segment = wk_u64(img, OFF(wk, BLOCK_CONTEXT_WHEN_SEGMENT_ALLOCATED));
		return;
	}
	/* A history that cannot be read costs the block its frames, not the block. */
	b->ctx_alloc = b->ctx_segment = 0;
	head = wk_u64(img, OFF(wk, BLOCK_HISTORY));
	if (head != 0 && head % 8 == 0 &&
	    wk_read_u64(wk, head + (uint64_t)OFF(wk, HISTORY_CONTEXT), &b->ctx_alloc) != MP_OK)
		b->ctx_alloc = 0;
}

mp_err wk_read_block(struct walk *wk, uint64_t addr, struct wk_block *b)
{
	unsigned char img[WK_MAX_STRUCT];
	int32_t size = OFF(wk, BLOCK_SIZEOF);
	mp_err err;

	if (addr == 0 || addr % 8 != 0)
		return MP_E_CORRUPT;
	if ((err = wk_read(wk, addr, img, (size_t)size)) != MP_OK)
		return err;
	b->addr = addr;
	b->device = (int8_t)wk_u8(img, OFF(wk, BLOCK_DEVICE));
	b->stream = wk_u64(img, OFF(wk, BLOCK_STREAM));
	b->stream_uses = wk_u64(img, OFF(wk, BLOCK_STREAM_USES) + FLAT_NUM_ELEMENTS);
	b->size = wk_u64(img, OFF(wk, BLOCK_SIZE));
	b->requested_size = wk_u64(img, OFF(wk, BLOCK_REQUESTED_SIZE));
	b->pool = wk_u64(img, OFF(wk, BLOCK_POOL));
	b->ptr = wk_u64(img, OFF(wk, BLOCK_PTR));
	b->allocated = wk_u8(img, OFF(wk, BLOCK_ALLOCATED)) != 0;
	/* 2.0 has no expandable segments: every block is mapped. */
	b->mapped = HAS(wk, BLOCK_MAPPED) ? wk_u8(img, OFF(wk, BLOCK_MAPPED)) != 0 : true;
	b->expandable = HAS(wk, BLOCK_EXPANDABLE_SEGMENT) ? wk_u64(img, OFF(wk, BLOCK_EXPANDABLE_SEGMENT)) : 0;
	b->prev = wk_u64(img, OFF(wk, BLOCK_PREV));
	b->next = wk_u64(img, OFF(wk, BLOCK_NEXT));
	b->event_count = wk_i32(img, OFF(wk, BLOCK_EVENT_COUNT));
	read_contexts(wk, img, b);
	/* What every Block satisfies (allocator-facts §10.5); bools are stored as 0/1. */
	if (wk_u8(img, OFF(wk, BLOCK_ALLOCATED)) > 1 || (HAS(wk, BLOCK_MAPPED) && wk_u8(img, OFF(wk, BLOCK_MAPPED)) > 1) ||
	    b->size == 0 || b->size % 512 != 0 || b->pool == 0 || b->event_count < 0 ||
	    (b->allocated && b->requested_size > b->size) || (!b->mapped && b->expandable == 0) ||
	    b->prev % 8 != 0 || b->next % 8 != 0)
		return MP_E_CORRUPT;
	return MP_OK;
}

enum mp_walk_state wk_block_state(const struct wk_block *b)
{
	if (b->allocated)
		return MP_WS_ACTIVE_ALLOCATED;
	if (b->event_count > 0 || b->stream_uses != 0)
		return MP_WS_ACTIVE_PENDING_FREE;
	return MP_WS_INACTIVE;
}

void wk_link_of(const struct wk_block *b, struct wk_link *l)
{
	*l = (struct wk_link){
		.ptr = b->ptr,
		.size = b->size,
		.requested_size = b->requested_size,
		.ctx_alloc = b->ctx_alloc,
		.pool = b->pool,
		.prev = b->prev,
		.next = b->next,
		.device = (int8_t)b->device,
		.state = (uint8_t)wk_block_state(b),
		.mapped = b->mapped,
	};
}
