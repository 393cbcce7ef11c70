/* mp_blocks.c - _block_extra and legacy 'history' records of snapshot blocks. */
#include "mp_blocks.h"

size_t mp_block_history_len(const mp_snapshot *snap, const mp_block *b)
{
	if (!(b->present & MP_F_BLK_HISTORY) || mp_val_type(b->history) != MP_T_LIST)
		return 0;
	return mp_heap_len(snap->heap, b->history);
}

mp_err mp_block_history_get(const mp_snapshot *snap, const mp_block *b, size_t i, mp_history_item *out,
			    const mp_block_at *at, mp_diag *diag)
{
	const mp_keys *k = mp_heap_keys(snap->heap);
	mp_val h, real_size;

	if (i >= mp_block_history_len(snap, b))
		return mp_fail(diag, MP_E_CORRUPT, "%s: segments[%zu].blocks[%zu]: 'history' has no record %zu",
			       at->analysis, at->seg, at->block, i);
	h = mp_heap_items(snap->heap, b->history)[i];
	if (mp_val_type(h) != MP_T_DICT)
		return mp_fail(diag, MP_E_TYPE, "%s: segments[%zu].blocks[%zu].history[%zu]: not a dict",
			       at->analysis, at->seg, at->block, i);
	real_size = mp_heap_dict_get(snap->heap, h, k->real_size);
	if (mp_val_type(real_size) != MP_T_INT && mp_val_type(real_size) != MP_T_BIGINT)
		return mp_fail(diag, MP_E_TYPE, "%s: segments[%zu].blocks[%zu].history[%zu]: no int 'real_size'",
			       at->analysis, at->seg, at->block, i);
	if (!mp_heap_get_i64(snap->heap, real_size, &out->real_size))
		return mp_fail(diag, MP_E_RANGE,
			       "%s: segments[%zu].blocks[%zu].history[%zu]: 'real_size' does not fit in 64 bits",
			       at->analysis, at->seg, at->block, i);
	out->frames = mp_heap_dict_get(snap->heap, h, k->frames);
	return MP_OK;
}

mp_err mp_block_extra(const mp_snapshot *snap, const mp_block *b, mp_val *frames, int64_t *size,
		      const mp_block_at *at, mp_diag *diag)
{
	mp_history_item item;
	mp_err err;

	if (b->present & MP_F_BLK_FRAMES) {
		if (!(b->present & MP_F_BLK_REQUESTED_SIZE))
			return mp_fail(diag, MP_E_CORRUPT,
				       "%s: segments[%zu].blocks[%zu]: a block with 'frames' needs 'requested_size'",
				       at->analysis, at->seg, at->block);
		*frames = b->frames;
		*size = b->requested_size;
		return MP_OK;
	}
	if (b->present & MP_F_BLK_HISTORY) {
		err = mp_block_history_get(snap, b, 0, &item, at, diag);
		if (err != MP_OK)
			return err;
		*frames = item.frames;
		*size = item.real_size;
		return MP_OK;
	}
	*frames = MP_ABSENT;
	*size = (b->present & MP_F_BLK_REQUESTED_SIZE) ? b->requested_size : b->size;
	return MP_OK;
}
