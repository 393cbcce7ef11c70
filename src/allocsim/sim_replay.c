/* sim_replay.c - a history's requests through the model under some settings: where it runs out of memory,
   whether the failed request is served, the peak of reserved memory, and, when the ring holds the step before,
   whether the rest of a step after the request would complete.

   A pending free (one that waited for other streams' events) is replayed as a block used on a stream that is
   never synchronised: it waits until its recorded completion or until the allocator synchronises by itself (a
   retry, empty_cache), as the real one would. A request that runs out of memory ends the replay: the job would
   have raised there. */
#include <stdlib.h>

#include "mp_i64map.h"
#include "mp_sim_history.h"

/* A stream no one synchronises: the other stream a pending free's block was used on. */
#define OTHER_STREAM (UINT64_MAX - 1)

typedef struct replay {
	const mp_sim_history *h;
	mp_sim *s;
	mp_sim_block **blocks; /* by allocation, while allocated */
	int64_t nblocks;
	const uint8_t *empty_after; /* mp_sim_replay_opts.empty_cache_after */
} replay;

/* Run one op with its allocation A (and, for ALLOC/REQUEST, the allocation it makes as A). False when it ran
   out of memory or the model refused (R->s failed). */
static bool run(replay *r, const mp_sim_op *o, int64_t a)
{
	mp_sim_block *b;
	mp_err err;

	switch (o->kind) {
	case MP_SIM_OP_ALLOC:
	case MP_SIM_OP_REQUEST:
		err = mp_sim_malloc(r->s, o->size, o->stream, &b);
		if (err != MP_OK)
			return false;
		r->blocks[a] = b;
		return true;
	case MP_SIM_OP_FREE:
		if ((b = r->blocks[a]) == NULL)
			return true; /* never made (a planted block the model could not fit is not here) */
		if (o->pending) {
			mp_sim_record_stream(r->s, b, OTHER_STREAM);
			mp_sim_tag(r->s, b, a + 1);
		}
		mp_sim_free(r->s, b);
		r->blocks[a] = NULL;
		return true;
	case MP_SIM_OP_COMPLETE:
		mp_sim_complete(r->s, a + 1);
		return true;
	case MP_SIM_OP_EMPTY_CACHE:
		mp_sim_empty_cache(r->s);
		return true;
	}
	return true;
}

/* The step after the request: the ops of the previous step after its match, each allocation of it new, each free
   of an allocation made before it mapped to its counterpart one step later. */
static void step(replay *r, mp_sim_outcome *out)
{
	const mp_sim_history *h = r->h;
	int64_t m = h->step_match, q = h->request, len = q - m;
	int64_t *op_of = malloc((size_t)h->nallocs * sizeof *op_of); /* allocation -> the op that made it */
	mp_i64map copy = { 0 };                                      /* previous step's allocation -> its copy */
	int64_t next = h->nallocs;

	if (op_of == NULL) {
		out->refused = true;
		return;
	}
	for (int64_t i = 0; i < h->nallocs; i++)
		op_of[i] = -1;
	for (size_t i = 0; i < h->nops; i++)
		if (h->ops[i].kind == MP_SIM_OP_ALLOC || h->ops[i].kind == MP_SIM_OP_REQUEST)
			op_of[h->ops[i].alloc] = (int64_t)i;
	out->step_replayed = true;
	for (int64_t i = m + 1; i < q; i++) {
		const mp_sim_op *o = &h->ops[i];
		int64_t a;

		if (o->kind == MP_SIM_OP_ALLOC) {
			a = next++;
			if (mp_i64map_put(&copy, o->alloc, a) != MP_OK) {
				out->refused = true;
				break;
			}
		} else if (o->kind == MP_SIM_OP_EMPTY_CACHE) {
			a = -1;
		} else if (o->alloc == h->ops[m].alloc) {
			a = h->ops[q].alloc; /* the request itself, one step later */
		} else if (!mp_i64map_get(&copy, o->alloc, &a)) {
			/* made before the previous step's match: its counterpart is one step later, before the request */
			int64_t at = op_of[o->alloc] + len;
			const mp_sim_op *c = at >= 0 && at < q ? &h->ops[at] : NULL;

			if (op_of[o->alloc] < 0 || c == NULL || c->kind != MP_SIM_OP_ALLOC || c->size != h->ops[op_of[o->alloc]].size ||
			    c->stream != h->ops[op_of[o->alloc]].stream) {
				out->step_replayed = false; /* no regular step: only the request is covered */
				break;
			}
			a = c->alloc;
		}
		out->step_ops++;
		if (!run(r, o, a)) {
			out->step_oom_op = i;
			break;
		}
		if (r->empty_after != NULL && r->empty_after[i])
			mp_sim_empty_cache(r->s); /* the same line runs again one step later */
	}
	mp_i64map_fini(&copy);
	free(op_of);
}

mp_err mp_sim_replay(const mp_sim_history *h, const mp_sim_replay_opts *opts, mp_sim_outcome *out)
{
	replay r = { .h = h, .empty_after = opts->empty_cache_after };
	int64_t end = h->request >= 0 && !opts->to_end ? h->request : (int64_t)h->nops - 1;
	int64_t steps = opts->step && h->step_match >= 0 ? h->request - h->step_match : 0;

	*out = (mp_sim_outcome){ .oom_op = -1, .step_oom_op = -1 };
	r.nblocks = h->nallocs + steps;
	if ((r.blocks = calloc((size_t)(r.nblocks ? r.nblocks : 1), sizeof *r.blocks)) == NULL ||
	    (r.s = mp_sim_new(opts->conf, opts->release, opts->dev.total, opts->dev.outside)) == NULL) {
		free(r.blocks);
		return MP_E_NOMEM;
	}
	if (opts->allowed >= 0)
		mp_sim_set_allowed(r.s, opts->allowed);
	for (int64_t i = 0; i <= end; i++) {
		const mp_sim_op *o = &h->ops[i];

		if (o->kind == MP_SIM_OP_REQUEST) {
			/* the holders given up go first, as a del before the request would */
			for (size_t k = 0; k < opts->nfreed; k++)
				if (opts->freed[k] >= 0 && opts->freed[k] < r.nblocks && r.blocks[opts->freed[k]] != NULL) {
					mp_sim_free(r.s, r.blocks[opts->freed[k]]);
					r.blocks[opts->freed[k]] = NULL;
				}
			out->reserved_at_request = mp_sim_stats_of(r.s)->reserved_bytes.current;
		}
		if (!run(&r, o, o->alloc)) {
			bool expected = opts->to_end && i == h->request && out->oom_op < 0;

			if (out->oom_op < 0) {
				out->oom_op = i;
				out->reserved_at_oom = mp_sim_stats_of(r.s)->reserved_bytes.current;
			}
			if (!expected || mp_sim_failed(r.s))
				break; /* the job would have raised here; past its own failed request it went on */
		}
		if (o->kind == MP_SIM_OP_REQUEST)
			out->request_served = true;
		if (r.empty_after != NULL && r.empty_after[i])
			mp_sim_empty_cache(r.s);
	}
	out->reserved_at_end = mp_sim_stats_of(r.s)->reserved_bytes.current;
	if (opts->look != NULL)
		opts->look(opts->look_ctx, r.s);
	out->segment_allocs = mp_sim_stats_of(r.s)->num_device_alloc;
	out->segment_frees = mp_sim_stats_of(r.s)->num_device_free;
	if (out->request_served && steps > 0 && !opts->to_end)
		step(&r, out);
	out->peak_reserved = mp_sim_stats_of(r.s)->reserved_bytes.peak;
	out->refused |= mp_sim_failed(r.s);
	mp_sim_free_all(r.s);
	free(r.blocks);
	return MP_OK;
}
