/* timeline_build.c - one device's events from its trace ring and the snapshot's live blocks:
   allocations made and returned, and what was there before the ring (TIMELINE.md). */
#include <stdlib.h>

#include "mp_array.h"
#include "mp_block_rows.h"
#include "mp_category_classify.h"
#include "mp_timeline.h"

/* An alloc or free_completed entry of the ring: its address and index in snap->trace. */
struct mark {
	int64_t addr;
	size_t entry;
};

/* An allocation the ring leaves live: whose block the snapshot should still hold. */
struct live {
	int64_t addr, size;
	size_t entry;
	size_t create; /* its CREATE in d->events: the owners of the block may name its category */
};

/* What the ring and the blocks disagree on, counted per device, said once each. */
struct disagreement {
	size_t bad_entries;   /* no address or size, or a negative size */
	size_t double_allocs; /* an alloc where one was live: a free is missing */
	size_t other_size;    /* a free whose size is not its allocation's */
	size_t not_in_snap;   /* live in the ring, no active block of the snapshot there */
	size_t other_block;   /* live in the ring, the block there of another size */
};

struct build {
	const mp_snapshot *snap;
	mp_category_classifier *cl;
	mp_diag *diag;
	mp_timeline_device *d;
	size_t cap; /* of d->events */
	struct mark *marks;
	size_t nmarks, marks_cap;
	struct live *live;
	size_t nlive, live_cap;
	struct disagreement dis;
};

static mp_err no_memory(struct build *b)
{
	return mp_fail(b->diag, MP_E_NOMEM, "timeline: out of memory");
}

static mp_err add_event(struct build *b, int64_t time_us, int64_t bytes, size_t seq, enum mp_timeline_action action,
			enum mp_category category)
{
	mp_timeline_device *d = b->d;

	if (mp_array_grow((void **)&d->events, &b->cap, d->nevents + 1, sizeof *d->events) != MP_OK)
		return no_memory(b);
	d->events[d->nevents++] = (mp_timeline_event){ time_us, bytes, seq, (uint8_t)action, (uint8_t)category };
	if (action == MP_TL_DESTROY)
		d->end_bytes -= bytes;
	else
		d->end_bytes += bytes;
	return MP_OK;
}

static int64_t time_of(const mp_trace_entry *e)
{
	return (e->present & MP_F_TR_TIME_US) ? e->time_us : 0;
}

/* ---- the ring */

static int cmp_mark(const void *pa, const void *pb)
{
	const struct mark *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return (a->entry > b->entry) - (a->entry < b->entry);
}

/* The alloc and free_completed entries of ring L, sorted by address, then ring order. */
static mp_err collect_marks(struct build *b, const mp_trace_list *l)
{
	const mp_keys *k = mp_heap_keys(b->snap->heap);

	b->nmarks = 0;
	for (size_t j = 0; j < l->n; j++) {
		size_t i = l->first + j;
		const mp_trace_entry *e = &b->snap->trace[i];

		if (!mp_val_is(e->action, k->alloc) && !mp_val_is(e->action, k->free_completed))
			continue; /* free_requested, segment events, oom, snapshot */
		if (!(e->present & MP_F_TR_ADDR) || !(e->present & MP_F_TR_SIZE) || e->size < 0) {
			b->dis.bad_entries++;
			continue;
		}
		if (mp_array_grow((void **)&b->marks, &b->marks_cap, b->nmarks + 1, sizeof *b->marks) != MP_OK)
			return no_memory(b);
		b->marks[b->nmarks++] = (struct mark){ e->addr, i };
	}
	mp_sort(b->marks, b->nmarks, sizeof *b->marks, cmp_mark);
	return MP_OK;
}

/* The CREATE of the alloc entry I, its category into *CAT. */
static mp_err create(struct build *b, size_t i, enum mp_category *cat)
{
	const mp_trace_entry *e = &b->snap->trace[i];
	mp_category_why why;
	mp_err err;

	if ((err = mp_category_classify_entry(b->cl, e, true, &why)) != MP_OK)
		return err;
	*cat = why.category;
	return add_event(b, time_of(e), e->size, i, MP_TL_CREATE, why.category);
}

/* The free_completed entry I, of the allocation ALLOC (SIZE_MAX: not in the ring). */
static mp_err complete_free(struct build *b, size_t alloc, size_t i)
{
	const mp_trace_entry *e = &b->snap->trace[i];
	enum mp_category cat;
	mp_category_why why;
	mp_err err;

	if (alloc != SIZE_MAX) {
		const mp_trace_entry *a = &b->snap->trace[alloc]; /* only then: trace + SIZE_MAX overflows */

		if ((err = create(b, alloc, &cat)) != MP_OK)
			return err;
		if (a->size != e->size)
			b->dis.other_size++;
		return add_event(b, time_of(e), a->size, i, MP_TL_DESTROY, cat);
	}
	/* Allocated before the ring began: only data on the free can say what it was. */
	if ((err = mp_category_classify_entry(b->cl, e, false, &why)) != MP_OK ||
	    (err = add_event(b, 0, e->size, i, MP_TL_PREEXISTING, why.category)) != MP_OK)
		return err;
	return add_event(b, time_of(e), e->size, i, MP_TL_DESTROY, why.category);
}

/* The events of one address's marks [FROM, TO), in ring order. */
static mp_err address_events(struct build *b, size_t from, size_t to)
{
	const mp_keys *k = mp_heap_keys(b->snap->heap);
	size_t pending = SIZE_MAX; /* the alloc entry live at this point */
	enum mp_category cat;
	mp_err err = MP_OK;

	for (size_t m = from; m < to && err == MP_OK; m++) {
		size_t i = b->marks[m].entry;
		const mp_trace_entry *e = &b->snap->trace[i];

		if (!mp_val_is(e->action, k->alloc)) {
			err = complete_free(b, pending, i);
			pending = SIZE_MAX;
			continue;
		}
		if (pending != SIZE_MAX) { /* its free is not in the ring: it ends where the next begins */
			b->dis.double_allocs++;
			if ((err = create(b, pending, &cat)) == MP_OK)
				err = add_event(b, time_of(e), b->snap->trace[pending].size, i, MP_TL_DESTROY, cat);
		}
		pending = i;
	}
	if (err != MP_OK || pending == SIZE_MAX)
		return err;
	if ((err = create(b, pending, &cat)) != MP_OK)
		return err;
	if (mp_array_grow((void **)&b->live, &b->live_cap, b->nlive + 1, sizeof *b->live) != MP_OK)
		return no_memory(b);
	b->live[b->nlive++] = (struct live){ b->marks[from].addr, b->snap->trace[pending].size, pending,
					     b->d->nevents - 1 };
	return MP_OK;
}

static mp_err ring_events(struct build *b, const mp_trace_list *l)
{
	mp_err err = collect_marks(b, l);

	b->nlive = 0;
	for (size_t m = 0, end; err == MP_OK && m < b->nmarks; m = end) {
		for (end = m + 1; end < b->nmarks && b->marks[end].addr == b->marks[m].addr; end++)
			;
		err = address_events(b, m, end);
	}
	return err;
}

/* ---- the snapshot's live blocks */

static bool keep_active(const mp_snapshot *snap, const mp_block_ref *r, const void *ctx)
{
	(void)snap;
	return r->device == *(const int64_t *)ctx && (r->state & (MP_BS_ACTIVE_ALLOCATED | MP_BS_ACTIVE_PENDING_FREE));
}

static int cmp_ref(const void *pa, const void *pb)
{
	const mp_block_ref *a = pa, *b = pb;

	if (a->address != b->address)
		return a->address < b->address ? -1 : 1;
	return (a->block > b->block) - (a->block < b->block);
}

/* The block of REFS (N, sorted by address) at ADDR, or NULL. */
static mp_block_ref *block_at(mp_block_ref *refs, size_t n, int64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (refs[mid].address < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && refs[lo].address == addr ? &refs[lo] : NULL;
}

/* What block R's allocation asked for: the ring records requested sizes (the caller's size at
   alloc, the block's requested_size at the frees), so the blocks are compared in the same terms. */
static int64_t requested(const mp_snapshot *snap, const mp_block_ref *r)
{
	const mp_block *blk = &snap->blocks[r->block];

	return (blk->present & MP_F_BLK_REQUESTED_SIZE) ? blk->requested_size : r->size;
}

/* Active blocks whose allocation the ring does not hold were there before it began; the ring's
   live allocations are checked against the blocks, and take the category the block's owner gives
   over their whole lifetime. A matched block's state is cleared. */
static mp_err block_events(struct build *b)
{
	mp_block_ref *refs = NULL;
	size_t n = 0;
	mp_err err = mp_block_refs_collect(b->snap, keep_active, &b->d->device, &refs, &n, "timeline", b->diag);

	if (err != MP_OK)
		return err;
	mp_sort(refs, n, sizeof *refs, cmp_ref);
	for (size_t i = 0; i < n; i++)
		b->d->active_bytes += requested(b->snap, &refs[i]);
	for (size_t i = 0; i < b->nlive; i++) {
		mp_block_ref *r = block_at(refs, n, b->live[i].addr);

		mp_category_why why;

		if (r == NULL || r->state == 0)
			b->dis.not_in_snap++;
		else if (requested(b->snap, r) != b->live[i].size)
			b->dis.other_block++;
		else if (mp_category_owned(b->cl, r, &why))
			b->d->events[b->live[i].create].category = (uint8_t)why.category;
		if (r != NULL)
			r->state = 0;
	}
	for (size_t i = 0; i < n && err == MP_OK; i++) {
		mp_category_why why;

		if (refs[i].state == 0)
			continue;
		if ((err = mp_category_classify(b->cl, &refs[i], &why)) == MP_OK)
			err = add_event(b, 0, requested(b->snap, &refs[i]), b->snap->ntrace + refs[i].block,
					MP_TL_PREEXISTING, why.category);
	}
	free(refs);
	return err;
}

/* ---- order */

/* Where E's time sorts: the profiler sorts nanoseconds with PREEXISTING at -1, so before time 0
   and after any negative time. */
static int time_rank(const mp_timeline_event *e)
{
	if (e->action == MP_TL_PREEXISTING)
		return 1;
	return e->time_us < 0 ? 0 : 2;
}

static int cmp_event(const void *pa, const void *pb)
{
	const mp_timeline_event *a = pa, *b = pb;
	int ra = time_rank(a), rb = time_rank(b);

	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (ra != 1 && a->time_us != b->time_us)
		return a->time_us < b->time_us ? -1 : 1;
	if (a->action != b->action)
		return a->action < b->action ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* The profiler's t_min: the first time seen, replaced by any smaller positive one, and -1 (no
   time) only while PREEXISTING events are all there is. */
static int64_t t_min(const mp_timeline_device *d)
{
	int64_t m = -1;

	for (size_t i = 0; i < d->nevents; i++) {
		const mp_timeline_event *e = &d->events[i];
		int64_t t = e->action == MP_TL_PREEXISTING ? -1 : e->time_us;

		if (m == -1 || (t < m && t > 0))
			m = t;
	}
	return m;
}

/* ---- warnings */

static void warn_disagreements(struct build *b)
{
	const struct disagreement *s = &b->dis;
	long long dev = (long long)b->d->device;

	if (s->bad_entries > 0)
		mp_warn(b->diag, "timeline: device %lld: %zu alloc/free entries without an address or a size passed over",
			dev, s->bad_entries);
	if (s->double_allocs > 0)
		mp_warn(b->diag, "timeline: device %lld: %zu allocations at an address already allocated (their "
			"frees are not in the ring); each earlier one is taken as freed there", dev, s->double_allocs);
	if (s->other_size > 0)
		mp_warn(b->diag, "timeline: device %lld: %zu frees of another size than their allocation", dev,
			s->other_size);
	if (s->not_in_snap > 0)
		mp_warn(b->diag, "timeline: device %lld: %zu allocations the ring leaves live are no active block of the "
			"snapshot", dev, s->not_in_snap);
	if (s->other_block > 0)
		mp_warn(b->diag, "timeline: device %lld: %zu allocations the ring leaves live differ in size from the "
			"block there", dev, s->other_block);
	if (b->d->end_bytes != b->d->active_bytes)
		mp_warn(b->diag, "timeline: device %lld: the timeline ends at %lld bytes but the snapshot's active "
			"blocks requested %lld: the ring and the blocks disagree (lost entries, or not read at one moment)",
			dev, (long long)b->d->end_bytes, (long long)b->d->active_bytes);
}

/* ---- the whole */

static mp_err device_timeline(struct build *b, int64_t device)
{
	mp_timeline_device *d = b->d;
	mp_err err;

	*d = (mp_timeline_device){ .device = device, .ring = b->snap->device_traces[device].n };
	b->cap = 0;
	b->dis = (struct disagreement){ 0 };
	if ((err = ring_events(b, &b->snap->device_traces[device])) != MP_OK ||
	    (err = block_events(b)) != MP_OK)
		return err;
	mp_sort(d->events, d->nevents, sizeof *d->events, cmp_event);
	d->t_min = t_min(d);
	warn_disagreements(b);
	return MP_OK;
}

mp_err mp_timeline_build(const mp_snapshot *snap, const mp_category_ruleset *rules, const mp_owners *owners,
			 int64_t device, mp_timeline **out, mp_diag *diag)
{
	struct build b = { .snap = snap, .diag = diag };
	mp_timeline *tl = calloc(1, sizeof *tl);
	size_t n = 0;
	mp_err err;

	*out = NULL;
	if (tl == NULL)
		return no_memory(&b);
	for (size_t i = 0; i < snap->ndevice_traces; i++)
		n += snap->device_traces[i].n > 0 && (device < 0 || (int64_t)i == device);
	if (n == 0) {
		free(tl);
		if (device >= 0)
			return mp_fail(diag, MP_E_NOTFOUND, "timeline: device %lld has no trace ring entries",
				       (long long)device);
		return mp_fail(diag, MP_E_NOTFOUND, "timeline: the snapshot has no trace ring entries (record them with "
				       "torch.cuda.memory._record_memory_history())");
	}
	if ((tl->devices = calloc(n, sizeof *tl->devices)) == NULL) {
		free(tl);
		return no_memory(&b);
	}
	if ((err = mp_category_classifier_new(snap, rules, diag, &b.cl)) == MP_OK &&
	    (err = mp_category_classifier_owners(b.cl, owners)) != MP_OK)
		err = no_memory(&b);
	for (size_t i = 0; i < snap->ndevice_traces && err == MP_OK; i++) {
		if (snap->device_traces[i].n == 0 || (device >= 0 && (int64_t)i != device))
			continue;
		b.d = &tl->devices[tl->ndevices++];
		err = device_timeline(&b, (int64_t)i);
	}
	if (err == MP_OK && mp_category_classifier_unreadable(b.cl) > 0)
		mp_warn(diag, "timeline: %zu 'category' values name no category: passed over",
			mp_category_classifier_unreadable(b.cl));
	mp_category_classifier_free(b.cl);
	free(b.marks);
	free(b.live);
	if (err != MP_OK) {
		mp_timeline_free(tl);
		return err;
	}
	*out = tl;
	return MP_OK;
}

void mp_timeline_free(mp_timeline *tl)
{
	if (tl == NULL)
		return;
	for (size_t i = 0; i < tl->ndevices; i++)
		free(tl->devices[i].events);
	free(tl->devices);
	free(tl);
}
