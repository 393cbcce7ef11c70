/* oom_holders.c - who holds the live memory: blocks grouped by the Python variable that owns them (the
   'owner' key memprof's owners give blocks: "model.layers.0.weight" belongs to "model", "kept[3]" to
   "kept"), else by the job's own call site that allocated them (the innermost frame outside torch's
   sources), else one block each. And what freeing one group would have done for the request. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_frame_filter.h"
#include "mp_snapshot_extras.h"
#include "mp_array.h"
#include "oom_int.h"

/* The variable at the root of owner name S: up to the first '.' or '['. */
static char *owner_root(const char *s, size_t len)
{
	size_t n = 0;

	while (n < len && s[n] != '.' && s[n] != '[')
		n++;
	return strndup(s, n == 0 ? len : n);
}

char *oom_site_of(const mp_snapshot *snap, mp_val frames)
{
	char buf[300];

	/* the job's own innermost line: not torch's, not an installed package's, not C++ stack capture */
	if (mp_frames_site(snap, frames, buf, sizeof buf)[0] == '\0')
		return NULL;
	return strdup(buf);
}

static int by_key(const void *pa, const void *pb)
{
	const oom_member *a = pa, *b = pb;
	int c = strcmp(a->key, b->key);

	return c != 0 ? c : (a->b < b->b ? -1 : a->b > b->b);
}

/* How the live blocks of V are named: by owner when any has one, else by site when any has frames. */
static const char *grouping(const oom_view *v)
{
	bool sites = false;

	for (size_t i = 0; i < v->nsegs; i++)
		for (size_t j = 0; j < v->segs[i].s->nblocks; j++) {
			const mp_block *b = &mp_segment_blocks(v->snap, v->segs[i].s)[j];

			if (!oom_block_live(v, b))
				continue;
			if (mp_val_type(mp_block_extra_value(v->snap, b, "owner")) == MP_T_STR)
				return "owner";
			if (mp_frames_len(v->snap, b->frames) > 0)
				sites = true;
		}
	return sites ? "call site" : "block";
}

static char *key_of(const oom_view *v, const char *by, const mp_block *b)
{
	char buf[64];

	if (strcmp(by, "owner") == 0) {
		mp_val s = mp_block_extra_value(v->snap, b, "owner");
		size_t len;
		const char *text = mp_val_type(s) == MP_T_STR ? mp_heap_atom(v->snap->heap, s, &len) : NULL;

		return text != NULL ? owner_root(text, len) : strdup("(no Python tensor)");
	}
	if (strcmp(by, "call site") == 0) {
		char *site = oom_site_of(v->snap, b->frames);

		return site != NULL ? site : strdup("(no frames)");
	}
	snprintf(buf, sizeof buf, "block 0x%llx", (unsigned long long)b->address);
	return strdup(buf);
}

static int group_by_bytes(const void *pa, const void *pb)
{
	const struct oom_group *a = pa, *b = pb;

	return a->bytes != b->bytes ? (a->bytes > b->bytes ? -1 : 1) : (a->first < b->first ? -1 : 1);
}

/* Keep the MP_OOM_MAX_HOLDERS largest groups of the sorted members. */
static void top_groups(oom_groups *gr)
{
	struct oom_group cur = { 0 };

	for (size_t i = 0; i <= gr->n; i++) {
		if (i < gr->n && cur.n > 0 && strcmp(gr->m[i].key, gr->m[cur.first].key) == 0) {
			cur.n++;
			cur.bytes += gr->m[i].b->size;
			continue;
		}
		if (cur.n > 0) {
			if (gr->ntop < MP_OOM_MAX_HOLDERS)
				gr->top[gr->ntop++] = cur;
			else if (cur.bytes > gr->top[gr->ntop - 1].bytes)
				gr->top[gr->ntop - 1] = cur;
			mp_sort(gr->top, (size_t)gr->ntop, sizeof gr->top[0], group_by_bytes);
		}
		if (i < gr->n)
			cur = (struct oom_group){ .first = i, .n = 1, .bytes = gr->m[i].b->size };
	}
}

mp_err oom_groups_make(const oom_view *v, mp_oom *o, oom_groups *gr)
{
	size_t live = 0;

	*gr = (oom_groups){ 0 };
	o->holders_by = grouping(v);
	for (size_t i = 0; i < v->nsegs; i++)
		for (size_t j = 0; j < v->segs[i].s->nblocks; j++)
			live += oom_block_live(v, &mp_segment_blocks(v->snap, v->segs[i].s)[j]);
	if (live == 0)
		return MP_OK;
	if ((gr->m = calloc(live, sizeof *gr->m)) == NULL || (gr->keys = calloc(live, sizeof *gr->keys)) == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; i < v->nsegs; i++)
		for (size_t j = 0; j < v->segs[i].s->nblocks; j++) {
			const mp_block *b = &mp_segment_blocks(v->snap, v->segs[i].s)[j];
			char *key;

			if (!oom_block_live(v, b))
				continue;
			if ((key = key_of(v, o->holders_by, b)) == NULL)
				return MP_E_NOMEM;
			gr->keys[gr->nkeys++] = key;
			gr->m[gr->n++] = (oom_member){ .key = key, .b = b };
		}
	mp_sort(gr->m, gr->n, sizeof *gr->m, by_key);
	top_groups(gr);
	for (int i = 0; i < gr->ntop; i++) {
		mp_oom_holder *h = &o->holders[o->nholders++];

		snprintf(h->name, sizeof h->name, "%s", gr->m[gr->top[i].first].key);
		h->bytes = gr->top[i].bytes;
		h->nblocks = (int64_t)gr->top[i].n;
	}
	return MP_OK;
}

void oom_groups_free(oom_groups *gr)
{
	for (size_t i = 0; i < gr->nkeys; i++)
		free(gr->keys[i]);
	free(gr->keys);
	free(gr->m);
	*gr = (oom_groups){ 0 };
}

mp_err oom_serves_without(const oom_view *v, const mp_oom *o, const oom_member *m, size_t n, bool *works,
			  int64_t *released)
{
	const mp_snapshot *snap = v->snap;
	unsigned char *gone = calloc(snap->nblocks > 0 ? snap->nblocks : 1, 1);
	bool cached = false;

	if (gone == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; i < n; i++)
		gone[m[i].b - snap->blocks] = 1;
	*released = 0;
	for (size_t i = 0; i < v->nsegs; i++) {
		const oom_seg *g = &v->segs[i];
		const mp_block *blocks = mp_segment_blocks(snap, g->s);
		int64_t live = 0, run = 0;

		for (size_t j = 0; j < g->s->nblocks; j++) {
			const mp_block *b = &blocks[j];
			bool now_free = oom_block_free(v, b) || gone[b - snap->blocks];

			live += oom_block_live(v, b) && !gone[b - snap->blocks] ? b->size : 0;
			/* freed blocks merge with their free neighbours into one block */
			run = now_free ? run + b->size : 0;
			if (oom_searched(g, o) && run >= o->rounded && oom_split_rules_allow(o, run))
				cached = true;
		}
		if (!g->private_pool && live == 0)
			*released += g->s->total_size;
	}
	free(gone);
	*works = cached || (o->req.device_free >= 0 && o->alloc_size <= o->req.device_free + *released);
	return MP_OK;
}
