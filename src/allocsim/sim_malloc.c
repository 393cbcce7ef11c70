/* sim_malloc.c - a request, as DeviceCachingAllocator::malloc serves it: round the size, pick the pool, take the
   best fitting cached block of the stream (get_free_block, with max_split_size's refusals and expandable
   segments' growth room), else obtain memory (alloc_block: cudaMalloc of the allocation size, or pages mapped
   into an expandable segment), else release oversize cached blocks and try again, else release every cached
   segment free as a whole and try once more; then split the block found when the rest is worth keeping. */
#include "sim_int.h"

static int floor_log2(uint64_t x)
{
	return 63 - __builtin_clzll(x);
}

/* roundup_power2_next_division: the next of DIVISIONS equal steps between SIZE's powers of two. */
static int64_t next_division(int64_t size, int64_t divisions)
{
	if ((size & (size - 1)) == 0)
		return size;
	int64_t floor2 = (int64_t)1 << floor_log2((uint64_t)size);
	int64_t step = floor2 >> floor_log2((uint64_t)divisions);

	if (step == 0)
		return floor2 << 1;
	int64_t down = size & ~(step - 1);

	return down == size ? size : down + step;
}

int64_t mp_sim_round_size(const mp_sim_conf *c, mp_sim_release r, int64_t size)
{
	sim_rules rules;

	sim_rules_for(r, &rules);
	if (size < SIM_MIN_BLOCK)
		return SIM_MIN_BLOCK;
	int index = floor_log2((uint64_t)size) - 20; /* the intervals start at 1 MiB */

	if (index < 0)
		index = 0;
	if (index > MP_SIM_INTERVALS - 1)
		index = MP_SIM_INTERVALS - 1;
	int64_t divisions = c->divisions[index];

	/* up to 2.3 one division keeps the size as asked, without even the 512-byte steps */
	if (rules.division_one_keeps && divisions > 0 && size > SIM_MIN_BLOCK * divisions)
		return divisions <= 1 ? size : next_division(size, divisions);
	if (divisions > 1 && size > SIM_MIN_BLOCK * divisions)
		return next_division(size, divisions);
	return (size + SIM_MIN_BLOCK - 1) / SIM_MIN_BLOCK * SIM_MIN_BLOCK;
}

int64_t mp_sim_allocation_size(const mp_sim_conf *c, int64_t size)
{
	if (size <= SIM_SMALL_SIZE)
		return SIM_SMALL_BUFFER;
	if (size < SIM_MIN_LARGE_ALLOC)
		return c->large_segment_size;
	return (size + SIM_ROUND_LARGE - 1) / SIM_ROUND_LARGE * SIM_ROUND_LARGE;
}

/* The request under way (AllocParams). */
typedef struct params {
	int64_t size, alloc_size;
	uint64_t stream;
	sim_pool *pool;
	mp_sim_block *block;
} params;

/* What a free expandable block could grow to: itself and the unmapped range after it. */
static int64_t expandable_size(const mp_sim_block *b)
{
	return b->size + (b->next != NULL && !b->next->mapped ? b->next->size : 0);
}

static bool get_free_block(mp_sim *s, params *p)
{
	sim_pool *pool = p->pool;
	mp_sim_block key = { .stream = p->stream, .size = p->size, .addr = 0 };
	mp_sim_block *it;

	if (s->set_fraction && s->conf.gc_threshold > 0)
		pool->get_free_blocks_call_count++; /* the garbage collector's clock */
	it = sim_set_lower_bound(&pool->blocks, &key);
	if (it == NULL || it->stream != p->stream)
		return false;
	if (it->es != NULL) {
		if (s->conf.expandable) {
			/* best fit by what the block can grow to: a larger block with less room after it wins */
			mp_sim_block *next = sim_set_next(it);

			while (it->es != NULL && next != NULL && next->stream == p->stream &&
			       expandable_size(next) < expandable_size(it)) {
				it = next;
				next = sim_set_next(next);
			}
		} else {
			/* expandable segments turned off since: only fixed segments' blocks */
			do
				it = sim_set_next(it);
			while (it != NULL && it->es != NULL && it->stream == p->stream);
			if (it == NULL || it->stream != p->stream)
				return false;
		}
	}
	/* an oversize block is kept for requests as large, and then only within a rounding limit */
	if (p->size < s->conf.max_split_size && it->size >= s->conf.max_split_size)
		return false;
	if (p->size >= s->conf.max_split_size && it->size >= p->size + s->conf.max_non_split_rounding)
		return false;
	p->block = it;
	sim_erase_from_blocks(it);
	return true;
}

static bool alloc_block(mp_sim *s, params *p, bool retry, bool *unsupported)
{
	int64_t size = p->alloc_size, addr;

	if (retry)
		s->stats.num_alloc_retries++;
	if (s->set_fraction && s->total_allocated_memory + size > s->allowed_memory_maximum)
		return false;
	/* up to 2.4 private pools never use expandable segments */
	if (s->conf.expandable && s->rules.expandable_segments &&
	    (s->rules.expandable_in_private || p->pool->owner == NULL)) {
		p->block = sim_try_allocate_expandable_block(s, p->stream, p->pool, p->size);
		if (p->block == NULL && s->failed)
			*unsupported = true;
		if (p->block != NULL && p->pool->owner != NULL)
			p->pool->owner->cudamalloc_count++;
		return p->block != NULL;
	}
	/* cudaMalloc: the fake charges the device first, then finds addresses */
	if (!sim_device_charge(s, size))
		return false;
	if ((addr = sim_arena_alloc(&s->malloc_arena, size, size >= 2 * MP_SIM_MIB ? 2 * MP_SIM_MIB : 4096)) == 0) {
		sim_device_uncharge(s, size);
		return false;
	}
	if ((p->block = sim_block_new(s, p->stream, size, p->pool, addr, NULL)) == NULL) {
		*unsupported = true;
		return false;
	}
	if (p->pool->owner != NULL)
		p->pool->owner->cudamalloc_count++;
	s->total_allocated_memory += size;
	sim_stat_add(&s->stats.segment, 1);
	sim_stat_add(&s->stats.reserved_bytes, size);
	if (size >= s->conf.max_split_size)
		sim_stat_add(&s->stats.oversize_segments, 1);
	s->stats.num_device_alloc++;
	return true;
}

static bool should_split(const mp_sim *s, const mp_sim_block *b, int64_t size)
{
	int64_t remaining = b->size - size;

	if (b->pool->small || s->conf.expandable)
		return remaining >= SIM_MIN_BLOCK;
	return size < s->conf.max_split_size && remaining > SIM_SMALL_SIZE;
}

static mp_sim_block *alloc_found_block(mp_sim *s, params *p, int64_t orig_size, bool split)
{
	mp_sim_block *block = p->block;
	bool already_split = sim_block_is_split(block);

	if (split) {
		mp_sim_block *remaining = block;

		/* the request takes the front; the old block keeps the rest */
		if ((block = sim_block_new(s, p->stream, p->size, p->pool, remaining->addr, remaining)) == NULL)
			return NULL;
		block->es = remaining->es;
		block->prev = remaining->prev;
		if (block->prev != NULL)
			block->prev->next = block;
		block->next = remaining;
		remaining->prev = block;
		remaining->addr += p->size;
		remaining->size -= p->size;
		sim_insert_into_blocks(remaining);
		if (already_split && block->es == NULL) {
			sim_stat_add(&s->stats.inactive_split_bytes, -block->size);
		} else if (block->es == NULL) {
			sim_stat_add(&s->stats.inactive_split_bytes, remaining->size);
			sim_stat_add(&s->stats.inactive_split, 1);
		}
	} else if (already_split && block->es == NULL) {
		sim_stat_add(&s->stats.inactive_split_bytes, -block->size);
		sim_stat_add(&s->stats.inactive_split, -1);
	}
	block->allocated = true;
	block->requested = orig_size;
	block->in_active = true;
	sim_stat_add(&s->stats.allocation, 1);
	sim_stat_add(&s->stats.allocated_bytes, block->size);
	sim_stat_add(&s->stats.active, 1);
	sim_stat_add(&s->stats.active_bytes, block->size);
	sim_stat_add(&s->stats.requested_bytes, block->requested);
	if (block->size >= s->conf.max_split_size)
		sim_stat_add(&s->stats.oversize_allocations, 1);
	return block;
}

mp_err mp_sim_malloc(mp_sim *s, int64_t orig_size, uint64_t stream, mp_sim_block **out)
{
	params p = { .stream = stream };
	bool found, unsupported = false;

	*out = NULL;
	if (s->failed)
		return MP_E_UNSUPPORTED;
	if (orig_size < 0 || orig_size > MP_SIM_MAX_SIZE) {
		s->stats.num_ooms++;
		return MP_E_NOMEM;
	}
	if (!sim_capturing(s))
		sim_process_events(s); /* event queries are not allowed while a capture may be under way */
	p.size = mp_sim_round_size(&s->conf, s->release, orig_size);
	p.pool = sim_get_pool(s, p.size, stream);
	p.alloc_size = mp_sim_allocation_size(&s->conf, p.size);
	found = get_free_block(s, &p);
	/* 2.12's throw_on_cudamalloc_oom: over the fraction's cap, out of memory before any retry */
	if (!found && s->conf.throw_on_cudamalloc_oom && s->set_fraction &&
	    s->total_allocated_memory + p.alloc_size > s->allowed_memory_maximum) {
		s->stats.num_ooms++;
		return MP_E_NOMEM;
	}
	if (!found) {
		if (s->set_fraction && s->conf.gc_threshold > 0)
			sim_garbage_collect_cached_blocks(s);
		found = alloc_block(s, &p, false, &unsupported) ||
			(!unsupported && sim_release_available_cached_blocks(s, p.pool, p.size, stream) &&
			 alloc_block(s, &p, false, &unsupported)) ||
			(!unsupported && !sim_capturing(s) && sim_release_cached_blocks(s) &&
			 alloc_block(s, &p, true, &unsupported));
	}
	if (unsupported || s->failed)
		return MP_E_UNSUPPORTED;
	if (!found) {
		s->stats.num_ooms++;
		return MP_E_NOMEM;
	}
	*out = alloc_found_block(s, &p, orig_size, should_split(s, p.block, p.size));
	return *out != NULL ? MP_OK : MP_E_UNSUPPORTED;
}
