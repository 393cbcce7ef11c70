/* py_heap.c - the heap reader's opening (its layout, the interpreter's own objects found by their symbols)
   and the readers of single values: an object's type, None, str, int, float. */
#include <stdlib.h>
#include <string.h>

#include "mp_elf.h"
#include "py_heap_int.h"

enum {
	OB_TYPE = 8,       /* PyObject: ob_refcnt, ob_type */
	STR_LENGTH = 16,   /* PyASCIIObject: length, hash, state */
	STR_STATE = 32,
	DIGIT_BITS = 30,   /* an int's digits (64-bit builds) */
};

/* The interpreter's own objects, by their names in the file PY names (at its load bias). */
static void find_syms(mp_target *t, const mp_py_interp *py, mp_py_heap_syms *out)
{
	static const struct {
		const char *name;
		size_t at;
	} names[] = {
		{ "PyType_Type", offsetof(mp_py_heap_syms, type) },
		{ "PyBaseObject_Type", offsetof(mp_py_heap_syms, object) },
		{ "PyUnicode_Type", offsetof(mp_py_heap_syms, str) },
		{ "PyLong_Type", offsetof(mp_py_heap_syms, long_) },
		{ "PyFloat_Type", offsetof(mp_py_heap_syms, float_) },
		{ "PyDict_Type", offsetof(mp_py_heap_syms, dict) },
		{ "PyList_Type", offsetof(mp_py_heap_syms, list) },
		{ "PyTuple_Type", offsetof(mp_py_heap_syms, tuple) },
		{ "PyModule_Type", offsetof(mp_py_heap_syms, module) },
		{ "_Py_NoneStruct", offsetof(mp_py_heap_syms, none) },
	};
	const mp_mapping *maps;
	size_t n = mp_target_mappings(t, &maps);

	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < n; i++) {
		mp_elf *e;

		if (maps[i].file_offset != 0 || maps[i].path == NULL || maps[i].local_path == NULL ||
		    strcmp(maps[i].path, py->path) != 0 || mp_elf_open(maps[i].local_path, &e, NULL) != MP_OK)
			continue;
		for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
			mp_elf_sym sym;

			if (mp_elf_symbol(e, names[k].name, MP_ELF_DYNSYM, &sym, NULL) == MP_OK && sym.defined)
				*(uint64_t *)((char *)out + names[k].at) = py->bias + sym.value;
		}
		mp_elf_close(e);
		return;
	}
}

mp_err mp_py_heap_open(mp_target *t, const mp_py_interp *py, const mp_py_runtime *rt, const mp_py_heap_opts *opts,
		       mp_py_heap **out, mp_diag *diag)
{
	const py_heap_layout *l = py->major == 3 ? py_heap_layout_for(py->minor) : NULL;
	mp_py_heap *h;

	*out = NULL;
	if (l == NULL || py->layout == NULL)
		return mp_fail(diag, MP_E_UNSUPPORTED, "%s: memprof cannot read the heap of CPython %d.%d (3.10-3.14)",
			       py->path, py->major, py->minor);
	if (rt->free_threaded)
		return mp_fail(diag, MP_E_UNSUPPORTED, "%s: a free-threaded CPython, whose heap memprof cannot read",
			       py->path);
	if ((h = calloc(1, sizeof *h)) == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	h->t = t;
	h->py = py;
	h->rt = rt;
	h->l = *l;
	py_heap_layout_debug(&h->l, rt, diag);
	h->max_objects = opts != NULL && opts->max_objects != 0 ? opts->max_objects : MP_PY_HEAP_MAX_OBJECTS;
	if (opts != NULL && opts->syms != NULL)
		h->syms = *opts->syms;
	else
		find_syms(t, py, &h->syms);
	if (h->syms.type == 0) {
		free(h);
		return mp_fail(diag, MP_E_NOTFOUND, "%s: PyType_Type not found (the file is not at hand?)", py->path);
	}
	*out = h;
	return MP_OK;
}

void mp_py_heap_close(mp_py_heap *h)
{
	if (h == NULL)
		return;
	for (size_t i = 0; i < h->captypes; i++)
		if (h->types[i].type != NULL) {
			free(h->types[i].type->name);
			free(h->types[i].type->module);
			free(h->types[i].type->mro);
			free(h->types[i].type);
		}
	free(h->types);
	free(h);
}

mp_err mp_py_object_type(mp_py_heap *h, uint64_t obj, uint64_t *type, mp_diag *diag)
{
	return mp_target_read_u64(h->t, obj + OB_TYPE, type, diag);
}

bool mp_py_is_none(const mp_py_heap *h, uint64_t obj)
{
	return h->syms.none != 0 && obj == h->syms.none;
}

bool py_heap_is_kind(mp_py_heap *h, uint64_t obj, uint64_t exact, uint64_t flag, mp_diag *diag)
{
	const mp_py_type *ty;
	uint64_t type;

	if (mp_py_object_type(h, obj, &type, diag) != MP_OK)
		return false;
	if (exact != 0 && type == exact)
		return true;
	return (ty = mp_py_heap_type(h, type, diag)) != NULL && (ty->flags & flag) != 0;
}

mp_err mp_py_str(mp_py_heap *h, uint64_t obj, char **out, mp_diag *diag)
{
	*out = NULL;
	if (!py_heap_is_kind(h, obj, h->syms.str, MP_PY_TPFLAGS_UNICODE_SUBCLASS, NULL))
		return mp_fail(diag, MP_E_TYPE, "0x%llx is not a str", (unsigned long long)obj);
	return mp_py_read_str(h->t, h->py->layout, obj, out, diag);
}

bool py_heap_str_equals(mp_py_heap *h, uint64_t obj, const char *s)
{
	unsigned char head[STR_STATE + 1 - STR_LENGTH];
	char buf[256];
	uint64_t length;
	size_t n = strlen(s);
	char *text;
	bool same;

	if (!py_heap_is_kind(h, obj, h->syms.str, MP_PY_TPFLAGS_UNICODE_SUBCLASS, NULL) ||
	    mp_target_read(h->t, obj + STR_LENGTH, head, sizeof head, NULL) != MP_OK)
		return false;
	memcpy(&length, head, sizeof length);
	/* a compact ASCII str: its characters are the bytes after the header */
	if ((head[STR_STATE - STR_LENGTH] & 0x60) == 0x60 && (head[STR_STATE - STR_LENGTH] >> 2 & 7) == 1) {
		if (length != n)
			return false;
		if (n < sizeof buf)
			return mp_target_read(h->t, obj + h->py->layout->str_ascii_data, buf, n, NULL) == MP_OK &&
			       memcmp(buf, s, n) == 0;
	}
	if (mp_py_read_str(h->t, h->py->layout, obj, &text, NULL) != MP_OK)
		return false;
	same = strcmp(text, s) == 0;
	free(text);
	return same;
}

/* The sign and digit count of the int at OBJ: 3.10 and 3.11 keep a signed count, 3.12 on a tag (the count
   shifted by 3 over the sign: 0 positive, 1 zero, 2 negative). */
static mp_err long_shape(mp_py_heap *h, uint64_t obj, int *sign, uint64_t *ndigits, mp_diag *diag)
{
	uint64_t v;
	mp_err err;

	if ((err = mp_target_read_u64(h->t, obj + h->l.long_size, &v, diag)) != MP_OK)
		return err;
	if (!h->l.long_tag) {
		*sign = (int64_t)v < 0 ? -1 : v != 0;
		*ndigits = (int64_t)v < 0 ? (uint64_t)0 - v : v;
		return MP_OK;
	}
	if ((v & 3) == 3)
		return mp_fail(diag, MP_E_CORRUPT, "int at 0x%llx: tag 0x%llx has no sign", (unsigned long long)obj,
			       (unsigned long long)v);
	*sign = (v & 3) == 0 ? 1 : (v & 3) == 1 ? 0 : -1;
	*ndigits = *sign == 0 ? 0 : v >> 3;
	return MP_OK;
}

mp_err mp_py_long(mp_py_heap *h, uint64_t obj, int64_t *out, mp_diag *diag)
{
	uint32_t d[3] = { 0, 0, 0 };
	uint64_t ndigits = 0, mag;
	int sign = 0;
	mp_err err;

	*out = 0;
	if (!py_heap_is_kind(h, obj, h->syms.long_, MP_PY_TPFLAGS_LONG_SUBCLASS, NULL))
		return mp_fail(diag, MP_E_TYPE, "0x%llx is not an int", (unsigned long long)obj);
	if ((err = long_shape(h, obj, &sign, &ndigits, diag)) != MP_OK)
		return err;
	if (ndigits > 3)
		return mp_fail(diag, MP_E_RANGE, "int at 0x%llx: %llu digits, more than an int64 holds",
			       (unsigned long long)obj, (unsigned long long)ndigits);
	if ((err = mp_target_read(h->t, obj + h->l.long_digits, d, ndigits * sizeof d[0], diag)) != MP_OK)
		return err;
	for (size_t i = 0; i < ndigits; i++)
		if (d[i] >> DIGIT_BITS)
			return mp_fail(diag, MP_E_CORRUPT, "int at 0x%llx: digit %zu is 0x%x, more than 30 bits",
				       (unsigned long long)obj, i, (unsigned)d[i]);
	if (d[2] > 15)
		return mp_fail(diag, MP_E_RANGE, "int at 0x%llx does not fit in an int64", (unsigned long long)obj);
	mag = (uint64_t)d[0] | (uint64_t)d[1] << DIGIT_BITS | (uint64_t)d[2] << 2 * DIGIT_BITS;
	if (mag > (uint64_t)INT64_MAX + (sign < 0))
		return mp_fail(diag, MP_E_RANGE, "int at 0x%llx does not fit in an int64", (unsigned long long)obj);
	*out = sign < 0 ? (int64_t)(0 - mag) : (int64_t)mag;
	return MP_OK;
}

mp_err mp_py_float(mp_py_heap *h, uint64_t obj, double *out, mp_diag *diag)
{
	const mp_py_type *ty;
	uint64_t type;
	bool is_float = false;
	mp_err err;

	*out = 0;
	if ((err = mp_py_object_type(h, obj, &type, diag)) != MP_OK)
		return err;
	if (h->syms.float_ != 0 && type == h->syms.float_)
		is_float = true;
	else if (h->syms.float_ != 0 && (ty = mp_py_heap_type(h, type, NULL)) != NULL)
		for (size_t i = 0; i < ty->nmro && !is_float; i++)
			is_float = ty->mro[i] == h->syms.float_;
	if (!is_float)
		return mp_fail(diag, MP_E_TYPE, "0x%llx is not a float", (unsigned long long)obj);
	return mp_target_read(h->t, obj + h->l.float_value, out, sizeof *out, diag);
}
