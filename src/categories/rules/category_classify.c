/* category_classify.c - a block's category: from the data, else the first rule that matches,
   else UNKNOWN. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "category_int.h"
#include "mp_array.h"
#include "mp_snapshot_extras.h"

mp_err category_classifier_init(mp_category_classifier *c, const mp_snapshot *snap, const mp_category_ruleset *rules,
				mp_diag *diag)
{
	memset(c, 0, sizeof *c);
	c->snap = snap;
	c->diag = diag;
	c->user = mp_category_ruleset_rules(rules, &c->nuser);
	c->defaults = mp_category_default_rules(&c->ndefaults);
	if (category_frame_index_new(c, &c->frames) != MP_OK)
		return mp_fail(diag, MP_E_NOMEM, "categories: out of memory");
	mp_err err = category_trace_index(c);

	return err != MP_OK ? err : category_phases_index(c);
}

void category_classifier_free(mp_category_classifier *c)
{
	free(c->allocs);
	free(c->phase);
	free(c->live);
	category_frame_index_free(c->frames);
	mp_table_free(&c->memo_index);
	free(c->memo);
	free(c->hits);
	free(c->owner_of);
}

mp_err mp_category_classifier_new(const mp_snapshot *snap, const mp_category_ruleset *rules, mp_diag *diag,
				  mp_category_classifier **out)
{
	mp_category_classifier *c = malloc(sizeof *c);
	mp_err err;

	*out = NULL;
	if (c == NULL)
		return mp_fail(diag, MP_E_NOMEM, "categories: out of memory");
	if ((err = category_classifier_init(c, snap, rules, diag)) != MP_OK) {
		mp_category_classifier_free(c);
		return err;
	}
	*out = c;
	return MP_OK;
}

void mp_category_classifier_free(mp_category_classifier *c)
{
	if (c == NULL)
		return;
	category_classifier_free(c);
	free(c);
}

size_t mp_category_classifier_unreadable(const mp_category_classifier *c)
{
	return c->unreadable;
}

const mp_category_rule *category_rule(const mp_category_classifier *c, size_t i)
{
	return i < c->nuser ? &c->user[i] : &c->defaults[i - c->nuser];
}

static mp_err no_memory(mp_category_classifier *c)
{
	return mp_fail(c->diag, MP_E_NOMEM, "categories: out of memory");
}

/* ---- data */

/* V as a category, when it is a str naming one; counts those that name none. */
static bool data_category(mp_category_classifier *c, mp_val v, enum mp_category *out)
{
	size_t len;
	const char *s;

	if (v == MP_ABSENT)
		return false;
	s = mp_val_type(v) == MP_T_STR ? mp_heap_atom(c->snap->heap, v, &len) : NULL;
	if (s != NULL && mp_category_parse(s, len, out))
		return true;
	c->unreadable++;
	return false;
}

static bool from_data(mp_category_classifier *c, const mp_block_ref *r, mp_category_why *why)
{
	const mp_block *b = &c->snap->blocks[r->block];
	size_t t;

	if (b->extras != MP_ABSENT && data_category(c, mp_block_extra_value(c->snap, b, "category"), &why->category)) {
		why->source = MP_CSRC_BLOCK;
		return true;
	}
	if (c->nallocs == 0 || (t = category_trace_find(c, r->device, r->address)) == SIZE_MAX)
		return false;
	if (!data_category(c, mp_trace_extra_value(c->snap, &c->snap->trace[t], "category"), &why->category))
		return false;
	why->source = MP_CSRC_TRACE;
	why->trace = t;
	return true;
}

/* ---- rules */

static bool pool_is(const mp_snapshot *snap, const mp_segment *seg, const int64_t pool[2])
{
	const mp_val *items;
	int64_t a, b;

	if (!(seg->present & MP_F_SEG_SEGMENT_POOL_ID) || mp_heap_len(snap->heap, seg->segment_pool_id) != 2)
		return false;
	items = mp_heap_items(snap->heap, seg->segment_pool_id);
	return mp_heap_get_i64(snap->heap, items[0], &a) && mp_heap_get_i64(snap->heap, items[1], &b) &&
	       a == pool[0] && b == pool[1];
}

static bool type_is(const mp_snapshot *snap, const mp_segment *seg, const char *type)
{
	size_t len;
	const char *s = mp_heap_atom(snap->heap, seg->segment_type, &len);

	return (seg->present & MP_F_SEG_SEGMENT_TYPE) && s != NULL && strcmp(s, type) == 0;
}

/* The conditions of RULE that are not about frames. */
static bool block_meets(const mp_category_classifier *c, const mp_category_rule *rule, const mp_block_ref *r)
{
	const mp_snapshot *snap = c->snap;
	const mp_segment *seg = &snap->segments[r->seg];

	return (rule->states == 0 || (rule->states & r->state)) &&
	       (rule->phases == 0 || (rule->phases & ~category_block_phases(c, r->device, r->address)) == 0) &&
	       (!rule->has_min_size || r->size >= rule->min_size) &&
	       (!rule->has_max_size || r->size <= rule->max_size) &&
	       (!rule->has_stream || ((seg->present & MP_F_SEG_STREAM) && seg->stream == rule->stream)) &&
	       (!rule->has_pool || pool_is(snap, seg, rule->pool)) &&
	       (rule->segment_type == NULL || type_is(snap, seg, rule->segment_type));
}

/* Work out the rules whose frame conditions FRAMES meets (looked up with P, not found) into a new
   memo entry: its id in *ID. */
static mp_err memo_add(mp_category_classifier *c, mp_val frames, mp_table_probe *p, uint32_t *id)
{
	size_t nrules = c->nuser + c->ndefaults;
	category_memo *m;

	if (mp_array_grow((void **)&c->memo, &c->memo_cap, c->nmemo + 1, sizeof *c->memo) != MP_OK)
		return no_memory(c);
	m = &c->memo[c->nmemo];
	m->frames = frames;
	m->off = (uint32_t)c->nhits;
	if (category_frames_summarise(c->frames, frames) != MP_OK)
		return no_memory(c);
	for (size_t i = 0; i < nrules; i++) {
		int32_t frame;

		if (!category_frames_meet(c->frames, i, &frame))
			continue;
		if (mp_array_grow((void **)&c->hits, &c->hits_cap, c->nhits + 1, sizeof *c->hits) != MP_OK)
			return no_memory(c);
		c->hits[c->nhits++] = (category_hit){ (uint32_t)i, frame };
	}
	m->len = (uint32_t)(c->nhits - m->off);
	if (mp_table_add(&c->memo_index, p, (uint32_t)c->nmemo) != MP_OK)
		return no_memory(c);
	*id = (uint32_t)c->nmemo++;
	return MP_OK;
}

/* The rules whose frame conditions FRAMES meet, in order, computed once per FRAMES. */
static mp_err frame_hits(mp_category_classifier *c, mp_val frames, const category_memo **out)
{
	mp_table_probe p;
	uint32_t id = mp_table_find_u64(&c->memo_index, frames, c->memo, sizeof *c->memo,
					offsetof(category_memo, frames), &p);
	mp_err err;

	if (id == MP_TABLE_NONE && (err = memo_add(c, frames, &p, &id)) != MP_OK)
		return err;
	*out = &c->memo[id];
	return MP_OK;
}

mp_err mp_category_classify(mp_category_classifier *c, const mp_block_ref *r, mp_category_why *why)
{
	const category_memo *m = NULL;
	mp_err err;

	memset(why, 0, sizeof *why);
	why->frame = -1;
	if (!(r->state & (MP_BS_ACTIVE_ALLOCATED | MP_BS_ACTIVE_PENDING_FREE))) {
		why->category = MP_CAT_UNKNOWN;
		why->source = MP_CSRC_INACTIVE;
		return MP_OK;
	}
	if (category_from_owner(c, r, why) || from_data(c, r, why))
		return MP_OK;
	if ((err = frame_hits(c, mp_block_frames(c->snap, &c->snap->blocks[r->block]), &m)) != MP_OK)
		return err;
	for (uint32_t i = 0; i < m->len; i++) {
		const category_hit *h = &c->hits[m->off + i];
		const mp_category_rule *rule = category_rule(c, h->rule);

		if (!block_meets(c, rule, r))
			continue;
		why->category = rule->category;
		why->source = MP_CSRC_RULE;
		why->rule = rule;
		why->user_rule = h->rule < c->nuser;
		why->frame = h->frame;
		return MP_OK;
	}
	why->category = MP_CAT_UNKNOWN;
	why->source = MP_CSRC_UNKNOWN;
	return MP_OK;
}

/* ---- trace entries (the timeline) */

/* The allocator puts blocks of up to 1 MiB (kSmallSize) in its small pools: what a rule's
   segment_type says about an allocation whose segment the trace does not name. */
#define SMALL_BLOCK_MAX ((int64_t)1 << 20)

/* The conditions of RULE that are not about frames, for the alloc entry E: the block it made
   was active_allocated; its stream and size are the entry's. The ring does not record pools, so
   a pool condition is never met: an unknown is not taken for a match. */
static bool entry_meets(const mp_category_classifier *c, const mp_category_rule *rule, const mp_trace_entry *e)
{
	bool small = e->size <= SMALL_BLOCK_MAX;

	return (rule->states == 0 || (rule->states & MP_BS_ACTIVE_ALLOCATED)) &&
	       (rule->phases == 0 ||
		(rule->phases & ~category_entry_phases(c, (size_t)(e - c->snap->trace))) == 0) &&
	       (!rule->has_min_size || e->size >= rule->min_size) &&
	       (!rule->has_max_size || e->size <= rule->max_size) &&
	       (!rule->has_stream || ((e->present & MP_F_TR_STREAM) && e->stream == rule->stream)) &&
	       !rule->has_pool &&
	       (rule->segment_type == NULL || strcmp(rule->segment_type, small ? "small" : "large") == 0);
}

/* WHY for the rule hit H. */
static void hit_why(const mp_category_classifier *c, const category_hit *h, mp_category_why *why)
{
	*why = (mp_category_why){ .category = category_rule(c, h->rule)->category, .source = MP_CSRC_RULE,
				  .rule = category_rule(c, h->rule), .user_rule = h->rule < c->nuser,
				  .frame = h->frame };
}

mp_err mp_category_classify_entry(mp_category_classifier *c, const mp_trace_entry *e, bool rules, mp_category_why *why)
{
	const category_memo *m = NULL;
	mp_err err;

	*why = (mp_category_why){ .category = MP_CAT_UNKNOWN, .source = MP_CSRC_UNKNOWN, .frame = -1 };
	if (e->extras != MP_ABSENT && data_category(c, mp_trace_extra_value(c->snap, e, "category"), &why->category)) {
		why->source = MP_CSRC_TRACE;
		why->trace = (size_t)(e - c->snap->trace);
		return MP_OK;
	}
	if (!rules || !(e->present & MP_F_TR_FRAMES))
		return MP_OK;
	if ((err = frame_hits(c, e->frames, &m)) != MP_OK)
		return err;
	for (uint32_t i = 0; i < m->len; i++)
		if (entry_meets(c, category_rule(c, c->hits[m->off + i].rule), e)) {
			hit_why(c, &c->hits[m->off + i], why);
			break;
		}
	return MP_OK;
}
