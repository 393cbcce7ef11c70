/* py_gc.c - every object the cyclic garbage collector tracks: each interpreter's GC state heads a few doubly
   linked lists (the generations and the permanent one; 3.14: young, two old spaces, permanent) threaded
   through the 16-byte header before each object, {next, prev}, whose low two bits are flags. Each object's
   back link must be the one walked from: in unchanging memory that also stops any cycle, since a link back
   into the list reaches an object whose back link names another. The object count bounds the rest. */
#include <stdio.h>

#include "py_heap_int.h"

enum {
	GC_HEAD = 16,          /* PyGC_Head, before the object */
	FLAG_BITS = 3,         /* the low bits of both links */
};

static const char *const list_names[2][4] = {
	{ "generation 0", "generation 1", "generation 2", "the permanent generation" },
	{ "the young generation", "old space 0", "old space 1", "the permanent generation" },
};

/* What one list's walk came to. */
enum walk_end { WALK_DONE, WALK_NO_HEAD, WALK_DAMAGED, WALK_STOP };

/* Walk the list headed at HEAD (interpreter number I, list WHICH), calling CB for each object. */
static enum walk_end walk_list(mp_py_heap *h, size_t i, uint64_t head, const char *which,
			       bool (*cb)(void *ctx, uint64_t obj, uint64_t type), void *ctx, mp_diag *diag)
{
	uint64_t w[4], last = head, p;

	if (mp_target_read(h->t, head, w, GC_HEAD, NULL) != MP_OK) {
		mp_warn_damage(diag, "python heap: interpreter %zu: the head of %s at 0x%llx cannot be read", i, which,
			(unsigned long long)head);
		return WALK_NO_HEAD;
	}
	p = w[0] & ~(uint64_t)FLAG_BITS;
	while (p != head) {
		if (h->count >= h->max_objects) {
			mp_warn(diag, "python heap: more than %llu objects: the walk stops there",
				(unsigned long long)h->max_objects);
			return WALK_STOP;
		}
		/* the header, and the object's ob_refcnt and ob_type */
		if (mp_target_read(h->t, p, w, sizeof w, NULL) != MP_OK) {
			mp_warn_damage(diag, "python heap: interpreter %zu: %s links to 0x%llx, which cannot be read: read up to there",
				i, which, (unsigned long long)p);
			return WALK_DAMAGED;
		}
		if ((w[1] & ~(uint64_t)FLAG_BITS) != last) {
			mp_warn_damage(diag, "python heap: interpreter %zu: %s: the object at 0x%llx links back to 0x%llx, not 0x%llx: "
				"read up to there", i, which, (unsigned long long)(p + GC_HEAD),
				(unsigned long long)(w[1] & ~(uint64_t)FLAG_BITS), (unsigned long long)last);
			return WALK_DAMAGED;
		}
		h->count++;
		if (!cb(ctx, p + GC_HEAD, w[3]))
			return WALK_STOP;
		last = p;
		p = w[0] & ~(uint64_t)FLAG_BITS;
	}
	return WALK_DONE;
}

/* Where the generations are by the generation0 pointer of the GC state at GC (3.10-3.13), into HEADS[0..2]
   when it points where the three generations (24 bytes each) fit before it. */
static void young_head(mp_py_heap *h, uint64_t gc, uint64_t heads[4])
{
	uint64_t g0;

	if (h->l.gc_gen0 == 0 || mp_target_read_u64(h->t, gc + h->l.gc_gen0, &g0, NULL) != MP_OK || g0 < gc ||
	    g0 + 3 * 24 > gc + h->l.gc_gen0)
		return;
	for (size_t k = 0; k < 3; k++)
		heads[k] = g0 + 24 * k;
}

/* Guard the heads of the lists of the GC state at GC (HEADS), which change whenever an object is tracked or
   a collection moves the lists, and its collecting flag, which must read 0: a read of a running process
   that moved meanwhile is read again by its front end (mp_target_moved). */
static void guard_lists(mp_py_heap *h, uint64_t gc, const uint64_t heads[4])
{
	mp_target_guard_idle(h->t, gc + h->l.gc_collecting, 4);
	for (size_t k = 0; k < 4; k++)
		mp_target_guard(h->t, heads[k], GC_HEAD);
}

mp_err mp_py_heap_each(mp_py_heap *h, bool (*cb)(void *ctx, uint64_t obj, uint64_t type), void *ctx, mp_diag *diag)
{
	size_t walked = 0, lists = 0;

	h->count = 0;
	if (h->l.interp_gc == 0)
		return mp_fail(diag, MP_E_UNSUPPORTED, "python heap: where CPython 3.%d keeps its GC state is not known",
			       h->l.minor);
	for (size_t i = 0; i < h->rt->ninterps; i++) {
		uint64_t gc = h->rt->interps[i] + h->l.interp_gc;
		uint32_t collecting;

		if (mp_target_read_u32(h->t, gc + h->l.gc_collecting, &collecting, NULL) == MP_OK && collecting != 0)
			mp_warn_damage(diag, "python heap: interpreter %zu was collecting garbage: its lists may be cut short", i);
		uint64_t heads[4];

		for (size_t k = 0; k < 4; k++)
			heads[k] = gc + h->l.gc_lists[k];
		young_head(h, gc, heads);
		guard_lists(h, gc, heads);
		for (size_t k = 0; k < 4; k++) {
			enum walk_end end = walk_list(h, i, heads[k], list_names[h->l.minor >= 14][k], cb, ctx, diag);

			lists++;
			walked += end != WALK_NO_HEAD;
			if (end == WALK_STOP)
				return MP_OK;
		}
	}
	if (walked == 0)
		return mp_fail(diag, MP_E_CORRUPT, "python heap: none of the %zu lists of tracked objects could be read",
			       lists);
	return MP_OK;
}

uint64_t mp_py_heap_count(const mp_py_heap *h)
{
	return h->count;
}
