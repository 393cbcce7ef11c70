/* sim_release.c - cached memory going back to the device: a whole free segment (release_block), every such
   segment of a pool with the free pages of its expandable segments (release_blocks), the oversize blocks a
   request would need (release_available_cached_blocks, with max_split_size set), everything after waiting for
   pending frees (release_cached_blocks: the OOM retry and empty_cache), and the garbage collector that
   releases the oldest cached segments once reserved memory passes a fraction of the allowed memory. */
#include <stdlib.h>

#include "mp_array.h"
#include "sim_int.h"

void sim_release_block(mp_sim *s, mp_sim_block *b)
{
	sim_pool *pool = b->pool;
	int64_t size = b->size;

	s->stats.num_device_free++;
	sim_arena_release(&s->malloc_arena, b->addr, size);
	sim_device_uncharge(s, size);
	s->total_allocated_memory -= size;
	if (pool->owner != NULL)
		pool->owner->cudamalloc_count--;
	sim_stat_add(&s->stats.segment, -1);
	sim_stat_add(&s->stats.reserved_bytes, -size);
	if (size >= s->conf.max_split_size)
		sim_stat_add(&s->stats.oversize_segments, -1);
	sim_block_delete(s, b);
}

void sim_release_blocks(mp_sim *s, sim_pool *pool)
{
	mp_sim_block **to_unmap = NULL;
	size_t n = 0, cap = 0;

	/* whole fixed segments go now; expandable blocks are gathered (unmapping changes the set) */
	for (mp_sim_block *b = sim_set_first(&pool->blocks), *next; b != NULL; b = next) {
		next = sim_set_next(b);
		if (b->es != NULL) {
			if (mp_array_grow((void **)&to_unmap, &cap, n + 1, sizeof *to_unmap) != MP_OK) {
				s->failed = true;
				break;
			}
			to_unmap[n++] = b;
		} else if (b->prev == NULL && b->next == NULL) {
			sim_release_block(s, b);
		}
	}
	for (size_t i = 0; i < n; i++) {
		sim_unmap_block(s, to_unmap[i]);
		if (to_unmap[i]->prev == NULL && to_unmap[i]->next == NULL)
			sim_release_expandable_segment(s, to_unmap[i]);
	}
	free(to_unmap);
}

bool sim_release_available_cached_blocks(mp_sim *s, sim_pool *pool, int64_t size, uint64_t stream)
{
	int64_t max_split = s->conf.max_split_size;
	mp_sim_block key = { .stream = stream, .size = size < max_split ? max_split : size };
	mp_sim_block *it;

	if (max_split == MP_SIM_NONE)
		return false;
	it = sim_set_lower_bound(&pool->blocks, &key);
	if (it != NULL && it->stream == stream && (it->es == NULL || !s->rules.release_skips_expandable)) {
		if (it->es != NULL) {
			s->failed = true; /* up to 2.4: releasing an expandable block asserts in the allocator */
			return false;
		}
		sim_release_block(s, it); /* one block large enough */
		return true;
	}
	/* none large enough alone: release oversize blocks of the stream, the largest first, until enough */
	if (it == sim_set_first(&pool->blocks))
		return false;
	it = it != NULL ? sim_set_prev(it) : sim_set_last(&pool->blocks);
	int64_t released = 0;

	while (released < key.size && it->size >= max_split && it->stream == stream) {
		mp_sim_block *cur = it;
		bool first = cur == sim_set_first(&pool->blocks);

		if (!first)
			it = sim_set_prev(it);
		if (cur->es == NULL) {
			released += cur->size;
			sim_release_block(s, cur);
		} else if (!s->rules.release_skips_expandable) {
			s->failed = true;
			return false;
		}
		if (first)
			break;
	}
	return released >= key.size;
}

/* Whether a block of S still lies in private pool P: USED when one is mapped memory (live, pending or free),
   *LEFT when one is at all (an unmapped range of an expandable segment the pool reserved). */
static bool pool_in_use(const mp_sim *s, const sim_private *p, bool *left)
{
	bool used = false;

	*left = false;
	for (const mp_sim_block *b = s->all; b != NULL; b = b->all_next)
		if (b->pool == &p->small || b->pool == &p->large) {
			*left = true;
			used |= b->mapped;
		}
	return used;
}

bool sim_release_cached_blocks(mp_sim *s)
{
	sim_synchronize_and_free_events(s, NULL);
	sim_release_blocks(s, &s->large_blocks);
	sim_release_blocks(s, &s->small_blocks);
	/* private pools nothing uses any more: their free segments, and the pool itself once it holds none */
	for (sim_private **link = &s->graph_pools; *link != NULL;) {
		sim_private *p = *link;

		if (!p->freeable) {
			link = &p->next;
			continue;
		}
		sim_release_blocks(s, &p->small);
		sim_release_blocks(s, &p->large);
		if (p->cudamalloc_count == 0) {
			bool left;

			*link = p->next;
			if (pool_in_use(s, p, &left)) {
				/* with expandable segments the pool's count of segments need not match them (mappings
				   and unmappings count too): PyTorch then deletes a pool its blocks still use, and what
				   follows is undefined. The model keeps the pool for them but stops there. */
				p->next = s->dead_pools;
				s->dead_pools = p;
				s->failed = true;
			} else if (left) {
				/* only unmapped address space of its expandable segments: the pool goes, and the
				   reservations stay, unused (as in PyTorch, which never looks at them again) */
				p->next = s->dead_pools;
				s->dead_pools = p;
			} else {
				free(p);
			}
		} else {
			link = &p->next;
		}
	}
	return true;
}

void mp_sim_empty_cache(mp_sim *s)
{
	if (!s->failed)
		sim_release_cached_blocks(s);
}

static int64_t gc_count(const mp_sim_block *b)
{
	return (int64_t)(int)(b->pool->get_free_blocks_call_count - b->gc_count_base);
}

void sim_garbage_collect_cached_blocks(mp_sim *s)
{
	int64_t threshold = (int64_t)(s->conf.gc_threshold * (double)s->allowed_memory_maximum);
	int64_t target, reclaimed = 0, total_age = 0, count = 0;
	bool freed = true;

	if (s->total_allocated_memory <= threshold)
		return;
	target = s->total_allocated_memory - threshold;
	for (mp_sim_block *b = sim_set_first(&s->large_blocks.blocks); b != NULL; b = sim_set_next(b))
		if (!sim_block_is_split(b)) {
			total_age += gc_count(b);
			count++;
		}
	/* release the blocks at least as old as the average, again and again, until enough is back */
	while (reclaimed < target && freed && count > 0) {
		double age_threshold = (double)total_age / (double)count;

		freed = false;
		for (mp_sim_block *b = sim_set_first(&s->large_blocks.blocks), *next; b != NULL; b = next) {
			next = sim_set_next(b);
			if (!sim_block_is_split(b) && (b->es == NULL || !s->rules.release_skips_expandable) &&
			    (double)gc_count(b) >= age_threshold) {
				if (b->es != NULL) {
					s->failed = true; /* up to 2.4: the GC releases an expandable block, which asserts */
					return;
				}
				freed = true;
				reclaimed += b->size;
				total_age -= gc_count(b);
				count--;
				sim_release_block(s, b);
			}
		}
	}
}
