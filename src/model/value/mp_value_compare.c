/* mp_value_compare.c - Python semantics over heap values: hashability and equality. */
#include "mp_value.h"

#include <stdlib.h>
#include <string.h>

#include "mp_value_int.h"

/* ---- hashability */

bool mp_heap_tuple_hashable(const mp_heap *heap, mp_val v)
{
	mp_val small[64], *todo = small, *big;
	size_t n = 0, cap = 64;
	bool ok = true;

	v = mp_heap_resolve(heap, v);
	if (mp_val_type(v) != MP_T_TUPLE) /* the common case: an atom */
		return !mp_val_is_container(v);
	todo[n++] = v;
	while (ok && n > 0) {
		mp_val t = todo[--n];
		const mp_val *items = mp_heap_items(heap, t);
		size_t len = mp_heap_len(heap, t);

		if (n + len > cap) {
			big = realloc(todo == small ? NULL : todo, (n + len) * 2 * sizeof *big);
			if (big == NULL) {
				ok = false; /* cannot tell: refuse rather than write a bad pickle */
				break;
			}
			if (todo == small)
				memcpy(big, small, n * sizeof *big);
			todo = big;
			cap = (n + len) * 2;
		}
		for (size_t i = 0; i < len && ok; i++) {
			mp_val x = mp_heap_resolve(heap, items[i]);

			if (mp_val_type(x) == MP_T_TUPLE)
				todo[n++] = x;
			else
				ok = !mp_val_is_container(x);
		}
	}
	if (todo != small)
		free(todo);
	return ok;
}

/* ---- equality */

static bool int_equal_float(const mp_heap *heap, mp_val i, double d)
{
	int64_t v;

	if (!mp_heap_get_i64(heap, i, &v))
		return false; /* ints beyond int64 never equal a snapshot's floats */
	return (double)v == d && (int64_t)d == v;
}

static bool numeric_equal(const mp_heap *heap, mp_val a, mp_val b)
{
	enum mp_vtype ta = mp_val_type(a), tb = mp_val_type(b);
	int64_t ia = 0, ib = 0;

	if (ta == MP_T_BOOL)
		a = mp_val_from_small_int((int64_t)(a >> 4)), ta = MP_T_INT;
	if (tb == MP_T_BOOL)
		b = mp_val_from_small_int((int64_t)(b >> 4)), tb = MP_T_INT;
	if (ta == MP_T_FLOAT && tb == MP_T_FLOAT)
		return mp_heap_float_value(heap, a) == mp_heap_float_value(heap, b);
	if (ta == MP_T_FLOAT)
		return int_equal_float(heap, b, mp_heap_float_value(heap, a));
	if (tb == MP_T_FLOAT)
		return int_equal_float(heap, a, mp_heap_float_value(heap, b));
	if (mp_heap_get_i64(heap, a, &ia) && mp_heap_get_i64(heap, b, &ib))
		return ia == ib;
	return a == b; /* two big ints: interned */
}

static bool is_numeric(enum mp_vtype t)
{
	return t == MP_T_BOOL || t == MP_T_INT || t == MP_T_BIGINT || t == MP_T_FLOAT;
}

static bool dict_equal(const mp_heap *heap, mp_val a, mp_val b, int depth);

static bool equal_depth(const mp_heap *heap, mp_val a, mp_val b, int depth)
{
	enum mp_vtype ta, tb;
	size_t n;
	const mp_val *ia, *ib;

	a = mp_heap_resolve(heap, a);
	b = mp_heap_resolve(heap, b);
	if (a == b)
		return true;
	if (depth > 10000)
		return false;
	ta = mp_val_type(a);
	tb = mp_val_type(b);
	if (is_numeric(ta) && is_numeric(tb))
		return numeric_equal(heap, a, b);
	if (ta != tb)
		return false;
	if (ta == MP_T_DICT)
		return dict_equal(heap, a, b, depth);
	if (ta != MP_T_LIST && ta != MP_T_TUPLE)
		return false; /* interned atoms with different handles differ */
	n = mp_heap_len(heap, a);
	if (n != mp_heap_len(heap, b))
		return false;
	ia = mp_heap_items(heap, a);
	ib = mp_heap_items(heap, b);
	for (size_t i = 0; i < n; i++)
		if (!equal_depth(heap, ia[i], ib[i], depth + 1))
			return false;
	return true;
}

static bool dict_equal(const mp_heap *heap, mp_val a, mp_val b, int depth)
{
	size_t n = mp_heap_len(heap, a);
	const mp_val *ia = mp_heap_items(heap, a);

	if (n != mp_heap_len(heap, b))
		return false;
	for (size_t i = 0; i < n; i++) {
		mp_val vb = mp_heap_dict_get(heap, b, ia[2 * i]);

		if (vb == MP_ABSENT || !equal_depth(heap, ia[2 * i + 1], vb, depth + 1))
			return false;
	}
	return true;
}

bool mp_heap_equal(const mp_heap *heap, mp_val a, mp_val b)
{
	return equal_depth(heap, a, b, 0);
}
