/* whatif.c - the job's history, its device and settings, and the check of the model against what the job did;
   then a replay under other settings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "mp_format.h"
#include "mp_frame_filter.h"
#include "mp_i64map.h"
#include "mp_whatif.h"

/* The shape of a state, to compare the model's with the job's: per segment its size, blocks and live bytes,
   sorted (addresses differ: the model's device is not the job's). */
typedef struct seg_shape {
	int64_t size, nblocks, live;
} seg_shape;
typedef struct shapes {
	seg_shape *v;
	size_t n, cap;
	bool nomem;
} shapes;

static int by_shape(const void *pa, const void *pb)
{
	const seg_shape *a = pa, *b = pb;

	if (a->size != b->size)
		return a->size < b->size ? -1 : 1;
	if (a->nblocks != b->nblocks)
		return a->nblocks < b->nblocks ? -1 : 1;
	return (a->live > b->live) - (a->live < b->live);
}

static void add_segment(void *ctx, const mp_sim_seg_info *g)
{
	shapes *s = ctx;

	if (mp_array_grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v) != MP_OK) {
		s->nomem = true;
		return;
	}
	s->v[s->n++] = (seg_shape){ .size = g->total_size };
}

static void add_block(void *ctx, const mp_sim_block_info *b)
{
	shapes *s = ctx;

	if (s->n == 0 || s->nomem)
		return;
	s->v[s->n - 1].nblocks++;
	if (b->state == MP_SIM_ACTIVE_ALLOCATED)
		s->v[s->n - 1].live += b->size;
}

static void look(void *ctx, const mp_sim *s)
{
	shapes *sh = ctx;

	if (mp_sim_walk(s, add_segment, add_block, sh) != MP_OK)
		sh->nomem = true;
}

/* Whether the model's state after the request has the job's segments, block for block. */
static bool same_state(const mp_whatif *w, shapes *model, char *why, size_t n)
{
	const mp_snapshot *snap = w->snap;
	const mp_keys *k = mp_heap_keys(snap->heap);
	shapes job = { 0 };
	bool same;

	for (size_t i = 0; i < snap->nsegments && !job.nomem; i++) {
		const mp_segment *g = &snap->segments[i];

		if (g->device != w->h.device)
			continue;
		add_segment(&job, &(mp_sim_seg_info){ .total_size = g->total_size });
		for (size_t j = 0; j < g->nblocks; j++) {
			const mp_block *b = &mp_segment_blocks(snap, g)[j];

			add_block(&job, &(mp_sim_block_info){ .size = b->size,
				.state = mp_val_is(b->state, k->active_allocated) ? MP_SIM_ACTIVE_ALLOCATED : MP_SIM_INACTIVE });
		}
	}
	mp_sort(job.v, job.n, sizeof *job.v, by_shape);
	mp_sort(model->v, model->n, sizeof *model->v, by_shape);
	same = !job.nomem && !model->nomem && job.n == model->n &&
	       (job.n == 0 || memcmp(job.v, model->v, job.n * sizeof *job.v) == 0);
	if (!same)
		snprintf(why, n, "the model's %zu segments are not the job's %zu, block for block",
			 model->n, job.n);
	free(job.v);
	return same;
}

/* The model under the job's own settings must run out at the job's request, no earlier, with the memory the
   job had reserved then, in the job's segments. */
static mp_err check(mp_whatif *w)
{
	char a[32], b[32];
	shapes model = { 0 };
	mp_err err;

	w->faithful = false;
	if (w->h.request < 0) {
		snprintf(w->unfaithful, sizeof w->unfaithful, "the trace has no OOM to check the model against");
		return MP_OK;
	}
	if (!w->dev_known) {
		snprintf(w->unfaithful, sizeof w->unfaithful, "the free memory at the OOM is unknown");
		return MP_OK;
	}
	if (w->h.private_pools) {
		snprintf(w->unfaithful, sizeof w->unfaithful, "requests went to private pools, which the replay does "
			 "not route");
		return MP_OK;
	}
	/* to the trace's last op: a snapshot taken after the OOM (in an except) shows what the job freed since */
	mp_sim_replay_opts ro = { .conf = &w->recorded, .release = w->release, .dev = w->dev, .allowed = w->allowed,
				  .to_end = true, .look = look, .look_ctx = &model };

	if ((err = mp_sim_replay(&w->h, &ro, &w->baseline)) != MP_OK)
		return err;
	if (w->baseline.refused)
		snprintf(w->unfaithful, sizeof w->unfaithful, "the model could not replay the requests");
	else if (w->baseline.oom_op != w->h.request)
		snprintf(w->unfaithful, sizeof w->unfaithful, w->baseline.oom_op < 0
			 ? "the model under the job's settings serves the request the job could not"
			 : "the model under the job's settings runs out %lld requests before the job did",
			 (long long)mp_whatif_requests_between(w, w->baseline.oom_op, w->h.request));
	else if (w->baseline.reserved_at_end != w->h.reserved)
		snprintf(w->unfaithful, sizeof w->unfaithful, "the model reserves %s where the job had %s",
			 mp_format_torch_size(a, sizeof a, w->baseline.reserved_at_end),
			 mp_format_torch_size(b, sizeof b, w->h.reserved));
	else
		w->faithful = same_state(w, &model, w->unfaithful, sizeof w->unfaithful);
	free(model.v);
	return MP_OK;
}

mp_err mp_whatif_open(const mp_snapshot *snap, const mp_whatif_opts *opts, mp_whatif **out, mp_diag *diag)
{
	mp_whatif *w = calloc(1, sizeof *w);
	int64_t device = opts->device;
	mp_err err;

	*out = NULL;
	if (w == NULL)
		return MP_E_NOMEM;
	w->snap = snap;
	w->allowed = opts->allowed;
	w->release = opts->release;
	if (w->release.major == 0) {
		w->release = mp_sim_release_of_snapshot(snap);
		w->release_guessed = true;
	}
	mp_sim_conf_from_snapshot(snap, w->release, &w->recorded, w->recorded_text, sizeof w->recorded_text);
	if (device < 0) {
		/* the device whose trace ends in an OOM, else the first */
		const mp_keys *k = mp_heap_keys(snap->heap);

		device = 0;
		for (size_t d = 0; d < snap->ndevice_traces; d++)
			for (size_t i = 0; i < snap->device_traces[d].n; i++)
				if (mp_val_is(snap->trace[snap->device_traces[d].first + i].action, k->oom))
					device = (int64_t)d;
	}
	if ((err = mp_sim_history_read(snap, device, &w->recorded, w->release, &w->h, diag)) != MP_OK) {
		free(w);
		return err;
	}
	int64_t free_mem = w->h.device_free >= 0 ? w->h.device_free : opts->device_free;

	if (free_mem >= 0) {
		int64_t usable = w->h.reserved + free_mem;

		w->dev_known = true;
		w->dev.total = opts->capacity > usable ? opts->capacity : usable;
		w->dev.outside = w->dev.total - usable;
	}
	if ((err = check(w)) != MP_OK) {
		mp_whatif_close(w);
		return err;
	}
	*out = w;
	return MP_OK;
}

void mp_whatif_close(mp_whatif *w)
{
	if (w == NULL)
		return;
	mp_sim_history_fini(&w->h);
	free(w);
}

mp_err mp_whatif_try_changed(const mp_whatif *w, const mp_sim_conf *conf, const uint8_t *empty_cache_after,
			     const int64_t *freed, size_t nfreed, mp_sim_outcome *out)
{
	mp_sim_replay_opts ro = { .conf = conf, .release = w->release, .dev = w->dev, .allowed = w->allowed, .step = true,
				  .empty_cache_after = empty_cache_after, .freed = freed, .nfreed = nfreed };

	if (!w->dev_known) {
		/* no OOM to size the device by: as much as the model asks for, to see peaks */
		ro.dev.total = (int64_t)1 << 50;
		ro.dev.outside = 0;
	}
	return mp_sim_replay(&w->h, &ro, out);
}

mp_err mp_whatif_try(const mp_whatif *w, const mp_sim_conf *conf, mp_sim_outcome *out)
{
	return mp_whatif_try_changed(w, conf, NULL, NULL, 0, out);
}

bool mp_whatif_passes(const mp_sim_outcome *o, bool step)
{
	return !o->refused && o->oom_op < 0 && o->request_served &&
	       (!step || (o->step_replayed && o->step_oom_op < 0));
}

int64_t mp_whatif_requests_between(const mp_whatif *w, int64_t from, int64_t to)
{
	int64_t n = 0;

	from = from < 0 ? 0 : from;
	to = to > (int64_t)w->h.nops ? (int64_t)w->h.nops : to;
	for (int64_t i = from; i < to; i++)
		n += w->h.ops[i].kind == MP_SIM_OP_ALLOC || w->h.ops[i].kind == MP_SIM_OP_REQUEST;
	return n;
}

const char *mp_whatif_site(const mp_whatif *w, int64_t op, char *buf, size_t n)
{
	const mp_sim_op *o;
	const mp_snapshot *snap = w->snap;

	if (n > 0)
		buf[0] = '\0';
	if (op < 0 || (size_t)op >= w->h.nops || (o = &w->h.ops[op])->entry < 0)
		return buf;
	return mp_frames_site(snap, snap->trace[snap->device_traces[w->h.device].first + (size_t)o->entry].frames, buf,
			      n);
}

bool mp_whatif_place(const mp_whatif *w, int64_t op, mp_frame *out)
{
	const mp_snapshot *snap = w->snap;
	const mp_sim_op *o;

	if (op < 0 || (size_t)op >= w->h.nops || (o = &w->h.ops[op])->entry < 0)
		return false;
	return mp_frames_place(snap, snap->trace[snap->device_traces[w->h.device].first + (size_t)o->entry].frames, out);
}

size_t mp_whatif_allocs_at(const mp_whatif *w, const int64_t *addrs, size_t n, int64_t *out)
{
	const mp_sim_history *h = &w->h;
	int64_t end = h->request >= 0 ? h->request : (int64_t)h->nops;
	int64_t *addr_of = calloc((size_t)(h->nallocs ? h->nallocs : 1), sizeof *addr_of);
	mp_i64map live = { 0 }; /* address -> the allocation there */
	size_t found = 0;
	int64_t a;

	if (addr_of == NULL)
		return 0;
	for (int64_t i = 0; i < end; i++) {
		const mp_sim_op *o = &h->ops[i];

		if (o->kind == MP_SIM_OP_ALLOC) {
			addr_of[o->alloc] = o->addr;
			if (mp_i64map_put(&live, o->addr, o->alloc) != MP_OK)
				break;
		} else if (o->kind == MP_SIM_OP_FREE && mp_i64map_get(&live, addr_of[o->alloc], &a) && a == o->alloc) {
			mp_i64map_del(&live, addr_of[o->alloc]);
		}
	}
	for (size_t i = 0; i < n; i++)
		if (mp_i64map_get(&live, addrs[i], &a))
			out[found++] = a;
	mp_i64map_fini(&live);
	free(addr_of);
	return found;
}
