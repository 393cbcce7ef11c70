/* mp_pickle_lazy.c - memo entries found again from the input when they are fetched (the puts
   the machine and the skipper count without writing: pickle_int.h). */
#include "pickle_int.h"

#include "mp_array.h"

/* The entry for a put whose value the opcode at VALUE_OP made. */
static bool lazy_entry(struct machine *m, size_t value_op, uint32_t *enc)
{
	if (!mp_pickle_is_text(m->data[value_op])) {
		*enc = (uint32_t)MP_SKIPPED;
		return true;
	}
	if (value_op < MEMO_LAZY_BIT) {
		*enc = MEMO_LAZY_BIT | (uint32_t)value_op;
		return true;
	}
	if (m->nlazy >= (1u << 27) ||
	    mp_array_grow((void **)&m->lazy, &m->lazy_cap, m->nlazy + 1, sizeof *m->lazy) != MP_OK)
		return false;
	m->lazy[m->nlazy] = value_op;
	*enc = (uint32_t)(m->nlazy++ << 4) | MEMO_LAZY_TAG;
	return true;
}

bool mp_pickle_rescan(struct machine *m, uint64_t index)
{
	uint64_t group = index >> MEMO_GROUP_SHIFT;
	const struct mp_memo_checkpoint *cp = &m->checkpoints[group];
	uint64_t next = cp->memo_len; /* the memo length, counted as the machine counted it */
	size_t p, prev = SIZE_MAX, size;

	if (cp->value_op == 0)
		return false;
	/* From the value of the group's first put to the opcode being run: the
	   same opcodes, so the same puts, as when they were counted. */
	for (p = (size_t)cp->value_op - 1; p < m->opos && next >> MEMO_GROUP_SHIFT <= group; p += size) {
		struct mp_pickle_tok t;
		uint64_t at;
		uint32_t enc;

		if (mp_pickle_next_op(m->data, p, m->len, &t) != MP_TOK_OK)
			break;
		size = t.size;
		if (t.info->flags & MP_OPF_PUT) {
			at = t.op == MP_OP_MEMOIZE ? next : t.arg;
			if (at >> MEMO_GROUP_SHIFT == group && at < m->memo_len && m->memo[at] == MEMO_EMPTY &&
			    !((m->memo_records[at / 64] >> (at % 64)) & 1) && prev != SIZE_MAX) {
				if (!lazy_entry(m, prev, &enc))
					return false;
				m->memo[at] = enc;
			}
			if (at >= next)
				next = at + 1;
		}
		prev = p;
	}
	return m->memo[index] != MEMO_EMPTY;
}
