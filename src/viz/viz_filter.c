/* viz_filter.c - trace_plot's --filter_freed (mp_viz.h): the allocations freed within the ring, found without
   changing the snapshot (a session's snapshot serves the commands after this one). */
#include "mp_viz.h"

#include <stdlib.h>

#include "mp_i64map.h"

/* The entries of one device's ring [FIRST, FIRST + N) that --filter_freed drops, marked in DROP (which is
   indexed from FIRST); the warnings for a 'free_completed' whose address had no 'free_requested'. Keyed by
   address: the newest 'alloc' not yet paired (its entry), and the addresses with a 'free_requested'. */
static mp_err mark_freed(const mp_snapshot *snap, size_t first, size_t n, bool *drop, size_t *dropped,
			 mp_out *warnings)
{
	const mp_keys *k = mp_heap_keys(snap->heap);
	mp_i64map allocs = { 0 }, requested = { 0 };
	mp_err err = MP_OK;
	int64_t at;

	for (size_t i = first; i < first + n && err == MP_OK; i++) {
		const mp_trace_entry *e = &snap->trace[i];

		if (!(e->present & MP_F_TR_ADDR))
			continue;
		if (mp_val_is(e->action, k->alloc)) {
			err = mp_i64map_put(&allocs, e->addr, (int64_t)i);
		} else if (mp_val_is(e->action, k->free_requested)) {
			err = mp_i64map_put(&requested, e->addr, 1);
			if (mp_i64map_get(&allocs, e->addr, &at)) { /* paired: both go */
				drop[i - first] = drop[(size_t)at - first] = true;
				*dropped += 2;
				mp_i64map_del(&allocs, e->addr);
			}
		} else if (mp_val_is(e->action, k->free_completed)) {
			if (mp_i64map_get(&requested, e->addr, NULL)) {
				mp_i64map_del(&requested, e->addr);
				drop[i - first] = true;
				++*dropped;
			} else if (warnings != NULL) {
				mp_out_printf(warnings, "free_completed without free_requested: entry %zu, address 0x%llx\n",
					      i - first, (unsigned long long)e->addr);
			}
		}
	}
	mp_i64map_fini(&allocs);
	mp_i64map_fini(&requested);
	return err;
}

mp_err mp_viz_freed_entries(const mp_snapshot *snap, bool **drop, size_t *dropped, mp_out *warnings, mp_diag *diag)
{
	mp_err err = MP_OK;

	*dropped = 0;
	if ((*drop = calloc(snap->ntrace ? snap->ntrace : 1, sizeof **drop)) == NULL)
		err = MP_E_NOMEM;
	for (size_t d = 0; d < snap->ndevice_traces && err == MP_OK; d++)
		err = mark_freed(snap, snap->device_traces[d].first, snap->device_traces[d].n,
				 *drop + snap->device_traces[d].first, dropped, warnings);
	if (err != MP_OK) {
		free(*drop);
		*drop = NULL;
		return mp_fail(diag, err, "--filter-freed: %s", mp_strerror(err));
	}
	return MP_OK;
}
