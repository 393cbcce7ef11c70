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
#include "mp_array.h"

/* When segment G was last emptied by a free (entry index, −1 none) and next allocated into after that. */
typedef struct window {
	const oom_seg *g;
	int64_t live;      /* its live bytes as the trace goes */
	bool known;        /* the trace holds its segment_alloc (else its live bytes are unknown) */
	int64_t emptied, refilled;
} window;

static int by_address(const void *pa, const void *pb)
{
	const window *a = pa, *b = pb;

	return (a->g->s->address > b->g->s->address) - (a->g->s->address < b->g->s->address);
}

/* The window whose segment holds ADDR, in W sorted by address. */
static window *window_at(window *w, size_t n, int64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w[mid].g->s->address <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= w[lo - 1].g->s->address + w[lo - 1].g->s->total_size)
		return NULL;
	return &w[lo - 1];
}

/* One pass over the device's trace: each window's last emptying and the refill after it. */
static void read_windows(const oom_view *v, const mp_trace_list *tl, window *w, size_t n)
{
	const mp_snapshot *snap = v->snap;

	for (size_t i = tl->first; i < tl->first + tl->n; i++) {
		const mp_trace_entry *e = &snap->trace[i];
		window *x = window_at(w, n, e->addr);

		if (x == NULL || e->size < 0 || e->size > OOM_MAX_SIZE)
			continue;
		if (mp_val_is(e->action, v->k->segment_alloc) && e->addr == x->g->s->address) {
			*x = (window){ .g = x->g, .known = true, .emptied = -1, .refilled = -1 };
		} else if (mp_val_is(e->action, v->k->segment_free) && e->addr == x->g->s->address) {
			x->known = false;
		} else if (x->known && mp_val_is(e->action, v->k->alloc)) {
			if (x->live == 0 && x->emptied >= 0 && x->refilled < 0)
				x->refilled = (int64_t)i;
			x->live += e->size;
			if (x->live > OOM_MAX_TOTAL)
				x->known = false; /* no segment holds that much: a damaged trace */
		} else if (x->known && mp_val_is(e->action, v->k->free_completed)) {
			x->live -= e->size;
			if (x->live == 0) {
				x->emptied = (int64_t)i;
				x->refilled = -1;
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		if (!w[i].known || w[i].refilled < 0)
			w[i].emptied = -1;
}

static int by_emptied(const void *pa, const void *pb)
{
	const window *a = *(window *const *)pa, *b = *(window *const *)pb;

	return (a->emptied > b->emptied) - (a->emptied < b->emptied);
}

static int by_refilled(const void *pa, const void *pb)
{
	const window *a = *(window *const *)pa, *b = *(window *const *)pb;

	return (a->refilled > b->refilled) - (a->refilled < b->refilled);
}

/* The latest point T (a window's emptying) at which the windows open then ([emptied, refilled)) release, net
   of segments of their own for their live blocks, enough with the free memory: −1 when none. A sweep: windows
   open in order of emptying and close in order of refilling. */
static int64_t best_point(const mp_oom *o, window *w, size_t n, int64_t *freed)
{
	window **open_at = malloc((n ? n : 1) * sizeof *open_at), **close_at = malloc((n ? n : 1) * sizeof *close_at);
	oom_relocation moved = { 0 };
	int64_t sizes = 0, best = -1;
	size_t m = 0, c = 0;

	if (open_at == NULL || close_at == NULL) {
		free(open_at);
		free(close_at);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (w[i].emptied >= 0)
			open_at[m] = close_at[m] = &w[i], m++;
	mp_sort(open_at, m, sizeof *open_at, by_emptied);
	mp_sort(close_at, m, sizeof *close_at, by_refilled);
	for (size_t i = 0; i < m; i++) {
		int64_t t = open_at[i]->emptied;

		sizes += open_at[i]->g->s->total_size;
		oom_relocation_sum(&moved, &open_at[i]->g->moved, 1);
		for (; c < m && close_at[c]->refilled <= t; c++) {
			sizes -= close_at[c]->g->s->total_size;
			oom_relocation_sum(&moved, &close_at[c]->g->moved, -1);
		}
		if (i + 1 < m && open_at[i + 1]->emptied == t)
			continue; /* the others emptied at the same entry open first */
		if (o->room + sizes - oom_relocation_cost(&moved) >= o->alloc_size) {
			best = t;
			*freed = sizes - oom_relocation_cost(&moved);
		}
	}
	free(open_at);
	free(close_at);
	return best;
}

static void claim(const oom_view *v, mp_oom *o, const mp_trace_entry *e, int64_t t, int64_t freed)
{
	mp_oom_remedy *r = &o->remedies[o->nremedies++];
	char *site = oom_site_of(v->snap, e->frames), a[32], b[32];

	*r = (mp_oom_remedy){ .id = MP_OOM_R_EMPTY_CACHE, .works = true };
	snprintf(r->action, sizeof r->action, "torch.cuda.empty_cache() after the free at %s (trace entry %lld)",
		 site != NULL ? site : "(no frames)", (long long)t);
	snprintf(r->why, sizeof r->why, "segments were then entirely free and got their live blocks only later: "
		 "released there, they give %s net, and with the %s free the allocation fits",
		 oom_size_text(a, sizeof a, freed), oom_size_text(b, sizeof b, o->room));
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
	if (o->room >= 0 && o->req.device >= 0 && (size_t)o->req.device < snap->ndevice_traces &&
	    (w = calloc(v->nsegs ? v->nsegs : 1, sizeof *w)) != NULL) {
		const mp_trace_list *tl = &snap->device_traces[o->req.device];

		for (size_t i = 0; i < v->nsegs; i++)
			if (!v->segs[i].private_pool && !v->segs[i].expandable && v->segs[i].live > 0)
				w[n++] = (window){ .g = &v->segs[i], .emptied = -1, .refilled = -1 };
		mp_sort(w, n, sizeof *w, by_address);
		read_windows(v, tl, w, n);
		best_t = best_point(o, w, n, &best);
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
