/* py_linetable.c - PyCode_Addr2Line over a line table held as bytes. Both formats describe consecutive address
   ranges of the bytecode, each with a line (or none); the answer is the line of the range holding LASTI, found
   walking forward from the start as CPython's _PyCode_CheckLineNumber does from a fresh range. */
#include <limits.h>
#include <stdint.h>

#include "mp_py_linetable.h"

bool mp_py_linetable_format_of(int major, int minor, enum mp_py_linetable_format *out)
{
	if (major != 3 || minor < 10)
		return false;
	*out = minor == 10 ? MP_PY_LINETABLE_310 : MP_PY_LINETABLE_311;
	return true;
}

/* Beyond any int (such a line comes out as -1), and far from overflowing a long when a delta is added. */
#define LINE_BOUND (1L << 40)

/* The walk over a table: the current range [start, end) and its line. */
struct ranges {
	const unsigned char *p, *limit;
	long start, end;
	long computed_line, line;
};

/* 3.10: a pair (bytes covered, signed line delta); -128 is a range with no line, the line carried on. */
static void advance_310(struct ranges *r)
{
	int delta = (signed char)r->p[1];

	r->start = r->end;
	r->end += r->p[0];
	r->p += 2;
	if (delta == -128) {
		r->line = -1;
	} else {
		r->computed_line += delta;
		r->line = r->computed_line;
	}
}

/* 3.11+: an unsigned varint of 6-bit groups, bit 6 saying another follows. Kept to 32 bits, as CPython's
   unsigned int: a damaged run of continuation bytes cannot grow it further. */
static uint32_t read_varint(const unsigned char **p, const unsigned char *limit)
{
	uint32_t v = 0;
	unsigned shift = 0;

	while (*p < limit) {
		unsigned char b = *(*p)++;

		if (shift < 32)
			v |= (uint32_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	return v;
}

static long read_signed_varint(const unsigned char **p, const unsigned char *limit)
{
	uint32_t v = read_varint(p, limit);

	return (v & 1) ? -(long)(v >> 1) : (long)(v >> 1);
}

/* 3.11+: an entry starts with a byte whose bit 7 is set: bits 3-6 its kind, bits 0-2 its length in code
   units less one. Kinds 13 (no columns) and 14 (long form) carry a signed line delta; 10-12 (one line) a
   delta of 0-2; 15 means no line; the short forms 0-9 stay on the line. The entry's other bytes (columns)
   have bit 7 clear. */
static void advance_311(struct ranges *r)
{
	unsigned char first = r->p[0];
	unsigned kind = (first >> 3) & 15;
	const unsigned char *q = r->p + 1;

	if (kind == 13 || kind == 14) {
		/* a line past any int is no line; kept there, so that no run of deltas overflows */
		r->computed_line += read_signed_varint(&q, r->limit);
		if (r->computed_line > LINE_BOUND)
			r->computed_line = LINE_BOUND;
		else if (r->computed_line < -LINE_BOUND)
			r->computed_line = -LINE_BOUND;
	}
	else if (kind >= 10 && kind <= 12)
		r->computed_line += kind - 10;
	r->line = kind == 15 ? -1 : r->computed_line;
	r->start = r->end;
	r->end += ((first & 7) + 1) * 2; /* code units of two bytes */
	do
		r->p++;
	while (r->p < r->limit && !(*r->p & 128));
}

int mp_py_addr2line(enum mp_py_linetable_format f, const unsigned char *table, size_t len, int firstlineno,
		    int lasti)
{
	struct ranges r = { table, table + len, -1, 0, firstlineno, -1 };

	if (lasti < 0)
		return firstlineno;
	while (r.end <= lasti) {
		if (f == MP_PY_LINETABLE_310) {
			if (r.limit - r.p < 2)
				return -1;
			advance_310(&r);
		} else {
			if (r.p >= r.limit)
				return -1;
			advance_311(&r);
		}
	}
	return r.line >= INT_MIN && r.line <= INT_MAX ? (int)r.line : -1;
}
