/* sim_history.c - a device's trace read as the job's requests (mp_sim_history.h): allocations by address
   while they live, frees and when their events were over, the user's empty_cache() calls told apart from the
   allocator's own releases, the failed request at the end, what was live before the ring began, and the
   request's counterpart one step earlier. */
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "mp_i64map.h"
#include "mp_sim_history.h"
#include "mp_snapshot_extras.h"
#include "sim_int.h"

typedef struct reader {
	const mp_snapshot *snap;
	const mp_keys *k;
	const mp_trace_entry *e; /* the device's entries */
	size_t n;
	mp_sim_history *h;
	mp_sim_op *ring;         /* the ops the entries make, in order */
	size_t nring, cap_ring;
	mp_sim_op *planted;      /* ALLOC ops of blocks live before the ring (then their FREEs of pending blocks) */
	int64_t *planted_addr;
	size_t nplanted, cap_planted, cap_planted_addr;
	mp_sim_op *pending_at_start; /* FREE ops of planted blocks whose free was requested before the ring */
	size_t npending, cap_pending;
	mp_i64map live;          /* address -> allocation, allocated in the ring or planted */
	mp_i64map waiting;       /* address -> allocation whose free waits for events */
} reader;

static mp_err push(mp_sim_op **v, size_t *n, size_t *cap, mp_sim_op op)
{
	if (mp_array_grow((void **)v, cap, *n + 1, sizeof **v) != MP_OK)
		return MP_E_NOMEM;
	(*v)[(*n)++] = op;
	return MP_OK;
}

static bool is(const reader *r, size_t i, mp_val key)
{
	return i < r->n && mp_val_is(r->e[i].action, key);
}

/* A block live before the ring began: an allocation planted first. */
static mp_err plant(reader *r, int64_t addr, int64_t size, uint64_t stream, int64_t *alloc)
{
	*alloc = r->h->nallocs++;
	if (mp_array_grow((void **)&r->planted_addr, &r->cap_planted_addr, r->nplanted + 1, sizeof *r->planted_addr) != MP_OK)
		return MP_E_NOMEM;
	r->planted_addr[r->nplanted] = addr;
	return push(&r->planted, &r->nplanted, &r->cap_planted,
		    (mp_sim_op){ .kind = MP_SIM_OP_ALLOC, .size = size, .stream = stream, .alloc = *alloc, .entry = -1,
				 .addr = addr });
}

/* Whether the 2.14 trace entry E was made in a private pool (its pool_id is not (0, 0)). */
static bool in_private_pool(const reader *r, const mp_trace_entry *e)
{
	mp_val id = mp_trace_extra_value(r->snap, e, "pool_id");
	enum mp_vtype t = mp_val_type(id);

	if (t != MP_T_TUPLE && t != MP_T_LIST)
		return false;
	const mp_val *items = mp_heap_items(r->snap->heap, id);

	for (size_t i = 0; i < mp_heap_len(r->snap->heap, id); i++) {
		int64_t x;

		if (mp_heap_get_i64(r->snap->heap, items[i], &x) && x != 0)
			return true;
	}
	return false;
}

static mp_err on_alloc(reader *r, size_t i)
{
	const mp_trace_entry *e = &r->e[i];
	int64_t a = r->h->nallocs++;

	if (mp_i64map_get(&r->live, e->addr, NULL))
		r->h->unexplained++; /* its free is not in the ring */
	r->h->private_pools |= in_private_pool(r, e);
	if (mp_i64map_put(&r->live, e->addr, a) != MP_OK)
		return MP_E_NOMEM;
	return push(&r->ring, &r->nring, &r->cap_ring,
		    (mp_sim_op){ .kind = MP_SIM_OP_ALLOC, .size = e->size, .stream = (uint64_t)e->stream, .alloc = a,
				 .entry = (int64_t)i, .addr = e->addr });
}

static mp_err on_free(reader *r, size_t i)
{
	const mp_trace_entry *e = &r->e[i];
	/* without other streams' uses the allocator completes the free at once, right after the request */
	bool pending = !(is(r, i + 1, r->k->free_completed) && r->e[i + 1].addr == e->addr);
	int64_t a;
	mp_err err;

	if (!mp_i64map_get(&r->live, e->addr, &a) &&
	    (err = plant(r, e->addr, e->size, (uint64_t)e->stream, &a)) != MP_OK)
		return err;
	mp_i64map_del(&r->live, e->addr);
	if (pending && mp_i64map_put(&r->waiting, e->addr, a) != MP_OK)
		return MP_E_NOMEM;
	return push(&r->ring, &r->nring, &r->cap_ring,
		    (mp_sim_op){ .kind = MP_SIM_OP_FREE, .stream = (uint64_t)e->stream, .alloc = a, .pending = pending,
				 .entry = (int64_t)i });
}

static mp_err on_completed(reader *r, size_t i)
{
	const mp_trace_entry *e = &r->e[i];
	int64_t a;
	mp_err err;

	if (i > 0 && is(r, i - 1, r->k->free_requested) && r->e[i - 1].addr == e->addr &&
	    !mp_i64map_get(&r->waiting, e->addr, NULL))
		return MP_OK; /* the immediate completion of the free before it */
	if (!mp_i64map_get(&r->waiting, e->addr, &a)) {
		/* its free was requested before the ring began: planted, freed pending, completed here */
		if ((err = plant(r, e->addr, e->size, (uint64_t)e->stream, &a)) != MP_OK ||
		    (err = push(&r->pending_at_start, &r->npending, &r->cap_pending,
				(mp_sim_op){ .kind = MP_SIM_OP_FREE, .stream = (uint64_t)e->stream, .alloc = a,
					     .pending = true, .entry = -1 })) != MP_OK)
			return err;
	}
	mp_i64map_del(&r->waiting, e->addr);
	return push(&r->ring, &r->nring, &r->cap_ring,
		    (mp_sim_op){ .kind = MP_SIM_OP_COMPLETE, .stream = (uint64_t)e->stream, .alloc = a,
				 .entry = (int64_t)i });
}

/* Entries of a release the allocator makes: segments given back, pending frees it waited for first. */
static bool in_release(const reader *r, size_t i)
{
	return is(r, i, r->k->segment_free) || is(r, i, r->k->segment_unmap) ||
	       (is(r, i, r->k->free_completed) && mp_i64map_get(&r->waiting, r->e[i].addr, NULL));
}

/* A release that ends in memory obtained (segment_alloc, segment_map) or in the OOM was the allocator's own,
   for a request; any other was an empty_cache() of the user's. */
static bool users_release(const reader *r, size_t next)
{
	return !(is(r, next, r->k->segment_alloc) || is(r, next, r->k->segment_map) || is(r, next, r->k->oom));
}

/* The live blocks of the state the ring does not account for: planted (pending ones freed at the start). */
static mp_err plant_state(reader *r)
{
	const mp_snapshot *snap = r->snap;
	mp_err err;

	for (size_t s = 0; s < snap->nsegments; s++) {
		const mp_segment *g = &snap->segments[s];

		if (g->device != r->h->device)
			continue;
		r->h->reserved += g->total_size;
		for (size_t j = 0; j < g->nblocks; j++) {
			const mp_block *b = &mp_segment_blocks(snap, g)[j];
			bool live = mp_val_is(b->state, r->k->active_allocated);
			bool waiting = mp_val_is(b->state, r->k->active_pending_free);
			int64_t a;

			if ((!live && !waiting) || mp_i64map_get(live ? &r->live : &r->waiting, b->address, NULL))
				continue;
			if ((err = plant(r, b->address, b->requested_size > 0 ? b->requested_size : b->size,
					 (uint64_t)g->stream, &a)) != MP_OK)
				return err;
			if (waiting && (err = push(&r->pending_at_start, &r->npending, &r->cap_pending,
						   (mp_sim_op){ .kind = MP_SIM_OP_FREE, .stream = (uint64_t)g->stream,
								.alloc = a, .pending = true, .entry = -1 })) != MP_OK)
				return err;
		}
	}
	return MP_OK;
}

static int by_addr(const void *pa, const void *pb, void *ctx)
{
	const int64_t *addr = ctx;
	const mp_sim_op *a = pa, *b = pb;
	int64_t x = addr[a->alloc], y = addr[b->alloc];

	return (x > y) - (x < y);
}

/* The planted ALLOCs in address order (the order an allocator hands out a fresh device, a guess at the order
   they were made in), then the pending frees, then the ring. */
static mp_err assemble(reader *r)
{
	mp_sim_history *h = r->h;
	int64_t *addr_of = calloc((size_t)(h->nallocs ? h->nallocs : 1), sizeof *addr_of);

	if (addr_of == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; i < r->nplanted; i++)
		addr_of[r->planted[i].alloc] = r->planted_addr[i];
	if (r->nplanted > 1)
		qsort_r(r->planted, r->nplanted, sizeof *r->planted, by_addr, addr_of);
	free(addr_of);
	h->nops = r->nplanted + r->npending + r->nring;
	if ((h->ops = malloc((h->nops ? h->nops : 1) * sizeof *h->ops)) == NULL)
		return MP_E_NOMEM;
	/* An empty part may have no array at all, and memcpy from NULL is undefined even for 0 bytes. */
	if (r->nplanted > 0)
		memcpy(h->ops, r->planted, r->nplanted * sizeof *h->ops);
	if (r->npending > 0)
		memcpy(h->ops + r->nplanted, r->pending_at_start, r->npending * sizeof *h->ops);
	if (r->nring > 0)
		memcpy(h->ops + r->nplanted + r->npending, r->ring, r->nring * sizeof *h->ops);
	h->nplanted = r->nplanted + r->npending;
	return MP_OK;
}

mp_err mp_sim_history_read(const mp_snapshot *snap, int64_t device, const mp_sim_conf *settings, mp_sim_release rel,
			   mp_sim_history *out, mp_diag *diag)
{
	reader r = { .snap = snap, .k = mp_heap_keys(snap->heap), .h = out };
	int64_t oom = -1, segments_before = 0;
	bool releasing = false;
	mp_err err = MP_OK;

	*out = (mp_sim_history){ .device = device, .request = -1, .device_free = -1, .step_match = -1 };
	if (device < 0 || (size_t)device >= snap->ndevice_traces || snap->device_traces[device].n == 0)
		return mp_fail(diag, MP_E_NOTFOUND, "device %lld has no trace: the job recorded no memory history",
			       (long long)device);
	r.e = snap->trace + snap->device_traces[device].first;
	r.n = snap->device_traces[device].n;
	for (size_t i = 0; i < r.n; i++)
		if (is(&r, i, r.k->oom))
			oom = (int64_t)i;
	for (size_t i = 0; i < r.n && err == MP_OK; i++) {
		const mp_trace_entry *e = &r.e[i];

		if (releasing && !in_release(&r, i)) {
			releasing = false;
			if (users_release(&r, i))
				err = push(&r.ring, &r.nring, &r.cap_ring,
					   (mp_sim_op){ .kind = MP_SIM_OP_EMPTY_CACHE, .entry = (int64_t)i - 1 });
		}
		if (err != MP_OK)
			break;
		if (mp_val_is(e->action, r.k->segment_free) || mp_val_is(e->action, r.k->segment_unmap)) {
			releasing = true;
			segments_before += e->size;
			out->recorded_segment_frees += mp_val_is(e->action, r.k->segment_free);
		} else if (mp_val_is(e->action, r.k->segment_alloc) || mp_val_is(e->action, r.k->segment_map)) {
			segments_before -= e->size;
			out->recorded_segment_allocs += mp_val_is(e->action, r.k->segment_alloc);
		} else if (mp_val_is(e->action, r.k->alloc)) {
			err = on_alloc(&r, i);
		} else if (mp_val_is(e->action, r.k->free_requested)) {
			err = on_free(&r, i);
		} else if (mp_val_is(e->action, r.k->free_completed)) {
			err = on_completed(&r, i);
		} else if (mp_val_is(e->action, r.k->oom)) {
			if ((int64_t)i != oom) {
				out->earlier_ooms++;
				continue;
			}
			out->device_free = (e->present & MP_F_TR_DEVICE_FREE) ? e->addr : -1;
			err = push(&r.ring, &r.nring, &r.cap_ring,
				   (mp_sim_op){ .kind = MP_SIM_OP_REQUEST, .size = e->size, .stream = (uint64_t)e->stream,
						.alloc = out->nallocs++, .entry = (int64_t)i });
		}
	}
	if (err == MP_OK && releasing && users_release(&r, r.n))
		err = push(&r.ring, &r.nring, &r.cap_ring,
			   (mp_sim_op){ .kind = MP_SIM_OP_EMPTY_CACHE, .entry = (int64_t)r.n - 1 });
	if (err == MP_OK)
		err = plant_state(&r);
	if (err == MP_OK)
		err = assemble(&r);
	if (err == MP_OK) {
		out->reserved_before = out->reserved + segments_before;
		out->whole = out->nplanted == 0 && out->reserved_before == 0;
		for (size_t i = out->nplanted; i < out->nops; i++)
			if (out->ops[i].kind == MP_SIM_OP_REQUEST)
				out->request = (int64_t)i;
		if (out->request >= 0)
			sim_find_step(snap, r.e, out, settings, rel);
	}
	free(r.ring);
	free(r.planted);
	free(r.planted_addr);
	free(r.pending_at_start);
	mp_i64map_fini(&r.live);
	mp_i64map_fini(&r.waiting);
	if (err != MP_OK) {
		mp_sim_history_fini(out);
		return err == MP_E_NOMEM ? err : mp_fail(diag, err, "reading the trace of device %lld", (long long)device);
	}
	return MP_OK;
}

void mp_sim_history_fini(mp_sim_history *h)
{
	free(h->ops);
	h->ops = NULL;
	h->nops = 0;
}
