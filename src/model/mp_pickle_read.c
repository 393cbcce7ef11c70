/* mp_pickle_read.c - a pickle machine for plain data that executes nothing. */
#include "mp_pickle_read.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mp_utf8.h"

/* Memo entries are 32 bits: a value handle when it fits, else a reference
   into big[] marked with the unused tag 15, or a string the skipper passed
   over, by the offset of its opcode in lazy[] (tag 14), built when fetched. */
#define MEMO_BIG_TAG 15u
#define MEMO_LAZY_TAG 14u
/* Or, for inputs under 2 GiB, that offset itself with the top bit set. */
#define MEMO_LAZY_BIT 0x80000000u
#define MEMO_EMPTY 0u /* MP_ABSENT: never a stored value */
#define NO_MEMO UINT32_MAX
#define PROGRESS_STEP ((size_t)64 << 20)

/* A value on the stack, with the memo slot that refers to it (if exactly one
   does) so that a container frozen into an equal existing one can be replaced
   in the memo and its record given back. */
struct slot {
	mp_val v;
	uint32_t memo; /* NO_MEMO: none, or more than one reference exists */
};

struct machine {
	mp_heap *heap;
	const unsigned char *data;
	size_t len;
	size_t pos;    /* offset of the next byte to read */
	size_t opos;   /* offset of the current opcode */
	struct slot *stack;
	size_t nstack, stack_cap;
	size_t *marks;
	size_t nmarks, marks_cap;
	uint32_t *memo;
	uint64_t *memo_pinned; /* bit set: entry was fetched while its container was open */
	size_t memo_len, memo_bytes, pinned_bytes;
	mp_val *big;
	size_t nbig, big_cap;
	uint64_t *lazy;
	size_t nlazy, lazy_cap;
	size_t *skip_marks; /* the skipper's own mark stack */
	size_t skip_marks_cap;
	const struct mp_pickle_opts *opts;
	mp_diag *diag;
};

static const char *opcode_name(unsigned char op)
{
	switch (op) {
	case 'c': return "GLOBAL";
	case 0x93: return "STACK_GLOBAL";
	case 'R': return "REDUCE";
	case 'b': return "BUILD";
	case 'i': return "INST";
	case 'o': return "OBJ";
	case 0x81: return "NEWOBJ";
	case 0x92: return "NEWOBJ_EX";
	case 'P': return "PERSID";
	case 'Q': return "BINPERSID";
	case 0x82: return "EXT1";
	case 0x83: return "EXT2";
	case 0x84: return "EXT4";
	case 0x8f: return "EMPTY_SET";
	case 0x90: return "ADDITEMS";
	case 0x91: return "FROZENSET";
	case 0x96: return "BYTEARRAY8";
	case 0x97: return "NEXT_BUFFER";
	case 0x98: return "READONLY_BUFFER";
	case 'I': return "INT";
	case 'L': return "LONG";
	case 'F': return "FLOAT";
	case 'S': return "STRING";
	case 'T': return "BINSTRING";
	case 'U': return "SHORT_BINSTRING";
	case 'V': return "UNICODE";
	case 'p': return "PUT";
	case 'g': return "GET";
	default: return NULL;
	}
}

static mp_err refuse_opcode(struct machine *m, unsigned char op)
{
	const char *name = opcode_name(op);

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

static mp_err grow_array(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *np;

	if (need <= *cap)
		return MP_OK;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 4 / elem)
			return MP_E_NOMEM;
		ncap *= 2;
	}
	np = realloc(*p, ncap * elem);
	if (np == NULL)
		return MP_E_NOMEM;
	*p = np;
	*cap = ncap;
	return MP_OK;
}

/* ---- reading operands */

static inline bool need(struct machine *m, size_t n)
{
	return n <= m->len - m->pos;
}

static inline uint64_t read_le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Read an N-byte little-endian length/index operand. */
static mp_err operand(struct machine *m, size_t n, uint64_t *out)
{
	if (!need(m, n))
		return truncated(m);
	*out = read_le(m->data + m->pos, n);
	m->pos += n;
	return MP_OK;
}

/* ---- the stack */

static mp_err push(struct machine *m, mp_val v)
{
	if (m->nstack == m->stack_cap &&
	    grow_array((void **)&m->stack, &m->stack_cap, m->nstack + 1, sizeof *m->stack) != MP_OK)
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

static bool pinned(const struct machine *m, size_t i)
{
	return (m->memo_pinned[i / 64] >> (i % 64)) & 1;
}

static void set_pinned(struct machine *m, size_t i, bool on)
{
	if (on)
		m->memo_pinned[i / 64] |= (uint64_t)1 << (i % 64);
	else
		m->memo_pinned[i / 64] &= ~((uint64_t)1 << (i % 64));
}

/* Freeze the stack value S for use inside another value (or as the result):
   an open container becomes immutable, and if it turned out equal to an
   existing one, the memo is pointed at that one and the record is recycled. */
static mp_err settle(struct machine *m, struct slot *s, mp_val *out)
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
	if (canon != s->v && s->memo != NO_MEMO && !pinned(m, s->memo) &&
	    m->memo[s->memo] == (uint32_t)s->v) {
		m->memo[s->memo] = (uint32_t)canon;
		mp_heap_release(m->heap, s->v);
	}
	*out = canon;
	return MP_OK;
}

/* ---- the memo */

/* Make memo slot INDEX exist. */
static mp_err memo_reserve(struct machine *m, uint64_t index)
{
	/* Every memo put takes an input byte, so no real index exceeds the input
	   length; the arrays were mapped for that many at the start. */
	if (index > m->len)
		return mp_fail(m->diag, MP_E_LIMIT, "pickle: memo index %llu too large at byte %zu",
			       (unsigned long long)index, m->opos);
	return MP_OK;
}

/* Map zeroed memo arrays for LEN + 1 entries. They are address space only
   until touched, so sizing them by the input costs nothing and spares the
   copies of growing arrays that can reach hundreds of megabytes. */
static mp_err memo_map(struct machine *m)
{
	m->memo_bytes = (m->len + 1) * sizeof *m->memo;
	m->pinned_bytes = (m->len / 64 + 1) * sizeof *m->memo_pinned;
	m->memo = mmap(NULL, m->memo_bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	m->memo_pinned = mmap(NULL, m->pinned_bytes, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m->memo == MAP_FAILED || m->memo_pinned == MAP_FAILED)
		return mp_fail(m->diag, MP_E_NOMEM, "pickle: cannot map the memo: out of memory");
	/* Big memos are written densely: huge pages save most of the faults. */
	madvise(m->memo, m->memo_bytes, MADV_HUGEPAGE);
	return MP_OK;
}

static void memo_unmap(struct machine *m)
{
	if (m->memo != NULL && m->memo != MAP_FAILED)
		munmap(m->memo, m->memo_bytes);
	if (m->memo_pinned != NULL && m->memo_pinned != MAP_FAILED)
		munmap(m->memo_pinned, m->pinned_bytes);
}

/* Store the encoded entry ENC at INDEX. */
static mp_err memo_store(struct machine *m, uint64_t index, uint32_t enc)
{
	mp_err err = memo_reserve(m, index);

	if (err != MP_OK)
		return err;
	m->memo[index] = enc;
	set_pinned(m, index, false);
	if (index >= m->memo_len)
		m->memo_len = index + 1;
	return MP_OK;
}

static mp_err memo_put(struct machine *m, uint64_t index)
{
	struct slot *top;
	mp_val v;
	uint32_t enc;
	mp_err err;

	if (m->nstack == 0)
		return corrupt(m, "memo put with an empty stack");
	top = &m->stack[m->nstack - 1];
	v = top->v;
	if (v < MEMO_LAZY_BIT) {
		enc = (uint32_t)v;
	} else {
		if (m->nbig >= (1u << 27))
			return mp_fail(m->diag, MP_E_LIMIT, "pickle: too many memo entries");
		if (grow_array((void **)&m->big, &m->big_cap, m->nbig + 1, sizeof *m->big) != MP_OK)
			return heap_error(m, MP_E_NOMEM);
		m->big[m->nbig] = v;
		enc = (uint32_t)(m->nbig++ << 4) | MEMO_BIG_TAG;
	}
	err = memo_store(m, index, enc);
	if (err != MP_OK)
		return err;
	/* The slot remembers its memo entry only if it is the only one. */
	top->memo = (top->memo == NO_MEMO && mp_heap_is_open(m->heap, v)) ? (uint32_t)index : NO_MEMO;
	if (top->memo == NO_MEMO)
		set_pinned(m, index, mp_heap_is_open(m->heap, v));
	return MP_OK;
}

static mp_err intern_text_at(struct machine *m, size_t at, mp_val *out);

static mp_err memo_get(struct machine *m, uint64_t index)
{
	uint32_t enc;
	mp_val v;
	mp_err err;

	if (index >= m->memo_len || m->memo[index] == MEMO_EMPTY)
		return mp_fail(m->diag, MP_E_CORRUPT, "pickle: memo index %llu not defined at byte %zu",
			       (unsigned long long)index, m->opos);
	enc = m->memo[index];
	if ((enc & MEMO_LAZY_BIT) || (enc & 15u) == MEMO_LAZY_TAG) {
		/* A string the skipper passed over is wanted after all: build it now. */
		size_t at = (enc & MEMO_LAZY_BIT) ? enc & ~MEMO_LAZY_BIT : (size_t)m->lazy[enc >> 4];

		err = intern_text_at(m, at, &v);
		if (err != MP_OK)
			return err;
		if (v < MEMO_LAZY_BIT)
			m->memo[index] = (uint32_t)v;
		return push(m, v);
	}
	v = (enc & 15u) == MEMO_BIG_TAG ? m->big[enc >> 4] : (mp_val)enc;
	v = mp_heap_resolve(m->heap, v);
	if (mp_heap_is_open(m->heap, v))
		set_pinned(m, index, true); /* now referenced from two places */
	return push(m, v);
}

/* ---- atoms */

static mp_err push_text(struct machine *m, size_t lenbytes, bool is_str)
{
	uint64_t n;
	mp_val v;
	mp_err err = operand(m, lenbytes, &n);

	if (err != MP_OK)
		return err;
	if (n > m->len - m->pos)
		return truncated(m);
	if (is_str && !mp_utf8_valid(m->data + m->pos, (size_t)n, true))
		return corrupt(m, "invalid UTF-8 in a string");
	err = is_str ? mp_heap_str(m->heap, (const char *)m->data + m->pos, (size_t)n, &v)
		     : mp_heap_bytes(m->heap, m->data + m->pos, (size_t)n, &v);
	if (err != MP_OK)
		return heap_error(m, err);
	m->pos += (size_t)n;
	return push(m, v);
}

/* Build the str or bytes whose opcode sits at offset AT (validated when skipped). */
static mp_err intern_text_at(struct machine *m, size_t at, mp_val *out)
{
	size_t saved_pos = m->pos, saved_opos = m->opos, lenbytes;
	unsigned char op = m->data[at];
	bool is_str = op == 0x8c || op == 'X' || op == 0x8d;
	uint64_t n;
	mp_err err;

	lenbytes = (op == 0x8c || op == 'C') ? 1 : (op == 'X' || op == 'B') ? 4 : 8;
	m->opos = at;
	m->pos = at + 1;
	err = operand(m, lenbytes, &n);
	if (err == MP_OK && n > m->len - m->pos)
		err = truncated(m);
	if (err == MP_OK && is_str && !mp_utf8_valid(m->data + m->pos, (size_t)n, true))
		err = corrupt(m, "invalid UTF-8 in a string");
	if (err == MP_OK)
		err = is_str ? mp_heap_str(m->heap, (const char *)m->data + m->pos, (size_t)n, out)
			     : mp_heap_bytes(m->heap, m->data + m->pos, (size_t)n, out);
	if (err != MP_OK && err != MP_E_TRUNCATED && err != MP_E_CORRUPT)
		err = heap_error(m, err);
	m->pos = saved_pos;
	m->opos = saved_opos;
	return err;
}

static mp_err push_long(struct machine *m, size_t lenbytes)
{
	uint64_t n;
	mp_val v;
	mp_err err = operand(m, lenbytes, &n);

	if (err != MP_OK)
		return err;
	if (n > m->len - m->pos)
		return truncated(m);
	err = mp_heap_int_le(m->heap, m->data + m->pos, (size_t)n, &v);
	if (err != MP_OK)
		return heap_error(m, err);
	m->pos += (size_t)n;
	return push(m, v);
}

static mp_err push_binint(struct machine *m, size_t n, bool is_signed)
{
	uint64_t u = 0;
	mp_err err = operand(m, n, &u);
	int64_t i = is_signed ? (int64_t)(int32_t)(uint32_t)u : (int64_t)u;

	if (err != MP_OK)
		return err;
	return push(m, mp_val_from_small_int(i));
}

static mp_err push_binfloat(struct machine *m)
{
	uint64_t bits = 0;
	double d;
	mp_val v;
	mp_err err;

	if (!need(m, 8))
		return truncated(m);
	for (int i = 0; i < 8; i++) /* big-endian IEEE 754 */
		bits = (bits << 8) | m->data[m->pos + i];
	m->pos += 8;
	memcpy(&d, &bits, sizeof d);
	err = mp_heap_float(m->heap, d, &v);
	if (err != MP_OK)
		return heap_error(m, err);
	return push(m, v);
}

/* ---- containers */

static mp_err push_empty(struct machine *m, enum mp_vtype type)
{
	mp_val v;
	mp_err err = mp_heap_open(m->heap, type, &v);

	if (err != MP_OK)
		return heap_error(m, err);
	return push(m, v);
}

/* Pop the items above the topmost mark; their first index in *FIRST. */
static mp_err pop_mark(struct machine *m, size_t *first)
{
	if (m->nmarks == 0)
		return corrupt(m, "no mark on the stack");
	*first = m->marks[--m->nmarks];
	return MP_OK;
}

/* Add stack[first..nstack) to the container at stack[first-1] (pairs for a dict). */
static mp_err fill_from(struct machine *m, size_t first, bool pairs)
{
	struct slot *target;
	mp_val a, b;
	mp_err err;

	if (first == 0 || first - 1 < (m->nmarks ? m->marks[m->nmarks - 1] : 0))
		return corrupt(m, "no container below the items");
	target = &m->stack[first - 1];
	if (mp_val_type(target->v) != (pairs ? MP_T_DICT : MP_T_LIST))
		return corrupt(m, pairs ? "SETITEMS target is not a dict" : "APPENDS target is not a list");
	if (pairs && (m->nstack - first) % 2 != 0)
		return corrupt(m, "odd number of items for SETITEMS");
	for (size_t i = first; i < m->nstack; i += pairs ? 2 : 1) {
		err = settle(m, &m->stack[i], &a);
		if (err != MP_OK)
			return err;
		if (pairs) {
			if (!mp_heap_hashable(m->heap, a))
				return corrupt(m, "unhashable dict key");
			err = settle(m, &m->stack[i + 1], &b);
			if (err == MP_OK)
				err = mp_heap_setitem(m->heap, target->v, a, b);
		} else {
			err = mp_heap_append(m->heap, target->v, a);
		}
		if (err != MP_OK)
			return err == MP_E_UNSUPPORTED || err == MP_E_NOMEM || err == MP_E_LIMIT
				       ? heap_error(m, err)
				       : corrupt(m, "bad container operation");
	}
	m->nstack = first;
	return MP_OK;
}

static mp_err op_setitems_or_appends(struct machine *m, bool pairs, bool marked)
{
	size_t first = 0;
	mp_err err;

	if (marked) {
		err = pop_mark(m, &first);
	} else {
		err = need_stack(m, pairs ? 3 : 2);
		first = m->nstack - (pairs ? 2 : 1);
	}
	if (err != MP_OK)
		return err;
	return fill_from(m, first, pairs);
}

/* Build a tuple (or, for LIST/DICT, a list/dict) from stack[first..nstack). */
static mp_err build_from(struct machine *m, size_t first, enum mp_vtype type)
{
	mp_val c, v, canon;
	mp_err err = mp_heap_open(m->heap, type, &c);

	if (err != MP_OK)
		return heap_error(m, err);
	if (type == MP_T_DICT && (m->nstack - first) % 2 != 0)
		return corrupt(m, "odd number of items for DICT");
	for (size_t i = first; i < m->nstack; i++) {
		err = settle(m, &m->stack[i], &v);
		if (err != MP_OK)
			return err;
		if (type == MP_T_DICT) {
			mp_val val;

			if (!mp_heap_hashable(m->heap, v))
				return corrupt(m, "unhashable dict key");
			err = settle(m, &m->stack[++i], &val);
			if (err == MP_OK)
				err = mp_heap_setitem(m->heap, c, v, val);
		} else {
			err = mp_heap_append(m->heap, c, v);
		}
		if (err != MP_OK)
			return heap_error(m, err);
	}
	m->nstack = first;
	if (type == MP_T_TUPLE) {
		err = mp_heap_freeze(m->heap, c, &canon);
		if (err != MP_OK)
			return heap_error(m, err);
		if (canon != c)
			mp_heap_release(m->heap, c);
		c = canon;
	}
	return push(m, c);
}

static mp_err op_tuple_n(struct machine *m, size_t n)
{
	mp_err err = need_stack(m, n);

	if (err != MP_OK)
		return err;
	return build_from(m, m->nstack - n, MP_T_TUPLE);
}

static mp_err op_marked_build(struct machine *m, enum mp_vtype type)
{
	size_t first = 0;
	mp_err err = pop_mark(m, &first);

	if (err != MP_OK)
		return err;
	return build_from(m, first, type);
}

static mp_err op_mark(struct machine *m)
{
	if (m->nmarks == m->marks_cap &&
	    grow_array((void **)&m->marks, &m->marks_cap, m->nmarks + 1, sizeof *m->marks) != MP_OK)
		return heap_error(m, MP_E_NOMEM);
	m->marks[m->nmarks++] = m->nstack;
	return MP_OK;
}

static mp_err op_pop(struct machine *m)
{
	mp_err err = need_stack(m, 1);

	if (err == MP_OK)
		m->nstack--;
	return err;
}

static mp_err op_dup(struct machine *m)
{
	mp_err err = need_stack(m, 1);

	if (err != MP_OK)
		return err;
	/* Two slots now share the value: neither may recycle it. */
	if (m->stack[m->nstack - 1].memo != NO_MEMO)
		set_pinned(m, m->stack[m->nstack - 1].memo, true);
	m->stack[m->nstack - 1].memo = NO_MEMO;
	return push(m, m->stack[m->nstack - 1].v);
}

static mp_err op_frame(struct machine *m)
{
	uint64_t n = 0;
	mp_err err = operand(m, 8, &n);

	if (err != MP_OK)
		return err;
	if (n > m->len - m->pos)
		return truncated(m);
	return MP_OK;
}

static mp_err op_proto(struct machine *m)
{
	uint64_t v = 0;
	mp_err err = operand(m, 1, &v);

	if (err != MP_OK)
		return err;
	if (v > 5)
		return mp_fail(m->diag, MP_E_UNSUPPORTED, "pickle: protocol %u is newer than 5",
			       (unsigned)v);
	return MP_OK;
}

/* ---- the skipper: pass over one value without building it */

/* Whether the value about to be built is stored under a skip key of a dict:
   the top of the stack is that key, in key position above a dict's batch mark
   or right above the dict itself. */
static bool at_skip_key(const struct machine *m)
{
	size_t floor = m->nmarks ? m->marks[m->nmarks - 1] : 0;
	const struct slot *target = NULL;
	mp_val key;
	bool wanted = false;

	if (m->opts == NULL || m->opts->nskip_keys == 0 || m->nstack < 2 || m->nstack - 1 < floor)
		return false;
	key = m->stack[m->nstack - 1].v;
	for (size_t i = 0; i < m->opts->nskip_keys; i++)
		wanted |= key == m->opts->skip_keys[i];
	if (!wanted)
		return false;
	if (floor > 0 && (m->nstack - 1 - floor) % 2 == 0)
		target = &m->stack[floor - 1];
	else if (m->nstack - 2 >= floor)
		target = &m->stack[m->nstack - 2];
	return target != NULL && mp_val_type(target->v) == MP_T_DICT &&
	       mp_heap_is_open(m->heap, target->v);
}

/* Bytes of a length-prefixed payload at P (LB length bytes), or -1 past the end. */
static inline int64_t payload_size(const struct machine *m, size_t p, size_t lb)
{
	size_t rest = m->len - p;
	uint64_t n;

	if (rest < lb)
		return -1;
	n = read_le(m->data + p, lb);
	return n > rest - lb ? -1 : (int64_t)(lb + n);
}

/* Record in the memo, while skipping, what a MEMOIZE/BINPUT at INDEX refers to:
   a string just passed over (lazily, by LAST_STR) or a skipped value. Only the
   next fresh index, as CPython writes them: anything else is not undone as
   simply, so it is left to the machine. */
static inline bool skip_memo(struct machine *m, uint64_t index, size_t last_str)
{
	uint32_t enc = (uint32_t)MP_SKIPPED;

	if (index != m->memo_len || index > m->len)
		return false;
	if (last_str != SIZE_MAX && last_str < MEMO_LAZY_BIT) {
		enc = MEMO_LAZY_BIT | (uint32_t)last_str;
	} else if (last_str != SIZE_MAX) {
		if (m->nlazy >= (1u << 27) ||
		    grow_array((void **)&m->lazy, &m->lazy_cap, m->nlazy + 1, sizeof *m->lazy) != MP_OK)
			return false;
		m->lazy[m->nlazy] = last_str;
		enc = (uint32_t)(m->nlazy++ << 4) | MEMO_LAZY_TAG;
	}
	/* A fresh index: its pinned bit is clear (only the machine sets those,
	   and only below memo_len). */
	m->memo[index] = enc;
	m->memo_len = index + 1;
	return true;
}

/* The skipper's simulated stack: DEPTH values pushed since the skipped value
   began (it is the value at depth 1) and its own stack of mark depths. */
struct skip_state {
	size_t depth;
	size_t nmarks;
};

/* What one simulated opcode tells. */
enum skip_step {
	SKIP_ON,    /* understood; keep going */
	SKIP_ENDS,  /* it belongs to the enclosing structure: the value ended before it */
	SKIP_ABORT, /* not certain: build the value for real instead */
};

static inline enum skip_step skip_mark(struct machine *m, struct skip_state *st)
{
	if (st->nmarks == m->skip_marks_cap &&
	    grow_array((void **)&m->skip_marks, &m->skip_marks_cap, st->nmarks + 1,
		       sizeof *m->skip_marks) != MP_OK)
		return SKIP_ABORT;
	m->skip_marks[st->nmarks++] = st->depth;
	return SKIP_ON;
}

/* Pop to the last mark, leaving KEEP values there (1 for a marked tuple).
   PAIRS: the items must come in pairs. A mark the skipper did not push is the
   enclosing batch closing. */
static inline enum skip_step skip_to_mark(struct machine *m, struct skip_state *st, size_t keep, bool pairs)
{
	size_t mark;

	if (st->nmarks == 0)
		return SKIP_ENDS;
	mark = m->skip_marks[--st->nmarks];
	if (pairs && (st->depth - mark) % 2 != 0)
		return SKIP_ABORT;
	st->depth = mark + keep;
	return SKIP_ON;
}

/* Take N values and leave N_OUT. KEEPS_TARGET: the lowest of the N is a
   container that stays (APPEND, SETITEM, memo puts); otherwise all N are
   consumed, which must not include the skipped value itself. */
static inline enum skip_step skip_consume(const struct machine *m, struct skip_state *st, size_t n,
				   size_t n_out, bool keeps_target)
{
	size_t floor = st->nmarks ? m->skip_marks[st->nmarks - 1] : 0;

	if (st->depth < floor + n)
		return st->nmarks == 0 ? SKIP_ENDS : SKIP_ABORT;
	if (!keeps_target && st->depth - n < 1)
		return SKIP_ABORT;
	st->depth = st->depth - n + n_out;
	return SKIP_ON;
}

static inline enum skip_step skip_put(struct machine *m, struct skip_state *st, uint64_t index,
			       size_t last_str)
{
	enum skip_step r = skip_consume(m, st, 1, 1, true);

	if (r == SKIP_ON && !skip_memo(m, index, last_str))
		return SKIP_ABORT;
	return r;
}

/* Pass over one opcode at *P, updating ST and the memo. */
static inline enum skip_step skip_opcode(struct machine *m, size_t *p, struct skip_state *st,
				  size_t *last_str)
{
	unsigned char op = m->data[*p];
	size_t at = *p + 1, str = SIZE_MAX;
	int64_t size = 0;
	enum skip_step r = SKIP_ON;

	switch (op) {
	case 0x95: size = 8; break; /* FRAME */
	case '(': r = skip_mark(m, st); break;
	case 'e': r = skip_to_mark(m, st, 0, false); break;
	case 'u': r = skip_to_mark(m, st, 0, true); break;
	case 't': r = skip_to_mark(m, st, 1, false); break;
	case '1': r = skip_to_mark(m, st, 0, false); break;
	case 'a': r = skip_consume(m, st, 2, 1, true); break;
	case 's': r = skip_consume(m, st, 3, 1, true); break;
	case 0x85: r = skip_consume(m, st, 1, 1, false); break;
	case 0x86: r = skip_consume(m, st, 2, 1, false); break;
	case 0x87: r = skip_consume(m, st, 3, 1, false); break;
	case '0': r = skip_consume(m, st, 1, 0, false); break;
	case '2': r = skip_consume(m, st, 1, 2, true); break;
	case 0x94: r = skip_put(m, st, m->memo_len, *last_str); break;
	case 'q': case 'r':
		size = op == 'q' ? 1 : 4;
		if ((size_t)size > m->len - at)
			return SKIP_ABORT;
		r = skip_put(m, st, read_le(m->data + at, (size_t)size), *last_str);
		break;
	case '}': case ']': case ')': case 'N': case 0x88: case 0x89: st->depth++; break;
	case 'K': case 'h': size = 1, st->depth++; break;
	case 'M': size = 2, st->depth++; break;
	case 'J': case 'j': size = 4, st->depth++; break;
	case 'G': size = 8, st->depth++; break;
	case 0x8a: size = payload_size(m, at, 1), st->depth++; break;
	case 0x8b: size = payload_size(m, at, 4), st->depth++; break;
	case 0x8c: case 'C': size = payload_size(m, at, 1), str = *p, st->depth++; break;
	case 'X': case 'B': size = payload_size(m, at, 4), str = *p, st->depth++; break;
	case 0x8d: case 0x8e: size = payload_size(m, at, 8), str = *p, st->depth++; break;
	default: return SKIP_ABORT;
	}
	if (r != SKIP_ON)
		return r;
	if (size < 0 || (size_t)size > m->len - at)
		return SKIP_ABORT;
	*last_str = str;
	*p = at + (size_t)size;
	return SKIP_ON;
}

/* Whether OP, right after the value looked complete, still belongs to it: a
   memo put for it, or the MARK of another batch of its items (CPython never
   starts the next key of a dict with a MARK). */
static bool continues_value(unsigned char op)
{
	return op == 0x94 || op == 'q' || op == 'r' || op == '(';
}

/* When the value looks complete and the next opcode pushes a value (a one-item
   list gets its APPEND after the item; or it is the next key), this many
   opcodes may be simulated to find out which. */
#define SKIP_LOOKAHEAD 64

/* Pass over the list whose first opcode is at m->pos; on success set *END to
   the offset after it. The value has ended once an opcode is seen that acts on
   the enclosing structure (its closing SETITEMS, say). On failure, and for the
   look-ahead past the end, the memo is as before. */
static bool skip_value(struct machine *m, size_t *end)
{
	struct skip_state st = { 0, 0 };
	size_t p = m->pos, last_str = SIZE_MAX, ahead = 0;
	size_t start_memo = m->memo_len, start_lazy = m->nlazy;
	size_t done = SIZE_MAX, done_memo = 0, done_lazy = 0;
	bool looking_ahead = false;

	while (p < m->len) {
		enum skip_step r = skip_opcode(m, &p, &st, &last_str);

		if (r == SKIP_ENDS && done != SIZE_MAX) {
			m->memo_len = done_memo;
			m->nlazy = done_lazy;
			*end = done;
			return true;
		}
		if (r != SKIP_ON)
			break;
		if (st.depth == 1 && st.nmarks == 0) {
			done = p;
			done_memo = m->memo_len;
			done_lazy = m->nlazy;
			looking_ahead = p < m->len && !continues_value(m->data[p]);
			ahead = 0;
		} else if (looking_ahead && ++ahead > SKIP_LOOKAHEAD) {
			break;
		}
	}
	m->memo_len = start_memo;
	m->nlazy = start_lazy;
	return false;
}

/* Build an empty container, unless it is the value of a skip key and can be
   passed over whole. */
static mp_err push_container(struct machine *m, enum mp_vtype type)
{
	size_t end;

	/* Only lists are skipped: frames are lists. */
	if (type == MP_T_LIST && at_skip_key(m) && skip_value(m, &end)) {
		m->pos = end;
		return push(m, MP_SKIPPED);
	}
	m->pos = m->opos + 1;
	return push_empty(m, type);
}

/* Execute one opcode; *DONE is set by STOP. */
static mp_err step(struct machine *m, bool *done)
{
	unsigned char op = m->data[m->pos];
	uint64_t u = 0;
	mp_err err;

	m->opos = m->pos++;
	switch (op) {
	case 0x80: return op_proto(m);
	case 0x95: return op_frame(m);
	case '.': *done = true; return MP_OK;
	case '(': return op_mark(m);
	case '0': return op_pop(m);
	case '1': return pop_mark(m, &m->nstack);
	case '2': return op_dup(m);
	case '}': return push_empty(m, MP_T_DICT);
	case ']': m->pos--; return push_container(m, MP_T_LIST);
	case ')': return op_tuple_n(m, 0);
	case 0x85: return op_tuple_n(m, 1);
	case 0x86: return op_tuple_n(m, 2);
	case 0x87: return op_tuple_n(m, 3);
	case 't': return op_marked_build(m, MP_T_TUPLE);
	case 'l': return op_marked_build(m, MP_T_LIST);
	case 'd': return op_marked_build(m, MP_T_DICT);
	case 'a': return op_setitems_or_appends(m, false, false);
	case 'e': return op_setitems_or_appends(m, false, true);
	case 's': return op_setitems_or_appends(m, true, false);
	case 'u': return op_setitems_or_appends(m, true, true);
	case 'J': return push_binint(m, 4, true);
	case 'K': return push_binint(m, 1, false);
	case 'M': return push_binint(m, 2, false);
	case 0x8a: return push_long(m, 1);
	case 0x8b: return push_long(m, 4);
	case 'N': return push(m, MP_NONE);
	case 0x88: return push(m, MP_TRUE);
	case 0x89: return push(m, MP_FALSE);
	case 'G': return push_binfloat(m);
	case 0x8c: return push_text(m, 1, true);
	case 'X': return push_text(m, 4, true);
	case 0x8d: return push_text(m, 8, true);
	case 'C': return push_text(m, 1, false);
	case 'B': return push_text(m, 4, false);
	case 0x8e: return push_text(m, 8, false);
	case 0x94: return memo_put(m, m->memo_len);
	case 'q': err = operand(m, 1, &u); return err ? err : memo_put(m, u);
	case 'r': err = operand(m, 4, &u); return err ? err : memo_put(m, u);
	case 'h': err = operand(m, 1, &u); return err ? err : memo_get(m, u);
	case 'j': err = operand(m, 4, &u); return err ? err : memo_get(m, u);
	default: return refuse_opcode(m, op);
	}
}

static mp_err run(struct machine *m, mp_val *root)
{
	mp_pickle_progress_fn progress = m->opts ? m->opts->progress : NULL;
	void *ctx = m->opts ? m->opts->progress_ctx : NULL;
	size_t next_progress = PROGRESS_STEP;
	bool done = false;
	mp_err err;

	while (!done) {
		if (m->pos >= m->len) {
			m->opos = m->pos;
			return mp_fail(m->diag, MP_E_TRUNCATED,
				       m->len == 0 ? "pickle: empty input"
						   : "pickle: data ends before STOP at byte %zu",
				       m->pos);
		}
		err = step(m, &done);
		if (err != MP_OK)
			return err;
		if (progress != NULL && m->pos >= next_progress) {
			progress(ctx, m->opos);
			next_progress = m->pos + PROGRESS_STEP;
		}
	}
	if (m->nstack == 0 || (m->nmarks && m->marks[m->nmarks - 1] == m->nstack))
		return corrupt(m, "STOP with nothing on the stack");
	err = settle(m, &m->stack[m->nstack - 1], root);
	if (err != MP_OK)
		return err;
	if (m->pos != m->len)
		mp_warn(m->diag, "pickle: %zu bytes after STOP ignored", m->len - m->pos);
	return MP_OK;
}

mp_err mp_pickle_read(mp_heap *heap, const unsigned char *data, size_t len, mp_val *root,
		      const struct mp_pickle_opts *opts, mp_diag *diag)
{
	struct machine m = { .heap = heap, .data = data, .len = len, .opts = opts, .diag = diag };
	mp_err err = memo_map(&m);

	if (err == MP_OK)
		err = run(&m, root);

	free(m.stack);
	free(m.marks);
	memo_unmap(&m);
	free(m.big);
	free(m.lazy);
	free(m.skip_marks);
	return err;
}
