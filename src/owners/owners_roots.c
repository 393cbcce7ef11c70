/* owners_roots.c - the names of the modules and optimizers that no module holds, as a user named them: the
   first path owners_variables.c found to them (a global of __main__ or what it holds, trainer.optimizer; else a
   local of the job's outer frames, outermost first, so that the name a caller gave wins over a callee's
   parameter name, the `model = ...` of a main() being the usual case; else a local of an inner frame), else
   TYPE@ADDRESS, as memprof_testbed's manifest names what it finds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "owners_int.h"

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
	int kind = owners_object_kind(b, obj);
	mp_table_probe p;
	mp_err err;

	if (kind != OBJ_MODULE && kind != OBJ_OPTIMIZER)
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

	/* the variables' list is in order: globals, the job's outer frames outermost first, then the others */
	for (size_t i = 0; i < b->nvars && err == MP_OK; i++)
		err = name_root(b, b->vars[i].value, b->vars[i].name);
	return err;
}
