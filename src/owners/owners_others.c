/* owners_others.c - the Python tensors no module or optimizer names: named by the variable that holds them
   (a global of __main__, a local of a running frame: one referrer path), else by their address; an
   ACTIVATION when the autograd meta names a grad_fn (the result of a differentiable op, kept alive for
   backward or by the user), else OTHER_PYTHON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_py_locals.h"
#include "owners_int.h"

/* Whether an owned entry already names the TensorImpl IMPL (a gradient whose Python object lives too). */
static bool impl_named(const owners_build *b, const mp_table *impls, uint64_t impl)
{
	mp_table_probe p;

	for (uint32_t id = mp_table_find(impls, mp_table_hash_u64(impl), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(impls, &p))
		if (b->out->tensors[id].tensor.impl == impl)
			return true;
	return false;
}

/* The variable that refers to each still unnamed tensor. */
struct refs {
	owners_build *b;
	char **name, **referrer;   /* per Python tensor */
	const char *where;         /* what holds the variables being read */
	mp_err err;
};

static void refer(struct refs *r, const char *name, uint64_t value)
{
	size_t i = owners_pytensor(r->b, value);

	if (i == SIZE_MAX || r->name[i] != NULL || r->b->pytensors[i].named)
		return;
	if ((r->name[i] = strdup(name)) == NULL || (r->referrer[i] = strdup(r->where)) == NULL)
		r->err = MP_E_NOMEM;
}

static bool global(void *ctx, uint64_t key, uint64_t value)
{
	struct refs *r = ctx;
	char *name;

	if (mp_py_str(r->b->heap, key, &name, NULL) == MP_OK) {
		refer(r, name, value);
		free(name);
	}
	return r->err == MP_OK;
}

static bool local(void *ctx, const char *name, uint64_t value)
{
	struct refs *r = ctx;

	refer(r, name, value);
	return r->err == MP_OK;
}

static void find_referrers(struct refs *r)
{
	owners_build *b = r->b;
	uint64_t dict;
	char where[512];

	r->where = "global of __main__";
	if (mp_py_module_dict(b->heap, "__main__", &dict, NULL) == MP_OK &&
	    mp_py_dict_each(b->heap, dict, global, r, NULL) != MP_OK && r->err != MP_OK)
		return;
	for (size_t i = 0; b->have_threads && i < b->threads.nthreads && r->err == MP_OK; i++) {
		const mp_py_thread *th = &b->threads.threads[i];

		/* innermost first: the frame that uses the tensor now */
		for (size_t j = 0; j < th->nframes && r->err == MP_OK; j++) {
			const mp_py_frame *f = &th->frames[j];

			snprintf(where, sizeof where, "local variable of %s() at %s:%d", f->qualname, f->filename, f->line);
			r->where = where;
			if (mp_py_frame_locals(b->t, &b->py, &b->rt, f, local, r, NULL) != MP_OK)
				continue; /* owners_name_roots warned */
		}
	}
}

mp_err owners_others(owners_build *b)
{
	struct refs r = { .b = b, .err = MP_OK };
	mp_table impls = { 0 };
	mp_err err = MP_OK;

	r.name = calloc(b->npytensors + 1, sizeof *r.name);
	r.referrer = calloc(b->npytensors + 1, sizeof *r.referrer);
	/* the TensorImpls the entries so far name */
	for (size_t i = 0; i < b->out->ntensors && err == MP_OK; i++) {
		uint64_t impl = b->out->tensors[i].tensor.impl;
		mp_table_probe p;
		uint32_t id;

		for (id = mp_table_find(&impls, mp_table_hash_u64(impl), &p); id != MP_TABLE_NONE;
		     id = mp_table_next(&impls, &p))
			if (b->out->tensors[id].tensor.impl == impl)
				break;
		if (id == MP_TABLE_NONE)
			err = mp_table_add(&impls, &p, (uint32_t)i);
	}
	if (r.name == NULL || r.referrer == NULL)
		err = MP_E_NOMEM;
	if (err == MP_OK) {
		find_referrers(&r);
		err = r.err;
	}
	for (size_t i = 0; i < b->npytensors && err == MP_OK; i++) {
		py_tensor *x = &b->pytensors[i];
		char unnamed[64];

		if (!x->read || x->named || impl_named(b, &impls, x->tensor.impl))
			continue;
		snprintf(unnamed, sizeof unnamed, "<tensor 0x%llx>", (unsigned long long)x->pyobj);
		err = owners_add(b, r.name[i] != NULL ? r.name[i] : unnamed, NULL, r.referrer[i],
				 x->tensor.has_grad_fn ? MP_OWNER_ACTIVATION : MP_OWNER_OTHER_PYTHON, &x->tensor);
	}
	for (size_t i = 0; i < b->npytensors && r.name != NULL && r.referrer != NULL; i++) {
		free(r.name[i]);
		free(r.referrer[i]);
	}
	free(r.name);
	free(r.referrer);
	mp_table_free(&impls);
	return err;
}
