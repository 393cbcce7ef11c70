/* category_match.c - whether a traceback meets the rules' frame conditions.

   Each distinct frame is globbed against every frame condition once and remembered as a bit set:
   equal frame dicts share one heap handle, a million blocks hold a few hundred distinct frames,
   and fnmatch over every frame of every block was most of the analysis's time. A traceback is then
   summarised as the OR of its frames' sets plus the set of its innermost user frame, and a rule
   meets it when each of its conditions' bits is in the right one of the two. */
#include <fnmatch.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "category_int.h"
#include "mp_array.h"
#include "mp_frame_filter.h"
#include "mp_table.h"

/* A pool offset's top bit, in the summarised traceback's frames: a user frame. */
#define USER_BIT ((size_t)1 << (sizeof(size_t) * 8 - 1))

/* A distinct frame dict and the conditions it meets (WORDS words at BITS in the index's pool). */
struct frame_entry {
	mp_val frame;
	size_t bits;
	bool user; /* mp_frame_is_user */
};

struct category_frame_index {
	const mp_category_classifier *cl;
	size_t nrules;
	size_t *first; /* per rule: its first condition's number (NRULES + 1 entries) */
	size_t words;  /* uint64_t words in a set of every condition */
	mp_table index; /* entries by frame handle */
	struct frame_entry *entries;
	size_t nentries, entries_cap;
	uint64_t *pool; /* the entries' sets */
	size_t pool_len, pool_cap;
	uint64_t *any, *user; /* the summarised traceback's sets */
	uint64_t *need;       /* per rule: the conditions it needs in ANY, then in USER (2 * WORDS words) */
	size_t *frame_bits;   /* its frames' sets (offsets in the pool; SIZE_MAX: no frame dict) */
	size_t nframes, frame_bits_cap;
};

mp_err category_frame_index_new(const mp_category_classifier *cl, category_frame_index **out)
{
	category_frame_index *fi = calloc(1, sizeof *fi);
	size_t n = 0;

	*out = NULL;
	if (fi == NULL)
		return MP_E_NOMEM;
	fi->cl = cl;
	fi->nrules = cl->nuser + cl->ndefaults;
	fi->first = malloc((fi->nrules + 1) * sizeof *fi->first);
	if (fi->first == NULL) {
		category_frame_index_free(fi);
		return MP_E_NOMEM;
	}
	for (size_t i = 0; i < fi->nrules; i++) {
		fi->first[i] = n;
		n += category_rule(cl, i)->nframes;
	}
	fi->first[fi->nrules] = n;
	fi->words = n / 64 + 1;
	fi->any = calloc(fi->words, sizeof *fi->any);
	fi->user = calloc(fi->words, sizeof *fi->user);
	fi->need = calloc(fi->nrules * 2 * fi->words + 1, sizeof *fi->need);
	if (fi->any == NULL || fi->user == NULL || fi->need == NULL) {
		category_frame_index_free(fi);
		return MP_E_NOMEM;
	}
	/* A rule's conditions as two masks: a traceback meets it when both are in its sets. */
	for (size_t r = 0; r < fi->nrules; r++) {
		const mp_category_rule *rule = category_rule(cl, r);

		for (size_t k = 0; k < rule->nframes; k++) {
			size_t i = fi->first[r] + k;
			uint64_t *mask = fi->need + (2 * r + (rule->frames[k].innermost_user ? 1 : 0)) * fi->words;

			mask[i / 64] |= (uint64_t)1 << (i % 64);
		}
	}
	*out = fi;
	return MP_OK;
}

void category_frame_index_free(category_frame_index *fi)
{
	if (fi == NULL)
		return;
	free(fi->first);
	mp_table_free(&fi->index);
	free(fi->entries);
	free(fi->pool);
	free(fi->any);
	free(fi->user);
	free(fi->need);
	free(fi->frame_bits);
	free(fi);
}

/* Whether one of GLOBS (NULL: any) matches S. Heap strings end in a NUL. */
static bool any_glob(const char *const *globs, const char *s)
{
	if (globs == NULL)
		return true;
	for (; *globs != NULL; globs++)
		if (fnmatch(*globs, s, 0) == 0)
			return true;
	return false;
}

static bool bit_is_set(const uint64_t *set, size_t i)
{
	return (set[i / 64] >> (i % 64)) & 1;
}

/* Glob frame F against every condition into the set at BITS. */
static void fill_bits(category_frame_index *fi, const mp_frame *f, uint64_t *bits)
{
	for (size_t r = 0; r < fi->nrules; r++) {
		const mp_category_rule *rule = category_rule(fi->cl, r);

		for (size_t k = 0; k < rule->nframes; k++) {
			const mp_frame_cond *fc = &rule->frames[k];
			size_t i = fi->first[r] + k;

			if (any_glob(fc->file, f->filename) && any_glob(fc->function, f->name))
				bits[i / 64] |= (uint64_t)1 << (i % 64);
		}
	}
}

/* The entry of frame I of FRAMES (its dict handle), made on first sight; NULL when frame I is no
   frame dict (*ERR stays MP_OK) or memory ran out (*ERR = MP_E_NOMEM). */
static const struct frame_entry *frame_entry(category_frame_index *fi, mp_val frames, const mp_val *items, size_t i,
					     mp_err *err)
{
	const mp_snapshot *snap = fi->cl->snap;
	mp_val handle = items[i];
	struct frame_entry *e;
	mp_table_probe p;
	uint32_t id;
	mp_frame f;

	*err = MP_OK;
	id = mp_table_find_u64(&fi->index, handle, fi->entries, sizeof *fi->entries, offsetof(struct frame_entry, frame),
			       &p);
	if (id != MP_TABLE_NONE)
		return &fi->entries[id];
	if (!mp_frames_get(snap, frames, i, &f))
		return NULL; /* rare (not a frame dict): not remembered */
	if ((*err = mp_array_grow((void **)&fi->entries, &fi->entries_cap, fi->nentries + 1, sizeof *fi->entries)) !=
		    MP_OK ||
	    (*err = mp_array_grow((void **)&fi->pool, &fi->pool_cap, fi->pool_len + fi->words, sizeof *fi->pool)) !=
		    MP_OK ||
	    (*err = mp_table_add(&fi->index, &p, (uint32_t)fi->nentries)) != MP_OK)
		return NULL;
	e = &fi->entries[fi->nentries++];
	e->frame = handle;
	e->bits = fi->pool_len;
	e->user = mp_frame_is_user(&f);
	memset(fi->pool + e->bits, 0, fi->words * sizeof *fi->pool);
	fill_bits(fi, &f, fi->pool + e->bits);
	fi->pool_len += fi->words;
	return e;
}

mp_err category_frames_summarise(category_frame_index *fi, mp_val frames)
{
	size_t n = mp_frames_len(fi->cl->snap, frames);
	const mp_val *items = mp_heap_items(fi->cl->snap->heap, frames);
	bool seen_user = false;
	mp_err err;

	memset(fi->any, 0, fi->words * sizeof *fi->any);
	memset(fi->user, 0, fi->words * sizeof *fi->user);
	fi->nframes = 0;
	if (mp_array_grow((void **)&fi->frame_bits, &fi->frame_bits_cap, n, sizeof *fi->frame_bits) != MP_OK)
		return MP_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct frame_entry *e = frame_entry(fi, frames, items, i, &err);

		fi->frame_bits[fi->nframes++] = e == NULL ? SIZE_MAX : e->bits | (e->user ? USER_BIT : 0);
		if (e == NULL) {
			if (err != MP_OK)
				return err;
			continue;
		}
		for (size_t w = 0; w < fi->words; w++)
			fi->any[w] |= fi->pool[e->bits + w];
		if (e->user && !seen_user) {
			memcpy(fi->user, fi->pool + e->bits, fi->words * sizeof *fi->user);
			seen_user = true;
		}
	}
	return MP_OK;
}

/* The first frame of the summarised traceback that meets condition I (of an innermost-user one:
   the innermost user frame), or -1. */
static int32_t frame_of(const category_frame_index *fi, size_t i, bool innermost_user)
{
	for (size_t k = 0; k < fi->nframes && k < INT32_MAX; k++) {
		size_t bits = fi->frame_bits[k];

		if (bits == SIZE_MAX || (innermost_user && !(bits & USER_BIT)))
			continue;
		if (bit_is_set(fi->pool + (bits & ~USER_BIT), i))
			return (int32_t)k;
		if (innermost_user)
			break;
	}
	return -1;
}

bool category_frames_meet(category_frame_index *fi, size_t rule, int32_t *frame)
{
	const uint64_t *need_any = fi->need + 2 * rule * fi->words, *need_user = need_any + fi->words;
	const mp_category_rule *r;

	*frame = -1;
	for (size_t w = 0; w < fi->words; w++)
		if ((fi->any[w] & need_any[w]) != need_any[w] || (fi->user[w] & need_user[w]) != need_user[w])
			return false;
	/* Met: the frame that meets its last condition is the one explain names. */
	r = category_rule(fi->cl, rule);
	if (r->nframes > 0)
		*frame = frame_of(fi, fi->first[rule] + r->nframes - 1, r->frames[r->nframes - 1].innermost_user);
	return true;
}
