/* oom_view.c - the segments of one device as the allocator files them: pool (small, large, private), stream,
   and how much of each is live, waiting for events, or free. */
#include <stdlib.h>

#include "mp_whatif.h"
#include "oom_int.h"

static void read_pool_id(const mp_snapshot *snap, const mp_segment *s, int64_t id[2])
{
	id[0] = id[1] = 0;
	if (!(s->present & MP_F_SEG_SEGMENT_POOL_ID) || mp_heap_len(snap->heap, s->segment_pool_id) != 2)
		return;
	const mp_val *items = mp_heap_items(snap->heap, s->segment_pool_id);

	for (int i = 0; i < 2; i++)
		if (!mp_heap_get_i64(snap->heap, items[i], &id[i]))
			id[i] = 0;
}

/* Whether segment S and its blocks have sizes an allocator can have; TOTAL adds S's size. */
static mp_err check_sizes(const mp_snapshot *snap, const mp_segment *s, int64_t *total, mp_diag *diag)
{
	int64_t sum = 0;

	if (s->total_size < 0 || s->total_size > OOM_MAX_SIZE || (*total += s->total_size) > OOM_MAX_TOTAL)
		return mp_fail(diag, MP_E_CORRUPT, "segment at 0x%llx has size %lld: no allocator state has it",
			       (unsigned long long)s->address, (long long)s->total_size);
	for (size_t j = 0; j < s->nblocks; j++) {
		const mp_block *b = &mp_segment_blocks(snap, s)[j];

		if (b->size < 0 || (sum += b->size) > s->total_size)
			return mp_fail(diag, MP_E_CORRUPT, "the blocks of segment at 0x%llx overrun its %lld bytes",
				       (unsigned long long)s->address, (long long)s->total_size);
	}
	return MP_OK;
}

mp_err oom_view_open(const mp_snapshot *snap, int64_t device, oom_view *v, mp_diag *diag)
{
	int64_t total = 0;
	mp_err err;

	*v = (oom_view){ .snap = snap, .k = mp_heap_keys(snap->heap) };
	if (snap->nsegments > 0 && (v->segs = calloc(snap->nsegments, sizeof *v->segs)) == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; i < snap->nsegments; i++) {
		const mp_segment *s = &snap->segments[i];
		oom_seg *g = &v->segs[v->nsegs];

		if (s->device != device)
			continue;
		if ((err = check_sizes(snap, s, &total, diag)) != MP_OK) {
			oom_view_close(v);
			return err;
		}
		*g = (oom_seg){ .s = s, .stream = s->stream, .small = mp_val_is(s->segment_type, v->k->small),
				.expandable = s->is_expandable == MP_TRUE };
		read_pool_id(snap, s, g->pool_id);
		g->private_pool = g->pool_id[0] != 0 || g->pool_id[1] != 0;
		for (size_t j = 0; j < s->nblocks; j++) {
			const mp_block *b = &mp_segment_blocks(snap, s)[j];

			if (oom_block_live(v, b)) {
				oom_relocation_add(&g->moved, b->size);
				g->live += b->size;
				/* what the tensor asked for, in the allocator's 512-byte steps */
				g->live_needed += b->requested_size > 0 && b->requested_size <= b->size
							  ? (b->requested_size + 511) / 512 * 512 : b->size;
				if (b->size > g->largest_live)
					g->largest_live = b->size;
			} else if (oom_block_pending(v, b)) {
				g->pending += b->size;
			}
		}
		v->nsegs++;
	}
	return MP_OK;
}

void oom_view_close(oom_view *v)
{
	free(v->segs);
	v->segs = NULL;
	mp_whatif_close(v->whatif);
	v->whatif = NULL;
}
