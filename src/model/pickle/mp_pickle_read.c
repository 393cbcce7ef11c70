/* mp_pickle_read.c - a pickle machine for plain data that executes nothing. */
#include "pickle_fast_int.h"
#include "pickle_int.h"
#include "pickle_ops_int.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"

static mp_err refuse_opcode(struct machine *m, unsigned char op)
{
	const char *name = mp_pickle_ops[op].name;

	if (name != NULL)
		return mp_fail(m->diag, MP_E_UNSUPPORTED,
			       "pickle: opcode %s (0x%02x) at byte %zu is not plain data; memprof executes nothing",
			       name, op, m->opos);
	return mp_fail(m->diag, MP_E_UNSUPPORTED, "pickle: unknown opcode 0x%02x at byte %zu", op,
		       m->opos);
}

static mp_err truncated(struct machine *m)
{
	return mp_fail(m->diag, MP_E_TRUNCATED, "pickle: data ends inside the opcode at byte %zu",
		       m->opos);
}

static mp_err corrupt(struct machine *m, const char *what)
{
	return mp_fail(m->diag, MP_E_CORRUPT, "pickle: %s at byte %zu", what, m->opos);
}

static mp_err heap_error(struct machine *m, mp_err err)
{
	if (err == MP_E_UNSUPPORTED)
		return mp_fail(m->diag, err,
			       "pickle: container changed after it was used (a cycle?) at byte %zu",
			       m->opos);
	return mp_fail(m->diag, err, "pickle: %s at byte %zu", mp_strerror(err), m->opos);
}

/* ---- the stack */

mp_err mp_pickle_push(struct machine *m, mp_val v)
{
	if (m->nstack == m->stack_cap &&
	    mp_array_grow((void **)&m->stack, &m->stack_cap, m->nstack + 1, sizeof *m->stack) != MP_OK)
		return heap_error(m, MP_E_NOMEM);
	m->stack[m->nstack].v = v;
	m->stack[m->nstack].memo = NO_MEMO;
	m->nstack++;
	return MP_OK;
}

static mp_err need_stack(struct machine *m, size_t n)
{
	size_t floor = m->nmarks ? m->marks[m->nmarks - 1] : 0;

	if (m->nstack < floor + n)
		return corrupt(m, "stack underflow");
	return MP_OK;
}

/* Freeze the stack value S for use inside another value (or as the result):
   an open container becomes immutable, and if it turned out equal to an
   existing one, the memo is pointed at that one and the record is recycled. */
mp_err mp_pickle_settle(struct machine *m, struct slot *s, mp_val *out)
{
	mp_val canon;
	mp_err err;

	if (!mp_val_is_container(s->v)) {
		*out = s->v;
		return MP_OK;
	}
	err = mp_heap_freeze(m->heap, s->v, &canon);
	if (err != MP_OK)
		return heap_error(m, err);
	if (canon != s->v && s->memo != NO_MEMO && mp_memo_holds_alone(&m->memo, s->memo, s->v) &&
	    mp_memo_store(&m->memo, s->memo, canon) == MP_OK)
		mp_heap_release(m->heap, s->v);
	*out = canon;
	return MP_OK;
}

/* ---- the memo */

static mp_err memo_error(struct machine *m, mp_err err)
{
	if (err == MP_E_LIMIT)
		return mp_fail(m->diag, MP_E_LIMIT, "pickle: too many memo entries");
	return heap_error(m, err);
}

/* A put of INDEX (IMPLICIT: by MEMOIZE) of the value on top of the stack. */
static mp_err memo_put(struct machine *m, uint64_t index, bool implicit)
{
	struct slot *top;
	mp_val v;
	mp_err err;

	if (m->nstack == 0)
		return corrupt(m, "memo put with an empty stack");
	/* Every memo put takes an input byte, so no real index reaches the input length. */
	if (index > m->len)
		return mp_fail(m->diag, MP_E_LIMIT, "pickle: memo index %llu too large at byte %zu",
			       (unsigned long long)index, m->opos);
	top = &m->stack[m->nstack - 1];
	v = top->v;
	/* A str just read, or a record the stream reader keeps apart: only counted. */
	if (implicit && index == m->memo.len &&
	    ((m->text_end == m->opos && (mp_val_type(v) == MP_T_STR || mp_val_type(v) == MP_T_BYTES)) ||
	     (v & 15u) == MP_PICKLE_RECORD_TAG)) {
		mp_memo_count(&m->memo, m->prev_opos, (v & 15u) == MP_PICKLE_RECORD_TAG);
		return MP_OK;
	}
	mp_memo_checkpoint(m->memo.checkpoints, index, m->prev_opos, m->memo.len);
	if ((err = mp_memo_store(&m->memo, index, v)) != MP_OK)
		return memo_error(m, err);
	/* The slot remembers its memo entry only if it is the only one. */
	top->memo = (top->memo == NO_MEMO && mp_heap_is_open(m->heap, v)) ? (uint32_t)index : NO_MEMO;
	if (top->memo == NO_MEMO)
		mp_memo_pin(&m->memo, index, mp_heap_is_open(m->heap, v));
	return MP_OK;
}

mp_err mp_pickle_put_late(struct machine *m, uint64_t index, mp_val v)
{
	mp_err err = mp_memo_store(&m->memo, index, v);

	return err != MP_OK ? memo_error(m, err) : MP_OK;
}

static mp_err memo_get(struct machine *m, uint64_t index)
{
	mp_val v = MP_ABSENT;
	enum mp_memo_kind kind = mp_memo_fetch(&m->memo, index, &v, &(size_t){ 0 });
	mp_err err;

	if (kind != MP_MEMO_VALUE && (err = mp_pickle_fetch_later(m, index, &v, &kind)) != MP_OK)
		return err;
	if (kind == MP_MEMO_RECORD)
		return mp_pickle_push(m, MP_PICKLE_RECORD_TAG); /* the stream reader gives up */
	if (kind != MP_MEMO_VALUE)
		return mp_fail(m->diag, MP_E_CORRUPT, "pickle: memo index %llu not defined at byte %zu",
			       (unsigned long long)index, m->opos);
	v = mp_heap_resolve(m->heap, v);
	if (mp_heap_is_open(m->heap, v))
		mp_memo_pin(&m->memo, index, true); /* now referenced from two places */
	return mp_pickle_push(m, v);
}

/* ---- atoms */

/* The str (IS_STR) or bytes of the N bytes at offset AT. */
static mp_err make_text(struct machine *m, size_t at, size_t n, bool is_str, mp_val *out)
{
	const unsigned char *b = m->data + at;
	mp_err err = is_str ? mp_heap_str_utf8(m->heap, (const char *)b, n, out) : mp_heap_bytes(m->heap, b, n, out);

	if (err == MP_E_CORRUPT)
		return corrupt(m, "invalid UTF-8 in a string");
	return err != MP_OK ? heap_error(m, err) : MP_OK;
}

/* The offset of the bytes of the counted operand of token T, whose opcode is at AT. */
static inline size_t payload(const struct mp_pickle_tok *t, size_t at)
{
	return at + 1 + t->n;
}

static mp_err push_text(struct machine *m, const struct mp_pickle_tok *t)
{
	mp_val v;
	mp_err err = make_text(m, payload(t, m->opos), (size_t)t->arg, (t->flags & MP_OPF_STR) != 0, &v);

	if (err != MP_OK)
		return err;
	m->text_end = m->pos;
	return mp_pickle_push(m, v);
}

mp_err mp_pickle_text_at(struct machine *m, size_t at, mp_val *out)
{
	size_t saved_opos = m->opos;
	struct mp_pickle_tok t;
	mp_err err;

	m->opos = at;
	err = mp_pickle_next_op(m->data, at, m->len, &t) != MP_TOK_OK || !mp_pickle_is_text(t.op)
		      ? truncated(m)
		      : make_text(m, payload(&t, at), (size_t)t.arg, (t.flags & MP_OPF_STR) != 0, out);
	m->opos = saved_opos;
	return err;
}

static mp_err push_long(struct machine *m, const struct mp_pickle_tok *t)
{
	mp_val v;
	mp_err err = mp_heap_int_le(m->heap, m->data + payload(t, m->opos), (size_t)t->arg, &v);

	if (err != MP_OK)
		return heap_error(m, err);
	return mp_pickle_push(m, v);
}

static mp_err push_binfloat(struct machine *m, const struct mp_pickle_tok *t)
{
	uint64_t bits = __builtin_bswap64(t->arg); /* big-endian IEEE 754 */
	double d;
	mp_val v;
	mp_err err;

	memcpy(&d, &bits, sizeof d);
	err = mp_heap_float(m->heap, d, &v);
	if (err != MP_OK)
		return heap_error(m, err);
	return mp_pickle_push(m, v);
}

/* ---- containers */

/* Pop the items above the topmost mark; their first index in *FIRST. */
static mp_err pop_mark(struct machine *m, size_t *first)
{
	if (m->nmarks == 0)
		return corrupt(m, "no mark on the stack");
	*first = m->marks[--m->nmarks];
	return MP_OK;
}

/* Add stack[first..nstack) to container C (in pairs for a dict), then pop them; OP names the opcode. */
static mp_err add_items(struct machine *m, mp_val c, size_t first, bool pairs, const char *op)
{
	mp_val a, b;
	mp_err err;

	if (pairs && (m->nstack - first) % 2 != 0)
		return mp_fail(m->diag, MP_E_CORRUPT, "pickle: odd number of items for %s at byte %zu", op, m->opos);
	for (size_t i = first; i < m->nstack; i += pairs ? 2 : 1) {
		if ((err = mp_pickle_settle(m, &m->stack[i], &a)) != MP_OK)
			return err;
		if (pairs && !mp_heap_hashable(m->heap, a))
			return corrupt(m, "unhashable dict key");
		if (pairs && (err = mp_pickle_settle(m, &m->stack[i + 1], &b)) == MP_OK)
			err = mp_heap_setitem(m->heap, c, a, b);
		else if (!pairs)
			err = mp_heap_append(m->heap, c, a);
		if (err != MP_OK)
			return err == MP_E_UNSUPPORTED || err == MP_E_NOMEM || err == MP_E_LIMIT
				       ? heap_error(m, err)
				       : corrupt(m, "bad container operation");
	}
	m->nstack = first;
	return MP_OK;
}

/* APPEND(S) and SETITEM(S): into the container below the items (MARKED: below their mark). */
static mp_err op_fill(struct machine *m, bool pairs, bool marked)
{
	size_t first = m->nstack - (pairs ? 2 : 1);
	mp_err err = marked ? pop_mark(m, &first) : MP_OK;
	mp_val target;

	if (err != MP_OK)
		return err;
	if (first == 0 || first - 1 < (m->nmarks ? m->marks[m->nmarks - 1] : 0))
		return corrupt(m, "no container below the items");
	target = m->stack[first - 1].v;
	if (mp_val_type(target) != (pairs ? MP_T_DICT : MP_T_LIST))
		return corrupt(m, pairs ? "SETITEMS target is not a dict" : "APPENDS target is not a list");
	return add_items(m, target, first, pairs, "SETITEMS");
}

/* Build a tuple (or, for LIST/DICT, a list/dict) from stack[first..nstack). */
static mp_err build_from(struct machine *m, size_t first, enum mp_vtype type)
{
	mp_val c, canon;
	mp_err err = mp_heap_open(m->heap, type, &c);

	if (err != MP_OK)
		return heap_error(m, err);
	if ((err = add_items(m, c, first, type == MP_T_DICT, "DICT")) != MP_OK)
		return err;
	if (type == MP_T_TUPLE) {
		err = mp_heap_freeze(m->heap, c, &canon);
		if (err != MP_OK)
			return heap_error(m, err);
		if (canon != c)
			mp_heap_release(m->heap, c);
		c = canon;
	}
	return mp_pickle_push(m, c);
}

static mp_err op_mark(struct machine *m)
{
	if (m->nmarks == m->marks_cap &&
	    mp_array_grow((void **)&m->marks, &m->marks_cap, m->nmarks + 1, sizeof *m->marks) != MP_OK)
		return heap_error(m, MP_E_NOMEM);
	m->marks[m->nmarks++] = m->nstack;
	return MP_OK;
}

static mp_err op_dup(struct machine *m)
{
	/* Two slots now share the value: neither may recycle it. */
	if (m->stack[m->nstack - 1].memo != NO_MEMO)
		mp_memo_pin(&m->memo, m->stack[m->nstack - 1].memo, true);
	m->stack[m->nstack - 1].memo = NO_MEMO;
	return mp_pickle_push(m, m->stack[m->nstack - 1].v);
}

/* Build an empty container, unless it is the value of a skip key and can be
   passed over whole. */
static mp_err push_empty(struct machine *m, enum mp_vtype type)
{
	size_t end;
	mp_val v;
	mp_err err;

	/* Only lists are skipped: frames are lists. */
	if (type == MP_T_LIST && mp_pickle_at_skip_key(m)) {
		m->pos = m->opos; /* where the skipper starts */
		if (mp_pickle_skip_value(m, &end)) {
			m->pos = end;
			return mp_pickle_push(m, MP_SKIPPED);
		}
		m->pos = m->opos + 1;
	}
	if ((err = mp_heap_open(m->heap, type, &v)) != MP_OK)
		return heap_error(m, err);
	return mp_pickle_push(m, v);
}

/* Execute one opcode; *DONE is set by STOP. */
mp_err mp_pickle_step(struct machine *m, bool *done)
{
	struct mp_pickle_tok t;
	enum mp_pickle_tok_status status = mp_pickle_next_op(m->data, m->pos, m->len, &t);
	size_t first = 0;
	mp_err err;

	m->prev_opos = m->opos;
	m->opos = m->pos;
	if (status == MP_TOK_REFUSED)
		return refuse_opcode(m, t.op);
	if (status == MP_TOK_SHORT)
		return truncated(m);
	m->pos += t.size;
	/* the values it takes, above the topmost mark (a put's and STOP's are checked where they are) */
	if (!(t.flags & (MP_OPF_PUT | MP_OPF_TO_MARK | MP_OPF_STOP)) && t.pops > 0 &&
	    (err = need_stack(m, t.pops)) != MP_OK)
		return err;
	switch ((enum mp_pickle_opcode)t.op) {
	case MP_OP_PROTO:
		return t.arg > 5 ? mp_fail(m->diag, MP_E_UNSUPPORTED, "pickle: protocol %u is newer than 5", (unsigned)t.arg)
				 : MP_OK;
	case MP_OP_FRAME: return t.arg > m->len - m->pos ? truncated(m) : MP_OK;
	case MP_OP_STOP: *done = true; return MP_OK;
	case MP_OP_MARK: return op_mark(m);
	case MP_OP_POP: m->nstack--; return MP_OK;
	case MP_OP_POP_MARK: return pop_mark(m, &m->nstack);
	case MP_OP_DUP: return op_dup(m);
	case MP_OP_EMPTY_DICT: return push_empty(m, MP_T_DICT);
	case MP_OP_EMPTY_LIST: return push_empty(m, MP_T_LIST);
	case MP_OP_EMPTY_TUPLE: case MP_OP_TUPLE1: case MP_OP_TUPLE2: case MP_OP_TUPLE3:
		return build_from(m, m->nstack - t.pops, MP_T_TUPLE);
	case MP_OP_TUPLE: case MP_OP_LIST: case MP_OP_DICT:
		if ((err = pop_mark(m, &first)) != MP_OK)
			return err;
		return build_from(m, first, t.op == MP_OP_TUPLE ? MP_T_TUPLE : t.op == MP_OP_LIST ? MP_T_LIST : MP_T_DICT);
	case MP_OP_APPEND: case MP_OP_APPENDS: case MP_OP_SETITEM: case MP_OP_SETITEMS:
		return op_fill(m, t.flags & MP_OPF_PAIRS, t.flags & MP_OPF_TO_MARK);
	case MP_OP_BININT: return mp_pickle_push(m, mp_val_from_small_int((int32_t)(uint32_t)t.arg));
	case MP_OP_BININT1: case MP_OP_BININT2: return mp_pickle_push(m, mp_val_from_small_int((int64_t)t.arg));
	case MP_OP_LONG1: case MP_OP_LONG4: return push_long(m, &t);
	case MP_OP_NONE: return mp_pickle_push(m, MP_NONE);
	case MP_OP_NEWTRUE: return mp_pickle_push(m, MP_TRUE);
	case MP_OP_NEWFALSE: return mp_pickle_push(m, MP_FALSE);
	case MP_OP_BINFLOAT: return push_binfloat(m, &t);
	case MP_OP_SHORT_BINUNICODE: case MP_OP_BINUNICODE: case MP_OP_BINUNICODE8:
	case MP_OP_SHORT_BINBYTES: case MP_OP_BINBYTES: case MP_OP_BINBYTES8:
		return push_text(m, &t);
	case MP_OP_MEMOIZE: return memo_put(m, m->memo.len, true);
	case MP_OP_BINPUT: case MP_OP_LONG_BINPUT: return memo_put(m, t.arg, false);
	case MP_OP_BINGET: case MP_OP_LONG_BINGET: return memo_get(m, t.arg);
	default: return refuse_opcode(m, t.op);
	}
}

mp_err mp_pickle_run(struct machine *m, mp_err (*step)(void *ctx, bool *done), void *ctx)
{
	size_t next_progress = PROGRESS_STEP;
	bool done = false;
	mp_err err;

	while (!done) {
		if (m->pos >= m->len) {
			m->opos = m->pos;
			return mp_fail(m->diag, MP_E_TRUNCATED,
				       m->len == 0 ? "pickle: empty input" : "pickle: data ends before STOP at byte %zu",
				       m->pos);
		}
		if ((err = step(ctx, &done)) != MP_OK)
			return err;
		if (m->opts != NULL && m->opts->progress != NULL && m->pos >= next_progress) {
			m->opts->progress(m->opts->progress_ctx, m->opos);
			next_progress = m->pos + PROGRESS_STEP;
		}
	}
	return MP_OK;
}

static mp_err machine_step(void *m, bool *done)
{
	return mp_pickle_step(m, done);
}

static mp_err run(struct machine *m, mp_val *root)
{
	mp_err err = mp_pickle_run(m, machine_step, m);

	if (err != MP_OK)
		return err;
	if (m->nstack == 0 || (m->nmarks && m->marks[m->nmarks - 1] == m->nstack))
		return corrupt(m, "STOP with nothing on the stack");
	err = mp_pickle_settle(m, &m->stack[m->nstack - 1], root);
	if (err != MP_OK)
		return err;
	if (m->pos != m->len)
		mp_warn(m->diag, "pickle: %zu bytes after STOP ignored", m->len - m->pos);
	return MP_OK;
}

mp_err mp_pickle_machine_start(struct machine *m, mp_heap *heap, const unsigned char *data, size_t len,
				const struct mp_pickle_opts *opts, mp_diag *diag)
{
	mp_err err;

	*m = (struct machine){ .heap = heap, .data = data, .len = len, .opts = opts, .diag = diag,
			       .text_end = SIZE_MAX };
	if ((err = mp_memo_map(&m->memo, len)) != MP_OK)
		return mp_fail(diag, err, "pickle: cannot map the memo: out of memory");
	mp_pickle_ahead_start(m);
	return MP_OK;
}

void mp_pickle_machine_end(struct machine *m)
{
	mp_pickle_ahead_stop(m);
	mp_pickle_fast_end(m);
	free(m->stack);
	free(m->marks);
	mp_memo_unmap(&m->memo);
	free(m->skip_marks);
}

mp_err mp_pickle_read(mp_heap *heap, const unsigned char *data, size_t len, mp_val *root,
		      const struct mp_pickle_opts *opts, mp_diag *diag)
{
	struct machine m;
	mp_err err = mp_pickle_machine_start(&m, heap, data, len, opts, diag);

	if (err == MP_OK)
		err = run(&m, root);
	mp_pickle_machine_end(&m);
	return err;
}
