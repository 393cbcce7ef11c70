/* category_trace.c - categories carried by trace entries: the latest alloc at a block's address
   is the allocation that block still holds, unless a free of that address came after it. */
#include <stdlib.h>

#include "category_int.h"
#include "mp_array.h"
#include "mp_snapshot_extras.h"

static int cmp_alloc(const void *pa, const void *pb)
{
	const category_alloc *a = pa, *b = pb;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

static bool trace_has_categories(const mp_snapshot *snap)
{
	for (size_t i = 0; i < snap->ntrace; i++)
		if (snap->trace[i].extras != MP_ABSENT && mp_trace_extra_value(snap, &snap->trace[i], "category") != MP_ABSENT)
			return true;
	return false;
}

mp_err category_trace_index(mp_category_classifier *c)
{
	const mp_snapshot *snap = c->snap;
	const mp_keys *k = mp_heap_keys(snap->heap);
	size_t cap = 0, n = 0, m = 0;

	/* Snapshots that carry no category anywhere in their trace (nearly all) cost one pass. */
	if (!trace_has_categories(snap))
		return MP_OK;
	for (size_t d = 0; d < snap->ndevice_traces; d++) {
		for (size_t j = 0; j < snap->device_traces[d].n; j++) {
			size_t i = snap->device_traces[d].first + j;
			const mp_trace_entry *e = &snap->trace[i];
			bool alloc = mp_val_is(e->action, k->alloc);

			if ((!alloc && !mp_val_is(e->action, k->free_completed)) || !(e->present & MP_F_TR_ADDR))
				continue;
			if (mp_array_grow((void **)&c->allocs, &cap, n + 1, sizeof *c->allocs) != MP_OK)
				return mp_fail(c->diag, MP_E_NOMEM, "categories: out of memory");
			c->allocs[n++] = (category_alloc){
				(int64_t)d, e->addr, j,
				alloc && mp_trace_extra_value(snap, e, "category") != MP_ABSENT ? i : SIZE_MAX,
			};
		}
	}
	mp_sort(c->allocs, n, sizeof *c->allocs, cmp_alloc);
	/* Keep the last event of each address. */
	for (size_t i = 0; i < n; i++) {
		if (m > 0 && c->allocs[m - 1].device == c->allocs[i].device && c->allocs[m - 1].addr == c->allocs[i].addr)
			m--;
		c->allocs[m++] = c->allocs[i];
	}
	c->nallocs = m;
	return MP_OK;
}

size_t category_trace_find(const mp_category_classifier *c, int64_t device, int64_t addr)
{
	category_alloc key = { device, addr, 0, 0 };
	size_t lo = 0, hi = c->nallocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const category_alloc *a = &c->allocs[mid];

		if (a->device == device && a->addr == addr)
			return a->trace;
		if (cmp_alloc(a, &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}
