/* sim_state.c - the model's life: a new device allocator, its Block objects, the free sets' bookkeeping,
   statistics, and the walk over its segments and blocks in snapshot()'s order. */
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "sim_int.h"

void sim_pool_init(sim_pool *p, bool small, sim_private *owner, enum sim_order order)
{
	*p = (sim_pool){ .small = small, .owner = owner };
	sim_set_init(&p->blocks, sim_cmp_size_for(order));
	sim_set_init(&p->unmapped, sim_cmp_addr);
}

mp_sim *mp_sim_new(const mp_sim_conf *conf, mp_sim_release r, int64_t total, int64_t outside)
{
	mp_sim *s = calloc(1, sizeof *s);

	if (s == NULL)
		return NULL;
	s->conf = *conf;
	s->release = r;
	sim_rules_for(r, &s->rules);
	s->total = total;
	s->outside = outside < 0 ? 0 : outside;
	/* the fake reserves 4x its capacity for cudaMalloc and 32x, at least 1 TiB and at most 64 TiB, for
	   cuMemAddressReserve (a GPU's address space is larger still: expandable segments reserve 9/8 of the
	   device each, and keep an emptied one's reservation) */
	int64_t reserve = 32 * total < ((int64_t)1 << 40) ? (int64_t)1 << 40 : 32 * total;

	sim_arena_init(&s->malloc_arena, MP_SIM_MALLOC_BASE, 4 * total + 2 * MP_SIM_MIB);
	sim_arena_init(&s->reserve_arena, MP_SIM_RESERVE_BASE, reserve < ((int64_t)64 << 40) ? reserve : (int64_t)64 << 40);
	if (s->malloc_arena.free == NULL || s->reserve_arena.free == NULL) {
		mp_sim_free_all(s);
		return NULL;
	}
	sim_pool_init(&s->large_blocks, false, NULL, s->rules.order);
	sim_pool_init(&s->small_blocks, true, NULL, s->rules.order);
	if (conf->fraction >= 0)
		mp_sim_set_fraction(s, conf->fraction); /* per_process_memory_fraction: when the allocator is made */
	return s;
}

void mp_sim_free_all(mp_sim *s)
{
	if (s == NULL)
		return;
	while (s->all != NULL)
		sim_block_delete(s, s->all);
	while (s->expandable_segments != NULL)
		sim_expseg_delete(s, s->expandable_segments);
	while (s->graph_pools != NULL) {
		sim_private *p = s->graph_pools;

		s->graph_pools = p->next;
		free(p);
	}
	while (s->dead_pools != NULL) {
		sim_private *p = s->dead_pools;

		s->dead_pools = p->next;
		free(p);
	}
	for (size_t i = 0; i < s->nstreams; i++)
		free(s->streams[i].events);
	free(s->streams);
	free(s->captures);
	free(s->deferred);
	mp_i64map_fini(&s->tags);
	sim_arena_fini(&s->malloc_arena);
	sim_arena_fini(&s->reserve_arena);
	free(s);
}

void mp_sim_set_allowed(mp_sim *s, int64_t bytes)
{
	s->allowed_memory_maximum = bytes;
	s->set_fraction = true;
}

bool mp_sim_failed(const mp_sim *s)
{
	return s->failed;
}

void mp_sim_set_conf(mp_sim *s, const mp_sim_conf *conf)
{
	s->conf = *conf;
}

const mp_sim_conf *mp_sim_conf_of(const mp_sim *s)
{
	return &s->conf;
}

void mp_sim_set_fraction(mp_sim *s, double f)
{
	double cap = f * (double)s->total;

	if (s->rules.fraction_one_uncapped && f >= 1.0) {
		s->set_fraction = false; /* no cap at all, and so no garbage collection */
		return;
	}
	s->allowed_memory_maximum = s->rules.fraction_rounds ? (int64_t)(cap + 0.5) : (int64_t)cap;
	s->set_fraction = true;
}

mp_sim_block *sim_block_new(mp_sim *s, uint64_t stream, int64_t size, sim_pool *pool, int64_t addr,
			    const mp_sim_block *from)
{
	mp_sim_block *b = calloc(1, sizeof *b);

	if (b == NULL) {
		s->failed = true;
		return NULL;
	}
	/* 2.12 counts every new Block; 2.13 counts segments, and what is cut from one keeps its count */
	b->order = from == NULL || s->rules.order == SIM_ORDER_BLOCK ? ++s->counter : from->order;
	b->stream = stream;
	b->size = size;
	b->pool = pool;
	b->addr = addr;
	b->mapped = true;
	b->all_next = s->all;
	if (s->all != NULL)
		s->all->all_prev = b;
	s->all = b;
	return b;
}

void sim_untag(mp_sim *s, mp_sim_block *b)
{
	if (b->tag != 0) {
		mp_i64map_del(&s->tags, b->tag);
		b->tag = 0;
	}
}

void mp_sim_tag(mp_sim *s, mp_sim_block *b, int64_t tag)
{
	sim_untag(s, b);
	if (tag != 0 && mp_i64map_put(&s->tags, tag, (int64_t)(intptr_t)b) == MP_OK)
		b->tag = tag;
	else if (tag != 0)
		s->failed = true;
}

void sim_block_delete(mp_sim *s, mp_sim_block *b)
{
	sim_untag(s, b);
	if (b->in_set)
		sim_set_erase(b->mapped ? &b->pool->blocks : &b->pool->unmapped, b);
	if (b->all_prev != NULL)
		b->all_prev->all_next = b->all_next;
	else
		s->all = b->all_next;
	if (b->all_next != NULL)
		b->all_next->all_prev = b->all_prev;
	free(b->uses);
	free(b);
}

void sim_insert_into_blocks(mp_sim_block *b)
{
	b->gc_count_base = b->pool->get_free_blocks_call_count;
	sim_set_insert(b->mapped ? &b->pool->blocks : &b->pool->unmapped, b);
	b->in_set = true;
}

void sim_erase_from_blocks(mp_sim_block *b)
{
	if (!b->in_set)
		return;
	sim_set_erase(b->mapped ? &b->pool->blocks : &b->pool->unmapped, b);
	b->in_set = false;
}

void sim_stat_add(mp_sim_stat *st, int64_t delta)
{
	st->current += delta;
	if (delta > 0)
		st->allocated += delta;
	else
		st->freed -= delta;
	if (st->current > st->peak)
		st->peak = st->current;
}

const mp_sim_stats *mp_sim_stats_of(const mp_sim *s)
{
	return &s->stats;
}

int64_t mp_sim_block_addr(const mp_sim_block *b)
{
	return b->addr;
}

int64_t mp_sim_block_size(const mp_sim_block *b)
{
	return b->size;
}

uint64_t mp_sim_block_stream(const mp_sim_block *b)
{
	return b->stream;
}

sim_stream *sim_stream_get(mp_sim *s, uint64_t handle)
{
	for (size_t i = 0; i < s->nstreams; i++)
		if (s->streams[i].handle == handle)
			return &s->streams[i];
	if (mp_array_grow((void **)&s->streams, &s->cap_streams, s->nstreams + 1, sizeof *s->streams) != MP_OK) {
		s->failed = true;
		return NULL;
	}
	s->streams[s->nstreams] = (sim_stream){ .handle = handle };
	return &s->streams[s->nstreams++];
}

/* ---- the walk: snapshot()'s segments are the heads of mapped runs, sorted by address */

static int by_addr(const void *pa, const void *pb)
{
	const mp_sim_block *a = *(mp_sim_block *const *)pa, *b = *(mp_sim_block *const *)pb;

	return (a->addr > b->addr) - (a->addr < b->addr);
}

mp_err mp_sim_walk(const mp_sim *s, mp_sim_seg_fn seg, mp_sim_block_fn block, void *ctx)
{
	size_t n = 0, k = 0;
	const mp_sim_block **heads;

	for (const mp_sim_block *b = s->all; b != NULL; b = b->all_next)
		n += b->mapped && !(b->prev != NULL && b->prev->mapped);
	if ((heads = malloc((n ? n : 1) * sizeof *heads)) == NULL)
		return MP_E_NOMEM;
	for (const mp_sim_block *b = s->all; b != NULL; b = b->all_next)
		if (b->mapped && !(b->prev != NULL && b->prev->mapped))
			heads[k++] = b;
	mp_sort(heads, n, sizeof *heads, by_addr);
	for (size_t i = 0; i < n; i++) {
		const mp_sim_block *h = heads[i];
		mp_sim_seg_info si = { .addr = h->addr, .stream = h->stream, .small = h->pool->small,
				       .expandable = h->es != NULL };

		if (h->pool->owner != NULL) {
			si.pool_id[0] = h->pool->owner->id[0];
			si.pool_id[1] = h->pool->owner->id[1];
		}
		for (const mp_sim_block *b = h; b != NULL && b->mapped; b = b->next)
			si.total_size += b->size;
		if (seg != NULL)
			seg(ctx, &si);
		for (const mp_sim_block *b = h; block != NULL && b != NULL && b->mapped; b = b->next) {
			bool active = b->allocated || b->event_count > 0 || b->nuses > 0;
			mp_sim_block_info bi = { .addr = b->addr, .size = b->size, .requested = active ? b->requested : 0,
						 .block = b,
						 .state = b->allocated ? MP_SIM_ACTIVE_ALLOCATED
							 : active    ? MP_SIM_ACTIVE_PENDING_FREE
								     : MP_SIM_INACTIVE };

			block(ctx, &bi);
		}
	}
	free(heads);
	return MP_OK;
}
