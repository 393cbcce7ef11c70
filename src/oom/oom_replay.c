/* oom_replay.c - the allocator's decision for the request, replayed on the state read: the best fit on the
   request's stream in its pool, cudaMalloc of the allocation size, then the retry that frees cached segments
   and asks cudaMalloc again. */
#include <stdarg.h>
#include <stdio.h>

#include "mp_array.h"
#include "mp_out.h"
#include "oom_int.h"

/* One more step of the decision, its sentence whole however long it is. MP_E_NOMEM, O unchanged. */
static mp_err step(mp_oom *o, const char *fmt, ...) MP_PRINTF(2, 3);
static mp_err step(mp_oom *o, const char *fmt, ...)
{
	va_list ap;
	mp_out text;
	char *s;
	mp_err err;

	if ((err = mp_array_grow((void **)&o->decision, &o->cap_decision, (size_t)o->ndecision + 1,
				 sizeof *o->decision)) != MP_OK)
		return err;
	mp_out_init(&text);
	va_start(ap, fmt);
	mp_out_vprintf(&text, fmt, ap);
	va_end(ap);
	if ((s = mp_out_take(&text, NULL)) == NULL) {
		err = text.err != MP_OK ? text.err : MP_E_NOMEM;
		mp_out_free(&text);
		return err;
	}
	o->decision[o->ndecision++] = s;
	return MP_OK;
}

/* Whether a free block of SIZE may serve the request under max_split_size (oversize blocks are kept for
   requests at least as large, and then only within 20 MiB of their size). */
bool oom_split_rules_allow(const mp_oom *o, int64_t size)
{
	if (o->rounded < o->max_split_size && size >= o->max_split_size)
		return false;
	if (o->rounded >= o->max_split_size && size >= o->rounded + OOM_LARGE_BUFFER)
		return false;
	return true;
}

/* Whether SEG is one the request searches: a default pool of its kind and stream. */
bool oom_searched(const oom_seg *g, const mp_oom *o)
{
	return !g->private_pool && g->small == o->small_pool && g->stream == o->req.stream &&
	       (!g->expandable || o->expandable);
}

/* The largest free block the request's search sees. */
static int64_t largest_searched(const oom_view *v, const mp_oom *o)
{
	int64_t largest = 0;

	for (size_t i = 0; i < v->nsegs; i++) {
		if (!oom_searched(&v->segs[i], o))
			continue;
		for (size_t j = 0; j < v->segs[i].s->nblocks; j++) {
			const mp_block *b = &mp_segment_blocks(v->snap, v->segs[i].s)[j];

			if (oom_block_free(v, b) && b->size > largest)
				largest = b->size;
		}
	}
	return largest;
}

static int64_t clamp(int64_t x, int64_t lo, int64_t hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* The request's rounded size, pool and allocation size, and the largest free block its search sees. An exception's message gives the allocation size
   only: 2 MiB is a small request, 20 MiB a large one under 10 MiB (or of 18 to 20 MiB), anything else the
   request rounded up to 2 MiB. Where that leaves a range, the allocator's failure narrows it: no free block
   of the stream and pool was large enough. */
static void size_request(const oom_view *v, mp_oom *o)
{
	int64_t above;

	if (o->req.source != MP_OOM_FROM_EXCEPTION) {
		o->rounded = oom_round_size(o, o->req.size);
		o->small_pool = o->rounded <= OOM_SMALL_SIZE;
		o->alloc_size = oom_allocation_size(o, o->rounded);
		o->size_exact = true;
		o->size_above = o->size_max = o->rounded;
		o->largest_free = largest_searched(v, o);
		return;
	}
	o->alloc_size = o->req.size;
	o->small_pool = o->alloc_size <= OOM_SMALL_BUFFER;
	o->size_exact = false;
	o->largest_free = largest_searched(v, o);
	/* no free block of the stream and pool was large enough, unless max_split_size refused one */
	above = o->largest_free < o->max_split_size ? o->largest_free : 0;
	if (o->small_pool) {
		o->size_above = above;
		o->size_max = OOM_SMALL_SIZE;
		o->rounded = clamp(above + 512, 512, OOM_SMALL_SIZE);
	} else if (o->alloc_size == OOM_LARGE_BUFFER && above < OOM_MIN_LARGE_ALLOC - 512) {
		/* 1 to 10 MiB get a 20 MiB segment, and so do 18 to 20 MiB rounded up to 2 MiB */
		o->size_above = above > OOM_SMALL_SIZE ? above : OOM_SMALL_SIZE;
		o->size_max = OOM_MIN_LARGE_ALLOC - 512;
		o->size_also_large = true;
		o->rounded = clamp(above + 512, OOM_SMALL_SIZE + 512, OOM_LARGE_BUFFER);
	} else {
		int64_t floor2 = o->alloc_size - OOM_ROUND_LARGE;

		o->size_above = above > floor2 ? above : floor2;
		o->size_max = o->alloc_size;
		o->rounded = o->alloc_size;
	}
}

static void best_fit(const oom_view *v, mp_oom *o, bool *refused)
{
	int64_t best = -1, best_addr = -1;

	for (size_t i = 0; i < v->nsegs; i++) {
		const oom_seg *g = &v->segs[i];

		if (!oom_searched(g, o))
			continue;
		for (size_t j = 0; j < g->s->nblocks; j++) {
			const mp_block *b = &mp_segment_blocks(v->snap, g->s)[j];

			if (!oom_block_free(v, b))
				continue;
			if (b->size >= o->rounded && (best < 0 || b->size < best || (b->size == best && b->address < best_addr))) {
				best = b->size;
				best_addr = b->address;
			}
		}
	}
	/* the allocator takes the smallest fitting block, then may refuse it: it does not look further */
	*refused = best >= 0 && !oom_split_rules_allow(o, best);
	if (best >= 0 && !*refused) {
		o->best_fit_addr = best_addr;
		o->best_fit_size = best;
	}
}

/* What the retry releases now: pending frees are synchronised, then every default-pool segment with no live
   block goes back to the device, and an expandable segment's whole pages that are not live are unmapped. */
static int64_t retry_release(const oom_view *v)
{
	int64_t r = 0;

	for (size_t i = 0; i < v->nsegs; i++) {
		const oom_seg *g = &v->segs[i];
		int64_t page = oom_page_of(g->small);

		if (g->private_pool)
			continue;
		if (!g->expandable) {
			r += g->live == 0 ? g->s->total_size : 0;
			continue;
		}
		for (size_t j = 0; j < g->s->nblocks; j++) {
			const mp_block *b = &mp_segment_blocks(v->snap, g->s)[j];
			int64_t at = b->address - g->s->address, lo = (at + page - 1) / page, hi = (at + b->size) / page;

			if (!oom_block_live(v, b) && hi > lo)
				r += (hi - lo) * page;
		}
	}
	return r;
}

/* What mapping pages for the request takes, with expandable segments: whole pages of the pool's size, fewer when
   a segment of the request's stream and pool ends in a free block the request can grow from (its mapped run
   ends where its unmapped address space begins). */
static int64_t pages_needed(const oom_view *v, const mp_oom *o)
{
	int64_t page = oom_page_of(o->small_pool), size = o->rounded;
	int64_t need = (size + page - 1) / page * page;

	for (size_t i = 0; i < v->nsegs; i++) {
		const oom_seg *g = &v->segs[i];
		const mp_block *last;

		if (!oom_searched(g, o) || !g->expandable || g->s->nblocks == 0)
			continue;
		last = &mp_segment_blocks(v->snap, g->s)[g->s->nblocks - 1];
		if (oom_block_free(v, last) && last->size < size) {
			int64_t more = (size - last->size + page - 1) / page * page;

			if (more < need)
				need = more;
		}
	}
	return need;
}

/* What cudaMalloc can still get, in words: what is free, or what a memory fraction leaves. */
static const char *room_text(const mp_oom *o, char *buf, size_t n)
{
	char a[32], b[32], c[32];

	if (o->req.device_free > o->room)
		snprintf(buf, n, "%s is left of the %s the memory fraction allows%s%s%s", oom_size_text(a, sizeof a, o->room),
			 oom_size_text(b, sizeof b, o->req.message.allowed),
			 o->req.message.allowed_slack > 0 ? " (the message rounds it: counted at its least, " : "",
			 o->req.message.allowed_slack > 0 ? oom_size_text(c, sizeof c, o->req.message.allowed_slack) : "",
			 o->req.message.allowed_slack > 0 ? " below)" : "");
	else
		snprintf(buf, n, "%s is free", oom_size_text(a, sizeof a, o->room));
	return buf;
}

mp_err oom_replay(const oom_view *v, mp_oom *o)
{
	char room[200];

	char a[32], b[32], c[32];
	bool refused;
	int64_t need;
	mp_err err;

	size_request(v, o);
	o->best_fit_addr = o->best_fit_size = -1;
	best_fit(v, o, &refused);
	if (o->best_fit_addr >= 0) {
		o->verdict = MP_OOM_V_CACHED;
		return step(o, "best fit on stream %lld in the %s pool: the free block at 0x%llx (%s) serves it",
			    (long long)o->req.stream, o->small_pool ? "small" : "large",
			    (unsigned long long)o->best_fit_addr, oom_size_text(a, sizeof a, o->best_fit_size));
	}
	if (refused)
		err = step(o, "best fit on stream %lld in the %s pool: refused, max_split_size keeps blocks of %s and "
			   "more for requests as large", (long long)o->req.stream, o->small_pool ? "small" : "large",
			   oom_size_text(a, sizeof a, o->max_split_size));
	else
		err = step(o, "best fit on stream %lld in the %s pool: none, the largest free block is %s, %s is needed",
			   (long long)o->req.stream, o->small_pool ? "small" : "large",
			   oom_size_text(a, sizeof a, o->largest_free), oom_size_text(b, sizeof b, o->rounded));
	if (err != MP_OK)
		return err;
	/* an expandable segment maps whole pages for the request; otherwise cudaMalloc gets the allocation size */
	need = o->expandable ? pages_needed(v, o) : o->alloc_size;
	o->released_by_retry = retry_release(v);
	if (o->room < 0) {
		o->verdict = MP_OOM_V_UNKNOWN_FREE;
		return step(o, "%s(%s): the device's free memory is unknown here; the retry would release %s of cached "
			    "segments", o->expandable ? "mapping pages" : "cudaMalloc", oom_size_text(a, sizeof a, need),
			    oom_size_text(b, sizeof b, o->released_by_retry));
	}
	if (need <= o->room) {
		o->verdict = MP_OOM_V_CUDAMALLOC;
		return step(o, "%s(%s) succeeds: %s", o->expandable ? "mapping pages" : "cudaMalloc",
			    oom_size_text(a, sizeof a, need), room_text(o, room, sizeof room));
	}
	if ((err = step(o, "%s(%s) fails: %s", o->expandable ? "mapping pages" : "cudaMalloc",
			oom_size_text(a, sizeof a, need), room_text(o, room, sizeof room))) != MP_OK)
		return err;
	if (need <= o->room + o->released_by_retry && o->req.source == MP_OOM_FROM_ARGS) {
		o->verdict = MP_OOM_V_AFTER_RELEASE;
		return step(o, "the retry releases %s of cached segments free as a whole, then %s succeeds",
			    oom_size_text(a, sizeof a, o->released_by_retry), oom_size_text(c, sizeof c, need));
	}
	o->verdict = MP_OOM_V_OOM;
	if (need <= o->room + o->released_by_retry) {
		/* yet the allocator raised: its retry cannot have run */
		o->retry_skipped = true;
		return step(o, "the retry would release %s (pending frees synchronised, segments free as a whole), "
			    "enough; the allocator raised all the same, so it skipped the retry: 2.6 does while a "
			    "torch.cuda.MemPool or a graph capture routes allocations to a private pool",
			    oom_size_text(a, sizeof a, o->released_by_retry));
	}
	return step(o, "the retry (pending frees synchronised, cached segments free as a whole released) gives back %s: "
		       "%s free < %s, out of memory", oom_size_text(a, sizeof a, o->released_by_retry),
		    oom_size_text(b, sizeof b, o->room + o->released_by_retry), oom_size_text(c, sizeof c, need));
}
