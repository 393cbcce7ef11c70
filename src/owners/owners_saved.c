/* owners_saved.c - the tensors the autograd graph keeps for backward. A node's own members are mostly its
   SavedVariables, whose first member is the saved at::Tensor: a TensorImpl pointer. Of the words of a node's
   members, those that point at an object with the vtable of a TensorImpl some Python tensor has, and that then
   read as a whole, consistent tensor, are what it saved (mp_torch_read_impl checks storage, device, dtype, shape).
   A saved tensor that is a Python tensor is marked so; one no Python object holds (most of them: what an op
   saved of its inputs or outputs inside C++) becomes an ACTIVATION entry of its own, by the module whose forward
   made it (its own grad_fn's, when it has one and the walk reached it) or else saved it. What saved tensor hooks
   packed (non-reentrant checkpointing, offloading) and what custom Python Functions keep are not seen here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "owners_int.h"

/* TensorImpl vtables sampled from the Python tensors (dense tensors share one). */
enum { SAMPLE = 256, MAX_VTABLES = 8 };

struct scan {
	owners_build *b;
	const owners_node *node;
	uint64_t vtables[MAX_VTABLES];
	size_t nvtables;
	mp_table impls;        /* the TensorImpls found so far (ids into SAVED) */
	struct saved { uint64_t impl; mp_tensor tensor; const owners_node *node; } *saved;
	size_t nsaved, cap_saved;
	mp_err err;
};

static void sample_vtables(struct scan *s)
{
	owners_build *b = s->b;

	for (size_t i = 0, seen = 0; i < b->npytensors && seen < SAMPLE && s->nvtables < MAX_VTABLES; i++) {
		uint64_t vt;
		size_t k = 0;

		if (!b->pytensors[i].read || mp_target_read_u64(b->t, b->pytensors[i].tensor.impl, &vt, NULL) != MP_OK)
			continue;
		seen++;
		while (k < s->nvtables && s->vtables[k] != vt)
			k++;
		if (k == s->nvtables)
			s->vtables[s->nvtables++] = vt;
	}
}

static bool known_vtable(const struct scan *s, uint64_t vt)
{
	for (size_t k = 0; k < s->nvtables; k++)
		if (s->vtables[k] == vt)
			return true;
	return false;
}

/* A word of S->node's members: a saved tensor when it points at a TensorImpl that reads. */
static bool candidate(void *ctx, uint64_t word)
{
	struct scan *s = ctx;
	mp_table_probe p;
	mp_tensor x;
	uint64_t vt;

	/* TensorImpls come from operator new: 16-byte aligned, never in the first pages */
	if (word < 0x10000 || (word & 15) != 0 || mp_target_read_u64(s->b->t, word, &vt, NULL) != MP_OK ||
	    !known_vtable(s, vt))
		return true;
	for (uint32_t id = mp_table_find(&s->impls, mp_table_hash_u64(word), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(&s->impls, &p))
		if (s->saved[id].impl == word)
			return true;
	if (mp_torch_read_impl(s->b->t, s->b->out->layout, word, 0, &x, NULL) != MP_OK)
		return true;
	if ((s->err = mp_array_grow((void **)&s->saved, &s->cap_saved, s->nsaved + 1, sizeof *s->saved)) != MP_OK ||
	    (s->err = mp_table_add(&s->impls, &p, (uint32_t)s->nsaved)) != MP_OK) {
		mp_tensor_release(&x);
		return false;
	}
	s->saved[s->nsaved++] = (struct saved){ word, x, s->node };
	return true;
}

/* The Python tensor whose TensorImpl is IMPL (BY_IMPL: impl -> pytensor), or NULL. */
static py_tensor *python_of(owners_build *b, const mp_table *by_impl, uint64_t impl)
{
	mp_table_probe p;

	for (uint32_t id = mp_table_find(by_impl, mp_table_hash_u64(impl), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(by_impl, &p))
		if (b->pytensors[id].tensor.impl == impl)
			return &b->pytensors[id];
	return NULL;
}

/* The storages the entries so far name (parameters, buffers, gradients, optimizer state). */
static bool storage_named(const owners_build *b, const mp_table *storages, uint64_t storage)
{
	mp_table_probe p;

	for (uint32_t id = mp_table_find(storages, mp_table_hash_u64(storage), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(storages, &p))
		if (b->out->tensors[id].tensor.storage == storage)
			return true;
	return false;
}

static mp_err index_of(mp_table *t, uint64_t key, uint32_t id)
{
	mp_table_probe p;

	for (uint32_t k = mp_table_find(t, mp_table_hash_u64(key), &p); k != MP_TABLE_NONE; k = mp_table_next(t, &p))
		;
	return mp_table_add(t, &p, id);
}

/* Where what S found goes: a Python tensor marked, or an entry of its own. */
static mp_err place(owners_build *b, struct scan *s)
{
	mp_table by_impl = { 0 }, storages = { 0 };
	mp_err err = MP_OK;

	for (size_t i = 0; i < b->npytensors && err == MP_OK; i++)
		if (b->pytensors[i].read)
			err = index_of(&by_impl, b->pytensors[i].tensor.impl, (uint32_t)i);
	for (size_t i = 0; i < b->out->ntensors && err == MP_OK; i++)
		err = index_of(&storages, b->out->tensors[i].tensor.storage, (uint32_t)i);
	for (size_t i = 0; i < s->nsaved && err == MP_OK; i++) {
		const struct saved *x = &s->saved[i];
		const owners_node *made = x->tensor.grad_fn != 0 ? owners_node_at(b, x->tensor.grad_fn) : NULL;
		const char *module = made != NULL && made->module != NULL ? made->module : x->node->module;
		py_tensor *py = python_of(b, &by_impl, x->impl);

		if (py != NULL) {
			py->saved = true;
			if (py->module == NULL)
				py->module = module;
		} else if (!storage_named(b, &storages, x->tensor.storage)) {
			err = owners_add(b, "<saved for backward>", NULL, module, NULL, MP_OWNER_ACTIVATION, &x->tensor);
			if (err == MP_OK)
				b->out->tensors[b->out->ntensors - 1].saved = true;
		}
	}
	mp_table_free(&by_impl);
	mp_table_free(&storages);
	return err;
}

mp_err owners_saved(owners_build *b)
{
	struct scan s = { .b = b, .err = MP_OK };
	size_t bad = 0;
	mp_err err;

	if (b->nnodes == 0)
		return MP_OK;
	/* the module of each Python tensor the forward made */
	for (size_t i = 0; i < b->npytensors; i++) {
		const owners_node *x;

		if (b->pytensors[i].read && b->pytensors[i].tensor.grad_fn != 0 &&
		    (x = owners_node_at(b, b->pytensors[i].tensor.grad_fn)) != NULL)
			b->pytensors[i].module = x->module;
	}
	sample_vtables(&s);
	for (size_t i = 0; i < b->nnodes && s.err == MP_OK; i++) {
		mp_diag d = { .msg = "" };

		if (b->nodes[i].accumulate)
			continue;
		s.node = &b->nodes[i];
		if (mp_torch_node_members(b->t, b->out->layout, b->nodes[i].addr, candidate, &s, &d) != MP_OK &&
		    s.err == MP_OK && bad++ == 0)
			mp_warn_damage(b->diag, "the members of autograd node 0x%llx not read: %s",
				(unsigned long long)b->nodes[i].addr, d.msg);
	}
	if (bad > 1)
		mp_warn_damage(b->diag, "%zu autograd nodes in all whose saved tensors were not read", bad);
	if (bad > 0)
		b->out->partial = true;
	err = s.err != MP_OK ? s.err : place(b, &s);
	for (size_t i = 0; i < s.nsaved; i++)
		mp_tensor_release(&s.saved[i].tensor);
	free(s.saved);
	mp_table_free(&s.impls);
	return err;
}
