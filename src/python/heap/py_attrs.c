/* py_attrs.c - an object's instance attributes, wherever its version keeps its __dict__: a dict pointer at
   tp_dictoffset (3.10, and types that do not manage their dict), or for types with a managed dict the words
   before the object (3.11: values or dict; 3.12: one tagged word for either; 3.13 on: the dict) and, until a
   dict is made, the values beside the object, named by the type's cached shared keys. */
#include <stdlib.h>
#include <string.h>

#include "py_heap_int.h"

enum {
	OB_SIZE = 16,          /* PyVarObject's ob_size */
	VALUES_311_AT = 32,    /* 3.11: the values pointer, before the object */
	DICT_311_AT = 24,      /* 3.11 on: the dict pointer (3.12: or the values, tagged), before the object */
};

/* Where the dict pointer of an object of TY at OBJ is (tp_dictoffset), in *AT; 0 when it has none. */
static mp_err dict_slot(mp_py_heap *h, const mp_py_type *ty, uint64_t obj, uint64_t *at, mp_diag *diag)
{
	uint64_t size;
	int64_t n;
	mp_err err;

	*at = 0;
	if (ty->dictoffset == 0)
		return MP_OK;
	if (ty->dictoffset > 0) {
		*at = obj + (uint64_t)ty->dictoffset;
		return MP_OK;
	}
	/* negative: counted from the end of a variable-size object, whose size is rounded up to a word */
	if ((err = mp_target_read_u64(h->t, obj + OB_SIZE, (uint64_t *)&n, diag)) != MP_OK)
		return err;
	if (n < -(1ll << 40) || n > (1ll << 40) || ty->basicsize < 0 || ty->itemsize < 0 || ty->itemsize > (1 << 20))
		return mp_fail(diag, MP_E_CORRUPT, "object at 0x%llx: size %lld of %lld-byte items",
			       (unsigned long long)obj, (long long)n, (long long)ty->itemsize);
	size = (uint64_t)ty->basicsize + (uint64_t)(n < 0 ? -n : n) * (uint64_t)ty->itemsize;
	size = (size + 7) & ~(uint64_t)7;
	*at = obj + size + (uint64_t)ty->dictoffset;
	return MP_OK;
}

/* The shared keys of heap type TY (ht_cached_keys). */
static mp_err cached_keys(mp_py_heap *h, const mp_py_type *ty, uint64_t *keys, mp_diag *diag)
{
	mp_err err;

	if (!(ty->flags & MP_PY_TPFLAGS_HEAPTYPE))
		return mp_fail(diag, MP_E_CORRUPT, "type %s keeps values but is no heap type", ty->name);
	if ((err = mp_target_read_u64(h->t, ty->addr + h->l.ht_cached_keys, keys, diag)) != MP_OK)
		return err;
	if (*keys == 0)
		return mp_fail(diag, MP_E_CORRUPT, "type %s keeps values but has no shared keys", ty->name);
	return MP_OK;
}

/* Call CB with each raw key and value of the __dict__ of the object at OBJ. */
static mp_err raw_each(mp_py_heap *h, uint64_t obj, bool (*cb)(void *ctx, uint64_t key, uint64_t value), void *ctx,
		       mp_diag *diag)
{
	const mp_py_type *ty;
	uint64_t type, at, dict = 0, values = 0, keys;
	uint8_t valid;
	mp_err err;

	if ((err = mp_py_object_type(h, obj, &type, diag)) != MP_OK)
		return err;
	if ((ty = mp_py_heap_type(h, type, diag)) == NULL)
		return mp_fail(diag, MP_E_TYPE, "object at 0x%llx: its type is not readable", (unsigned long long)obj);
	if (h->l.attrs == PY_ATTRS_310 || !(ty->flags & MP_PY_TPFLAGS_MANAGED_DICT)) {
		if ((err = dict_slot(h, ty, obj, &at, diag)) != MP_OK ||
		    (at != 0 && (err = mp_target_read_u64(h->t, at, &dict, diag)) != MP_OK))
			return err;
	} else if (h->l.attrs == PY_ATTRS_311) {
		if ((err = mp_target_read_u64(h->t, obj - VALUES_311_AT, &values, diag)) != MP_OK ||
		    (values == 0 && (err = mp_target_read_u64(h->t, obj - DICT_311_AT, &dict, diag)) != MP_OK))
			return err;
	} else if (h->l.attrs == PY_ATTRS_312) {
		if ((err = mp_target_read_u64(h->t, obj - DICT_311_AT, &dict, diag)) != MP_OK)
			return err;
		/* values are tagged: their address less one */
		if (dict & 1) {
			values = dict + 1;
			dict = 0;
		}
	} else {
		if ((err = mp_target_read_u64(h->t, obj - DICT_311_AT, &dict, diag)) != MP_OK)
			return err;
		/* no dict yet: the values after the object, while they are valid (header byte 3) */
		if (dict == 0 && (ty->flags & MP_PY_TPFLAGS_INLINE_VALUES)) {
			if (ty->basicsize <= 0 || ty->basicsize > (1 << 20))
				return mp_fail(diag, MP_E_CORRUPT, "type %s: basic size %lld", ty->name,
					       (long long)ty->basicsize);
			values = obj + (uint64_t)ty->basicsize;
			if ((err = mp_target_read_u8(h->t, values + 3, &valid, diag)) != MP_OK)
				return err;
			if (!valid)
				values = 0;
		}
	}
	if (values != 0) {
		if ((err = cached_keys(h, ty, &keys, diag)) != MP_OK)
			return err;
		return py_heap_split_each(h, keys, values, cb, ctx, diag);
	}
	return dict != 0 ? mp_py_dict_each(h, dict, cb, ctx, diag) : MP_OK;
}

/* mp_py_attrs_each's bridge: each str key decoded for the caller. */
typedef struct named {
	mp_py_heap *h;
	bool (*cb)(void *ctx, const char *name, uint64_t value);
	void *ctx;
} named;

static bool named_cb(void *ctx, uint64_t key, uint64_t value)
{
	named *n = ctx;
	char *name;
	bool more;

	if (mp_py_str(n->h, key, &name, NULL) != MP_OK)
		return true;
	more = n->cb(n->ctx, name, value);
	free(name);
	return more;
}

mp_err mp_py_attrs_each(mp_py_heap *h, uint64_t obj, bool (*cb)(void *ctx, const char *name, uint64_t value),
			void *ctx, mp_diag *diag)
{
	named n = { h, cb, ctx };

	return raw_each(h, obj, named_cb, &n, diag);
}

/* mp_py_attr's search. */
typedef struct find_attr {
	mp_py_heap *h;
	const char *name;
	uint64_t value;
	bool found;
} find_attr;

static bool find_attr_cb(void *ctx, uint64_t key, uint64_t value)
{
	find_attr *f = ctx;

	if (!py_heap_str_equals(f->h, key, f->name))
		return true;
	f->value = value;
	f->found = true;
	return false;
}

mp_err mp_py_attr(mp_py_heap *h, uint64_t obj, const char *name, uint64_t *value, mp_diag *diag)
{
	find_attr f = { h, name, 0, false };
	mp_err err;

	*value = 0;
	if ((err = raw_each(h, obj, find_attr_cb, &f, diag)) != MP_OK)
		return err;
	if (!f.found)
		return MP_E_NOTFOUND;
	*value = f.value;
	return MP_OK;
}
