/* sim_expandable.c - expandable segments (expandable_segments:True): per stream and pool, an address range of
   9/8 of the device reserved once and mapped in pages, 2 MiB for the small pool and 20 MiB (kLargeBuffer) for
   the large one. A request that no cached block serves maps pages at the lowest free address of a segment
   with room, joined to the free block before it; the retry and empty_cache unmap every whole free page, and a
   segment left with no page is given back. Mapping is all or nothing: a page the device cannot give fails the
   whole request. */
#include <stdlib.h>

#include "sim_int.h"

/* ---- ExpandableSegment */

static sim_expseg *expseg_new(mp_sim *s, uint64_t stream, int64_t address_space, int64_t segment_size)
{
	sim_expseg *es = calloc(1, sizeof *es);

	if (es == NULL)
		return NULL;
	es->segment_size = segment_size;
	es->max_handles = (address_space + segment_size - 1) / segment_size;
	es->stream = stream;
	if ((es->handles = calloc((size_t)es->max_handles, sizeof *es->handles)) == NULL ||
	    (es->base = sim_arena_alloc(&s->reserve_arena, segment_size * es->max_handles, 2 * MP_SIM_MIB)) == 0) {
		/* the reservation failing is a driver error the allocator raises as such, not an OOM */
		free(es->handles);
		free(es);
		return NULL;
	}
	es->next = s->expandable_segments;
	s->expandable_segments = es;
	return es;
}

void sim_expseg_delete(mp_sim *s, sim_expseg *es)
{
	for (sim_expseg **link = &s->expandable_segments; *link != NULL; link = &(*link)->next)
		if (*link == es) {
			*link = es->next;
			break;
		}
	for (int64_t i = 0; i < es->nhandles; i++)
		if (es->handles[i])
			sim_device_uncharge(s, es->segment_size);
	sim_arena_release(&s->reserve_arena, es->base, es->segment_size * es->max_handles);
	free(es->handles);
	free(es);
}

static int64_t page_left(const sim_expseg *es, int64_t addr)
{
	return (addr - es->base) / es->segment_size;
}

static int64_t page_right(const sim_expseg *es, int64_t addr)
{
	return (addr - es->base + es->segment_size - 1) / es->segment_size;
}

/* handles_ shrinks to its last mapped page. */
static void trim(sim_expseg *es)
{
	while (es->nhandles > 0 && !es->handles[es->nhandles - 1])
		es->nhandles--;
}

/* Map the pages over [ADDR, ADDR + SIZE): their size, 0 when the device cannot give them all. */
static int64_t expseg_map(mp_sim *s, sim_expseg *es, int64_t addr, int64_t size)
{
	int64_t begin = page_left(es, addr), end = page_right(es, addr + size);

	if (begin == end)
		return 0;
	if (end > es->nhandles)
		es->nhandles = end;
	for (int64_t i = begin; i < end; i++) {
		if (!sim_device_charge(s, es->segment_size)) {
			for (int64_t j = begin; j < i; j++) {
				es->handles[j] = false;
				sim_device_uncharge(s, es->segment_size);
			}
			trim(es);
			return 0;
		}
		es->handles[i] = true;
	}
	return (end - begin) * es->segment_size;
}

/* Unmap the whole pages inside [ADDR, ADDR + SIZE): *AT their start, their size (0 for none). */
static int64_t expseg_unmap(mp_sim *s, sim_expseg *es, int64_t addr, int64_t size, int64_t *at)
{
	int64_t begin = page_right(es, addr), end = page_left(es, addr + size);

	if (begin >= end)
		return 0;
	for (int64_t i = begin; i < end; i++) {
		es->handles[i] = false;
		sim_device_uncharge(s, es->segment_size);
	}
	trim(es);
	*at = es->base + begin * es->segment_size;
	return (end - begin) * es->segment_size;
}

/* ---- the allocator's side */

static bool allocatable(const mp_sim_block *b)
{
	return b != NULL && !b->allocated && b->event_count == 0 && b->nuses == 0;
}

/* Whether free and unmapped blocks from B on make SIZE bytes. */
static bool has_room(const mp_sim_block *b, int64_t size)
{
	int64_t bytes = 0;

	while (bytes < size && allocatable(b)) {
		bytes += b->size;
		b = b->next;
	}
	return bytes >= size;
}

/* Link B between BEFORE and AFTER (Block::splice). */
static void splice(mp_sim_block *b, mp_sim_block *before, mp_sim_block *after)
{
	if (before != NULL)
		before->next = b;
	b->prev = before;
	if (after != NULL)
		after->prev = b;
	b->next = after;
}

/* The lowest-addressed room for SIZE in the stream's segments of POOL, else a new segment. */
static mp_sim_block *find_expandable_block(mp_sim *s, uint64_t stream, sim_pool *pool, int64_t size)
{
	mp_sim_block key = { .stream = stream, .addr = 0 }, *c;
	int64_t page = pool->small ? SIM_SMALL_BUFFER : s->conf.large_segment_size;
	sim_expseg *es;

	for (mp_sim_block *it = sim_set_lower_bound(&pool->unmapped, &key); it != NULL && it->stream == stream;
	     it = sim_set_next(it)) {
		c = allocatable(it->prev) ? it->prev : it;
		if (has_room(c, size))
			return c;
	}
	if ((es = expseg_new(s, stream, s->total + s->total / 8, page)) == NULL ||
	    (c = sim_block_new(s, stream, es->segment_size * es->max_handles, pool, es->base, NULL)) == NULL) {
		s->failed = true;
		return NULL;
	}
	c->mapped = false;
	c->es = es;
	sim_insert_into_blocks(c);
	return c;
}

static bool map_block(mp_sim *s, mp_sim_block *to_map, int64_t size)
{
	sim_pool *pool = to_map->pool;
	int64_t mapped = expseg_map(s, to_map->es, to_map->addr, size);

	if (mapped == 0)
		return false;
	sim_erase_from_blocks(to_map);
	to_map->mapped = true;
	if (mapped < to_map->size) {
		mp_sim_block *rest = sim_block_new(s, to_map->stream, to_map->size - mapped, pool, to_map->addr + mapped,
						   to_map);

		if (rest == NULL)
			return false;
		rest->mapped = false;
		rest->es = to_map->es;
		splice(rest, to_map, to_map->next);
		sim_insert_into_blocks(rest);
		to_map->size = mapped;
	}
	sim_try_merge_blocks(s, to_map, to_map->prev, pool);
	sim_try_merge_blocks(s, to_map, to_map->next, pool);
	sim_insert_into_blocks(to_map);
	s->total_allocated_memory += mapped;
	sim_stat_add(&s->stats.reserved_bytes, mapped);
	s->stats.num_device_alloc++;
	return true;
}

mp_sim_block *sim_try_allocate_expandable_block(mp_sim *s, uint64_t stream, sim_pool *pool, int64_t size)
{
	mp_sim_block *c = find_expandable_block(s, stream, pool, size);

	if (c == NULL)
		return NULL;
	if (!c->mapped && !map_block(s, c, c->size < size ? c->size : size))
		return NULL;
	/* free -> unmapped -> ...: map from the unmapped range what the free block lacks */
	while (c->size < size) {
		mp_sim_block *next = c->next;
		int64_t want = size - c->size;

		if (!map_block(s, next, want < next->size ? want : next->size))
			return NULL;
		c = next;
	}
	sim_erase_from_blocks(c);
	return c;
}

void sim_unmap_block(mp_sim *s, mp_sim_block *b)
{
	int64_t at = 0, unmapped = expseg_unmap(s, b->es, b->addr, b->size, &at);

	if (unmapped == 0)
		return;
	sim_erase_from_blocks(b);
	int64_t before = at - b->addr, after = b->size - (before + unmapped);

	if (before > 0) {
		mp_sim_block *f = sim_block_new(s, b->stream, before, b->pool, b->addr, b);

		if (f != NULL) {
			f->es = b->es;
			splice(f, b->prev, b);
			sim_insert_into_blocks(f);
		}
	}
	if (after > 0) {
		mp_sim_block *f = sim_block_new(s, b->stream, after, b->pool, at + unmapped, b);

		if (f != NULL) {
			f->es = b->es;
			splice(f, b, b->next);
			sim_insert_into_blocks(f);
		}
	}
	b->addr = at;
	b->size = unmapped;
	b->mapped = false;
	sim_try_merge_blocks(s, b, b->prev, b->pool);
	sim_try_merge_blocks(s, b, b->next, b->pool);
	sim_insert_into_blocks(b);
	s->total_allocated_memory -= unmapped;
	sim_stat_add(&s->stats.reserved_bytes, -unmapped);
	if (b->pool->owner != NULL)
		b->pool->owner->cudamalloc_count--;
	s->stats.num_device_free++;
}

void sim_release_expandable_segment(mp_sim *s, mp_sim_block *b)
{
	sim_expseg *es = b->es;

	sim_block_delete(s, b);
	sim_expseg_delete(s, es);
}
