/* py_types.c - type objects: read once each (name, module, flags, sizes, MRO) and cached by address, the
   refusals too, so that a walk over millions of objects reads each of their few hundred types once. A type
   is believed only when its own type is `type` or a metaclass derived from it. */
#include <stdlib.h>
#include <string.h>

#include "py_heap_int.h"

enum {
	OB_TYPE = 8,
	MAX_TYPE_NAME = 1024, /* tp_name's bytes */
	MAX_DEPTH = 6,        /* types read while reading a type (metaclasses, __module__'s str type) */
};

/* The slot of ADDR in H's table: where it is, or the empty one where it would go. */
static py_type_slot *slot_of(mp_py_heap *h, uint64_t addr)
{
	size_t mask = h->captypes - 1, i = (size_t)((addr >> 4) * 0x9e3779b97f4a7c15ull >> 20) & mask;

	while (h->types[i].addr != 0 && h->types[i].addr != addr)
		i = (i + 1) & mask;
	return &h->types[i];
}

/* Keep TY (NULL: a refusal) as what ADDR holds. False when out of memory (then TY is not kept). */
static bool remember(mp_py_heap *h, uint64_t addr, mp_py_type *ty)
{
	if (2 * (h->ntypes + 1) > h->captypes) {
		size_t cap = h->captypes ? 2 * h->captypes : 256;
		py_type_slot *old = h->types, *fresh = calloc(cap, sizeof *fresh);
		size_t oldcap = h->captypes;

		if (fresh == NULL)
			return false;
		h->types = fresh;
		h->captypes = cap;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].addr != 0)
				*slot_of(h, old[i].addr) = old[i];
		free(old);
	}
	*slot_of(h, addr) = (py_type_slot){ addr, ty };
	h->ntypes++;
	return true;
}

static void type_free(mp_py_type *ty)
{
	if (ty == NULL)
		return;
	free(ty->name);
	free(ty->module);
	free(ty->mro);
	free(ty);
}

static uint64_t word(const unsigned char *buf, uint32_t at)
{
	uint64_t v;

	memcpy(&v, buf + at, sizeof v);
	return v;
}

/* Whether META (the ob_type of a type) is `type` or a class derived from it. */
static bool is_metatype(mp_py_heap *h, uint64_t meta)
{
	const mp_py_type *m;

	if (meta == h->syms.type)
		return true;
	if ((m = mp_py_heap_type(h, meta, NULL)) == NULL)
		return false;
	for (size_t i = 0; i < m->nmro; i++)
		if (m->mro[i] == h->syms.type)
			return true;
	return false;
}

/* TY's MRO: the tuple at tp_mro (MRO), else the tp_base chain from the type at ADDR (BASE its tp_base). */
static mp_err read_mro(mp_py_heap *h, mp_py_type *ty, uint64_t mro, uint64_t base, mp_diag *diag)
{
	uint64_t *items = NULL;
	size_t n = 0;

	if ((ty->mro = calloc(MP_PY_MAX_MRO, sizeof *ty->mro)) == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	if (mro != 0 && mp_py_seq_items(h, mro, &items, &n, MP_PY_MAX_MRO, NULL) == MP_OK && n > 0) {
		/* the type itself comes first (a metaclass's mro() may say otherwise) */
		if (items[0] != ty->addr)
			ty->mro[ty->nmro++] = ty->addr;
		for (size_t i = 0; i < n && ty->nmro < MP_PY_MAX_MRO; i++)
			ty->mro[ty->nmro++] = items[i];
		free(items);
		return MP_OK;
	}
	free(items);
	ty->mro[ty->nmro++] = ty->addr;
	while (base != 0 && ty->nmro < MP_PY_MAX_MRO) {
		ty->mro[ty->nmro++] = base;
		if (mp_target_read_u64(h->t, base + h->l.tp_base, &base, NULL) != MP_OK)
			break;
	}
	return MP_OK;
}

/* The module of heap type TY (its dict at DICT): __module__, when a str. */
static char *heap_module(mp_py_heap *h, uint64_t dict)
{
	uint64_t v;
	char *s;

	if (dict == 0 || mp_py_dict_get_str(h, dict, "__module__", &v, NULL) != MP_OK ||
	    mp_py_str(h, v, &s, NULL) != MP_OK)
		return NULL;
	return s;
}

/* Read the type object at ADDR into *OUT (malloc'd). */
static mp_err read_type(mp_py_heap *h, uint64_t addr, mp_py_type **out, mp_diag *diag)
{
	unsigned char buf[1024];
	const py_heap_layout *l = &h->l;
	mp_py_type *ty;
	char *tp_name, *dot;
	size_t len;
	mp_err err;

	*out = NULL;
	if (l->type_size > sizeof buf)
		return mp_fail(diag, MP_E_UNSUPPORTED, "type objects of %u bytes", l->type_size);
	if ((err = mp_target_read(h->t, addr, buf, l->type_size, diag)) != MP_OK)
		return err;
	if (!is_metatype(h, word(buf, OB_TYPE)))
		return mp_fail(diag, MP_E_TYPE, "0x%llx is not a type object (its type 0x%llx is no metaclass)",
			       (unsigned long long)addr, (unsigned long long)word(buf, OB_TYPE));
	if ((err = mp_target_read_cstr(h->t, word(buf, l->tp_name), MAX_TYPE_NAME, &tp_name, &len, diag)) != MP_OK)
		return err;
	if (len == 0) {
		free(tp_name);
		return mp_fail(diag, MP_E_CORRUPT, "type object 0x%llx has an empty name", (unsigned long long)addr);
	}
	if ((ty = calloc(1, sizeof *ty)) == NULL) {
		free(tp_name);
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	}
	ty->addr = addr;
	ty->flags = word(buf, l->tp_flags);
	ty->basicsize = (int64_t)word(buf, l->tp_basicsize);
	ty->itemsize = (int64_t)word(buf, l->tp_itemsize);
	ty->dictoffset = (int64_t)word(buf, l->tp_dictoffset);
	dot = strrchr(tp_name, '.');
	ty->name = strdup(dot != NULL ? dot + 1 : tp_name);
	if (dot != NULL)
		*dot = '\0';
	if (ty->flags & MP_PY_TPFLAGS_HEAPTYPE)
		ty->module = heap_module(h, word(buf, l->tp_dict));
	if (ty->module == NULL)
		ty->module = strdup(dot != NULL ? tp_name : "builtins");
	free(tp_name);
	if (ty->name == NULL || ty->module == NULL) {
		type_free(ty);
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	}
	if ((err = read_mro(h, ty, word(buf, l->tp_mro), word(buf, l->tp_base), diag)) != MP_OK) {
		type_free(ty);
		return err;
	}
	*out = ty;
	return MP_OK;
}

const mp_py_type *mp_py_heap_type(mp_py_heap *h, uint64_t type, mp_diag *diag)
{
	mp_py_type *ty = NULL;
	py_type_slot *s;

	if (type == 0) {
		mp_fail(diag, MP_E_TYPE, "a null type pointer");
		return NULL;
	}
	if (h->captypes > 0 && (s = slot_of(h, type))->addr == type)
		return s->type;
	/* a chain of metaclasses, or types whose dicts hold objects of types being read, ends here */
	if (h->type_depth >= MAX_DEPTH) {
		mp_fail(diag, MP_E_CYCLE, "type 0x%llx: types nested too deep", (unsigned long long)type);
		return NULL;
	}
	h->type_depth++;
	if (read_type(h, type, &ty, diag) != MP_OK)
		ty = NULL;
	h->type_depth--;
	/* a type read inside (a metaclass, say) may have read this one meanwhile */
	if (h->captypes > 0 && (s = slot_of(h, type))->addr == type) {
		type_free(ty);
		return s->type;
	}
	if (!remember(h, type, ty)) {
		type_free(ty);
		mp_fail(diag, MP_E_NOMEM, "out of memory");
		return NULL;
	}
	return ty;
}

bool mp_py_type_is(mp_py_heap *h, const mp_py_type *ty, const char *module, const char *name)
{
	/* the cache's slots may move while the MRO's types are read, its types do not */
	for (size_t i = 0; i < ty->nmro; i++) {
		const mp_py_type *c = ty->mro[i] == ty->addr ? ty : mp_py_heap_type(h, ty->mro[i], NULL);

		if (c != NULL && strcmp(c->name, name) == 0 && strcmp(c->module, module) == 0)
			return true;
	}
	return false;
}
