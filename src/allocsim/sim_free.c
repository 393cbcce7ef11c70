/* sim_free.c - a block given back: at once to its pool's free set (free_block, merging with free neighbours),
   or, when other streams used it (recordStream), after events recorded on those streams complete: the
   allocator looks at them at the start of each malloc outside a capture (process_events) and waits for them
   before it releases cached memory (synchronize_and_free_events). Events complete as the fake device completes
   them: when a synchronisation covers them. */
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "sim_int.h"

int64_t sim_try_merge_blocks(mp_sim *s, mp_sim_block *dst, mp_sim_block *src, sim_pool *pool)
{
	(void)pool;
	if (src == NULL || src->allocated || src->event_count > 0 || src->nuses > 0 || dst->mapped != src->mapped)
		return 0;
	if (dst->prev == src) { /* [src dst] */
		dst->addr = src->addr;
		dst->prev = src->prev;
		if (dst->prev != NULL)
			dst->prev->next = dst;
	} else { /* [dst src] */
		dst->next = src->next;
		if (dst->next != NULL)
			dst->next->prev = dst;
	}
	int64_t subsumed = src->size;

	dst->size += subsumed;
	src->prev = src->next = NULL;
	sim_block_delete(s, src);
	return subsumed;
}

void sim_free_block(mp_sim *s, mp_sim_block *b)
{
	int64_t original = b->size, requested = b->requested, net_blocks = 0, net_bytes = 0;
	mp_sim_block *candidates[2] = { b->prev, b->next };

	sim_untag(s, b);

	for (int i = 0; i < 2; i++) {
		int64_t subsumed = sim_try_merge_blocks(s, b, candidates[i], b->pool);

		if (subsumed > 0) {
			net_blocks--;
			net_bytes -= subsumed;
		}
	}
	b->in_active = false;
	sim_insert_into_blocks(b);
	if (sim_block_is_split(b)) {
		net_blocks++;
		net_bytes += b->size;
	}
	/* the allocator leaves expandable segments out of inactive_split: their free pages can always go */
	if (b->es == NULL) {
		sim_stat_add(&s->stats.inactive_split, net_blocks);
		sim_stat_add(&s->stats.inactive_split_bytes, net_bytes);
	}
	sim_stat_add(&s->stats.active, -1);
	sim_stat_add(&s->stats.active_bytes, -original);
	sim_stat_add(&s->stats.requested_bytes, -requested);
}

/* One event per stream B was used on, recorded now. */
static void insert_events(mp_sim *s, mp_sim_block *b)
{
	for (size_t i = 0; i < b->nuses; i++) {
		sim_stream *st = sim_stream_get(s, b->uses[i].stream);

		if (st == NULL)
			return;
		if (mp_array_grow((void **)&st->events, &st->cap, st->head + st->n + 1, sizeof *st->events) != MP_OK) {
			s->failed = true;
			return;
		}
		st->events[st->head + st->n++] = (sim_event){ .seq = ++s->clock, .block = b };
		b->event_count++;
	}
	b->nuses = 0;
}

void mp_sim_free(mp_sim *s, mp_sim_block *b)
{
	b->allocated = false;
	sim_stat_add(&s->stats.allocation, -1);
	sim_stat_add(&s->stats.allocated_bytes, -b->size);
	if (b->size >= s->conf.max_split_size)
		sim_stat_add(&s->stats.oversize_allocations, -1);
	if (b->nuses == 0) {
		sim_free_block(s, b);
	} else if (sim_capturing(s)) {
		/* no event may be recorded during a capture: later, when none is under way */
		if (mp_array_grow((void **)&s->deferred, &s->cap_deferred, s->ndeferred + 1, sizeof *s->deferred) != MP_OK) {
			s->failed = true;
			return;
		}
		s->deferred[s->ndeferred++] = b;
		b->deferred = true;
	} else {
		insert_events(s, b);
	}
}

void mp_sim_record_stream(mp_sim *s, mp_sim_block *b, uint64_t stream)
{
	if (stream == b->stream)
		return; /* uses on its own stream need no event */
	for (size_t i = 0; i < b->nuses; i++)
		if (b->uses[i].stream == stream) {
			b->uses[i].during_capture |= sim_capturing(s);
			return;
		}
	if (mp_array_grow((void **)&b->uses, &b->cap_uses, b->nuses + 1, sizeof *b->uses) != MP_OK) {
		s->failed = true;
		return;
	}
	b->uses[b->nuses++] = (sim_use){ .stream = stream, .during_capture = sim_capturing(s) };
}

/* The frees deferred during a capture get their events, from the streams recorded before it only (uses recorded
   during the capture have completed with it). */
static void insert_deferred(mp_sim *s)
{
	for (size_t i = 0; i < s->ndeferred; i++) {
		mp_sim_block *b = s->deferred[i];
		size_t k = 0;

		for (size_t j = 0; j < b->nuses; j++)
			if (!b->uses[j].during_capture)
				b->uses[k++] = b->uses[j];
		b->nuses = k;
		b->deferred = false;
		insert_events(s, b);
		if (b->event_count == 0)
			sim_free_block(s, b);
	}
	s->ndeferred = 0;
}

static bool event_done(const mp_sim *s, const sim_stream *st, const sim_event *e)
{
	return e->seq <= st->synced || e->seq <= s->device_synced;
}

/* One event of B is over: B goes back to its pool once it has none left. */
static void event_over(mp_sim *s, mp_sim_block *b)
{
	if (--b->event_count == 0)
		sim_free_block(s, b);
}

void sim_process_events(mp_sim *s)
{
	insert_deferred(s);
	for (size_t i = 0; i < s->nstreams; i++) {
		sim_stream *st = &s->streams[i];

		while (st->n > 0 && event_done(s, st, &st->events[st->head])) {
			mp_sim_block *b = st->events[st->head].block;

			st->head++;
			st->n--;
			event_over(s, b);
		}
		if (st->n == 0)
			st->head = 0;
	}
}

void sim_synchronize_and_free_events(mp_sim *s, const sim_private *only)
{
	s->stats.num_sync_all_streams++;
	insert_deferred(s);
	for (size_t i = 0; i < s->nstreams; i++) {
		sim_stream *st = &s->streams[i];
		size_t kept = 0;

		for (size_t j = 0; j < st->n; j++) {
			sim_event e = st->events[st->head + j];

			if (only != NULL && e.block->pool->owner != only) {
				st->events[st->head + kept++] = e;
				continue;
			}
			/* waiting for an event completes its stream up to it (the fake's cudaEventSynchronize) */
			if (st->synced < e.seq)
				st->synced = e.seq;
			event_over(s, e.block);
		}
		st->n = kept;
		if (kept == 0)
			st->head = 0;
	}
}

void mp_sim_complete(mp_sim *s, int64_t tag)
{
	int64_t v;
	mp_sim_block *b;

	if (!mp_i64map_get(&s->tags, tag, &v))
		return; /* completed already: the allocator synchronised it */
	b = (mp_sim_block *)(intptr_t)v;
	/* its events leave their queues; a free deferred by a capture is done with too */
	for (size_t i = 0; i < s->nstreams; i++) {
		sim_stream *st = &s->streams[i];
		size_t kept = 0;

		for (size_t j = 0; j < st->n; j++)
			if (st->events[st->head + j].block != b)
				st->events[st->head + kept++] = st->events[st->head + j];
		st->n = kept;
	}
	if (b->deferred) {
		size_t k = 0;

		for (size_t i = 0; i < s->ndeferred; i++)
			if (s->deferred[i] != b)
				s->deferred[k++] = s->deferred[i];
		s->ndeferred = k;
		b->deferred = false;
	}
	b->nuses = 0;
	b->event_count = 0;
	if (!b->allocated && b->in_active)
		sim_free_block(s, b);
}

void mp_sim_sync(mp_sim *s)
{
	s->device_synced = s->clock;
}

void mp_sim_sync_stream(mp_sim *s, uint64_t stream)
{
	sim_stream *st = sim_stream_get(s, stream);

	if (st != NULL)
		st->synced = s->clock;
}
