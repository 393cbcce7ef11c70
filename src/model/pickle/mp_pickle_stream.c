/* mp_pickle_stream.c - the pickle machine with the snapshot's records handed to the builder
   as they complete (mp_pickle_stream.h), instead of built as dicts and converted after.

   The generic machine (mp_pickle_read.c) runs every opcode but those that make,
   fill, share or drop containers. A dict or list opened where the snapshot has a
   record or a list of records gets a role, from the container it will go into
   and the key it will sit under; on the stack it is a placeholder (type tag
   11, never a heap value), and a record's pairs gather apart. A record goes to
   the builder when it is added to its list (a batch adds up to 1,000 at once),
   a list of blocks or of trace entries ends when the next one opens. Each
   placeholder must end up exactly where its role said, once; anything else
   gives up (the caller then reads the pickle the generic way), so a guess
   never changes a result. Most of a big snapshot never reaches the machine:
   a list of blocks in CPython's shape goes to the builder block by block,
   and frames and other small values are read in one go (mp_pickle_fast.c). */
#include "mp_pickle_stream.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "pickle_fast_int.h"
#include "pickle_int.h"
#include "snapshot_build_int.h"

/* The snapshot's records and lists of records. */
enum role {
	R_GENERIC = 0, /* any other value: built by the generic machine */
	R_TOP,         /* the top-level dict */
	R_SEGMENTS,    /* its 'segments' (or a bare list of segments at the root) */
	R_SEGMENT,
	R_BLOCKS,      /* a segment's 'blocks' */
	R_BLOCK,
	R_DEVICES,     /* the top's 'device_traces' */
	R_DEVICE,      /* one device's list of trace entries */
	R_TRACE,
	R__COUNT
};

#define PLACEHOLDER_TAG MP_PICKLE_RECORD_TAG
/* A placeholder carries its role and an index: of its record in the open
   records, or of a list of blocks or trace entries among its kind. */
#define MAX_INDEX ((1u << 23) - 1)
/* A record's keys beyond this many: not a snapshot this reader takes. */
#define MAX_PAIRS 64
/* Input bytes per block, at the least, for reserving the blocks array up front. */
#define BYTES_PER_BLOCK 128

/* An open record: its pairs are kv[first, first + 2n). Records open in
   stack order and their pairs are added while they are the newest. */
struct rec {
	enum role role;
	bool done;
	uint32_t first, n;
	uint32_t blocks; /* a segment: the index of its list of blocks */
};

struct stream {
	struct machine m;
	mp_snapshot_builder *sb;
	const mp_keys *k;
	struct rec *recs;       /* open records, oldest first */
	size_t nrecs, recs_cap;
	mp_val *kv;             /* their pairs */
	size_t nkv, kv_cap;
	size_t live;            /* placeholders made and not yet put in place */
	size_t lists[R__COUNT]; /* lists of blocks / trace entries opened so far */
	size_t nsegments;       /* segments handed over */
	mp_val children;        /* an empty list standing for a child list in a record's pairs */
};

static inline mp_val placeholder(enum role r, size_t index)
{
	return ((mp_val)index << 8) | ((mp_val)r << 4) | PLACEHOLDER_TAG;
}

static inline bool is_placeholder(mp_val v)
{
	return (v & 15u) == PLACEHOLDER_TAG;
}

static inline enum role role_of(mp_val v)
{
	return is_placeholder(v) ? (enum role)((v >> 4) & 15u) : R_GENERIC;
}

static inline size_t index_of(mp_val v)
{
	return (size_t)(v >> 8);
}

static inline bool is_record(enum role r)
{
	return r == R_TOP || r == R_SEGMENT || r == R_BLOCK || r == R_TRACE;
}

/* The role of a value put into a container of role PARENT (under KEY for a record). */
static enum role child_role(const struct stream *st, enum role parent, mp_val key)
{
	switch (parent) {
	case R_TOP:
		return key == st->k->segments ? R_SEGMENTS : key == st->k->device_traces ? R_DEVICES : R_GENERIC;
	case R_SEGMENTS: return R_SEGMENT;
	case R_SEGMENT: return key == st->k->blocks ? R_BLOCKS : R_GENERIC;
	case R_BLOCKS: return R_BLOCK;
	case R_DEVICES: return R_DEVICE;
	case R_DEVICE: return R_TRACE;
	default: return R_GENERIC;
	}
}

/* The role a container about to be pushed will have, and whether it is a
   list under a skip key of a record (IS_DICT: it is a dict, else a list).
   Where would it go? Into a list of records of its type on top of the stack
   (APPEND); or into the record just below a key (SETITEM,
   or the last pair of a batch); or into the container below the topmost mark
   (a batch: a record's value when an odd number of items is above the mark).
   A wrong guess is caught when the value goes somewhere else. */
static enum role role_here(const struct stream *st, bool is_dict, bool *under_skip_key)
{
	const struct machine *m = &st->m;
	size_t n = m->nstack, floor = m->nmarks ? m->marks[m->nmarks - 1] : 0;
	enum role parent = R_GENERIC, top = n ? role_of(m->stack[n - 1].v) : R_GENERIC;
	mp_val key = MP_ABSENT;

	*under_skip_key = false;
	if (n == 0)
		return R__COUNT; /* the root */
	if (top != R_GENERIC && !is_record(top) && floor < n &&
	    is_record(child_role(st, top, MP_ABSENT)) == is_dict) {
		parent = top;
	} else if (n >= 2 && top == R_GENERIC && floor <= n - 2 && is_record(role_of(m->stack[n - 2].v))) {
		parent = role_of(m->stack[n - 2].v);
		key = m->stack[n - 1].v;
	} else if (floor > 0) {
		parent = role_of(m->stack[floor - 1].v);
		if (is_record(parent)) {
			if ((n - floor) % 2 == 0)
				return R_GENERIC; /* a key */
			key = m->stack[n - 1].v;
		}
	}
	*under_skip_key = is_record(parent) && mp_pickle_skip_key(m, key, parent == R_BLOCK   ? MP_PICKLE_SKIP_IN_BLOCKS
									  : parent == R_TRACE ? MP_PICKLE_SKIP_IN_TRACE
											      : 0);
	return child_role(st, parent, key);
}

/* The end of the newest list of blocks or of trace entries. */
static mp_err end_list(struct stream *st, enum role r)
{
	if (r == R_BLOCKS)
		return mp_sb_blocks_end(st->sb);
	if (r == R_DEVICE)
		return mp_sb_device_end(st->sb);
	return MP_OK;
}

/* The blocks of the list just opened at AT (its placeholder on top of the stack), read in
   one go and handed to the builder, batch after batch: MEMOIZE, then '(' blocks 'e'. At a
   block mp_pickle_fast_record does not take, the machine goes on from that block, its batch's MARK
   pushed and the blocks before it handed over, as if it had read them itself (they were the
   newest list's, in order); at anything else, from where this stopped. */
static mp_err fast_blocks(struct stream *st, size_t at)
{
	struct machine *m = &st->m;
	const unsigned char *d = m->data;
	mp_val kv[2 * MP_FAST_PAIRS];
	size_t p = m->pos, n, after;
	mp_err err;

	if (m->len - p < 3 || d[p] != MP_OP_MEMOIZE || d[p + 1] != MP_OP_MARK || d[p + 2] != MP_OP_EMPTY_DICT)
		return MP_OK;
	mp_memo_count(&m->memo, at, true); /* the list's own put: a record's */
	for (p++; m->len - p >= 2 && d[p] == MP_OP_MARK && d[p + 1] == MP_OP_EMPTY_DICT; p++) {
		if (m->nmarks == m->marks_cap &&
		    mp_array_grow((void **)&m->marks, &m->marks_cap, m->nmarks + 1, sizeof *m->marks) != MP_OK)
			return MP_E_NOMEM;
		m->marks[m->nmarks++] = m->nstack;
		for (m->pos = ++p; m->pos < m->len && d[m->pos] == MP_OP_EMPTY_DICT; m->pos = after) {
			if (!mp_pickle_fast_record(m, kv, &n, &after))
				return MP_OK; /* the machine reads this block */
			if ((err = mp_sb_block(st->sb, kv, n)) != MP_OK)
				return err;
		}
		if ((p = m->pos) >= m->len || d[p] != MP_OP_APPENDS)
			return MP_OK;
		m->nmarks--; /* APPENDS of what was handed over */
		m->prev_opos = m->opos;
		m->opos = p;
	}
	m->pos = p;
	return MP_OK;
}

/* '}' or ']': a record or a list of records gets its placeholder; anything
   else is the generic machine's (which passes over a skip key's list itself,
   save under a record, which it cannot see as a dict). */
static mp_err op_open(struct stream *st, bool is_dict, bool *taken)
{
	struct machine *m = &st->m;
	bool skip;
	enum role r = role_here(st, is_dict, &skip);
	size_t end, index;
	mp_err err;

	*taken = false;
	if (r == R__COUNT) /* the root: a dict, or a bare list of segments */
		r = is_dict ? R_TOP : R_SEGMENTS;
	if (r == R_GENERIC) {
		/* under a record's skip key, or a plain dict's where the projection passes over frames everywhere */
		if (!is_dict && (skip || mp_pickle_at_skip_key(m)) && mp_pickle_skip_value(m, &end)) {
			m->pos = end;
			*taken = true;
			return mp_pickle_push(m, MP_SKIPPED);
		}
		*taken = mp_pickle_fast_container(m, is_dict);
		return MP_OK;
	}
	if (is_dict != is_record(r) || st->nrecs >= MAX_INDEX || st->lists[r] >= MAX_INDEX)
		return MP_E_UNSUPPORTED;
	if (is_record(r)) {
		mp_val kv[2 * MP_FAST_PAIRS];
		size_t n = 0, after = 0;
		bool fast = r == R_BLOCK && mp_pickle_fast_record(m, kv, &n, &after);

		if (mp_array_grow((void **)&st->recs, &st->recs_cap, st->nrecs + 1, sizeof *st->recs) != MP_OK ||
		    mp_array_grow((void **)&st->kv, &st->kv_cap, st->nkv + 2 * n, sizeof *st->kv) != MP_OK)
			return MP_E_NOMEM;
		st->recs[st->nrecs] = (struct rec){ .role = r, .first = (uint32_t)st->nkv, .n = (uint32_t)n };
		index = st->nrecs++;
		if (fast) { /* the block is read, pairs and all */
			memcpy(st->kv + st->nkv, kv, 2 * n * sizeof *kv);
			st->nkv += 2 * n;
			m->pos = after - 1; /* at its SETITEMS, passed below */
		}
	} else {
		/* A new list of blocks or entries: the previous one is complete. */
		if (st->lists[r] > 0 && (err = end_list(st, r)) != MP_OK)
			return err;
		index = st->lists[r]++;
	}
	st->live++;
	m->pos++;
	*taken = true;
	if ((err = mp_pickle_push(m, placeholder(r, index))) != MP_OK || r != R_BLOCKS)
		return err;
	return fast_blocks(st, m->pos - 1);
}

/* Whether any of stack[first..nstack) is a placeholder. */
static bool holds_placeholder(const struct machine *m, size_t first)
{
	for (size_t i = first; i < m->nstack; i++)
		if (is_placeholder(m->stack[i].v))
			return true;
	return false;
}

/* Put placeholder V in its place (ITS_LIST: the index of the list of blocks
   or entries it was added to): a record goes to the builder. */
static mp_err complete(struct stream *st, mp_val v, size_t its_list)
{
	enum role r = role_of(v);
	struct rec *rec = is_record(r) ? &st->recs[index_of(v)] : NULL;
	const mp_val *kv = rec != NULL && st->kv != NULL ? st->kv + rec->first : NULL; /* none yet: no pairs */
	mp_err err = MP_OK;

	if (rec != NULL && rec->done)
		return MP_E_UNSUPPORTED;
	/* An item goes into the newest list of its kind (the builder's order). */
	if ((r == R_BLOCK || r == R_TRACE) && its_list + 1 != st->lists[r == R_BLOCK ? R_BLOCKS : R_DEVICE])
		return MP_E_UNSUPPORTED;
	switch (r) {
	case R_BLOCK: err = mp_sb_block(st->sb, kv, rec->n); break;
	case R_SEGMENT:
		/* The I-th segment has the I-th list of blocks. */
		if (rec->blocks != st->nsegments++)
			return MP_E_UNSUPPORTED;
		err = mp_sb_segment(st->sb, kv, rec->n);
		break;
	case R_TRACE: err = mp_sb_trace_entry(st->sb, kv, rec->n); break;
	case R_TOP: err = mp_sb_top(st->sb, kv, rec->n); break;
	default: break;
	}
	if (rec != NULL)
		rec->done = true;
	st->live--;
	return err;
}

/* Forget the records at the end of the open ones that were put in place. */
static void drop_done(struct stream *st)
{
	while (st->nrecs > 0 && st->recs[st->nrecs - 1].done)
		st->nrecs--;
	st->nkv = st->nrecs ? st->recs[st->nrecs - 1].first + 2 * (size_t)st->recs[st->nrecs - 1].n : 0;
}

/* Add pair KEY, VALUE (settled values or placeholders) to the record REC_V. */
static mp_err add_pair(struct stream *st, mp_val rec_v, mp_val key, mp_val value)
{
	struct rec *rec = &st->recs[index_of(rec_v)];
	enum role vr = role_of(value);
	mp_err err;

	/* A child list where the record has one, and nowhere else; pairs only to
	   the newest open record, so that they stay together. */
	if (is_placeholder(key) || mp_val_is_container(key) || rec->n == MAX_PAIRS || rec->done ||
	    vr != child_role(st, rec->role, key) || index_of(rec_v) + 1 != st->nrecs)
		return MP_E_UNSUPPORTED;
	for (size_t i = 0; i < rec->n; i++)
		if (st->kv[rec->first + 2 * i] == key)
			return MP_E_UNSUPPORTED; /* a repeated key */
	if (vr != R_GENERIC) {
		if (vr == R_BLOCKS)
			rec->blocks = (uint32_t)index_of(value);
		if ((err = complete(st, value, 0)) != MP_OK)
			return err;
		value = st->children;
	}
	if (mp_array_grow((void **)&st->kv, &st->kv_cap, st->nkv + 2, sizeof *st->kv) != MP_OK)
		return MP_E_NOMEM;
	st->kv[st->nkv++] = key;
	st->kv[st->nkv++] = value;
	rec->n++;
	return MP_OK;
}

/* SETITEMS/APPENDS (MARKED) or SETITEM/APPEND into a placeholder; or, when the
   target is generic, the generic machine's, provided no placeholder goes in. */
static mp_err op_fill(struct stream *st, bool pairs, bool marked, bool *taken)
{
	struct machine *m = &st->m;
	size_t first = marked ? (m->nmarks ? m->marks[m->nmarks - 1] : 0) : m->nstack - (pairs ? 2 : 1);
	enum role target;
	mp_val k, v;
	mp_err err;

	/* The container must sit above the mark below its items (below the one they end). */
	size_t below = m->nmarks > (marked ? 1u : 0u) ? m->marks[m->nmarks - (marked ? 2 : 1)] : 0;

	*taken = false;
	if ((marked && m->nmarks == 0) || first == 0 || m->nstack < first || first - 1 < below)
		return MP_OK; /* the generic machine reports it */
	target = role_of(m->stack[first - 1].v);
	if (target == R_GENERIC)
		return holds_placeholder(m, first) ? MP_E_UNSUPPORTED : MP_OK;
	if (pairs != is_record(target) || (pairs && (m->nstack - first) % 2 != 0))
		return MP_E_UNSUPPORTED;
	for (size_t i = first; i < m->nstack; i += pairs ? 2 : 1) {
		if ((err = mp_pickle_settle(m, &m->stack[i], &k)) != MP_OK)
			return err;
		if (pairs) {
			if ((err = mp_pickle_settle(m, &m->stack[i + 1], &v)) != MP_OK ||
			    (err = add_pair(st, m->stack[first - 1].v, k, v)) != MP_OK)
				return err;
		} else if (role_of(k) != child_role(st, target, MP_ABSENT) ||
			   (err = complete(st, k, index_of(m->stack[first - 1].v))) != MP_OK) {
			return err != MP_OK ? err : MP_E_UNSUPPORTED;
		}
	}
	drop_done(st);
	if (marked)
		m->nmarks--;
	m->nstack = first;
	m->pos++;
	*taken = true;
	return MP_OK;
}

/* How many values at the top of the stack opcode OP consumes without a
   placeholder being allowed among them (SIZE_MAX: down to the topmost mark). */
static size_t consumed_plainly(unsigned char op)
{
	const struct mp_pickle_opinfo *i = &mp_pickle_ops[op];

	if (i->flags & MP_OPF_TO_MARK)
		return SIZE_MAX;
	return i->flags & (MP_OPF_PUT | MP_OPF_STOP) ? 0 : i->pops; /* (a put of a record is the machine's) */
}

static mp_err step(void *ctx, bool *done)
{
	struct stream *st = ctx;
	struct machine *m = &st->m;
	unsigned char op = m->data[m->pos];
	bool taken = false;
	size_t n, at = m->pos;
	mp_err err;

	switch ((enum mp_pickle_opcode)op) {
	case MP_OP_EMPTY_DICT: err = op_open(st, true, &taken); break;
	case MP_OP_EMPTY_LIST: err = op_open(st, false, &taken); break;
	case MP_OP_APPEND: case MP_OP_APPENDS: case MP_OP_SETITEM: case MP_OP_SETITEMS:
		err = op_fill(st, mp_pickle_ops[op].flags & MP_OPF_PAIRS, mp_pickle_ops[op].flags & MP_OPF_TO_MARK, &taken);
		break;
	default:
		err = MP_OK;
		n = consumed_plainly(op);
		if (n == SIZE_MAX)
			n = m->nstack - (m->nmarks ? m->marks[m->nmarks - 1] : 0);
		if (n > 0 && n <= m->nstack && holds_placeholder(m, m->nstack - n))
			return MP_E_UNSUPPORTED;
		break;
	}
	if (taken) { /* where the machine's memo puts look for the opcode before them */
		m->prev_opos = m->opos;
		m->opos = at;
	}
	if (err != MP_OK || taken)
		return err;
	if (op == MP_OP_STOP) { /* leave the root for the caller */
		m->opos = m->pos++;
		*done = true;
		return MP_OK;
	}
	if ((err = mp_pickle_step(m, done)) != MP_OK)
		return err;
	/* A record fetched from the memo would be in two places. */
	if ((mp_pickle_ops[op].flags & MP_OPF_GET) && is_placeholder(m->stack[m->nstack - 1].v))
		return MP_E_UNSUPPORTED;
	return MP_OK;
}

/* After STOP: the root must be the top-level record (or a bare list of
   segments), every other record handed over, and no byte left. */
static mp_err finish_root(struct stream *st)
{
	struct machine *m = &st->m;
	enum role root;
	mp_err err;

	if (m->nstack != 1 || m->nmarks != 0 || m->pos != m->len)
		return MP_E_UNSUPPORTED;
	root = role_of(m->stack[0].v);
	if (root == R_SEGMENTS) {
		mp_sb_bare_list(st->sb);
		st->live--;
	} else if (root != R_TOP) {
		return MP_E_UNSUPPORTED;
	} else if ((err = complete(st, m->stack[0].v, 0)) != MP_OK) {
		return err;
	}
	if (st->live != 0 || (root == R_TOP && !(mp_sb_present(st->sb) & MP_F_TOP_SEGMENTS)))
		return MP_E_UNSUPPORTED;
	/* The last lists of blocks and of entries end here. */
	if ((st->lists[R_BLOCKS] > 0 && (err = end_list(st, R_BLOCKS)) != MP_OK) ||
	    (st->lists[R_DEVICE] > 0 && (err = end_list(st, R_DEVICE)) != MP_OK))
		return err;
	return MP_OK;
}

mp_err mp_pickle_read_snapshot(mp_heap *heap, const unsigned char *data, size_t len,
			       const struct mp_pickle_opts *opts, mp_snapshot **out)
{
	struct stream *st = calloc(1, sizeof *st);
	mp_err err;

	if (st == NULL)
		return MP_E_NOMEM;
	st->k = mp_heap_keys(heap);
	err = mp_pickle_machine_start(&st->m, heap, data, len, opts, NULL);
	if (err == MP_OK)
		err = mp_heap_make(heap, MP_T_LIST, NULL, 0, &st->children);
	if (err == MP_OK && (err = mp_sb_new(heap, NULL, &st->sb)) == MP_OK)
		mp_sb_frames_passed_over(st->sb, (mp_pickle_skips_in(&st->m, 0) ? ~0u : 0) |
						 (mp_pickle_skips_in(&st->m, MP_PICKLE_SKIP_IN_BLOCKS) ? 1u << MP_REC_BLOCK : 0) |
						 (mp_pickle_skips_in(&st->m, MP_PICKLE_SKIP_IN_TRACE) ? 1u << MP_REC_TRACE : 0));
	/* Room for as many blocks as the input could plausibly hold, so that the array is not copied
	   as it grows (a block with its frames takes hundreds of bytes in a pickle; untouched room
	   costs address space only). */
	if (err == MP_OK && mp_sb_reserve_blocks(st->sb, len / BYTES_PER_BLOCK) != MP_OK)
		err = MP_OK;
	if (err == MP_OK && (err = mp_pickle_run(&st->m, step, st)) == MP_OK)
		err = finish_root(st);
	mp_pickle_machine_end(&st->m);
	free(st->recs);
	free(st->kv);
	if (err == MP_OK && (err = mp_sb_finish(st->sb, out)) == MP_OK)
		st->sb = NULL;
	mp_sb_abandon(st->sb);
	free(st);
	return err == MP_OK || err == MP_E_NOMEM ? err : MP_E_UNSUPPORTED;
}
