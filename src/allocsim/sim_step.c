/* sim_step.c - the step before the failed request, when the ring holds it: the op one training step earlier
   that made the same request (the same frames, rounded size and stream), so that the replay can run the rest of
   the step after the request.

   The same frames recur within a step too (every layer of a loop allocates from the same lines), and a period of
   one layer is no step: the replay would stop after the next layer and call the step complete. So a match counts
   only when
   - the stretch between it and the request holds both the job's own Python code (the forward, the optimizer)
     and work without it (the autograd engine's backward, whose thread runs no Python): a training step's two
     halves; a stretch of forward layers, or of backward ones, has only one;
   - the same stretch before the match repeats op for op (kind, size, stream, frames): the period is the job's,
     not a coincidence of equal layers, which needs the ring to hold two steps before the request.
   The nearest such match is the step; without one, a replay covers the request only. */
#include <string.h>

#include "mp_frame_filter.h"
#include "mp_sim_history.h"
#include "sim_int.h"

/* Work done while comparing stretches, at most: a ring of many matches must not make this quadratic. */
#define MAX_COMPARED 20000000

/* Whether frame lists A and B name the same frames. */
bool sim_same_frames(const mp_snapshot *snap, mp_val a, mp_val b)
{
	size_t n = mp_frames_len(snap, a);
	mp_frame x, y;

	if (a == b)
		return n > 0;
	if (n == 0 || n != mp_frames_len(snap, b))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!mp_frames_get(snap, a, i, &x) || !mp_frames_get(snap, b, i, &y) || x.line != y.line ||
		    x.filename_len != y.filename_len || x.name_len != y.name_len ||
		    memcmp(x.filename, y.filename, x.filename_len) != 0 || memcmp(x.name, y.name, x.name_len) != 0)
			return false;
	return true;
}

/* Whether frames F include the job's own code. */
static bool own_code(const mp_snapshot *snap, mp_val f)
{
	mp_frame fr;

	for (size_t i = 0, n = mp_frames_len(snap, f); i < n; i++)
		if (mp_frames_get(snap, f, i, &fr) && mp_frame_is_own(&fr))
			return true;
	return false;
}

/* Whether ops A and B are the same op one period apart. */
static bool same_op(const mp_snapshot *snap, const mp_trace_entry *e, const mp_sim_op *a, const mp_sim_op *b)
{
	if (a->kind != b->kind || a->stream != b->stream || a->pending != b->pending || a->entry < 0 || b->entry < 0)
		return false;
	if (a->kind == MP_SIM_OP_ALLOC && a->size != b->size)
		return false;
	return a->kind == MP_SIM_OP_EMPTY_CACHE || e[a->entry].frames == e[b->entry].frames ||
	       sim_same_frames(snap, e[a->entry].frames, e[b->entry].frames);
}

void sim_find_step(const mp_snapshot *snap, const mp_trace_entry *e, mp_sim_history *h, const mp_sim_conf *settings,
		   mp_sim_release rel)
{
	const mp_sim_op *q = &h->ops[h->request];
	int64_t first = (int64_t)h->nplanted, budget = MAX_COMPARED;
	bool with_own = false, without_own = false;

	for (int64_t m = h->request - 1; m >= first && budget > 0; m--) {
		const mp_sim_op *o = &h->ops[m];
		int64_t len = h->request - m, k;

		/* the stretch (m, request) grows one op at a time: what kinds of work it holds */
		if (m + 1 < h->request) {
			const mp_sim_op *inside = &h->ops[m + 1];

			if (inside->entry >= 0 && own_code(snap, e[inside->entry].frames))
				with_own = true;
			else
				without_own = true;
		}
		if (o->kind != MP_SIM_OP_ALLOC || o->stream != q->stream || mp_sim_round_size(settings, rel, o->size) != q->size ||
		    !sim_same_frames(snap, e[o->entry].frames, e[q->entry].frames) || !with_own || !without_own)
			continue;
		if (m - len < first)
			return; /* the ring holds no whole stretch before this one: nor before any earlier match */
		for (k = 0; k < len && budget-- > 0; k++)
			if (!same_op(snap, e, &h->ops[m - len + k], &h->ops[m + k]))
				break;
		if (k == len) {
			h->step_match = m;
			return;
		}
	}
}
