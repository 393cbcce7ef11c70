/* mp_pickle_lazy.c - memo entries found again from the input when they are fetched (the puts
   the machine and the skipper count without writing: pickle_int.h). */
#include "pickle_int.h"

#include "mp_array.h"

size_t mp_pickle_opcode_size(const unsigned char *d, size_t p, size_t len)
{
	size_t lb, fixed;
	uint64_t n;

	switch (d[p]) {
	case 'K': case 'h': case 'q': case 0x80: fixed = 2; break;
	case 'M': fixed = 3; break;
	case 'J': case 'j': case 'r': fixed = 5; break;
	case 'G': case 0x95: fixed = 9; break;
	case 0x8a: case 0x8c: case 'C': lb = 1; goto counted;
	case 0x8b: case 'X': case 'B': lb = 4; goto counted;
	case 0x8d: case 0x8e: lb = 8; goto counted;
	case '(': case '.': case '0': case '1': case '2': case '}': case ']': case ')':
	case 0x85: case 0x86: case 0x87: case 't': case 'l': case 'd': case 'a': case 'e':
	case 's': case 'u': case 'N': case 0x88: case 0x89: case 0x94:
		fixed = 1;
		break;
	default: return 0;
	}
	return fixed <= len - p ? fixed : 0;
counted:
	if (len - p - 1 < lb)
		return 0;
	n = mp_pickle_read_le(d + p + 1, lb);
	return n > len - p - 1 - lb ? 0 : 1 + lb + (size_t)n;
}

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
		unsigned char op = m->data[p];
		uint64_t at;
		uint32_t enc;

		if ((size = mp_pickle_opcode_size(m->data, p, m->len)) == 0)
			break;
		if (op == 0x94 || op == 'q' || op == 'r') {
			at = op == 0x94 ? next : mp_pickle_read_le(m->data + p + 1, op == 'q' ? 1 : 4);
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
