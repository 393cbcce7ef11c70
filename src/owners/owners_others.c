/* owners_others.c - the Python tensors no module or optimizer names: named by the variable that holds them
   (a global of __main__, a local of the job's outer frames, or a path below one), else by their address; an
   ACTIVATION when the autograd meta names a grad_fn (the result of a differentiable op, kept alive for
   backward or by the user), else OTHER_PYTHON; with the module whose forward made them and whether the
   autograd graph saves them (owners_saved.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

mp_err owners_others(owners_build *b)
{
	mp_table impls = { 0 };
	mp_err err = MP_OK;

	/* the gradients of the other tensors a variable names (a parameter no module holds): NAME.grad */
	for (size_t i = 0; i < b->npytensors && err == MP_OK; i++) {
		py_tensor *x = &b->pytensors[i];

		if (x->read && !x->named && b->ref_name[i] != NULL)
			err = owners_add_grad(b, b->ref_name[i], NULL, NULL, &x->tensor);
	}
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
	for (size_t i = 0; i < b->npytensors && err == MP_OK; i++) {
		py_tensor *x = &b->pytensors[i];
		char unnamed[64];

		if (!x->read || x->named || impl_named(b, &impls, x->tensor.impl))
			continue;
		snprintf(unnamed, sizeof unnamed, "<tensor 0x%llx>", (unsigned long long)x->pyobj);
		err = owners_add(b, b->ref_name[i] != NULL ? b->ref_name[i] : unnamed, NULL, x->module, b->ref_where[i],
				 x->tensor.has_grad_fn ? MP_OWNER_ACTIVATION : MP_OWNER_OTHER_PYTHON, &x->tensor);
		if (err == MP_OK)
			b->out->tensors[b->out->ntensors - 1].saved = x->saved;
	}
	mp_table_free(&impls);
	return err;
}
