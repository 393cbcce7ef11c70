/* py_seq.c - the items of lists and tuples: a list points to its array, a tuple holds its own; the count is
   bounded before anything is allocated. */
#include <stdint.h>
#include <stdlib.h>

#include "py_heap_int.h"

mp_err mp_py_seq_items(mp_py_heap *h, uint64_t obj, uint64_t **items, size_t *n, size_t max, mp_diag *diag)
{
	bool is_list = false;
	uint64_t size, at;
	mp_err err;

	*items = NULL;
	*n = 0;
	if (py_heap_is_kind(h, obj, h->syms.tuple, MP_PY_TPFLAGS_TUPLE_SUBCLASS, NULL))
		at = obj + h->l.tuple_items;
	else if ((is_list = py_heap_is_kind(h, obj, h->syms.list, MP_PY_TPFLAGS_LIST_SUBCLASS, NULL)))
		at = 0;
	else
		return mp_fail(diag, MP_E_TYPE, "0x%llx is neither a list nor a tuple", (unsigned long long)obj);
	if ((err = mp_target_read_u64(h->t, obj + (is_list ? h->l.list_size : h->l.tuple_size), &size, diag)) != MP_OK)
		return err;
	if ((int64_t)size < 0)
		return mp_fail(diag, MP_E_CORRUPT, "%s at 0x%llx: %lld items", is_list ? "list" : "tuple",
			       (unsigned long long)obj, (long long)size);
	if (size > max || size > SIZE_MAX / sizeof **items)
		return mp_fail(diag, MP_E_LIMIT, "%s at 0x%llx: %llu items, more than %zu", is_list ? "list" : "tuple",
			       (unsigned long long)obj, (unsigned long long)size, max);
	if (size == 0)
		return MP_OK;
	if (is_list && (err = mp_target_read_u64(h->t, obj + h->l.list_items, &at, diag)) != MP_OK)
		return err;
	/* a large count is believed only when that much memory is there to read */
	if (size > (1u << 16) && !mp_target_readable(h->t, at, (size_t)size * sizeof **items))
		return mp_fail(diag, MP_E_CORRUPT, "%s at 0x%llx: its %llu items are not all readable",
			       is_list ? "list" : "tuple", (unsigned long long)obj, (unsigned long long)size);
	if ((*items = malloc((size_t)size * sizeof **items)) == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	if ((err = mp_target_read(h->t, at, *items, (size_t)size * sizeof **items, diag)) != MP_OK) {
		free(*items);
		*items = NULL;
		return err;
	}
	*n = (size_t)size;
	return MP_OK;
}
