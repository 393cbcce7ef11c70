/* mp_walk.c - the walk from start to end: find the library and the allocator, pick the layout
   that fits the memory, then per device its segments, statistics and trace ring. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "walk_int.h"

/* Candidate layouts looked at, at most. */
enum { MAX_CANDIDATES = 64 }; /* candidates: DWARF and every table */

static const char *const action_names[MP_WALK_ACTION_MAX + 1] = {
	"alloc",        "free_requested", "free_completed", "segment_alloc", "segment_free",
	"segment_map",  "segment_unmap",  "snapshot",       "oom",           "annotate",
};

const char *mp_walk_action_name(int action)
{
	return action >= 0 && action <= MP_WALK_ACTION_MAX ? action_names[action] : NULL;
}

const char *mp_walk_state_name(enum mp_walk_state state)
{
	switch (state) {
	case MP_WS_ACTIVE_ALLOCATED:
		return "active_allocated";
	case MP_WS_ACTIVE_PENDING_FREE:
		return "active_pending_free";
	case MP_WS_INACTIVE:
		break;
	}
	return "inactive";
}

void mp_walk_free(mp_walk *w)
{
	if (w == NULL)
		return;
	for (size_t i = 0; i < w->ndevices; i++) {
		free(w->devices[i].stats.v);
		free(w->devices[i].stat_keys);
	}
	for (size_t i = 0; i < w->ntrace; i++) {
		free(w->trace[i].compile_context);
		free(w->trace[i].user_metadata);
	}
	for (size_t i = 0; i < w->nannotations; i++) {
		for (size_t k = 0; k < 2 * w->annotations[i].nmeta; k++)
			free(w->annotations[i].meta[k]);
		free(w->annotations[i].meta);
	}
	free(w->annotations);
	free(w->devices);
	free(w->segments);
	free(w->blocks);
	free(w->trace);
	free(w->settings.last_settings);
	free(w);
}

/* Try each of the NCANDS candidate layouts on the memory; keep the first that fits. When none
   fits, REASON gets why the first (the best guess) did not. */
static mp_err choose_layout(struct walk *wk, const mp_layout *cands, size_t ncands, const uint64_t *das,
			    size_t n, mp_diag *reason)
{
	mp_diag *diag = wk->diag;
	mp_err err = MP_E_NOTFOUND;

	for (size_t i = 0; i < ncands && err != MP_OK; i++) {
		mp_diag quiet = { 0 };

		wk->L = &cands[i];
		wk->diag = &quiet;
		err = wk_layout_check(wk, das, n);
		if (err == MP_OK)
			wk->w->layout = cands[i];
		else if (i == 0)
			mp_fail(reason, err, "%s", quiet.msg);
	}
	wk->diag = diag;
	wk->L = err == MP_OK ? &wk->w->layout : NULL;
	return err == MP_OK ? MP_OK : MP_E_CORRUPT;
}

/* Guard what changes with every allocation and free of the N devices at DAS, under layout L: the lock word
   of the device's mutex (every release's DeviceCachingAllocator begins with its recursive_mutex, the
   statistics right after it: allocator-facts.md 3.2), so that a read of a running process that began or
   ended inside the allocator is read again, and the allocation counts (the first StatArray of the
   statistics, which every allocation and free counts), or with WHOLE all the statistics and the trace
   rings' next slots. Registered before what they guard is read: what is read after a guard is at least
   as new as it. */
static void guard_devices(struct walk *wk, const mp_layout *l, const uint64_t *das, size_t n, bool whole)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t stats = das[i] + (uint64_t)l->off[MP_L_DCA_STATS];

		/* a vector read at a wrong layout's offset may hold pointers to nowhere: no guard there */
		if (!whole && !mp_target_readable(wk->t, stats + (uint64_t)l->off[MP_L_DS_ALLOCATION], 96))
			continue;
		if (l->off[MP_L_DCA_STATS] >= 40)
			mp_target_guard_idle(wk->t, das[i], 12); /* pthread_mutex_t: __lock, __count, __owner */
		if (!whole) {
			mp_target_guard(wk->t, stats + (uint64_t)l->off[MP_L_DS_ALLOCATION], 96);
			continue;
		}
		mp_target_guard(wk->t, stats, (size_t)l->off[MP_L_DS_SIZEOF]);
		if (!wk->opts->no_trace)
			mp_target_guard(wk->t, das[i] + (uint64_t)l->off[MP_L_DCA_ALLOC_BUFFER] + (uint64_t)l->off[MP_L_RB_NEXT],
					8);
	}
}

static mp_err walk_devices(struct walk *wk, const uint64_t *das, size_t n)
{
	mp_walk *w = wk->w;
	mp_err err = MP_OK;

	guard_devices(wk, wk->L, das, n, true);
	w->devices = calloc(n, sizeof *w->devices);
	if (w->devices == NULL)
		return MP_E_NOMEM;
	w->ndevices = n;
	for (size_t i = 0; i < n && err == MP_OK; i++) {
		mp_walk_device *dev = &w->devices[i];

		size_t first_segment = w->nsegments;

		dev->index = (int)i;
		dev->address = das[i];
		err = wk_stats(wk, dev);
		if (err == MP_OK)
			err = wk_segments(wk, dev);
		if (err == MP_OK)
			wk_stats_cross_check(wk, dev, first_segment);
		if (err == MP_OK && !wk->opts->no_trace)
			err = wk_trace(wk, dev);
	}
	return err;
}

/* The per-device allocators and the layout that fits them. Each candidate names where the native
   allocator keeps its vector of device allocators (80 in 2.1, 16096 in 2.2, 22512 in 2.3 and 2.4,
   22584 from 2.5 on), so the vector is read at each distinct offset in candidate order, and the
   candidates sharing that offset are tried on what it holds. *DAS (malloc'd) and *N on success; else REASONS says why the
   first candidate failed (its vector, or its self-check). */
static mp_err devices_and_layout(struct walk *wk, const mp_layout *cands, size_t ncands, uint64_t obj,
				 uint64_t **das, size_t *n, mp_diag *reasons)
{
	mp_layout *group = malloc(ncands * sizeof *group);
	mp_diag *diag = wk->diag, first = { 0 };
	mp_err err, vector_err = MP_OK;
	bool any_vector = false;

	if (group == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; i < ncands; i++) {
		int32_t off = cands[i].off[MP_L_NCA_DEVICE_ALLOCATOR];
		size_t ng = 0;
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = cands[j].off[MP_L_NCA_DEVICE_ALLOCATOR] == off;
		if (seen)
			continue;
		wk->L = &cands[i];
		wk->diag = vector_err == MP_OK && !any_vector ? &first : &(mp_diag){ 0 };
		err = wk_device_allocators(wk, obj, das, n);
		wk->L = NULL;
		wk->diag = diag;
		if (err != MP_OK) {
			if (vector_err == MP_OK && !any_vector)
				vector_err = err;
			continue;
		}
		/* the self-check reads blocks a running process moves: guarded before it */
		guard_devices(wk, &cands[i], *das, *n, false);
		any_vector = true;
		for (size_t j = i; j < ncands; j++)
			if (cands[j].off[MP_L_NCA_DEVICE_ALLOCATOR] == off)
				group[ng++] = cands[j];
		err = choose_layout(wk, group, ng, *das, *n, reasons[0].msg[0] ? &(mp_diag){ 0 } : reasons);
		if (err == MP_OK) {
			free(group);
			return MP_OK;
		}
		free(*das);
		*das = NULL;
	}
	free(group);
	/* An allocator without devices is one state ("not initialised"), a vector no layout can read another. */
	if (!any_vector && vector_err == MP_E_NOTFOUND)
		return mp_fail(diag, vector_err, "%s", first.msg);
	if (!any_vector)
		return mp_fail(reasons, vector_err, "%s", first.msg);
	return MP_E_CORRUPT;
}

/* One attempt at the whole walk, with the NCANDS candidate layouts CANDS (at least one). */
static mp_err walk_once(struct walk *wk, const mp_c10 *c10, const mp_layout *cands, size_t ncands, mp_diag *diag)
{
	uint64_t obj, *das = NULL;
	size_t n;
	mp_diag reasons = { 0 };
	mp_err err;

	wk->diag = diag;
	if ((err = wk_find_allocator(wk, c10, &obj)) != MP_OK)
		return err;
	wk->w->allocator = obj;
	err = devices_and_layout(wk, cands, ncands, obj, &das, &n, &reasons);
	if (err == MP_E_NOMEM || err == MP_E_NOTFOUND)
		return err;
	if (err != MP_OK) {
		/* With its own DWARF the layout is known: then the memory is what fails. */
		if (c10->has_dwarf && wk->opts->layout == NULL)
			return mp_fail(diag, err, "the allocator's memory in %s fails the self-check with the "
				       "library's own DWARF layout (damaged?)%s%s", c10->path,
				       reasons.msg[0] ? ": " : "", reasons.msg);
		return mp_fail(diag, err, "no known layout fits the allocator in %s (version %s)%s%s",
			       c10->path, c10->version[0] ? c10->version : "unknown",
			       reasons.msg[0] ? ": " : "", reasons.msg);
	}
	err = walk_devices(wk, das, n);
	free(das);
	if (err == MP_OK && !wk->opts->no_trace)
		err = wk_annotations(wk, obj);
	if (err == MP_OK && !wk->opts->no_trace)
		wk_convert_times(wk, obj);
	if (err == MP_OK)
		err = wk_settings(wk, c10);
	return err;
}

/* Whether an inference can start from L: it searches the members of 2.1 on (a Block's contexts, expandable
   segments), which 2.0's layout lacks. */
static bool can_start_inference(const mp_layout *l)
{
	return l->off[MP_L_BLOCK_CONTEXT_WHEN_ALLOCATED] != MP_LAYOUT_ABSENT &&
	       l->off[MP_L_BLOCK_EXPANDABLE_SEGMENT] != MP_LAYOUT_ABSENT;
}

/* The prior for an inference: among the best-scored candidates (same ABI and CUDA where known), the release
   nearest C10's; the first when the version is unknown; NULL when no candidate can start one. */
static const mp_layout *nearest(const mp_layout *cands, size_t n, const mp_c10 *c10)
{
	long want = wk_version_minor(c10->version);
	const mp_layout *best = NULL;

	for (size_t i = 0; i < n; i++) {
		long m = wk_version_minor(cands[i].key.torch_version);
		long b = best != NULL ? wk_version_minor(best->key.torch_version) : -1;

		if (!can_start_inference(&cands[i]))
			continue;
		if (best == NULL)
			best = &cands[i];
		else if (want >= 0 &&
			 (cands[i].key.cxx11_abi < 0 || c10->cxx11_abi < 0 || cands[i].key.cxx11_abi == c10->cxx11_abi) &&
			 m >= 0 && (b < 0 || labs(m - want) < labs(b - want)))
			best = &cands[i];
	}
	return best;
}

/* No table fits (a build memprof does not know): infer the layout from PRIOR (the nearest release's table) and
   walk with it under the same self-check. Success is a warning saying so and how to keep the layout; failure adds why to
   DIAG's message and returns the tables' error FAILED. */
static mp_err walk_inferred(struct walk *wk, const mp_c10 *c10, const mp_layout *prior, mp_err failed,
			    mp_diag *diag)
{
	mp_layout *inferred = malloc(sizeof *inferred);
	mp_diag why = { 0 };
	uint64_t obj = wk->w->allocator;
	size_t used;
	mp_err err;

	if (inferred == NULL)
		return MP_E_NOMEM;
	if (prior == NULL) {
		free(inferred);
		if (diag != NULL && (used = strlen(diag->msg)) + 16 < sizeof diag->msg)
			snprintf(diag->msg + used, sizeof diag->msg - used,
				 "; no layout to infer one from (inference starts from 2.1 or later)");
		return failed;
	}
	err = wk_infer_layout(wk, obj, prior, c10, inferred, &why);
	if (err == MP_OK && diag != NULL) /* the walk's warnings go where the caller's go; its error stays in WHY */
		mp_diag_sink(&why, diag);
	if (err == MP_OK) {
		mp_walk_free(wk->w);
		if ((wk->w = calloc(1, sizeof *wk->w)) == NULL) {
			free(inferred);
			return MP_E_NOMEM;
		}
		wk->w->c10 = *c10;
		wk->seg_cap = wk->blk_cap = wk->trace_cap = 0;
		wk->block_limit_hit = false;
		err = walk_once(wk, c10, inferred, 1, &why);
	}
	if (diag != NULL)
		diag->nwarn += why.nwarn;
	if (err == MP_OK)
		mp_warn(diag, "no known layout fits this libc10_cuda.so (torch %s): walked with a layout %s; keep it: "
			      "'memprof info -o LAYOUT', then '--layout LAYOUT'",
			c10->version[0] ? c10->version : "unknown", wk->w->layout.source);
	else if (err != MP_E_NOMEM && diag != NULL && (used = strlen(diag->msg)) + 16 < sizeof diag->msg)
		snprintf(diag->msg + used, sizeof diag->msg - used, "; inferred from %s, no layout fit either: %.300s",
			 prior->name, why.msg);
	free(inferred);
	return err == MP_OK || err == MP_E_NOMEM ? err : failed;
}

mp_err mp_walk_run(mp_target *t, const mp_c10 *c10, const mp_walk_opts *opts, mp_walk **out, mp_diag *diag)
{
	static const mp_walk_opts no_opts;
	struct walk wk = { .t = t, .opts = opts != NULL ? opts : &no_opts };
	mp_c10 *found = NULL;
	mp_layout *cands = NULL;
	size_t ncands;
	mp_err err;

	*out = NULL;
	if (c10 == NULL) {
		found = calloc(1, sizeof *found);
		if (found == NULL)
			return MP_E_NOMEM;
		if ((err = mp_c10_find(t, found, diag)) != MP_OK) {
			free(found);
			return err;
		}
		c10 = found;
	}
	/* The layouts to try: the user's, or DWARF and the tables, best first (found once). */
	cands = calloc(MAX_CANDIDATES, sizeof *cands);
	if (cands == NULL) {
		free(found);
		return MP_E_NOMEM;
	}
	if (wk.opts->layout != NULL) {
		cands[0] = *wk.opts->layout;
		ncands = 1;
	} else {
		ncands = mp_c10_layout_candidates(c10, cands, MAX_CANDIDATES, diag);
	}
	if (ncands == 0) {
		err = mp_fail(diag, MP_E_NOTFOUND, "memprof knows no layout for %s", c10->path);
		free(cands);
		free(found);
		return err;
	}
	wk.cxx11_abi = c10->cxx11_abi != 0;
	wk.max_blocks = wk.opts->max_blocks != 0 ? wk.opts->max_blocks : WK_MAX_BLOCKS_DEFAULT;
	wk.next_progress = 1u << 16;
	/* A running process caught mid-update is read again by the front end (its guards say it moved). */
	if ((wk.w = calloc(1, sizeof *wk.w)) == NULL) {
		free(cands);
		free(found);
		return MP_E_NOMEM;
	}
	wk.w->c10 = *c10;
	err = walk_once(&wk, c10, cands, ncands, diag);
	/* No table fits, or none finds a device in an allocator that exists (an empty vector where the tables look
	   is also what an uninitialised allocator shows): infer the layout. */
	if ((err == MP_E_CORRUPT || err == MP_E_NOTFOUND) && wk.opts->layout == NULL && !c10->has_dwarf &&
	    wk.w != NULL && wk.w->allocator != 0)
		err = walk_inferred(&wk, c10, nearest(cands, ncands, c10), err, diag);
	free(found);
	free(cands);
	if (err != MP_OK) {
		mp_walk_free(wk.w);
		return err;
	}
	*out = wk.w;
	return MP_OK;
}
