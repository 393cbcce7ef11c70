/* oom_frag.c - how broken up the free memory of each pool and stream is. Two figures, both of the free
   blocks alone (live memory does not enter them):
     fragmentation = 1 − largest / Σ free      0 when the free memory is one block, near 1 when it is dust;
     sq_ratio      = Σ free² / (Σ free)²       1 for one block, 1/n for n equal pieces.
   The first says how much of the free memory the largest request that fits cannot use; the second how many
   "effective pieces" (1 / sq_ratio) it is in. */
#include <stdio.h>
#include <string.h>

#include "oom_int.h"

static mp_oom_frag *frag_of(mp_oom *o, const oom_seg *g, double *sq)
{
	char pool[48];

	if (g->private_pool)
		snprintf(pool, sizeof pool, "private (%lld, %lld) %s", (long long)g->pool_id[0], (long long)g->pool_id[1],
			 g->small ? "small" : "large");
	else
		snprintf(pool, sizeof pool, "%s", g->small ? "small" : "large");
	for (int i = 0; i < o->nfrags; i++)
		if (o->frags[i].stream == g->stream && strcmp(o->frags[i].pool, pool) == 0)
			return &o->frags[i];
	if (o->nfrags == MP_OOM_MAX_FRAGS)
		return NULL;
	mp_oom_frag *f = &o->frags[o->nfrags];

	sq[o->nfrags] = 0;
	o->nfrags++;
	*f = (mp_oom_frag){ .stream = g->stream };
	snprintf(f->pool, sizeof f->pool, "%s", pool);
	return f;
}

void oom_fragmentation(const oom_view *v, mp_oom *o)
{
	double sq[MP_OOM_MAX_FRAGS] = { 0 };

	for (size_t i = 0; i < v->nsegs; i++) {
		const oom_seg *g = &v->segs[i];
		mp_oom_frag *f = frag_of(o, g, sq);

		if (f == NULL)
			continue;
		for (size_t j = 0; j < g->s->nblocks; j++) {
			const mp_block *b = &mp_segment_blocks(v->snap, g->s)[j];

			if (!oom_block_free(v, b))
				continue;
			f->free_bytes += b->size;
			f->nfree++;
			if (b->size > f->largest)
				f->largest = b->size;
			sq[f - o->frags] += (double)b->size * (double)b->size;
		}
	}
	for (int i = 0; i < o->nfrags; i++) {
		mp_oom_frag *f = &o->frags[i];
		double total = (double)f->free_bytes;

		f->fragmentation = total > 0 ? 1.0 - (double)f->largest / total : 0;
		f->sq_ratio = total > 0 ? sq[i] / (total * total) : 0;
	}
}
