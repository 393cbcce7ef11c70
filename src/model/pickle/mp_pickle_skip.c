/* mp_pickle_skip.c - pass over a pickled list without building it, by simulating only the stack depth
   and counting the memo's puts (the projection that lets `stats` ignore frames). It writes nothing but
   its own state: the machine notes the range passed over (mp_memo_count_range), and a fetch of an
   entry put inside it reads it again (mp_memo_resolve). */
#include "pickle_int.h"

#include "mp_array.h"

/* Whether the value about to be built is stored under a skip key of a dict:
   the top of the stack is that key, in key position above a dict's batch mark
   or right above the dict itself. */
bool mp_pickle_at_skip_key(const struct machine *m)
{
	size_t floor = m->nmarks ? m->marks[m->nmarks - 1] : 0;
	const struct slot *target = NULL;

	if (m->nstack < 2 || m->nstack - 1 < floor || !mp_pickle_skip_key(m, m->stack[m->nstack - 1].v, 0))
		return false;
	if (floor > 0 && (m->nstack - 1 - floor) % 2 == 0)
		target = &m->stack[floor - 1];
	else if (m->nstack - 2 >= floor)
		target = &m->stack[m->nstack - 2];
	return target != NULL && mp_val_type(target->v) == MP_T_DICT &&
	       mp_heap_is_open(m->heap, target->v);
}

/* Count, while skipping, a put of INDEX after the opcode at VALUE_OP. Only the next fresh index, as
   CPython writes them, and after an opcode of the value: anything else is left to the machine. */
static inline bool skip_memo(struct mp_skip_run *m, uint64_t index, size_t value_op)
{
	if (index != m->memo_len || index > m->len || value_op == SIZE_MAX)
		return false;
	m->memo_len = index + 1;
	return true;
}

/* The skipper's simulated stack: DEPTH values pushed since the skipped value
   began (it is the value at depth 1) and its own stack of mark depths. */
struct skip_state {
	size_t depth;
	size_t nmarks;
	size_t prev_op; /* offset of the opcode before the current one */
};

/* What one simulated opcode tells. */
enum skip_step {
	SKIP_ON,    /* understood; keep going */
	SKIP_ENDS,  /* it belongs to the enclosing structure: the value ended before it */
	SKIP_ABORT, /* not certain: build the value for real instead */
};

static inline enum skip_step skip_mark(struct mp_skip_run *m, struct skip_state *st)
{
	if (st->nmarks == m->marks_cap &&
	    mp_array_grow((void **)&m->marks, &m->marks_cap, st->nmarks + 1,
		       sizeof *m->marks) != MP_OK)
		return SKIP_ABORT;
	m->marks[st->nmarks++] = st->depth;
	return SKIP_ON;
}

/* Pop to the last mark, leaving KEEP values there (1 for a marked tuple).
   PAIRS: the items must come in pairs. A mark the skipper did not push is the
   enclosing batch closing. */
static inline enum skip_step skip_to_mark(struct mp_skip_run *m, struct skip_state *st, size_t keep, bool pairs)
{
	size_t mark;

	if (st->nmarks == 0)
		return SKIP_ENDS;
	mark = m->marks[--st->nmarks];
	if (pairs && (st->depth - mark) % 2 != 0)
		return SKIP_ABORT;
	st->depth = mark + keep;
	return SKIP_ON;
}

/* Take N values and leave N_OUT. KEEPS_TARGET: the lowest of the N is a
   container that stays (APPEND, SETITEM, memo puts); otherwise all N are
   consumed, which must not include the skipped value itself. */
static inline enum skip_step skip_consume(const struct mp_skip_run *m, struct skip_state *st, size_t n,
				   size_t n_out, bool keeps_target)
{
	size_t floor = st->nmarks ? m->marks[st->nmarks - 1] : 0;

	if (st->depth < floor + n)
		return st->nmarks == 0 ? SKIP_ENDS : SKIP_ABORT;
	if (!keeps_target && st->depth - n < 1)
		return SKIP_ABORT;
	st->depth = st->depth - n + n_out;
	return SKIP_ON;
}

/* Pass over one opcode at *P, updating ST and the count: what it does to the stack and the memo is
   the opcode table's. */
static inline enum skip_step skip_opcode(struct mp_skip_run *m, size_t *p, struct skip_state *st)
{
	struct mp_pickle_tok t;
	enum skip_step r;
	unsigned flags;

	if (mp_pickle_next_op(m->data, *p, m->len, &t) != MP_TOK_OK || !((flags = t.flags) & MP_OPF_VALUE))
		return SKIP_ABORT;
	if (flags & MP_OPF_MARKS) {
		r = skip_mark(m, st);
	} else if (flags & MP_OPF_TO_MARK) {
		r = skip_to_mark(m, st, t.pushes, flags & MP_OPF_PAIRS);
	} else if (flags & MP_OPF_PUT) {
		r = skip_consume(m, st, 1, 1, true);
		if (r == SKIP_ON && !skip_memo(m, t.op == MP_OP_MEMOIZE ? m->memo_len : t.arg, st->prev_op))
			r = SKIP_ABORT;
	} else if (t.pops > 0) {
		r = skip_consume(m, st, t.pops, t.pushes, flags & MP_OPF_KEEPS);
	} else {
		st->depth += t.pushes;
		r = SKIP_ON;
	}
	if (r != SKIP_ON)
		return r;
	st->prev_op = *p;
	*p += t.size;
	return SKIP_ON;
}

/* A dict of atoms in the shape CPython writes frames in, '}' MEMOIZE '(' then
   memo fetches, ints, strs (each with its MEMOIZE), None and bools up to
   'u', passed over at once: nearly every opcode a projection skips. Its puts
   are counted as skip_opcode would; anything else leaves *P and the count as
   they were for skip_opcode. */
static bool skip_small_dict(struct mp_skip_run *m, size_t *p, struct skip_state *st)
{
	const unsigned char *d = m->data;
	size_t q = *p + 3, at, items = 0, memo_len = m->memo_len + 1;

	if (m->len - *p < 4 || d[*p + 1] != MP_OP_MEMOIZE || d[*p + 2] != MP_OP_MARK || m->memo_len >= m->len)
		return false;
	for (; q < m->len && d[q] != MP_OP_SETITEMS; items++) {
		size_t size;

		switch ((enum mp_pickle_opcode)d[q]) {
		case MP_OP_BINGET: case MP_OP_BININT1: case MP_OP_BININT2: case MP_OP_BININT:
		case MP_OP_NONE: case MP_OP_NEWTRUE: case MP_OP_NEWFALSE: case MP_OP_SHORT_BINUNICODE:
			break;
		default: return false;
		}
		if ((size = mp_pickle_op_size(d, q, m->len)) == 0)
			return false;
		at = q;
		q += size;
		if (d[at] == MP_OP_SHORT_BINUNICODE && q < m->len && d[q] == MP_OP_MEMOIZE) {
			memo_len++;
			q++;
		}
	}
	if (q >= m->len || items % 2 != 0 || memo_len > m->len)
		return false; /* (skip_opcode finds out what it is) */
	m->memo_len = memo_len;
	st->depth++;
	st->prev_op = q;
	*p = q + 1;
	return true;
}

/* Whether OP, right after the value looked complete, still belongs to it: a
   memo put for it, or the MARK of another batch of its items (CPython never
   starts the next key of a dict with a MARK). */
static bool continues_value(unsigned char op)
{
	return (mp_pickle_ops[op].flags & (MP_OPF_PUT | MP_OPF_MARKS)) != 0;
}

/* When the value looks complete and the next opcode pushes a value (a one-item
   list gets its APPEND after the item; or it is the next key), this many
   opcodes may be simulated to find out which. */
#define SKIP_LOOKAHEAD 64

/* Pass over the list whose first opcode is at START; on success set *END to the offset after it. The
   value has ended once an opcode is seen that acts on the enclosing structure (its closing SETITEMS,
   say). On failure the count is as before. */
bool mp_pickle_skip_run(struct mp_skip_run *m, size_t start, size_t *end)
{
	struct skip_state st = { 0, 0, SIZE_MAX };
	size_t p = start, ahead = 0, start_memo = m->memo_len, done = SIZE_MAX, done_memo = 0;
	bool looking_ahead = false;

	while (p < m->len) {
		enum skip_step r = m->data[p] == MP_OP_EMPTY_DICT && skip_small_dict(m, &p, &st)
					   ? SKIP_ON
					   : skip_opcode(m, &p, &st);

		if (r == SKIP_ENDS && done != SIZE_MAX) {
			m->memo_len = done_memo;
			*end = done;
			return true;
		}
		if (r != SKIP_ON)
			break;
		if (st.depth == 1 && st.nmarks == 0) {
			done = p;
			done_memo = m->memo_len;
			looking_ahead = p < m->len && !continues_value(m->data[p]);
			ahead = 0;
		} else if (looking_ahead && ++ahead > SKIP_LOOKAHEAD) {
			break;
		}
	}
	m->memo_len = start_memo;
	return false;
}

bool mp_pickle_skip_value(struct machine *m, size_t *end)
{
	struct mp_skip_run run = { .data = m->data, .len = m->len, .memo_len = m->memo.len,
				   .marks = m->skip_marks, .marks_cap = m->skip_marks_cap };
	size_t after;
	bool ok = m->ahead != NULL && mp_pickle_ahead_take(m, m->pos, m->memo.len, end, &after);

	if (!ok) {
		ok = mp_pickle_skip_run(&run, m->pos, end);
		after = run.memo_len;
		m->skip_marks = run.marks;
		m->skip_marks_cap = run.marks_cap;
	}
	if (ok)
		mp_memo_count_range(&m->memo, m->pos, after);
	return ok;
}
