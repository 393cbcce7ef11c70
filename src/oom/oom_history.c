/* oom_history.c - torch.cuda.empty_cache() at an earlier point, found in the trace ring. empty_cache() at the
   OOM itself releases nothing the OOM's retry did not; but a segment that live blocks split now was, at some
   moment, entirely free: an empty_cache() then would have given it back before they were put in it (they get
   segments of their own instead, without its free rest). For each split segment of the default pools the trace
   says when it last became empty (the free that emptied it) and when the next allocation went into it; a call
   between the two releases it. memprof claims the latest such point at which the segments released there, net
   of segments of their own for the blocks later put in them, leave room for the request. With a skipped retry
   (2.6 inside a MemPool), empty_cache() before the request does what the retry would have done. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oom_int.h"

/* When segment G was last emptied by a free (entry index, −1 none) and next allocated into after that. */
typedef struct window {
	const oom_seg *g;
	int64_t emptied, refilled;
} window;

static window window_of(const oom_view *v, const mp_trace_list *tl, const oom_seg *g)
{
	const mp_snapshot *snap = v->snap;
	int64_t lo = g->s->address, hi = lo + g->s->total_size, live = 0;
	window w = { g, -1, -1 };
	bool known = false;

	for (size_t i = tl->first; i < tl->first + tl->n; i++) {
		const mp_trace_entry *e = &snap->trace[i];

		if (e->addr < lo || e->addr >= hi)
			continue;
		if (mp_val_is(e->action, v->k->segment_alloc) && e->addr == lo) {
			known = true;
			live = 0;
			w.emptied = w.refilled = -1;
		} else if (mp_val_is(e->action, v->k->segment_free) && e->addr == lo) {
			known = false;
		} else if (known && mp_val_is(e->action, v->k->alloc)) {
			if (live == 0 && w.emptied >= 0 && w.refilled < 0)
				w.refilled = (int64_t)i;
			live += e->size;
		} else if (known && mp_val_is(e->action, v->k->free_completed)) {
			live -= e->size;
			if (live == 0) {
				w.emptied = (int64_t)i;
				w.refilled = -1;
			}
		}
	}
	if (!known || w.refilled < 0)
		w.emptied = -1;
	return w;
}

/* What an empty_cache() right after entry T releases, net: the windows open at T. */
static int64_t freed_at(const oom_view *v, const window *w, size_t n, int64_t t)
{
	oom_relocation moved = { 0 };
	int64_t sizes = 0;

	for (size_t i = 0; i < n; i++) {
		if (w[i].emptied < 0 || w[i].emptied > t || w[i].refilled <= t)
			continue;
		sizes += w[i].g->s->total_size;
		for (size_t j = 0; j < w[i].g->s->nblocks; j++) {
			const mp_block *b = &mp_segment_blocks(v->snap, w[i].g->s)[j];

			if (oom_block_live(v, b))
				oom_relocation_add(&moved, b->size);
		}
	}
	return sizes - oom_relocation_cost(&moved);
}

static void claim(const oom_view *v, mp_oom *o, const mp_trace_entry *e, int64_t t, int64_t freed)
{
	mp_oom_remedy *r = &o->remedies[o->nremedies++];
	char *site = oom_site_of(v->snap, e->frames), a[32], b[32];

	*r = (mp_oom_remedy){ .id = MP_OOM_R_EMPTY_CACHE, .works = true };
	snprintf(r->action, sizeof r->action, "torch.cuda.empty_cache() after the free at %s (trace entry %lld)",
		 site != NULL ? site : "(no frames)", (long long)t);
	snprintf(r->why, sizeof r->why, "large segments were then entirely free and were split later by smaller "
		 "blocks: released there, they give %s net, and with the %s free the allocation fits",
		 oom_size_text(a, sizeof a, freed), oom_size_text(b, sizeof b, o->req.device_free));
	free(site);
}

void oom_empty_cache_remedy(const oom_view *v, mp_oom *o)
{
	const mp_snapshot *snap = v->snap;
	window *w;
	size_t n = 0;
	int64_t best_t = -1, best = 0;

	if (o->nremedies >= MP_OOM_MAX_REMEDIES - 1)
		return;
	if (o->retry_skipped) {
		mp_oom_remedy *r = &o->remedies[o->nremedies++];
		char a[32];

		*r = (mp_oom_remedy){ .id = MP_OOM_R_EMPTY_CACHE, .works = true };
		snprintf(r->action, sizeof r->action, "torch.cuda.empty_cache() before the request, outside the "
			 "MemPool or capture");
		snprintf(r->why, sizeof r->why, "it does what the skipped retry would have done: it waits for the pending "
			 "frees' events and releases the %s of segments left free as a whole, and the allocation fits",
			 oom_size_text(a, sizeof a, o->released_by_retry));
		return;
	}
	if (o->req.device_free >= 0 && o->req.device >= 0 && (size_t)o->req.device < snap->ndevice_traces &&
	    (w = calloc(v->nsegs, sizeof *w)) != NULL) {
		const mp_trace_list *tl = &snap->device_traces[o->req.device];

		for (size_t i = 0; i < v->nsegs; i++)
			if (!v->segs[i].private_pool && !v->segs[i].expandable && v->segs[i].live > 0)
				w[n++] = window_of(v, tl, &v->segs[i]);
		for (size_t i = 0; i < n; i++) {
			int64_t f;

			if (w[i].emptied < 0)
				continue;
			f = freed_at(v, w, n, w[i].emptied);
			if (o->req.device_free + f >= o->alloc_size && w[i].emptied > best_t) {
				best_t = w[i].emptied;
				best = f;
			}
		}
		free(w);
		if (best_t >= 0) {
			claim(v, o, &snap->trace[best_t], best_t - (int64_t)tl->first, best);
			return;
		}
	}
	mp_oom_remedy *r = &o->remedies[o->nremedies++];

	*r = (mp_oom_remedy){ .id = MP_OOM_R_EMPTY_CACHE, .works = false };
	snprintf(r->action, sizeof r->action, "torch.cuda.empty_cache()");
	snprintf(r->why, sizeof r->why, "at the OOM it releases what the OOM's retry released already; %s",
		 snap->ntrace == 0 ? "without a trace (memory history) no earlier point can be named"
				   : "no earlier point in the trace leaves room for the request");
}
