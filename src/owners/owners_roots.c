/* owners_roots.c - the names of the modules and optimizers that no module holds, as a user named them: a
   global of __main__, else a local variable of a running frame (the `model = ...` of a main() is the usual
   case; outer frames first, so that the name a caller gave wins over a callee's parameter name), else
   TYPE@ADDRESS, as memprof_testbed's manifest names what it finds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "mp_py_locals.h"
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

struct naming {
	owners_build *b;
	mp_err err;
};

static bool global(void *ctx, uint64_t key, uint64_t value)
{
	struct naming *n = ctx;
	char *name;

	if (mp_py_str(n->b->heap, key, &name, NULL) != MP_OK)
		return true;
	n->err = name_root(n->b, value, name);
	free(name);
	return n->err == MP_OK;
}

static bool local(void *ctx, const char *name, uint64_t value)
{
	struct naming *n = ctx;

	n->err = name_root(n->b, value, name);
	return n->err == MP_OK;
}

mp_err owners_name_roots(owners_build *b)
{
	struct naming n = { .b = b, .err = MP_OK };
	mp_diag quiet = { .msg = "" };
	uint64_t main_dict;

	if (mp_py_module_dict(b->heap, "__main__", &main_dict, &quiet) == MP_OK &&
	    mp_py_dict_each(b->heap, main_dict, global, &n, &quiet) != MP_OK && n.err == MP_OK)
		mp_warn(b->diag, "the globals of __main__ could not be read: %s", quiet.msg);
	if (n.err != MP_OK)
		return n.err;
	for (size_t i = 0; b->have_threads && i < b->threads.nthreads; i++) {
		const mp_py_thread *th = &b->threads.threads[i];

		for (size_t j = th->nframes; j-- > 0;) {
			mp_diag d = { .msg = "" };

			if (mp_py_frame_locals(b->t, &b->py, &b->rt, &th->frames[j], local, &n, &d) != MP_OK &&
			    n.err == MP_OK && d.msg[0] != '\0')
				mp_warn(b->diag, "the locals of %s() could not be read: %s", th->frames[j].name, d.msg);
			if (n.err != MP_OK)
				return n.err;
		}
	}
	return MP_OK;
}
