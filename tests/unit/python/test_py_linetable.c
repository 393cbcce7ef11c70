/* test_py_linetable.c - mp_py_addr2line on known tables: one CPython 3.11 wrote (and the lines its own
   PyCode_Addr2Line gave), a 3.10 table built by the format's rules, and damaged tables that must stay inside
   their bytes. tests/python/linetable.sh checks whole standard libraries against real interpreters. */
#include <string.h>

#include "mp_py_linetable.h"
#include "unit_main.h"

/* The hex text HEX as bytes in OUT; their count. */
static size_t bytes(const char *hex, unsigned char *out)
{
	size_t n = strlen(hex) / 2;

	for (size_t i = 0; i < n; i++) {
		unsigned v;

		sscanf(hex + 2 * i, "%2x", &v);
		out[i] = (unsigned char)v;
	}
	return n;
}

/* def f(a,\n b):\n x = [i * a\n for i in range(b)]\n if x:\n return (x,\n sum(x))\n return None, compiled by
   CPython 3.11.7 (co_firstlineno 1, 100 bytes of bytecode), and PyCode_Addr2Line at -1, 0, 2, ... 98. */
static void test_cpython_311(void)
{
	static const int want[] = { 1, -1, 1, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3,
				    3, 3, 3, 5, 5, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 6, 6, 8, 8 };
	unsigned char t[128];
	size_t n = bytes("f88000f00401091cf00001091cf00001091cf00001091cdd1217980191289428f00301091cf10001091cf40001091c8"
			 "041e00708f000020518d81011dd1013904191069406f003011018f000010918e00b0f8834",
			 t);

	for (int i = 0, lasti = -1; i < (int)(sizeof want / sizeof want[0]); i++, lasti = lasti < 0 ? 0 : lasti + 2)
		CU_ASSERT_EQUAL(mp_py_addr2line(MP_PY_LINETABLE_311, t, n, 1, lasti), want[i]);
	CU_ASSERT_EQUAL(mp_py_addr2line(MP_PY_LINETABLE_311, t, n, 1, 100), -1); /* past the code */
	CU_ASSERT_EQUAL(mp_py_addr2line(MP_PY_LINETABLE_311, t, n, 1, 1 << 30), -1);
}

/* 3.10: (6 bytes, +1), (4 bytes, no line), (0 bytes, +5), (2 bytes, -3) from line 10. */
static void test_310(void)
{
	const unsigned char t[] = { 6, 1, 4, 0x80, 0, 5, 2, (unsigned char)-3 };

	CU_ASSERT_EQUAL(mp_py_addr2line(MP_PY_LINETABLE_310, t, sizeof t, 10, -1), 10);
	CU_ASSERT_EQUAL(mp_py_addr2line(MP_PY_LINETABLE_310, t, sizeof t, 10, 0), 11);
	CU_ASSERT_EQUAL(mp_py_addr2line(MP_PY_LINETABLE_310, t, sizeof t, 10, 4), 11);
	CU_ASSERT_EQUAL(mp_py_addr2line(MP_PY_LINETABLE_310, t, sizeof t, 10, 6), -1);
	CU_ASSERT_EQUAL(mp_py_addr2line(MP_PY_LINETABLE_310, t, sizeof t, 10, 8), -1);
	/* the empty range moves the line on (11 + 5), the next one back 3 */
	CU_ASSERT_EQUAL(mp_py_addr2line(MP_PY_LINETABLE_310, t, sizeof t, 10, 10), 13);
	CU_ASSERT_EQUAL(mp_py_addr2line(MP_PY_LINETABLE_310, t, sizeof t, 10, 12), -1);
	/* a pair cut short is no range */
	CU_ASSERT_EQUAL(mp_py_addr2line(MP_PY_LINETABLE_310, t, 7, 10, 10), -1);
}

/* Damage: every byte a start of a long entry whose varint never ends; an empty table; a varint cut off by the
   end; huge deltas. Each answer comes from the bytes given (ASan would see a read past them). */
static void test_damage(void)
{
	unsigned char all_ff[64], cut[] = { 0xf0, 0x7f };
	unsigned char *heap = malloc(sizeof all_ff);

	memset(all_ff, 0xff, sizeof all_ff);
	memcpy(heap, all_ff, sizeof all_ff);
	CU_ASSERT_EQUAL(mp_py_addr2line(MP_PY_LINETABLE_311, heap, sizeof all_ff, 1, 0), -1); /* kind 15: no line */
	CU_ASSERT_EQUAL(mp_py_addr2line(MP_PY_LINETABLE_311, heap, sizeof all_ff, 1, 1000), -1);
	/* 3.10: 32 pairs of 255 bytes, a line delta of -1 each: garbage in, CPython's garbage out */
	CU_ASSERT_EQUAL(mp_py_addr2line(MP_PY_LINETABLE_310, heap, sizeof all_ff, 1, 1000), -3);
	CU_ASSERT_EQUAL(mp_py_addr2line(MP_PY_LINETABLE_310, heap, sizeof all_ff, 1, 32 * 255), -1);
	memset(heap, 0xf7, sizeof all_ff); /* long form, each continuation byte a new entry */
	mp_py_addr2line(MP_PY_LINETABLE_311, heap, sizeof all_ff, 1, 40);
	CU_ASSERT_EQUAL(mp_py_addr2line(MP_PY_LINETABLE_311, heap, 0, 1, 0), -1);
	CU_ASSERT_EQUAL(mp_py_addr2line(MP_PY_LINETABLE_310, heap, 0, 1, 0), -1);
	free(heap);
	/* a long entry whose line delta runs into the end: what was read counts, nothing past it */
	heap = malloc(sizeof cut);
	memcpy(heap, cut, sizeof cut);
	mp_py_addr2line(MP_PY_LINETABLE_311, heap, sizeof cut, 1, 0);
	free(heap);
}

static void test_versions(void)
{
	enum mp_py_linetable_format f;

	CU_ASSERT(!mp_py_linetable_format_of(3, 9, &f));
	CU_ASSERT(!mp_py_linetable_format_of(2, 7, &f));
	CU_ASSERT(mp_py_linetable_format_of(3, 10, &f) && f == MP_PY_LINETABLE_310);
	CU_ASSERT(mp_py_linetable_format_of(3, 11, &f) && f == MP_PY_LINETABLE_311);
	CU_ASSERT(mp_py_linetable_format_of(3, 14, &f) && f == MP_PY_LINETABLE_311);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "a table CPython 3.11 wrote", test_cpython_311 },
		{ "the 3.10 format", test_310 },
		{ "damaged tables", test_damage },
		{ "versions", test_versions },
	};

	return UNIT_RUN("py_linetable", tests, NULL, NULL);
}
