/* category_sites.c - `categories --sites [N]`: the active bytes of each device grouped by the
   innermost user frame of their allocation (a call site, or its function, file or module), the
   top N groups with their categories, then the rest and the total, which sum to the active bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "category_modes_int.h"
#include "mp_array.h"
#include "mp_frame_filter.h"
#include "mp_json.h"
#include "mp_table.h"

/* What a group's name is. */
enum site_kind { SK_FRAME, SK_NO_FRAMES, SK_NO_USER_FRAME };

/* The group name of one traceback. */
struct site_key {
	char *text; /* what the table shows; NUL-terminated */
	enum site_kind kind;
	mp_frame frame; /* SK_FRAME: the innermost user frame */
};

/* One active block. */
struct site_rec {
	int64_t device;
	mp_val frames;
	int64_t size;
	const struct site_key *key;
	uint8_t row; /* its category, as the scheme shows it */
};

/* Bytes and blocks in total and per category row. */
struct site_sum {
	mp_i128 bytes, cat_bytes[MP_CAT__COUNT];
	size_t blocks, cat_blocks[MP_CAT__COUNT];
};

struct site_group {
	int64_t device;
	const struct site_key *key;
	struct site_sum sum;
};

/* Whether a frame dict is a user frame, found once per (hash-consed) frame handle, and the
   key it gives a traceback whose innermost user frame it is (NULL until one is asked for). */
struct user_frame {
	mp_val frame;
	bool user;
	const struct site_key *key;
};

struct sites {
	mp_category_classifier *cl;
	const mp_category_opts *o;
	mp_out *out;
	struct site_rec *recs;
	size_t nrecs;
	struct site_key **key_chunks; /* one key per distinct name, KEY_CHUNK to a chunk: never moved */
	size_t nkeys, chunks_cap;
	mp_table key_index;    /* keys by text */
	const struct site_key *no_frames, *no_user_frame; /* those keys, once made */
	struct user_frame *frames_seen;
	size_t nframes_seen, frames_seen_cap;
	mp_table frame_index;  /* frames_seen by frame handle */
	mp_out scratch; /* a key's text as it is written */
	struct site_group *groups;
	size_t ngroups;
	int64_t *devices; /* every chosen device with a block, ascending */
	size_t ndevices;
};

#define KEY_CHUNK 256

static struct site_key *key_at(const struct sites *st, uint32_t id)
{
	return &st->key_chunks[id / KEY_CHUNK][id % KEY_CHUNK];
}

static mp_err no_memory(struct sites *st)
{
	return mp_fail(st->cl->diag, MP_E_NOMEM, "categories: out of memory");
}

static bool keep_device(const mp_snapshot *snap, const mp_block_ref *r, const void *ctx)
{
	const mp_category_opts *o = ctx;

	(void)snap;
	return o->device < 0 || r->device == o->device;
}

static void sum_add(struct site_sum *s, const struct site_sum *add)
{
	s->bytes += add->bytes;
	s->blocks += add->blocks;
	for (size_t i = 0; i < MP_CAT__COUNT; i++) {
		s->cat_bytes[i] += add->cat_bytes[i];
		s->cat_blocks[i] += add->cat_blocks[i];
	}
}

/* ---- grouping */

/* Write S (LEN bytes) with control characters as '?', so that a name stays on its line. */
static void put_clean(mp_out *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		mp_out_putc(out, (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i]);
}

static void put_frame_key(mp_out *out, const mp_frame *f, enum mp_site_key by)
{
	switch (by) {
	case MP_SITES_BY_SITE:
	case MP_SITES_BY_FUNCTION:
		put_clean(out, f->name, f->name_len);
		mp_out_puts(out, " (");
		put_clean(out, f->filename, f->filename_len);
		if (by == MP_SITES_BY_SITE)
			mp_out_printf(out, ":%lld", (long long)f->line);
		mp_out_putc(out, ')');
		break;
	case MP_SITES_BY_FILE:
		put_clean(out, f->filename, f->filename_len);
		break;
	case MP_SITES_BY_MODULE: {
		mp_out mod;

		mp_out_init(&mod);
		mp_category_module_name(f->filename, f->filename_len, &mod);
		put_clean(out, mod.data, mod.len);
		if (mod.err != MP_OK && out->err == MP_OK)
			out->err = mod.err;
		mp_out_free(&mod);
		break;
	}
	}
}

/* Whether frame I of FRAMES is a user frame (mp_frame_is_user), asked once per frame dict;
   its entry in frames_seen in *ID. */
static mp_err is_user_frame(struct sites *st, mp_val frames, size_t i, bool *user, uint32_t *seen)
{
	mp_val frame = mp_heap_items(st->cl->snap->heap, frames)[i];
	mp_table_probe p;
	uint32_t id = mp_table_find_u64(&st->frame_index, frame, st->frames_seen, sizeof *st->frames_seen,
					offsetof(struct user_frame, frame), &p);
	mp_frame f;

	if (id == MP_TABLE_NONE) {
		if (mp_array_grow((void **)&st->frames_seen, &st->frames_seen_cap, st->nframes_seen + 1,
				  sizeof *st->frames_seen) != MP_OK)
			return no_memory(st);
		id = (uint32_t)st->nframes_seen;
		st->frames_seen[id] = (struct user_frame){
			.frame = frame,
			.user = mp_frames_get(st->cl->snap, frames, i, &f) && mp_frame_is_user(&f),
		};
		if (mp_table_add(&st->frame_index, &p, id) != MP_OK)
			return no_memory(st);
		st->nframes_seen++;
	}
	*user = st->frames_seen[id].user;
	*seen = id;
	return MP_OK;
}

/* The key of FRAMES: its innermost user frame (the frame filter of _memory_viz, Python, not
   torch's: mp_frame_is_user) as O->by names it, or why there is none. Keys are interned by
   their text: hundreds of thousands of tracebacks come down to a few hundred names. */
static mp_err key_of(struct sites *st, mp_val frames, const struct site_key **out)
{
	size_t n = mp_frames_len(st->cl->snap, frames);
	mp_out *text = &st->scratch;
	struct site_key k = { .kind = n == 0 ? SK_NO_FRAMES : SK_NO_USER_FRAME };
	const struct site_key **known;
	mp_table_probe p;
	uint32_t id, seen = 0;
	bool user = false;
	mp_err err;

	for (size_t i = 0; i < n && !user; i++) {
		if ((err = is_user_frame(st, frames, i, &user, &seen)) != MP_OK)
			return err;
		if (user && mp_frames_get(st->cl->snap, frames, i, &k.frame))
			k.kind = SK_FRAME;
	}
	/* The key depends on that frame alone: made once per frame, not per traceback. */
	known = k.kind == SK_FRAME ? &st->frames_seen[seen].key : k.kind == SK_NO_FRAMES ? &st->no_frames
											: &st->no_user_frame;
	if (*known != NULL) {
		*out = *known;
		return MP_OK;
	}
	text->len = 0;
	if (k.kind == SK_FRAME)
		put_frame_key(text, &k.frame, st->o->by);
	else
		mp_out_puts(text, k.kind == SK_NO_FRAMES ? "(no frames)" : "(no user frame)");
	mp_out_putc(text, '\0');
	if (text->err != MP_OK)
		return no_memory(st);
	for (id = mp_table_find(&st->key_index, mp_hash_bytes(text->data, text->len, 0), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(&st->key_index, &p))
		if (strcmp(key_at(st, id)->text, text->data) == 0)
			break;
	if (id == MP_TABLE_NONE) {
		if (st->nkeys % KEY_CHUNK == 0 &&
		    (mp_array_grow((void **)&st->key_chunks, &st->chunks_cap, st->nkeys / KEY_CHUNK + 1,
				   sizeof *st->key_chunks) != MP_OK ||
		     (st->key_chunks[st->nkeys / KEY_CHUNK] = malloc(KEY_CHUNK * sizeof **st->key_chunks)) == NULL))
			return no_memory(st);
		if ((k.text = malloc(text->len)) == NULL)
			return no_memory(st);
		memcpy(k.text, text->data, text->len);
		id = (uint32_t)st->nkeys++;
		*key_at(st, id) = k;
		if (mp_table_add(&st->key_index, &p, id) != MP_OK)
			return no_memory(st);
	}
	*out = *known = key_at(st, id);
	return MP_OK;
}

static int cmp_device(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

/* Device ascending, then bytes descending, then the name: the same input always gives the
   same rows. */
static int cmp_rank(const void *pa, const void *pb)
{
	const struct site_group *a = pa, *b = pb;
	int c = cmp_device(a->device, b->device);

	if (c != 0)
		return c;
	if (a->sum.bytes != b->sum.bytes)
		return a->sum.bytes > b->sum.bytes ? -1 : 1;
	return strcmp(a->key->text, b->key->text);
}

/* Every chosen block: the devices that have one, and a record for each active one. */
static mp_err collect(struct sites *st, const mp_block_ref *refs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		mp_category_why why;
		mp_err err;

		if (st->ndevices == 0 || st->devices[st->ndevices - 1] != refs[i].device)
			st->devices[st->ndevices++] = refs[i].device;
		if ((err = mp_category_classify(st->cl, &refs[i], &why)) != MP_OK)
			return err;
		if (why.source == MP_CSRC_INACTIVE)
			continue;
		st->recs[st->nrecs++] = (struct site_rec){
			.device = refs[i].device,
			.frames = mp_block_frames(st->cl->snap, &st->cl->snap->blocks[refs[i].block]),
			.size = refs[i].size,
			.row = (uint8_t)mp_category_in(why.category, st->o->scheme),
		};
	}
	return MP_OK;
}

static int cmp_i64(const void *pa, const void *pb)
{
	return cmp_device(*(const int64_t *)pa, *(const int64_t *)pb);
}

/* Each record's key (made once per innermost user frame: key_of). */
static mp_err key_records(struct sites *st)
{
	for (size_t i = 0; i < st->nrecs; i++) {
		mp_err err;

		if (i > 0 && st->recs[i].frames == st->recs[i - 1].frames)
			st->recs[i].key = st->recs[i - 1].key;
		else if ((err = key_of(st, st->recs[i].frames, &st->recs[i].key)) != MP_OK)
			return err;
	}
	return MP_OK;
}

/* Merge the records of one device and one name into a group (found by hash: a sort of every
   record cost more than the rest of the grouping), then rank the groups. */
static mp_err group_records(struct sites *st)
{
	mp_table index = { 0 };
	size_t cap = 0;
	/* Room for one group at least: a device with no active block still points into the array. */
	mp_err err = mp_array_grow((void **)&st->groups, &cap, 1, sizeof *st->groups) == MP_OK ? MP_OK : no_memory(st);

	for (size_t i = 0; i < st->nrecs && err == MP_OK; i++) {
		const struct site_rec *r = &st->recs[i];
		uint64_t h = mp_table_hash_u64((uint64_t)(uintptr_t)r->key ^ ((uint64_t)r->device * 0x9e3779b97f4a7c15ull));
		mp_table_probe p;
		struct site_group *g;
		uint32_t id;

		for (id = mp_table_find(&index, h, &p); id != MP_TABLE_NONE; id = mp_table_next(&index, &p))
			if (st->groups[id].device == r->device && st->groups[id].key == r->key)
				break;
		if (id == MP_TABLE_NONE) {
			if (mp_array_grow((void **)&st->groups, &cap, st->ngroups + 1, sizeof *st->groups) != MP_OK ||
			    mp_table_add(&index, &p, (uint32_t)st->ngroups) != MP_OK) {
				err = no_memory(st);
				break;
			}
			id = (uint32_t)st->ngroups++;
			memset(&st->groups[id], 0, sizeof st->groups[id]);
			st->groups[id].device = r->device;
			st->groups[id].key = r->key;
		}
		g = &st->groups[id];
		g->sum.bytes += r->size;
		g->sum.blocks++;
		g->sum.cat_bytes[r->row] += r->size;
		g->sum.cat_blocks[r->row]++;
	}
	mp_table_free(&index);
	if (err == MP_OK)
		mp_sort(st->groups, st->ngroups, sizeof *st->groups, cmp_rank);
	return err;
}

/* ---- text */

enum { COL_BYTES = 10, COL_BLOCKS = 8, COL_SHARE = 7, COL_TOP = 21, COL_SITE = 20 };

static const char *const by_words[] = { "site", "function", "file", "module" };

static void put_border(mp_out *out)
{
	static const int widths[] = { COL_BYTES, COL_BLOCKS, COL_SHARE, COL_TOP, COL_SITE };

	for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++)
		for (int j = 0; j < widths[i] + 2 * (i + 1 < sizeof widths / sizeof widths[0]); j++)
			mp_out_putc(out, j < widths[i] ? '=' : ' ');
	mp_out_putc(out, '\n');
}

/* The row of S with the most bytes (then blocks, then the scheme's order), or -1 for none. */
static int top_row(const struct sites *st, const struct site_sum *s)
{
	size_t nrows;
	const enum mp_category *rows = mp_category_rows(st->o->scheme, &nrows);
	int best = -1;

	for (size_t i = 0; i < nrows; i++) {
		enum mp_category c = rows[i];

		if (s->cat_blocks[c] == 0)
			continue;
		if (best < 0 || s->cat_bytes[c] > s->cat_bytes[best] ||
		    (s->cat_bytes[c] == s->cat_bytes[best] && s->cat_blocks[c] > s->cat_blocks[best]))
			best = (int)c;
	}
	return best;
}

static void put_share(mp_out *out, mp_i128 part, mp_i128 whole)
{
	if (whole > 0)
		mp_out_printf(out, "%.1f%%", 100.0 * mp_format_int_div(part, whole));
	else
		mp_out_putc(out, '-');
}

/* One row: bytes, blocks, share of ACTIVE, top category and its share, then LABEL. */
static void put_text_row(struct sites *st, mp_block_table *t, const struct site_sum *s, mp_i128 active,
			 const char *label)
{
	int top = top_row(st, s);

	mp_format_size(&t->cell, s->bytes, st->o->units);
	mp_block_table_end_cell(t, COL_BYTES);
	mp_out_printf(&t->cell, "%zu", s->blocks);
	mp_block_table_end_cell(t, COL_BLOCKS);
	put_share(&t->cell, s->bytes, active);
	mp_block_table_end_cell(t, COL_SHARE);
	if (top < 0) {
		mp_out_putc(&t->cell, '-');
	} else {
		mp_out_printf(&t->cell, "%s ", mp_category_name((enum mp_category)top, st->o->scheme));
		put_share(&t->cell, s->cat_bytes[top], s->bytes);
	}
	mp_block_table_end_cell(t, COL_TOP);
	mp_out_puts(st->out, label);
	mp_out_putc(st->out, '\n');
}

/* ---- JSON */

static void put_json_sum(struct sites *st, const struct site_sum *s)
{
	size_t nrows;
	const enum mp_category *rows = mp_category_rows(st->o->scheme, &nrows);
	bool first = true;

	mp_out_puts(st->out, "\"bytes\": ");
	mp_format_i128(st->out, s->bytes);
	mp_out_printf(st->out, ", \"blocks\": %zu, \"categories\": {", s->blocks);
	for (size_t i = 0; i < nrows; i++) {
		if (s->cat_blocks[rows[i]] == 0)
			continue;
		mp_out_printf(st->out, "%s\"%s\": {\"bytes\": ", first ? "" : ", ",
			      mp_category_name(rows[i], st->o->scheme));
		mp_format_i128(st->out, s->cat_bytes[rows[i]]);
		mp_out_printf(st->out, ", \"blocks\": %zu}", s->cat_blocks[rows[i]]);
		first = false;
	}
	mp_out_putc(st->out, '}');
}

static void put_json_str(mp_out *out, const char *key, const char *s, size_t len)
{
	mp_out_printf(out, ", \"%s\": ", key);
	mp_json_put_string(out, s, len);
}

static void put_json_group(struct sites *st, const struct site_group *g)
{
	static const char *const kinds[] = { "frame", "no_frames", "no_user_frame" };
	const struct site_key *k = g->key;
	const mp_frame *f = &k->frame;

	mp_out_puts(st->out, "\n      {\"name\": ");
	mp_json_put_string(st->out, k->text, strlen(k->text));
	mp_out_printf(st->out, ", \"kind\": \"%s\"", kinds[k->kind]);
	if (k->kind == SK_FRAME && st->o->by == MP_SITES_BY_MODULE) {
		mp_out mod;

		mp_out_init(&mod);
		mp_category_module_name(f->filename, f->filename_len, &mod);
		put_json_str(st->out, "module", mod.data != NULL ? mod.data : "", mod.len);
		mp_out_free(&mod);
	} else if (k->kind == SK_FRAME) {
		if (st->o->by != MP_SITES_BY_FILE)
			put_json_str(st->out, "function", f->name, f->name_len);
		put_json_str(st->out, "file", f->filename, f->filename_len);
		if (st->o->by == MP_SITES_BY_SITE)
			mp_out_printf(st->out, ", \"line\": %lld", (long long)f->line);
	}
	mp_out_puts(st->out, ", ");
	put_json_sum(st, &g->sum);
	mp_out_putc(st->out, '}');
}

/* ---- the report */

/* One device's groups G[0..N): the top ones, the rest and the total. */
static void put_device(struct sites *st, int64_t device, const struct site_group *g, size_t n, bool last)
{
	bool json = st->o->format == MP_CFMT_JSON, rst = st->o->format == MP_CFMT_RST;
	size_t top = n < st->o->sites ? n : st->o->sites;
	struct site_sum rest = { 0 }, total = { 0 };
	const char *by = by_words[st->o->by];
	mp_block_table t;
	char label[64];

	for (size_t i = 0; i < n; i++)
		sum_add(i < top ? &total : &rest, &g[i].sum);
	sum_add(&total, &rest);
	if (json) {
		mp_out_printf(st->out, "    {\"device\": %lld, \"active\": {\"bytes\": ", (long long)device);
		mp_format_i128(st->out, total.bytes);
		mp_out_printf(st->out, ", \"blocks\": %zu}, \"groups\": %zu, \"sites\": [", total.blocks, n);
		for (size_t i = 0; i < top; i++) {
			mp_out_puts(st->out, i ? "," : "");
			put_json_group(st, &g[i]);
		}
		mp_out_printf(st->out, "%s], \"other\": {\"groups\": %zu, ", top ? "\n    " : "", n - top);
		put_json_sum(st, &rest);
		mp_out_puts(st->out, last ? "}}\n" : "}},\n");
		return;
	}
	mp_out_printf(st->out, "device %lld (%s categories): ", (long long)device,
		      st->o->scheme == MP_SCHEME_TRACKER ? "MemTracker" : "profiler");
	mp_format_size(st->out, total.bytes, st->o->units);
	mp_out_printf(st->out, " active in %zu blocks, top %zu of %zu by %s\n", total.blocks, top, n, by);
	if (rst) {
		mp_out_putc(st->out, '\n');
		put_border(st->out);
	}
	mp_block_table_init(&t, st->cl->snap, st->o->units, st->out);
	mp_block_table_head(&t, "bytes", COL_BYTES);
	mp_block_table_head(&t, "blocks", COL_BLOCKS);
	mp_block_table_head(&t, "share", COL_SHARE);
	mp_block_table_head(&t, "top category", COL_TOP);
	mp_out_printf(st->out, "%s\n", by);
	if (rst)
		put_border(st->out);
	for (size_t i = 0; i < top; i++)
		put_text_row(st, &t, &g[i].sum, total.bytes, g[i].key->text);
	snprintf(label, sizeof label, "(%zu other %s%s)", n - top, by, n - top == 1 ? "" : "s");
	put_text_row(st, &t, &rest, total.bytes, label);
	put_text_row(st, &t, &total, total.bytes, "(total)");
	if (rst)
		put_border(st->out);
	mp_block_table_free(&t);
}

static void put_report(struct sites *st)
{
	bool json = st->o->format == MP_CFMT_JSON;
	size_t i = 0;

	if (json)
		mp_out_printf(st->out, "{\"scheme\": \"%s\", \"by\": \"%s\", \"top\": %zu, \"devices\": [\n",
			      st->o->scheme == MP_SCHEME_TRACKER ? "tracker" : "profiler", by_words[st->o->by],
			      st->o->sites);
	for (size_t d = 0; d < st->ndevices; d++) {
		size_t first = i;

		while (i < st->ngroups && st->groups[i].device == st->devices[d])
			i++;
		if (!json && d > 0)
			mp_out_putc(st->out, '\n');
		put_device(st, st->devices[d], &st->groups[first], i - first, d + 1 == st->ndevices);
	}
	if (json)
		mp_out_puts(st->out, "  ]\n}\n");
}

static mp_err sites_run(struct sites *st, mp_block_ref *refs, size_t n)
{
	size_t j = 0;
	mp_err err;

	st->recs = malloc((n ? n : 1) * sizeof *st->recs);
	st->devices = malloc((n ? n : 1) * sizeof *st->devices);
	if (st->recs == NULL || st->devices == NULL)
		return no_memory(st);
	if ((err = collect(st, refs, n)) != MP_OK || (err = key_records(st)) != MP_OK)
		return err;
	/* Blocks come segment by segment: a device may come back after another. */
	mp_sort(st->devices, st->ndevices, sizeof *st->devices, cmp_i64);
	for (size_t i = 0; i < st->ndevices; i++)
		if (j == 0 || st->devices[i] != st->devices[j - 1])
			st->devices[j++] = st->devices[i];
	st->ndevices = j;
	if ((err = group_records(st)) != MP_OK)
		return err;
	put_report(st);
	return MP_OK;
}

mp_err category_sites(mp_category_classifier *c, const mp_category_opts *o, mp_out *out)
{
	struct sites st = { .cl = c, .o = o, .out = out };
	mp_block_ref *refs = NULL;
	size_t n = 0;
	mp_err err = mp_block_refs_collect(c->snap, keep_device, o, &refs, &n, "categories", c->diag);

	if (err != MP_OK)
		return err;
	mp_out_init(&st.scratch);
	if (n == 0 && o->device >= 0)
		err = mp_fail(c->diag, MP_E_NOTFOUND, "categories: no blocks on device %lld", (long long)o->device);
	else
		err = sites_run(&st, refs, n);
	for (size_t i = 0; i < st.nkeys; i++)
		free(key_at(&st, (uint32_t)i)->text);
	for (size_t i = 0; i * KEY_CHUNK < st.nkeys; i++)
		free(st.key_chunks[i]);
	free(st.key_chunks);
	mp_table_free(&st.key_index);
	free(st.frames_seen);
	mp_table_free(&st.frame_index);
	mp_out_free(&st.scratch);
	free(st.recs);
	free(st.groups);
	free(st.devices);
	free(refs);
	return err;
}
