/* oom_explain.c - the explanation of one request: the device's figures, the replay, the causes, the
   fragmentation, the holders and the remedies, in that order (each reads what the ones before found). */
#include <stdio.h>
#include <stdlib.h>

#include "mp_sim_history.h"
#include "oom_int.h"

mp_err mp_oom_request_from_trace(const mp_snapshot *snap, long device, mp_oom_request *out)
{
	const mp_keys *k = mp_heap_keys(snap->heap);

	for (size_t d = 0; d < snap->ndevice_traces; d++) {
		const mp_trace_list *tl = &snap->device_traces[d];

		if (device >= 0 && (size_t)device != d)
			continue;
		for (size_t i = tl->n; i-- > 0;) {
			const mp_trace_entry *e = &snap->trace[tl->first + i];

			if (!mp_val_is(e->action, k->oom))
				continue;
			*out = (mp_oom_request){ .source = MP_OOM_FROM_TRACE, .device = (int64_t)d, .stream = e->stream,
						 .size = e->size, .trace_index = (int64_t)i,
						 .device_free = (e->present & MP_F_TR_DEVICE_FREE) ? e->addr : -1 };
			for (size_t j = i + 1; j < tl->n; j++) {
				mp_val a = snap->trace[tl->first + j].action;

				out->events_after += mp_val_is(a, k->alloc) || mp_val_is(a, k->free_requested);
			}
			snprintf(out->where, sizeof out->where, "the 'oom' entry of device %zu's trace (entry %zu)", d, i);
			return MP_OK;
		}
	}
	return MP_E_NOTFOUND;
}

static void device_figures(const oom_view *v, mp_oom *o)
{
	for (size_t i = 0; i < v->nsegs; i++) {
		o->reserved += v->segs[i].s->total_size;
		o->live += v->segs[i].live;
		o->live_needed += v->segs[i].live_needed;
		o->pending += v->segs[i].pending;
	}
	o->allocated = o->live + o->pending;
	/* set_per_process_memory_fraction caps what the allocator may reserve: cudaMalloc fails past it, whatever
	   the device has free */
	o->room = o->req.device_free;
	if (o->room >= 0 && o->req.has_message && o->req.message.allowed >= 0) {
		/* the message rounds the cap: the least it can be (the allocator refused with what it had) */
		int64_t cap = o->req.message.allowed - o->req.message.allowed_slack;

		if (cap - o->reserved < o->room)
			o->room = cap - o->reserved > 0 ? cap - o->reserved : 0;
	}
	o->usable = o->room >= 0 ? o->reserved + o->room : -1;
	for (size_t i = 0; i < v->nsegs; i++)
		for (size_t j = 0; v->segs[i].private_pool && j < v->segs[i].s->nblocks; j++)
			if (oom_block_free(v, &mp_segment_blocks(v->snap, v->segs[i].s)[j]))
				o->private_free += mp_segment_blocks(v->snap, v->segs[i].s)[j].size;
}

/* The numbers the allocator's message gives for this state: it counts the free blocks of private pools as
   allocated (its "allocated in private pools") and pending frees as unallocated. Capacity and in-use are the device's: unknown here. */
static void computed_message(mp_oom *o)
{
	mp_oom_message *m = &o->computed;

	*m = (mp_oom_message){ -1, -1, -1, -1, -1, -1, -1, -1, -1, 0 };
	m->device = o->req.device;
	m->tried = o->alloc_size;
	m->free = o->req.device_free;
	/* allocated_bytes drops when a tensor is freed, before its pending events complete */
	m->allocated = o->live + o->private_free;
	m->private_pools = o->private_free;
	m->reserved_unallocated = o->reserved - o->live - o->private_free;
}

mp_err mp_oom_explain(const mp_snapshot *snap, const mp_oom_request *req, mp_oom **out, mp_diag *diag)
{
	mp_oom *o = calloc(1, sizeof *o);
	oom_groups gr;
	oom_view v;
	mp_err err;

	*out = NULL;
	if (o == NULL)
		return MP_E_NOMEM;
	o->req = *req;
	if (req->size <= 0 || req->size > OOM_MAX_SIZE || req->device_free > OOM_MAX_TOTAL) {
		free(o);
		return mp_fail(diag, MP_E_RANGE, "a request of %lld bytes with %lld free: no device has that",
			       (long long)req->size, (long long)req->device_free);
	}
	if ((err = oom_view_open(snap, req->device, &v, diag)) != MP_OK) {
		free(o);
		return err;
	}
	if (v.nsegs == 0 && req->device_free < 0) {
		oom_view_close(&v);
		free(o);
		return mp_fail(diag, MP_E_NOTFOUND, "device %lld has no segment and its free memory is unknown: "
			       "nothing to explain", (long long)req->device);
	}
	o->release = req->release.major != 0 ? req->release : mp_sim_release_of_snapshot(snap);
	oom_read_settings(snap, o);
	device_figures(&v, o);
	if ((err = oom_replay(&v, o)) != MP_OK) {
		oom_view_close(&v);
		mp_oom_free(o);
		return err;
	}
	computed_message(o);
	oom_causes(&v, o);
	oom_fragmentation(&v, o);
	oom_remedies_replayed(&v, o);
	if ((err = oom_groups_make(&v, o, &gr)) == MP_OK)
		err = oom_remedies(&v, o, &gr);
	if (err == MP_OK)
		oom_holders_replayed(&v, o, &gr);
	oom_groups_free(&gr);
	oom_view_close(&v);
	if (err != MP_OK) {
		mp_oom_free(o);
		return err;
	}
	*out = o;
	return MP_OK;
}

void mp_oom_free(mp_oom *o)
{
	if (o == NULL)
		return;
	for (int i = 0; i < o->ndecision; i++)
		free(o->decision[i]);
	free(o->decision);
	free(o);
}

bool mp_oom_is_oom(const mp_oom *o)
{
	return o->verdict == MP_OOM_V_OOM || o->verdict == MP_OOM_V_UNKNOWN_FREE;
}
