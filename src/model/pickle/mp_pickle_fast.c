/* mp_pickle_fast.c - small dicts and lists read in one go (pickle_fast_int.h), and the cache of
   dicts seen, by their bytes, that spares building the same frame again.

   A frame is written afresh for every block that shows it, but its bytes are
   the same each time: its keys are fetched from the memo by the same indices,
   its strings and line number written out, its puts implicit (MEMOIZE). So a
   dict of atoms whose bytes, and the memo entries they fetch, equal those of
   a dict read before has that dict's value: only its puts are counted again.
   The cache holds only dicts that the heap hash-conses anyway (a handful of
   pairs), so that a hit gives the handle a full read would. It turns itself
   off when the input does not repeat. */
#include "pickle_fast_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "mp_hash.h"
#include "mp_table.h"

/* How deep small containers nest in one read (frames: a list of dicts). */
#define FAST_DEPTH 3
/* Most items in a list read so. */
#define FAST_ITEMS 64
/* A dict the cache takes: at most this many pairs (hash-consed by the heap:
   HASHCONS_MAX_ITEMS handles), memo fetches and puts. */
#define SPAN_PAIRS 4
#define SPAN_GETS 8
#define SPAN_PUTS 8
/* Most dicts cached under one hash. */
#define SPAN_CHAIN 8
/* After this many lookups, the cache stays only if one in HIT_RATIO hit. */
#define TRIAL_LOOKUPS 65536
#define HIT_RATIO 8

struct span {
	size_t at; /* the dict's bytes, copied into bytes[] (the input's pages may be dropped) */
	uint32_t len;
	uint32_t ngets;
	uint32_t gets[SPAN_GETS]; /* the memo entries they fetch, as they were */
	mp_val v;
};

struct mp_pickle_spans {
	struct span *spans;
	size_t n, cap;
	unsigned char *bytes;
	size_t nbytes, bytes_cap;
	mp_table index; /* by the hash of their bytes */
	size_t lookups, hits;
	bool off;
};

/* What a dict of atoms at AT takes: its end, the memo entries it fetches, its puts. */
struct scan {
	size_t end;
	uint32_t ngets, nputs;
	uint32_t gets[SPAN_GETS];
	size_t value_ops[SPAN_PUTS]; /* the texts its puts memoize */
};

static bool fast_dict(struct machine *m, size_t *p, mp_val *v, int depth);
static bool fast_list(struct machine *m, size_t *p, mp_val *v, int depth);

/* The value memo entry INDEX holds, if it is complete: an atom, a frozen container (a frames list
   shared by two blocks), or a value a projection passed over, built now or MP_SKIPPED as the
   machine's fetch would push it (mp_pickle_fetch_later: a frame dict that a trace entry shares with a
   block's frames passed over). Not a record, or a container still being filled. */
static bool memo_value(struct machine *m, uint64_t index, mp_val *v)
{
	enum mp_memo_kind kind = mp_memo_fetch(&m->memo, index, v, &(size_t){ 0 });

	if ((kind != MP_MEMO_VALUE && (mp_pickle_fetch_later(m, index, v, &kind) != MP_OK || kind != MP_MEMO_VALUE)) ||
	    (*v & 15u) == MP_PICKLE_RECORD_TAG)
		return false; /* (a record put by BINPUT is the machine's to fetch) */
	*v = mp_heap_resolve(m->heap, *v);
	return !mp_heap_is_open(m->heap, *v);
}

/* The value whose opcode is at *P, into *V; *P moves past it (and its MEMOIZE).
   KEY: the key it is stored under in a dict (MP_ABSENT: none); DEPTH:
   containers open around it in this read. */
static bool fast_value(struct machine *m, mp_val key, size_t *p, mp_val *v, int depth)
{
	const unsigned char *d = m->data;
	size_t at = *p, n, end;
	struct mp_pickle_tok t;
	int64_t i;

	if (mp_pickle_next_op(d, at, m->len, &t) != MP_TOK_OK)
		return false;
	switch ((enum mp_pickle_opcode)t.op) {
	case MP_OP_BININT1: case MP_OP_BININT2: *v = mp_val_from_small_int((int64_t)t.arg); break;
	case MP_OP_BININT: *v = mp_val_from_small_int((int32_t)(uint32_t)t.arg); break;
	case MP_OP_LONG1: /* little-endian two's complement, here of 1 to 8 bytes */
		if ((n = (size_t)t.arg) == 0 || n > 8)
			return false;
		i = (int64_t)(mp_pickle_read_le(d + at + 2, n) << (64 - 8 * n)) >> (64 - 8 * n);
		if (!mp_fits_small_int(i))
			return false;
		*v = mp_val_from_small_int(i);
		break;
	case MP_OP_NONE: *v = MP_NONE; break;
	case MP_OP_NEWTRUE: *v = MP_TRUE; break;
	case MP_OP_NEWFALSE: *v = MP_FALSE; break;
	case MP_OP_BINGET: case MP_OP_LONG_BINGET: *p += t.size; return memo_value(m, t.arg, v);
	case MP_OP_SHORT_BINUNICODE:
		if (mp_heap_str_utf8(m->heap, (const char *)d + at + 2, (size_t)t.arg, v) != MP_OK)
			return false;
		*p += t.size;
		if (*p < m->len && d[*p] == MP_OP_MEMOIZE) {
			mp_memo_count(&m->memo, at, false);
			*p += 1;
		}
		return true;
	case MP_OP_EMPTY_LIST:
		if (!mp_pickle_skip_key(m, key, m->fast_in))
			return depth < FAST_DEPTH && fast_list(m, p, v, depth + 1);
		m->pos = at;
		if (!mp_pickle_skip_value(m, &end))
			return false;
		*v = MP_SKIPPED;
		*p = end;
		return true;
	case MP_OP_EMPTY_DICT: return depth < FAST_DEPTH && fast_dict(m, p, v, depth + 1);
	default: return false;
	}
	*p += t.size;
	return true;
}

static bool pairs(struct machine *m, size_t *p, mp_val *kv, size_t *n, int depth)
{
	const unsigned char *d = m->data;

	for (*n = 0; *p < m->len && d[*p] != MP_OP_SETITEMS; (*n)++) {
		mp_val *key = &kv[2 * *n];
		bool got;

		if (*n == MP_FAST_PAIRS)
			return false;
		got = d[*p] == MP_OP_BINGET && m->len - *p >= 2 ? (*p += 2, memo_value(m, d[*p - 1], key))
								 : fast_value(m, MP_ABSENT, p, key, depth);
		if (!got || mp_val_type(*key) != MP_T_STR || *p >= m->len)
			return false;
		for (size_t j = 0; j < *n; j++)
			if (kv[2 * j] == *key)
				return false; /* a repeated key */
		if (!fast_value(m, *key, p, key + 1, depth))
			return false;
	}
	return *p < m->len && *n > 0 && (m->len - *p < 2 || d[*p + 1] != MP_OP_MARK);
}

bool mp_pickle_fast_record(struct machine *m, mp_val *kv, size_t *n, size_t *after)
{
	const unsigned char *d = m->data;
	size_t start = m->pos, p = start + 1, memo_len = m->memo.len;

	*n = 0;
	if (m->len - p < 2 || d[p] != MP_OP_MEMOIZE || d[p + 1] != MP_OP_MARK)
		return false;
	m->fast_in = MP_PICKLE_SKIP_IN_BLOCKS; /* (a record read so is a block) */
	mp_memo_count(&m->memo, start, true); /* the dict's own: a record */
	p += 2;
	if (pairs(m, &p, kv, n, 0)) {
		*after = p + 1;
		m->pos = start; /* (a list passed over moved it) */
		return true;
	}
	m->memo.len = memo_len;
	m->pos = start;
	*n = 0;
	return false;
}

/* ---- the cache of dicts by their bytes */

/* Whether the dict at AT is one the cache takes ('}' MEMOIZE '(' then memo
   fetches, ints, strs, None and bools up to 'u'), and what it takes, in *S. */
static bool scan_dict(const struct machine *m, size_t at, struct scan *s)
{
	const unsigned char *d = m->data;
	size_t p = at + 3;

	if (m->len - at < 4 || d[at + 1] != MP_OP_MEMOIZE || d[at + 2] != MP_OP_MARK)
		return false;
	s->ngets = s->nputs = 0;
	for (unsigned ops = 0; p < m->len && ops < 4 * SPAN_PAIRS; ops++) {
		struct mp_pickle_tok t;

		if (d[p] == MP_OP_SETITEMS) {
			s->end = p + 1;
			return m->len - p < 2 || d[p + 1] != MP_OP_MARK;
		}
		if (mp_pickle_next_op(d, p, m->len, &t) != MP_TOK_OK)
			return false;
		switch ((enum mp_pickle_opcode)t.op) {
		case MP_OP_BINGET:
			if (s->ngets == SPAN_GETS || t.arg >= m->memo.len)
				return false;
			s->gets[s->ngets++] = mp_memo_word(&m->memo, t.arg);
			break;
		case MP_OP_SHORT_BINUNICODE:
			if (p + t.size < m->len && d[p + t.size] == MP_OP_MEMOIZE) {
				if (s->nputs == SPAN_PUTS)
					return false;
				s->value_ops[s->nputs++] = p;
				t.size++;
			}
			break;
		case MP_OP_BININT1: case MP_OP_BININT2: case MP_OP_BININT: case MP_OP_NONE: case MP_OP_NEWTRUE:
		case MP_OP_NEWFALSE:
			break;
		default: return false;
		}
		p += t.size;
	}
	return false;
}

/* The dict's hash, from four of its words and its length: hashing all of its bytes was an
   eighth of a full read. Frames that differ differ in their name (the first word), their
   file's name (the middle ones, the last) or their line (the last). Dicts that share a hash
   are compared in full, and at most SPAN_CHAIN of them are cached (span_find): an input
   made to collide costs the cache, not the time. */
static uint64_t span_hash(const struct machine *m, size_t at, const struct scan *s)
{
	const unsigned char *d = m->data + at;
	size_t len = s->end - at;
	uint64_t w[4];

	if (len < 24)
		return mp_hash_bytes(d, len, s->ngets);
	memcpy(&w[0], d + 3, 8);
	memcpy(&w[1], d + len / 3, 8);
	memcpy(&w[2], d + 2 * len / 3, 8);
	memcpy(&w[3], d + len - 8, 8);
	return mp_hash_finish(mp_hash_mix(mp_hash_mix(mp_hash_mix(mp_hash_mix(len * 0x87c37b91114253d5ull + s->ngets,
									   w[0]), w[1]), w[2]), w[3]));
}

/* The dict read before with the bytes at AT and the same memo entries, or NULL; *PR
   is left ready to add one. *FULL: SPAN_CHAIN dicts of its hash were compared in vain. */
static const struct span *span_find(const struct mp_pickle_spans *c, const struct machine *m, size_t at,
				    const struct scan *s, mp_table_probe *pr, bool *full)
{
	size_t len = s->end - at, compared = 0;

	for (uint32_t id = mp_table_find(&c->index, span_hash(m, at, s), pr); id != MP_TABLE_NONE;
	     id = mp_table_next(&c->index, pr)) {
		const struct span *e = &c->spans[id];

		if (e->len == len && e->ngets == s->ngets && memcmp(e->gets, s->gets, s->ngets * sizeof *s->gets) == 0 &&
		    memcmp(c->bytes + e->at, m->data + at, len) == 0)
			return e;
		compared++;
	}
	*full = compared >= SPAN_CHAIN;
	return NULL;
}

static void spans_free(struct mp_pickle_spans *c)
{
	if (c == NULL)
		return;
	free(c->spans);
	free(c->bytes);
	mp_table_free(&c->index);
	free(c);
}

/* Give up on the cache when it does not pay: kept only while the input repeats. */
static void spans_judge(struct machine *m)
{
	struct mp_pickle_spans *c = m->spans;

	if (++c->lookups == TRIAL_LOOKUPS && c->hits < TRIAL_LOOKUPS / HIT_RATIO) {
		spans_free(c);
		m->spans = NULL;
		m->spans_off = true;
	}
}

/* Remember that the dict at AT (scanned into S) is V. */
static void span_add(struct machine *m, size_t at, const struct scan *s, mp_val v)
{
	struct mp_pickle_spans *c = m->spans;
	mp_table_probe pr;
	size_t len = s->end - at;
	bool full = false;

	if (c == NULL || span_find(c, m, at, s, &pr, &full) != NULL || full ||
	    mp_array_grow((void **)&c->spans, &c->cap, c->n + 1, sizeof *c->spans) != MP_OK ||
	    mp_array_grow((void **)&c->bytes, &c->bytes_cap, c->nbytes + len, 1) != MP_OK ||
	    mp_table_add(&c->index, &pr, (uint32_t)c->n) != MP_OK)
		return; /* (not cached: read in full next time) */
	c->spans[c->n] = (struct span){ .at = c->nbytes, .len = (uint32_t)len, .ngets = s->ngets, .v = v };
	memcpy(c->spans[c->n].gets, s->gets, s->ngets * sizeof *s->gets);
	memcpy(c->bytes + c->nbytes, m->data + at, len);
	c->nbytes += len;
	c->n++;
}

/* The dict at *P from the cache, its puts counted as a read would count them. */
static bool span_hit(struct machine *m, size_t *p, mp_val *v, const struct scan *s)
{
	mp_table_probe pr;
	bool full;
	const struct span *e = span_find(m->spans, m, *p, s, &pr, &full);
	uint64_t index = m->memo.len;
	bool hit = e != NULL;

	if (hit) {
		*v = e->v;
		m->spans->hits++;
	}
	spans_judge(m); /* (may free the cache) */
	if (!hit)
		return false;
	mp_memo_count(&m->memo, *p, false);
	for (uint32_t i = 0; i < s->nputs; i++)
		mp_memo_count(&m->memo, s->value_ops[i], false);
	*p = s->end;
	return mp_pickle_put_late(m, index, *v) == MP_OK;
}

void mp_pickle_fast_end(struct machine *m)
{
	spans_free(m->spans);
	m->spans = NULL;
}

/* ---- containers */

/* The dict at *P ('}'), its value in *V; *P moves past its SETITEMS. */
static bool fast_dict(struct machine *m, size_t *p, mp_val *v, int depth)
{
	const unsigned char *d = m->data;
	size_t at = *p, n = 0;
	uint64_t index = m->memo.len;
	mp_val kv[2 * MP_FAST_PAIRS];
	struct scan s;
	bool cached = !m->spans_off && scan_dict(m, at, &s);

	if (cached && m->spans == NULL && (m->spans = calloc(1, sizeof *m->spans)) == NULL)
		cached = false;
	if (cached && span_hit(m, p, v, &s))
		return true;
	if (m->len - at < 4 || d[at + 1] != MP_OP_MEMOIZE)
		return false;
	mp_memo_count(&m->memo, at, false);
	*p = at + 2;
	if (d[*p] == MP_OP_MARK) {
		*p += 1;
		if (!pairs(m, p, kv, &n, depth))
			return false;
	} else if (fast_value(m, MP_ABSENT, p, &kv[0], depth) && mp_val_type(kv[0]) == MP_T_STR && *p < m->len &&
		   fast_value(m, kv[0], p, &kv[1], depth) && *p < m->len && d[*p] == MP_OP_SETITEM) {
		n = 1;
	} else {
		return false;
	}
	*p += 1;
	if (mp_heap_make(m->heap, MP_T_DICT, kv, n, v) != MP_OK || mp_pickle_put_late(m, index, *v) != MP_OK)
		return false;
	if (cached && n <= SPAN_PAIRS)
		span_add(m, at, &s, *v);
	return true;
}

/* Whether OP, right after a list's MEMOIZE, says the list is empty: it closes or fills what holds
   the list. */
static bool closes(unsigned char op)
{
	switch ((enum mp_pickle_opcode)op) {
	case MP_OP_SETITEMS: case MP_OP_APPENDS: case MP_OP_SETITEM: case MP_OP_APPEND: case MP_OP_TUPLE:
	case MP_OP_STOP:
		return true;
	default:
		return false;
	}
}

/* The list at *P (']'), its value in *V; *P moves past its APPENDS. */
static bool fast_list(struct machine *m, size_t *p, mp_val *v, int depth)
{
	const unsigned char *d = m->data;
	size_t at = *p, n = 0;
	uint64_t index = m->memo.len;
	mp_val items[FAST_ITEMS];

	if (m->len - at < 4 || d[at + 1] != MP_OP_MEMOIZE)
		return false;
	mp_memo_count(&m->memo, at, false);
	*p = at + 2;
	if (d[*p] == MP_OP_MARK) {
		for (*p += 1; *p < m->len && d[*p] != MP_OP_APPENDS; n++)
			if (n == FAST_ITEMS || !fast_value(m, MP_ABSENT, p, &items[n], depth))
				return false;
		if (*p >= m->len || n == 0 || (m->len - *p >= 2 && d[*p + 1] == MP_OP_MARK))
			return false;
	} else if (closes(d[*p])) {
		*p -= 1; /* empty: what follows closes or fills what holds it */
	} else {
		size_t item = *p;
		uint64_t memo_len = m->memo.len;

		if (!fast_value(m, MP_ABSENT, p, &items[0], depth) || *p >= m->len)
			return false;
		if (d[*p] == MP_OP_APPEND) {
			n = 1;
		} else if (!mp_val_is_container(items[0])) {
			/* empty: that atom is the next of what holds it (a dict's next key); its
			   puts, only counted, are counted again when it is read */
			*p = item - 1;
			m->memo.len = memo_len;
		} else {
			return false; /* (its entries were written: the machine writes them again) */
		}
	}
	*p += 1;
	return mp_heap_make(m->heap, MP_T_LIST, items, n, v) == MP_OK && mp_pickle_put_late(m, index, *v) == MP_OK;
}

bool mp_pickle_fast_again(struct machine *m, uint64_t index, size_t at, mp_val *v)
{
	size_t memo_len = m->memo.len, pos = m->pos, p = at;
	unsigned in = m->fast_in;
	bool ok;

	if (m->again_depth == FAST_DEPTH || index >= memo_len)
		return false;
	m->memo.len = index; /* its puts counted again from its own */
	m->fast_in = MP_PICKLE_SKIP_NOWHERE;
	m->again_depth++;
	ok = m->data[at] == MP_OP_EMPTY_LIST ? fast_list(m, &p, v, 1)
	     : m->data[at] == MP_OP_EMPTY_DICT && fast_dict(m, &p, v, 1);
	m->again_depth--;
	m->fast_in = in;
	m->pos = pos;
	m->memo.len = memo_len;
	return ok;
}

mp_err mp_pickle_fetch_later(struct machine *m, uint64_t index, mp_val *v, enum mp_memo_kind *kind)
{
	size_t at = 0;
	mp_err err = MP_OK;

	if (*kind == MP_MEMO_COUNTED)
		(void)mp_memo_resolve(&m->memo, m->data, m->len, index, m->len);
	if ((*kind = mp_memo_fetch(&m->memo, index, v, &at)) != MP_MEMO_LATER) {
		/* a value, or not one (said by *KIND) */
	} else if (mp_pickle_is_text(m->data[at])) { /* a string the skipper passed over is wanted after all */
		if ((err = mp_pickle_text_at(m, at, v)) == MP_OK && mp_memo_store(&m->memo, index, *v) != MP_OK) {
			/* not kept (too many big handles): the entry still says where to build it again */
		}
	} else if (mp_pickle_skips_in(m, 0)) { /* a list or dict: nothing this projection reads wants one */
		mp_memo_store_skipped(&m->memo, index);
		*v = MP_SKIPPED;
	} else if (!mp_pickle_fast_again(m, index, at, v)) {
		*v = MP_SKIPPED;
	}
	*kind = *kind == MP_MEMO_LATER ? MP_MEMO_VALUE : *kind;
	if (err == MP_OK && *kind == MP_MEMO_VALUE && *v == MP_SKIPPED && !mp_pickle_skips_in(m, 0))
		return mp_fail(m->diag, MP_E_SKIPPED, "pickle: a value passed over is wanted at byte %zu", m->opos);
	return err;
}

bool mp_pickle_fast_container(struct machine *m, bool is_dict)
{
	size_t start = m->pos, p = start, memo_len = m->memo.len;
	mp_val v;

	m->fast_in = 0;
	if ((is_dict ? fast_dict(m, &p, &v, 1) : fast_list(m, &p, &v, 1)) && mp_pickle_push(m, v) == MP_OK) {
		m->pos = p;
		return true;
	}
	m->memo.len = memo_len;
	m->pos = start; /* (a list passed over moved it) */
	return false;
}
