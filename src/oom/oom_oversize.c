/* oom_oversize.c - large segments that small live blocks keep from being released. Without
   max_split_size, a request of a few MiB may be carved out of a large cached block; the segment then cannot
   go back to the device while that block lives, however much of it is free. With max_split_size_mb:M the
   allocator never carves a request below M out of a block of M or more: such a request gets a segment of its
   own, and the large segment stays whole and is released by the OOM's retry. */
#include "oom_int.h"

bool oom_oversize_qualifies(const oom_view *v, const oom_seg *g, const mp_oom *o, int64_t m)
{
	(void)v;
	return !g->private_pool && !g->small && !g->expandable && g->live > 0 && g->largest_live < m &&
	       g->s->total_size >= m && (o->max_split_size == INT64_MAX || g->s->total_size < o->max_split_size);
}

/* The net bytes released at M: the qualifying segments go back, their live blocks get segments of their own. */
static oom_oversize at(const oom_view *v, const mp_oom *o, int64_t m, bool stream_only)
{
	oom_oversize r = { .m = m };
	oom_relocation moved = { 0 };
	int64_t sizes = 0;

	for (size_t i = 0; i < v->nsegs; i++) {
		const oom_seg *g = &v->segs[i];

		if (!oom_oversize_qualifies(v, g, o, m) || (stream_only && g->stream != o->req.stream))
			continue;
		r.nsegs++;
		sizes += g->s->total_size;
		r.free_inside += g->s->total_size - g->live - g->pending;
		for (size_t j = 0; j < g->s->nblocks; j++) {
			const mp_block *b = &mp_segment_blocks(v->snap, g->s)[j];

			if (oom_block_live(v, b))
				oom_relocation_add(&moved, b->size);
		}
	}
	r.freed = sizes - oom_relocation_cost(&moved);
	r.works = r.nsegs > 0 && o->req.device_free >= 0 && o->req.device_free + r.freed >= o->alloc_size;
	return r;
}

oom_oversize oom_oversize_best(const oom_view *v, const mp_oom *o, bool stream_only)
{
	oom_oversize best = { 0 };

	/* the candidates: just above each segment's largest live block, in whole MiB, at least 21 MiB */
	for (size_t i = 0; i < v->nsegs; i++) {
		const oom_seg *g = &v->segs[i];
		int64_t m = (g->largest_live / OOM_MIB + 1) * OOM_MIB;

		if (m < OOM_MIN_MAX_SPLIT)
			m = OOM_MIN_MAX_SPLIT;
		if (!oom_oversize_qualifies(v, g, o, m) || (stream_only && g->stream != o->req.stream))
			continue;
		oom_oversize r = at(v, o, m, stream_only);

		/* the smallest M that works; else the one that frees most */
		if (best.m == 0 || (r.works && (!best.works || r.m < best.m)) ||
		    (!r.works && !best.works && r.freed > best.freed))
			best = r;
	}
	return best;
}
