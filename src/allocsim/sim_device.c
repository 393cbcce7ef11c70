/* sim_device.c - the device under the allocator, as the test bed's fake behaves and as far as the allocator can
   tell a real one apart: a capacity that cudaMalloc and cuMemCreate charge, and address ranges handed out first
   fit, aligned to 2 MiB (cudaMalloc of 2 MiB and more, cuMemAddressReserve at the 2 MiB granularity). */
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

void sim_arena_init(sim_arena *a, int64_t base, int64_t size)
{
	*a = (sim_arena){ 0 };
	if ((a->free = malloc(4 * sizeof *a->free)) != NULL) {
		a->cap = 4;
		a->free[a->n++] = (sim_extent){ base, size };
	}
}

void sim_arena_fini(sim_arena *a)
{
	free(a->free);
	*a = (sim_arena){ 0 };
}

static bool grow(sim_arena *a)
{
	sim_extent *p;

	if (a->n < a->cap)
		return true;
	if ((p = realloc(a->free, 2 * a->cap * sizeof *p)) == NULL)
		return false;
	a->free = p;
	a->cap *= 2;
	return true;
}

int64_t sim_arena_alloc(sim_arena *a, int64_t size, int64_t align)
{
	for (size_t i = 0; i < a->n; i++) {
		sim_extent *e = &a->free[i];
		int64_t start = (e->start + align - 1) / align * align;

		if (start - e->start + size > e->size)
			continue;
		int64_t end = start + size, e_end = e->start + e->size;

		if (end < e_end && start > e->start) {
			/* split in two: the part before stays, the part after is new */
			if (!grow(a))
				return 0;
			e = &a->free[i];
			memmove(&a->free[i + 2], &a->free[i + 1], (a->n - i - 1) * sizeof *a->free);
			a->free[i + 1] = (sim_extent){ end, e_end - end };
			a->n++;
			e->size = start - e->start;
		} else if (end < e_end) {
			e->start = end;
			e->size = e_end - end;
		} else if (start > e->start) {
			e->size = start - e->start;
		} else {
			memmove(&a->free[i], &a->free[i + 1], (a->n - i - 1) * sizeof *a->free);
			a->n--;
		}
		return start;
	}
	return 0;
}

void sim_arena_release(sim_arena *a, int64_t start, int64_t size)
{
	size_t i = 0;

	while (i < a->n && a->free[i].start < start)
		i++;
	bool with_prev = i > 0 && a->free[i - 1].start + a->free[i - 1].size == start;
	bool with_next = i < a->n && start + size == a->free[i].start;

	if (with_prev && with_next) {
		a->free[i - 1].size += size + a->free[i].size;
		memmove(&a->free[i], &a->free[i + 1], (a->n - i - 1) * sizeof *a->free);
		a->n--;
	} else if (with_prev) {
		a->free[i - 1].size += size;
	} else if (with_next) {
		a->free[i].start = start;
		a->free[i].size += size;
	} else if (grow(a)) {
		memmove(&a->free[i + 1], &a->free[i], (a->n - i) * sizeof *a->free);
		a->free[i] = (sim_extent){ start, size };
		a->n++;
	}
	/* out of host memory: the range is lost to later allocations, which only makes the model pessimistic */
}

bool sim_device_charge(mp_sim *s, int64_t bytes)
{
	if (bytes > s->total - s->outside - s->charged)
		return false;
	s->charged += bytes;
	return true;
}

void sim_device_uncharge(mp_sim *s, int64_t bytes)
{
	s->charged -= bytes;
}

int64_t mp_sim_device_free(const mp_sim *s)
{
	return s->total - s->outside - s->charged;
}
