/* mp_json_stream.c - a JSON snapshot straight into the typed model, one record at a time
   (mp_json_stream.h).

   The walk here reads only punctuation: whitespace and the bytes { } [ ] : ,
   between values, in the top-level dict, its two lists of records, each
   segment and each device's list. Every key and every other value is cJSON's
   to parse, one value per call (its end pointer says where the walk goes on),
   and is converted by the whole-text reader's own code (mp_json_conv_*). A
   block or trace entry is parsed whole, converted pair by pair into the
   builder's pairs and freed before the next record is read; a walked dict's
   pairs go to the builder when it closes, after its child records (which the
   builder allows). Anything unexpected gives up: the caller's whole-text
   reader then reads the same bytes, so a guess here never changes a result. */
#include "mp_json_stream.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mp_json.h"
#include "mp_json_int.h"
#include "snapshot_build_int.h"

/* A record's keys beyond this many: not a snapshot this reader takes. */
#define MAX_PAIRS 64
/* How often (in bytes read) the caller hears of the progress. */
#define PROGRESS_STEP ((size_t)8 << 20)
/* JSON bytes per block, at the least, in a snapshot with blocks worth
   reserving room for (keys alone take some 60; frames, hundreds). */
#define BYTES_PER_BLOCK 256

/* The pairs of a record being gathered, keys and values interleaved. */
struct pairs {
	mp_val kv[2 * MAX_PAIRS];
	size_t n;
};

struct jstream {
	const char *text;
	size_t len, pos; /* the walk is at text[pos] */
	const mp_keys *k;
	mp_snapshot_builder *sb;
	mp_json_conv *conv;
	mp_val children; /* an empty list standing for a child list in a walked record's pairs */
	struct pairs top, segment, record;
	const struct mp_json_stream_opts *opts;
	size_t next_progress;
	mp_diag diag; /* the converter's messages, never shown: the whole-text reader says what is wrong */
};

/* Reads what the walk is at, an item of a list or a child list, whose
   nesting (the lists and dicts around it) is BASE. */
typedef mp_err (*read_fn)(struct jstream *st, size_t base);

static void skip_space(struct jstream *st)
{
	while (st->pos < st->len && mp_json_space(st->text[st->pos]))
		st->pos++;
}

/* Whether the next byte past whitespace is C; if so, pass it. */
static bool take(struct jstream *st, char c)
{
	skip_space(st);
	if (st->pos < st->len && st->text[st->pos] == c) {
		st->pos++;
		return true;
	}
	return false;
}

/* Whether a JSON value may start with C. cJSON itself would first pass over
   a byte order mark and any byte up to 32, which the whole-text reader
   allows only at the start. */
static bool value_start(char c)
{
	return c != '\0' && strchr("{[\"-0123456789tfn", c) != NULL;
}

/* The most lists and dicts nested in NODE (itself included), without
   recursion. cJSON parsed NODE, so it is at most MP_JSON_MAX_DEPTH deep. */
static size_t nesting(const cJSON *node)
{
	const cJSON *up[MP_JSON_MAX_DEPTH];
	size_t depth = 0, most = 0;

	for (;;) {
		if (cJSON_IsArray(node) || cJSON_IsObject(node)) {
			most = depth + 1 > most ? depth + 1 : most;
			if (node->child != NULL && depth < MP_JSON_MAX_DEPTH) {
				up[depth++] = node;
				node = node->child;
				continue;
			}
		}
		while (node->next == NULL) {
			if (depth == 0)
				return most;
			node = up[--depth];
		}
		node = node->next;
	}
}

/* Parse the value the walk is at with cJSON into *NODE and pass it. The
   whole-text reader's cJSON would have refused it if it held a NUL (cut
   strings) or lists and dicts nested deeper than MP_JSON_MAX_DEPTH counting
   the BASE around it: those give up too. */
static mp_err parse(struct jstream *st, size_t base, cJSON **node)
{
	const char *at = st->text + st->pos, *end = NULL;
	size_t n;

	if (st->pos >= st->len || !value_start(*at))
		return MP_E_UNSUPPORTED;
	*node = cJSON_ParseWithLengthOpts(at, st->len - st->pos, &end, false);
	if (*node == NULL)
		return MP_E_UNSUPPORTED;
	n = (size_t)(end - at);
	/* Each level of nesting takes 2 bytes: shorter values need no count. */
	if (mp_json_check_nul(at, n, NULL) != MP_OK ||
	    (base < MP_JSON_MAX_DEPTH && n > 2 * (MP_JSON_MAX_DEPTH - base) &&
	     nesting(*node) > MP_JSON_MAX_DEPTH - base)) {
		cJSON_Delete(*node);
		return MP_E_UNSUPPORTED;
	}
	st->pos += n;
	return MP_OK;
}

/* A key named like a tag: a walked dict holding only it would be a tag. */
static bool tag_like(const char *s)
{
	return s[0] == '_' && s[1] == '_' && mp_json_tag_of(s, strlen(s)) != TAG_NONE;
}

/* The key the walk is at, and the ':' after it. */
static mp_err read_key(struct jstream *st, mp_val *key)
{
	cJSON *node;
	mp_err err;

	skip_space(st);
	if (st->pos >= st->len || st->text[st->pos] != '"' || parse(st, 0, &node) != MP_OK)
		return MP_E_UNSUPPORTED;
	err = !cJSON_IsString(node) || tag_like(node->valuestring)
		      ? MP_E_UNSUPPORTED
		      : mp_json_conv_key(st->conv, node->valuestring, key);
	cJSON_Delete(node);
	return err == MP_OK && !take(st, ':') ? MP_E_UNSUPPORTED : err;
}

/* Add KEY, VALUE to P; a repeated key (which Python's dict would merge) gives up. */
static mp_err add_pair(struct pairs *p, mp_val key, mp_val value)
{
	if (p->n == MAX_PAIRS)
		return MP_E_UNSUPPORTED;
	for (size_t i = 0; i < p->n; i++)
		if (p->kv[2 * i] == key)
			return MP_E_UNSUPPORTED;
	p->kv[2 * p->n] = key;
	p->kv[2 * p->n + 1] = value;
	p->n++;
	return MP_OK;
}

static void report_progress(struct jstream *st)
{
	if (st->opts->progress != NULL && st->pos >= st->next_progress) {
		st->opts->progress(st->opts->progress_ctx, st->pos);
		st->next_progress = st->pos + PROGRESS_STEP;
	}
}

/* The list the walk is at (nesting BASE), each item read by ITEM. */
static mp_err read_list(struct jstream *st, size_t base, read_fn item)
{
	mp_err err;

	if (!take(st, '['))
		return MP_E_UNSUPPORTED;
	if (take(st, ']'))
		return MP_OK;
	do {
		skip_space(st);
		if ((err = item(st, base + 1)) != MP_OK)
			return err;
		report_progress(st);
	} while (take(st, ','));
	return take(st, ']') ? MP_OK : MP_E_UNSUPPORTED;
}

/* A block or trace entry (REC), parsed whole: its pairs to the builder. */
static mp_err parsed_record(struct jstream *st, size_t base, enum mp_record rec)
{
	struct pairs *p = &st->record;
	cJSON *obj, *m;
	mp_val key, value;
	mp_err err = parse(st, base, &obj);

	if (err != MP_OK)
		return err;
	if (!cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		return MP_E_UNSUPPORTED;
	}
	p->n = 0;
	while (err == MP_OK && (m = obj->child) != NULL) {
		obj->child = m->next; /* detached: the conversion frees it */
		m->next = m->prev = NULL;
		if (tag_like(m->string)) {
			cJSON_Delete(m);
			err = MP_E_UNSUPPORTED;
		} else if ((err = mp_json_conv_key(st->conv, m->string, &key)) != MP_OK) {
			cJSON_Delete(m);
		} else if ((err = mp_json_conv_member(st->conv, key, m, &value)) == MP_OK) {
			err = add_pair(p, key, value);
		}
	}
	cJSON_Delete(obj);
	return err == MP_OK ? mp_sb_record(st->sb, rec, p->kv, p->n) : err;
}

static mp_err read_block(struct jstream *st, size_t base)
{
	return parsed_record(st, base, MP_REC_BLOCK);
}

static mp_err read_trace_entry(struct jstream *st, size_t base)
{
	return parsed_record(st, base, MP_REC_TRACE);
}

/* A segment's 'blocks'. */
static mp_err read_blocks(struct jstream *st, size_t base)
{
	mp_err err = read_list(st, base, read_block);

	return err == MP_OK ? mp_sb_blocks_end(st->sb) : err;
}

/* One device's list of trace entries. */
static mp_err read_device(struct jstream *st, size_t base)
{
	mp_err err = read_list(st, base, read_trace_entry);

	return err == MP_OK ? mp_sb_device_end(st->sb) : err;
}

static mp_err read_devices(struct jstream *st, size_t base)
{
	return read_list(st, base, read_device);
}

static mp_err read_segment(struct jstream *st, size_t base);

static mp_err read_segments(struct jstream *st, size_t base)
{
	return read_list(st, base, read_segment);
}

/* How the value under KEY of a walked record of kind REC is read: a child
   list's reader, or NULL for a plain value. */
static read_fn child_reader(const struct jstream *st, enum mp_record rec, mp_val key)
{
	if (rec == MP_REC_TOP)
		return key == st->k->segments ? read_segments : key == st->k->device_traces ? read_devices : NULL;
	return key == st->k->blocks ? read_blocks : NULL;
}

/* The dict the walk is at (nesting BASE) as a record of kind REC (the top or
   a segment), its pairs gathered in P: each key and plain value parsed by
   cJSON, each child list walked. */
static mp_err walked_record(struct jstream *st, size_t base, enum mp_record rec, struct pairs *p)
{
	mp_val key, value;
	read_fn children;
	mp_err err;

	p->n = 0;
	if (!take(st, '{'))
		return MP_E_UNSUPPORTED;
	if (!take(st, '}')) {
		do {
			cJSON *node;

			if ((err = read_key(st, &key)) != MP_OK)
				return err;
			skip_space(st);
			children = child_reader(st, rec, key);
			value = st->children;
			if (children != NULL)
				err = children(st, base + 1);
			else if ((err = parse(st, base + 1, &node)) == MP_OK)
				err = mp_json_conv_member(st->conv, key, node, &value);
			if (err != MP_OK || (err = add_pair(p, key, value)) != MP_OK)
				return err;
		} while (take(st, ','));
		if (!take(st, '}'))
			return MP_E_UNSUPPORTED;
	}
	return mp_sb_record(st->sb, rec, p->kv, p->n);
}

static mp_err read_segment(struct jstream *st, size_t base)
{
	return walked_record(st, base, MP_REC_SEGMENT, &st->segment);
}

/* The whole text: the top-level dict (with its 'segments'), then nothing but whitespace. */
static mp_err read_text(struct jstream *st)
{
	mp_err err;

	st->pos = mp_json_value_start(st->text, st->len);
	if ((err = walked_record(st, 0, MP_REC_TOP, &st->top)) != MP_OK)
		return err;
	skip_space(st);
	if (st->pos != st->len || !(mp_sb_present(st->sb) & MP_F_TOP_SEGMENTS))
		return MP_E_UNSUPPORTED;
	return MP_OK;
}

mp_err mp_json_read_snapshot(mp_heap *heap, const char *text, size_t len, const struct mp_json_stream_opts *opts,
			     mp_snapshot **out)
{
	struct jstream *st = calloc(1, sizeof *st);
	mp_err err = MP_E_NOMEM;

	if (st == NULL)
		return MP_E_NOMEM;
	*st = (struct jstream){ .text = text, .len = len, .k = mp_heap_keys(heap), .opts = opts,
				.next_progress = PROGRESS_STEP };
	st->conv = mp_json_conv_new(heap, opts->skip_key, &st->diag);
	if (st->conv != NULL)
		err = mp_heap_make(heap, MP_T_LIST, NULL, 0, &st->children);
	if (err == MP_OK)
		err = mp_sb_new(heap, NULL, &st->sb);
	/* Room for the blocks the text could plausibly hold, so that the array is
	   not copied as it grows (untouched room costs address space only). */
	if (err == MP_OK && mp_sb_reserve_blocks(st->sb, len / BYTES_PER_BLOCK) != MP_OK)
		err = MP_OK;
	if (err == MP_OK)
		err = read_text(st);
	if (err == MP_OK && (err = mp_sb_finish(st->sb, out)) == MP_OK)
		st->sb = NULL;
	mp_sb_abandon(st->sb);
	mp_json_conv_free(st->conv);
	free(st);
	return err == MP_OK || err == MP_E_NOMEM ? err : MP_E_UNSUPPORTED;
}
