/* test_value.c - the value heap: interning, containers, hash-consing, equality. */
#include <string.h>

#include "mp_value.h"
#include "unit_main.h"

static mp_heap *heap;

#define str(s) unit_str(heap, s)

static mp_val small(int64_t i)
{
	return mp_val_from_small_int(i);
}

static void test_interning(void)
{
	mp_val a = str("filename"), b = str("filename"), c = str("name");
	size_t len;

	CU_ASSERT_EQUAL(a, b);
	CU_ASSERT_NOT_EQUAL(a, c);
	CU_ASSERT_EQUAL(a, mp_heap_keys(heap)->filename);
	CU_ASSERT_STRING_EQUAL(mp_heap_atom(heap, c, &len), "name");
	CU_ASSERT_EQUAL(len, 4);
}

static void test_ints(void)
{
	static const unsigned char minus_one_long[] = { 0xff, 0xff, 0xff };
	static const unsigned char big[] = { 0, 0, 0, 0, 0, 0, 0, 0, 1 }; /* 2**64 */
	mp_val v, w;
	int64_t i;

	CU_ASSERT(mp_heap_int(heap, INT64_MAX, &v) == MP_OK);
	CU_ASSERT_EQUAL(mp_val_type(v), MP_T_BIGINT);
	CU_ASSERT(mp_heap_get_i64(heap, v, &i) && i == INT64_MAX);
	CU_ASSERT(mp_heap_int(heap, -5, &v) == MP_OK);
	CU_ASSERT(mp_val_type(v) == MP_T_INT && mp_val_small_int(v) == -5);
	/* redundant sign bytes are trimmed so equal ints are equal handles */
	CU_ASSERT(mp_heap_int_le(heap, minus_one_long, 3, &w) == MP_OK);
	CU_ASSERT_EQUAL(w, small(-1));
	CU_ASSERT(mp_heap_int_le(heap, big, sizeof big, &v) == MP_OK);
	CU_ASSERT_FALSE(mp_heap_get_i64(heap, v, &i));
	CU_ASSERT(mp_heap_int_le(heap, big, sizeof big, &w) == MP_OK);
	CU_ASSERT_EQUAL(v, w);
}

static mp_val frame(const char *file, int line, const char *name)
{
	mp_val items[6] = { str("filename"), str(file), str("line"), small(line), str("name"), str(name) };
	mp_val d;

	CU_ASSERT_FATAL(mp_heap_make(heap, MP_T_DICT, items, 3, &d) == MP_OK);
	return d;
}

static void test_hashconsing(void)
{
	mp_val a = frame("a.py", 1, "f"), b = frame("a.py", 1, "f"), c = frame("a.py", 2, "f");
	mp_val list, open;

	CU_ASSERT_EQUAL(a, b);
	CU_ASSERT_NOT_EQUAL(a, c);
	/* an open container is not interned until it is frozen */
	CU_ASSERT(mp_heap_open(heap, MP_T_LIST, &open) == MP_OK);
	CU_ASSERT(mp_heap_append(heap, open, a) == MP_OK);
	CU_ASSERT(mp_heap_is_open(heap, open));
	CU_ASSERT(mp_heap_freeze(heap, open, &list) == MP_OK);
	CU_ASSERT_FALSE(mp_heap_is_open(heap, list));
	/* frozen containers refuse changes */
	CU_ASSERT_EQUAL(mp_heap_append(heap, list, a), MP_E_UNSUPPORTED);
	CU_ASSERT_EQUAL(mp_heap_len(heap, list), 1);
}

static void test_dict_repeats(void)
{
	/* Python: {'a': 1, 'b': 2, 'a': 3} == {'a': 3, 'b': 2}, 'a' stays first */
	mp_val items[6] = { str("a"), small(1), str("b"), small(2), str("a"), small(3) };
	mp_val d;

	CU_ASSERT_FATAL(mp_heap_make(heap, MP_T_DICT, items, 3, &d) == MP_OK);
	CU_ASSERT_EQUAL(mp_heap_len(heap, d), 2);
	CU_ASSERT_EQUAL(mp_heap_items(heap, d)[0], str("a"));
	CU_ASSERT_EQUAL(mp_heap_dict_get(heap, d, str("a")), small(3));
}

static void test_equality(void)
{
	mp_val f, one_f, l1, l2, t;
	mp_val items[2];

	CU_ASSERT(mp_heap_float(heap, 1.0, &f) == MP_OK);
	CU_ASSERT(mp_heap_equal(heap, f, small(1)));     /* 1 == 1.0 */
	CU_ASSERT(mp_heap_equal(heap, MP_TRUE, small(1))); /* True == 1 */
	CU_ASSERT(mp_heap_float(heap, 1.5, &one_f) == MP_OK);
	CU_ASSERT_FALSE(mp_heap_equal(heap, one_f, small(1)));
	items[0] = small(1);
	items[1] = str("x");
	CU_ASSERT(mp_heap_make(heap, MP_T_LIST, items, 2, &l1) == MP_OK);
	items[0] = f;
	CU_ASSERT(mp_heap_make(heap, MP_T_LIST, items, 2, &l2) == MP_OK);
	CU_ASSERT(mp_heap_equal(heap, l1, l2));
	CU_ASSERT(mp_heap_make(heap, MP_T_TUPLE, items, 2, &t) == MP_OK);
	CU_ASSERT_FALSE(mp_heap_equal(heap, l1, t)); /* [1, 'x'] != (1, 'x') */
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "strings are interned", test_interning },
		{ "ints small and big", test_ints },
		{ "containers are hash-consed when frozen", test_hashconsing },
		{ "repeated dict keys", test_dict_repeats },
		{ "Python equality", test_equality },
	};
	int status;

	heap = mp_heap_new();
	if (heap == NULL)
		return 2;
	status = UNIT_RUN("value", tests, NULL, NULL);
	mp_heap_free(heap);
	return status;
}
