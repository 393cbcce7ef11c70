/* owners_roots.c - the names of the modules and optimizers that no module holds, as a user named them: a
   global of __main__, else a local variable of a running frame (the `model = ...` of a main() is the usual
   case; outer frames first, so that the name a caller gave wins over a callee's parameter name), else
   TYPE@ADDRESS, as memprof_testbed's manifest names what it finds (owners_variables.c reads the variables). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "owners_int.h"

/* Whether OBJ is one of LIST's N objects. */
static bool among(const uint64_t *list, size_t n, uint64_t obj)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == obj)
			return true;
	return false;
}

const char *owners_root_name(const owners_build *b, uint64_t obj)
{
	mp_table_probe p;

	for (uint32_t id = mp_table_find(&b->by_root, mp_table_hash_u64(obj), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(&b->by_root, &p))
		if (b->roots[id].obj == obj)
			return b->roots[id].name;
	return NULL;
}

const char *owners_root_label(owners_build *b, uint64_t obj, const char *kind, char *buf, size_t size)
{
	const char *name = owners_root_name(b, obj);
	const mp_py_type *ty = NULL;
	uint64_t type;

	if (name != NULL)
		return name;
	if (mp_py_object_type(b->heap, obj, &type, NULL) == MP_OK)
		ty = mp_py_heap_type(b->heap, type, NULL);
	snprintf(buf, size, "%s@0x%llx", ty != NULL ? ty->name : kind, (unsigned long long)obj);
	return buf;
}

/* Name OBJ NAME unless it has a name already or is neither a module nor an optimizer. */
static mp_err name_root(owners_build *b, uint64_t obj, const char *name)
{
	mp_table_probe p;
	mp_err err;

	if (!among(b->modules, b->nmodules, obj) && !among(b->optimizers, b->noptimizers, obj))
		return MP_OK;
	for (uint32_t id = mp_table_find(&b->by_root, mp_table_hash_u64(obj), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(&b->by_root, &p))
		if (b->roots[id].obj == obj)
			return MP_OK;
	if ((err = mp_array_grow((void **)&b->roots, &b->cap_roots, b->nroots + 1, sizeof *b->roots)) != MP_OK)
		return err;
	if ((b->roots[b->nroots].name = strdup(name)) == NULL)
		return MP_E_NOMEM;
	if ((err = mp_table_add(&b->by_root, &p, (uint32_t)b->nroots)) != MP_OK) {
		free(b->roots[b->nroots].name);
		return err;
	}
	b->roots[b->nroots++].obj = obj;
	return MP_OK;
}

mp_err owners_name_roots(owners_build *b)
{
	mp_err err = MP_OK;

	/* globals first, then each thread's frames from the outermost in */
	for (size_t i = 0; i < b->nvars && err == MP_OK && b->vars[i].thread < 0; i++)
		err = name_root(b, b->vars[i].value, b->vars[i].name);
	for (size_t end = 0; end < b->nvars && err == MP_OK;) {
		size_t start = end;

		if (b->vars[start].thread < 0) {
			end++;
			continue;
		}
		while (end < b->nvars && b->vars[end].thread == b->vars[start].thread)
			end++;
		for (size_t i = end; i-- > start && err == MP_OK;)
			err = name_root(b, b->vars[i].value, b->vars[i].name);
	}
	return err;
}
