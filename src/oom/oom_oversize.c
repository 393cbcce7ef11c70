/* oom_oversize.c - large segments that small live blocks keep from being released. Without
   max_split_size, a request of a few MiB may be carved out of a large cached block; the segment then cannot
   go back to the device while that block lives, however much of it is free. With max_split_size_mb:M the
   allocator never carves a request below M out of a block of M or more: such a request gets a segment of its
   own, and the large segment stays whole and is released by the OOM's retry. */
#include <stdlib.h>

#include "oom_int.h"
#include "mp_array.h"

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
		oom_relocation_sum(&moved, &g->moved, 1);
	}
	r.freed = sizes - oom_relocation_cost(&moved);
	r.works = r.nsegs > 0 && o->room >= 0 && o->room + r.freed >= o->alloc_size;
	return r;
}

static int by_value(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

oom_oversize oom_oversize_best(const oom_view *v, const mp_oom *o, bool stream_only)
{
	oom_oversize best = { 0 };
	int64_t *m = malloc((v->nsegs ? v->nsegs : 1) * sizeof *m);
	size_t n = 0;

	if (m == NULL)
		return best;
	/* the candidates: just above each segment's largest live block, in whole MiB, at least 21 MiB; each once */
	for (size_t i = 0; i < v->nsegs; i++) {
		const oom_seg *g = &v->segs[i];
		int64_t c = (g->largest_live / OOM_MIB + 1) * OOM_MIB;

		if (c < OOM_MIN_MAX_SPLIT)
			c = OOM_MIN_MAX_SPLIT;
		if (oom_oversize_qualifies(v, g, o, c) && !(stream_only && g->stream != o->req.stream))
			m[n++] = c;
	}
	mp_sort(m, n, sizeof *m, by_value);
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && m[i] == m[i - 1])
			continue;
		oom_oversize r = at(v, o, m[i], stream_only);

		/* the smallest M that works; else the one that frees most */
		if (best.m == 0 || (r.works && !best.works) || (!r.works && !best.works && r.freed > best.freed))
			best = r;
		if (best.works)
			break;
	}
	free(m);
	return best;
}
