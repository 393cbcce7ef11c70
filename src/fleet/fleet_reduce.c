/* fleet_reduce.c - one rank's snapshot reduced to its figures (bytes reserved, allocated, active, free, the
   largest free block, blocks) and its tables: bytes by category (the block's 'category', else its owner's kind,
   else the profiler's categories from its frames), by module and category (the block's 'module', else what
   its 'owner' names, folded at the depth asked), by call site (the place of its frames). The tables are made
   per snapshot handle first (strings and frame lists are interned: a few hundred keys for 50,000 blocks), then
   named and interned among the fleet's keys. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet_int.h"
#include "mp_array.h"
#include "mp_block_rows.h"
#include "mp_category_classify.h"
#include "mp_frame_filter.h"
#include "mp_i64map.h"

/* ---- the fleet's keys */

mp_err fleet_key_intern(fleet_keys *k, const char *text, size_t len, uint32_t *id)
{
	mp_table_probe p;
	uint32_t i;

	for (i = mp_table_find(&k->index, mp_hash_bytes(text, len, 0), &p); i != MP_TABLE_NONE;
	     i = mp_table_next(&k->index, &p))
		if (strlen(k->text[i]) == len && memcmp(k->text[i], text, len) == 0) {
			*id = i;
			return MP_OK;
		}
	if (mp_array_grow((void **)&k->text, &k->cap, k->n + 1, sizeof *k->text) != MP_OK ||
	    (k->text[k->n] = strndup(text, len)) == NULL)
		return MP_E_NOMEM;
	if (mp_table_add(&k->index, &p, (uint32_t)k->n) != MP_OK) {
		free(k->text[k->n]);
		return MP_E_NOMEM;
	}
	*id = (uint32_t)k->n++;
	return MP_OK;
}

/* ---- a rank's tables by snapshot handles */

/* Bytes under a pair of handles (what the key is made of); a call site's also says where its frame was first
   met (the frames list and the frame's index in it), to be read when it is named. */
struct acc {
	uint64_t a, b;
	int64_t bytes;
	mp_val list;
	size_t index;
};

struct accs {
	struct acc *v;
	size_t n, cap;
	mp_table index;
};

/* BYTES more under (A, B), an entry made for it when there is none (*E: the entry, when E is not NULL). */
static mp_err acc_add_at(struct accs *s, uint64_t a, uint64_t b, int64_t bytes, struct acc **e)
{
	mp_table_probe p;
	uint32_t i;

	for (i = mp_table_find(&s->index, mp_hash_finish(mp_hash_mix(mp_hash_mix(0, a), b)), &p); i != MP_TABLE_NONE;
	     i = mp_table_next(&s->index, &p))
		if (s->v[i].a == a && s->v[i].b == b)
			break;
	if (i == MP_TABLE_NONE) {
		if (mp_array_grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v) != MP_OK)
			return MP_E_NOMEM;
		s->v[s->n] = (struct acc){ .a = a, .b = b };
		if (mp_table_add(&s->index, &p, (uint32_t)s->n) != MP_OK)
			return MP_E_NOMEM;
		i = (uint32_t)s->n++;
	}
	s->v[i].bytes += bytes;
	if (e != NULL)
		*e = &s->v[i];
	return MP_OK;
}

static mp_err acc_add(struct accs *s, uint64_t a, uint64_t b, int64_t bytes)
{
	return acc_add_at(s, a, b, bytes, NULL);
}

static void accs_free(struct accs *s)
{
	free(s->v);
	mp_table_free(&s->index);
}

/* Where a block's module comes from (the B half of a module key, above its category). */
enum module_source { FROM_MODULE, FROM_OWNER, FROM_NONE };

#define MAX_CATEGORIES 32

/* One snapshot's reduction. */
struct reduce {
	mp_fleet *f;
	fleet_rank *r;
	mp_snapshot *snap;
	const mp_keys *k;
	mp_val owner_key, module_key; /* the handles of 'owner' and 'module' in SNAP's heap */
	mp_category_classifier *cl;   /* when the blocks name no owner */
	/* the categories met: their names, and the handles (a 'category' str, or an enum mp_category | 1 << 63)
	   that gave them */
	char *cat_name[MAX_CATEGORIES];
	uint64_t cat_from[MAX_CATEGORIES];
	size_t ncat;
	struct accs acc[FLEET_DIMS];
	mp_i64map place_rank; /* frame dict handle -> mp_frame_place_rank: each frame judged once */
	mp_out text;
	mp_diag *diag;
};

/* A block's keys this reduction reads: 'owner', 'module' and 'category' (MP_ABSENT when not there). */
struct block_keys {
	mp_val owner, module, category;
};

/* Whether KEY is one of a block's keys the model knows (its values are not among the extras). */
static bool known_block_key(const mp_keys *k, mp_val key)
{
	return key == k->address || key == k->size || key == k->requested_size || key == k->state || key == k->frames ||
	       key == k->history;
}

static struct block_keys block_keys(const struct reduce *x, const mp_block *b)
{
	const mp_heap *h = x->snap->heap;
	struct block_keys out = { 0 };
	size_t n, e = 0, ne;

	if (b->shape == MP_ABSENT || b->extras == MP_ABSENT)
		return out;
	n = mp_heap_len(h, b->shape);
	ne = mp_heap_len(h, b->extras);
	for (size_t i = 0; i < n && e < ne; i++) {
		mp_val key = mp_heap_items(h, b->shape)[i], v;

		if (known_block_key(x->k, key))
			continue;
		v = mp_heap_items(h, b->extras)[e++];
		if (mp_val_type(v) != MP_T_STR)
			continue;
		if (key == x->owner_key)
			out.owner = v;
		else if (key == x->module_key)
			out.module = v;
		else if (key == x->k->category)
			out.category = v;
	}
	return out;
}

/* The category of a name as the fleet spells it: a known one's profiler name in lower case, else NAME itself
   (other_python, not_python: the owners' kinds the profiler has no name for), lower case, at most 40 bytes. */
static char *category_text(const char *name, size_t len)
{
	enum mp_category c;
	const char *known = mp_category_parse(name, len, &c) ? mp_category_name(c, MP_SCHEME_PROFILER) : NULL;
	char *s;

	if (known != NULL)
		name = known, len = strlen(known);
	len = len > 40 ? 40 : len;
	if ((s = strndup(name, len)) == NULL)
		return NULL;
	for (char *p = s; *p != '\0'; p++)
		*p = (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : (char)tolower((unsigned char)*p);
	return s;
}

/* The index of the category FROM (a handle, or an enum | 1 << 63) named NAME (LEN bytes) among X's; past
   MAX_CATEGORIES names, the last one stands for the rest. */
static mp_err category_index(struct reduce *x, uint64_t from, const char *name, size_t len, size_t *out)
{
	char *text;

	for (size_t i = 0; i < x->ncat; i++)
		if (x->cat_from[i] == from) {
			*out = i;
			return MP_OK;
		}
	if ((text = category_text(x->ncat + 1 < MAX_CATEGORIES ? name : "(other)",
				  x->ncat + 1 < MAX_CATEGORIES ? len : 7)) == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; i < x->ncat; i++)
		if (strcmp(x->cat_name[i], text) == 0) { /* another handle of a name met */
			free(text);
			*out = i;
			return MP_OK;
		}
	x->cat_name[x->ncat] = text;
	x->cat_from[x->ncat] = from;
	*out = x->ncat++;
	return MP_OK;
}

/* The category of active block R (its keys BK) as an index among X's. */
static mp_err block_category(struct reduce *x, const mp_block_ref *r, const struct block_keys *bk, size_t *out)
{
	mp_category_why why;
	const char *s;
	size_t len;
	mp_err err;

	if (bk->category != MP_ABSENT) {
		s = mp_heap_atom(x->snap->heap, bk->category, &len);
		return category_index(x, bk->category, s, len, out);
	}
	if (x->r->annotated) { /* snapshot save --owners: a block that names no category is Python's or not */
		s = bk->owner != MP_ABSENT ? "other_python" : "not_python";
		return category_index(x, bk->owner != MP_ABSENT ? 1 : 2, s, strlen(s), out);
	}
	if (x->cl == NULL) /* no frames read: nothing to tell the categories by */
		return category_index(x, (uint64_t)MP_CAT_UNKNOWN | (uint64_t)1 << 63, "unknown", 7, out);
	if ((err = mp_category_classify(x->cl, r, &why)) != MP_OK)
		return err;
	s = mp_category_name(why.category, MP_SCHEME_PROFILER);
	return category_index(x, (uint64_t)why.category | (uint64_t)1 << 63, s, strlen(s), out);
}

static unsigned block_state(const mp_keys *k, mp_val state)
{
	return state == k->active_allocated    ? MP_BS_ACTIVE_ALLOCATED
	       : state == k->active_pending_free ? MP_BS_ACTIVE_PENDING_FREE
	       : state == k->inactive            ? MP_BS_INACTIVE
						 : MP_BS_OTHER;
}

/* The place of frames list FRAMES (mp_frames_place's frame, its rank kept per frame dict) into the table of call
   sites with BYTES: keyed by the frame dict (MP_ABSENT: no place). */
static mp_err add_site(struct reduce *x, mp_val frames, int64_t bytes)
{
	size_t n = mp_frames_len(x->snap, frames), best = SIZE_MAX;
	const mp_val *items = n > 0 ? mp_heap_items(x->snap->heap, frames) : NULL;
	int64_t rank = 0, r;
	struct acc *e;
	mp_frame f;
	mp_err err;

	for (size_t i = 0; i < n && rank < 4; i++) {
		if (!mp_i64map_get(&x->place_rank, (int64_t)items[i], &r)) {
			r = mp_frames_get(x->snap, frames, i, &f) ? mp_frame_place_rank(&f) : 0;
			if ((err = mp_i64map_put(&x->place_rank, (int64_t)items[i], r)) != MP_OK)
				return err;
		}
		if (r > rank) {
			rank = r;
			best = i;
		}
	}
	if ((err = acc_add_at(&x->acc[FLEET_SITE], best != SIZE_MAX ? items[best] : MP_ABSENT, 0, bytes, &e)) != MP_OK)
		return err;
	if (best != SIZE_MAX && e->list == MP_ABSENT) {
		e->list = frames;
		e->index = best;
	}
	return MP_OK;
}

/* Active block R into X's tables. */
static mp_err add_active(struct reduce *x, const mp_block_ref *r)
{
	const mp_block *b = &x->snap->blocks[r->block];
	struct block_keys bk = block_keys(x, b);
	enum module_source src = bk.module != MP_ABSENT ? FROM_MODULE : bk.owner != MP_ABSENT ? FROM_OWNER : FROM_NONE;
	size_t cat;
	mp_err err;

	if ((err = block_category(x, r, &bk, &cat)) != MP_OK ||
	    (err = acc_add(&x->acc[FLEET_CATEGORY], cat, 0, r->size)) != MP_OK ||
	    (err = acc_add(&x->acc[FLEET_MODULE], src == FROM_MODULE ? bk.module : bk.owner,
			   (uint64_t)src << 32 | cat, r->size)) != MP_OK)
		return err;
	return x->f->opts.frames ? add_site(x, mp_block_frames(x->snap, b), r->size) : MP_OK;
}

/* The blocks of segment S into R's figures and X's tables. */
static mp_err add_segment(struct reduce *x, size_t s)
{
	const mp_segment *seg = &x->snap->segments[s];
	fleet_rank *r = x->r;
	mp_err err;

	r->metric[FLEET_RESERVED] += seg->total_size;
	r->segments++;
	for (size_t i = 0; i < seg->nblocks; i++) {
		const mp_block *b = &mp_segment_blocks(x->snap, seg)[i];
		mp_block_ref ref = { .device = seg->device, .address = b->address, .size = b->size,
				     .state = block_state(x->k, b->state), .seg = s, .block = seg->first_block + i };

		r->metric[FLEET_BLOCKS]++;
		if (ref.state == MP_BS_INACTIVE) {
			r->metric[FLEET_FREE] += b->size;
			if (b->size > r->largest_free)
				r->largest_free = b->size;
			continue;
		}
		if (ref.state == MP_BS_ACTIVE_ALLOCATED)
			r->metric[FLEET_ALLOCATED] += b->size;
		r->metric[FLEET_ACTIVE] += b->size;
		if ((err = add_active(x, &ref)) != MP_OK)
			return err;
	}
	return MP_OK;
}

/* ---- naming the keys */

/* How much of the dotted path S (LEN bytes) a row keeps: its root and DEPTH names below it (dots inside
   brackets, optimizer.state[model.head.bias], are not between names). */
static size_t cut(const char *s, size_t len, int depth)
{
	int names = 0, nest = 0;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '[')
			nest++;
		else if (s[i] == ']' && nest > 0)
			nest--;
		else if (s[i] == '.' && nest == 0 && names++ == depth)
			return i;
	}
	return len;
}

/* The module an owner's name (S, LEN bytes) belongs to: optimizer.state[P].exp_avg is P's, P.grad is P's,
   and a parameter, buffer, gradient or optimizer state (TENSOR) is its module's: its last name dropped. */
static void owner_module(const char **s, size_t *len, bool tensor)
{
	const char *open = memchr(*s, '[', *len), *close;
	size_t n;

	if (tensor && open != NULL && (close = memchr(open, ']', *len - (size_t)(open - *s))) != NULL) {
		*len = (size_t)(close - open - 1);
		*s = open + 1;
	}
	if (*len > 5 && memcmp(*s + *len - 5, ".grad", 5) == 0)
		*len -= 5;
	if (!tensor)
		return;
	for (n = *len; n > 0 && (*s)[n - 1] != '.'; n--)
		;
	if (n > 1)
		*len = n - 1;
}

static bool tensor_category(const char *cat)
{
	return strcmp(cat, "parameter") == 0 || strcmp(cat, "buffer") == 0 || strcmp(cat, "gradient") == 0 ||
	       strcmp(cat, "optimizer_state") == 0;
}

static void put_clean(mp_out *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		mp_out_putc(out, (unsigned char)s[i] < 0x20 || s[i] == 0x7f || s[i] == FLEET_SEP ? '?' : s[i]);
}

/* Module name S (LEN bytes) as the ranks share it: an object no variable names is TYPE@0xADDRESS in the owners'
   names, its address each process's own; the type is what the ranks have in common. */
static void put_module(mp_out *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '@' && i + 2 < len && s[i + 1] == '0' && s[i + 2] == 'x') {
			for (i += 3; i < len && isxdigit((unsigned char)s[i]); i++)
				;
			i--;
			continue;
		}
		put_clean(out, s + i, 1);
	}
}

/* The text of module key E into X->text. */
static void module_text(struct reduce *x, const struct acc *e)
{
	enum module_source src = (enum module_source)(e->b >> 32);
	const char *cat = x->cat_name[e->b & 0xffffffffu], *s = NULL;
	size_t len = 0;

	if (src != FROM_NONE)
		s = mp_heap_atom(x->snap->heap, e->a, &len);
	if (s == NULL)
		mp_out_puts(&x->text, x->r->annotated ? "(no Python tensor)" : "(no owner)");
	else {
		if (src == FROM_OWNER)
			owner_module(&s, &len, tensor_category(cat));
		put_module(&x->text, s, cut(s, len, x->f->opts.depth));
	}
	mp_out_putc(&x->text, FLEET_SEP);
	mp_out_puts(&x->text, cat);
}

/* The text of key E of table D into X->text. */
static void key_text(struct reduce *x, enum fleet_dim d, const struct acc *e)
{
	char site[512];
	mp_frame f;

	x->text.len = 0;
	switch (d) {
	case FLEET_CATEGORY:
		mp_out_puts(&x->text, x->cat_name[e->a]);
		break;
	case FLEET_MODULE:
		module_text(x, e);
		break;
	case FLEET_SITE:
		if (e->list != MP_ABSENT && mp_frames_get(x->snap, e->list, e->index, &f))
			mp_frame_site_text(&f, site, sizeof site);
		else
			snprintf(site, sizeof site, "(no frames)");
		put_clean(&x->text, site, strlen(site));
		break;
	case FLEET_DIMS:
		break;
	}
}

static int cmp_cell(const void *pa, const void *pb)
{
	const fleet_cell *a = pa, *b = pb;

	return (a->key > b->key) - (a->key < b->key);
}

/* X's table D named, interned among the fleet's keys and kept in the rank: its cells by key, one per key. */
static mp_err finish_dim(struct reduce *x, enum fleet_dim d)
{
	const struct accs *s = &x->acc[d];
	fleet_keys *k = &x->f->keys[d];
	fleet_cell *cells = s->n > 0 ? malloc(s->n * sizeof *cells) : NULL;
	size_t n = 0;
	mp_err err = s->n > 0 && cells == NULL ? MP_E_NOMEM : MP_OK;

	for (size_t i = 0; i < s->n && err == MP_OK; i++) {
		key_text(x, d, &s->v[i]);
		if ((err = x->text.err) != MP_OK)
			break;
		pthread_mutex_lock(&k->lock);
		err = fleet_key_intern(k, x->text.data, x->text.len, &cells[i].key);
		pthread_mutex_unlock(&k->lock);
		cells[i].bytes = s->v[i].bytes;
	}
	if (err != MP_OK) {
		free(cells);
		return err;
	}
	mp_sort(cells, s->n, sizeof *cells, cmp_cell);
	for (size_t i = 0; i < s->n; i++) {
		if (n > 0 && cells[n - 1].key == cells[i].key)
			cells[n - 1].bytes += cells[i].bytes; /* two handles, one name (a module folded) */
		else
			cells[n++] = cells[i];
	}
	x->r->cells[d] = cells;
	x->r->ncells[d] = n;
	return MP_OK;
}

/* ---- the reduction */

/* Whether any block of SNAP names an owner or a category (snapshot save --owners). */
static bool annotated(struct reduce *x)
{
	for (size_t i = 0; i < x->snap->nblocks; i++) {
		struct block_keys bk = block_keys(x, &x->snap->blocks[i]);

		if (bk.owner != MP_ABSENT || bk.category != MP_ABSENT)
			return true;
	}
	return false;
}

static mp_err reduce_init(struct reduce *x, mp_fleet *f, fleet_rank *r, mp_snapshot *snap, mp_diag *diag)
{
	mp_err err;

	memset(x, 0, sizeof *x);
	x->f = f;
	x->r = r;
	x->snap = snap;
	x->diag = diag;
	x->k = mp_heap_keys(snap->heap);
	mp_out_init(&x->text);
	if ((err = mp_heap_str(snap->heap, "owner", 5, &x->owner_key)) != MP_OK ||
	    (err = mp_heap_str(snap->heap, "module", 6, &x->module_key)) != MP_OK)
		return err;
	r->annotated = annotated(x);
	/* the categories of blocks that name none come from their frames: none read, none told */
	return r->annotated || !f->opts.frames ? MP_OK : mp_category_classifier_new(snap, NULL, diag, &x->cl);
}

static void reduce_free(struct reduce *x)
{
	for (size_t i = 0; i < x->ncat; i++)
		free(x->cat_name[i]);
	for (int d = 0; d < FLEET_DIMS; d++)
		accs_free(&x->acc[d]);
	mp_i64map_fini(&x->place_rank);
	mp_out_free(&x->text);
	mp_category_classifier_free(x->cl);
}

mp_err fleet_reduce(mp_fleet *f, fleet_rank *r, mp_snapshot *snap, mp_diag *diag)
{
	struct reduce x;
	mp_err err = reduce_init(&x, f, r, snap, diag);

	for (size_t s = 0; s < snap->nsegments && err == MP_OK; s++)
		if (f->opts.device < 0 || snap->segments[s].device == f->opts.device)
			err = add_segment(&x, s);
	for (int d = 0; d < FLEET_DIMS && err == MP_OK; d++)
		err = finish_dim(&x, (enum fleet_dim)d);
	reduce_free(&x);
	return err != MP_OK ? mp_fail(diag, err, "fleet: %s", mp_strerror(err)) : MP_OK;
}
