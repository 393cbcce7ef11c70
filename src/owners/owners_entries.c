/* owners_entries.c - the named tensors: each module tree from its root, as nn.Module.named_parameters() and
   named_buffers() name them (remove_duplicate=False: a module or parameter shared under two paths is listed
   under both), each parameter's gradient, each optimizer's state by the name of the parameter it is for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "owners_int.h"

/* Deeper module trees are damage (a cycle through _modules is caught before). */
enum { MAX_DEPTH = 256 };

static char *dup_or_null(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

mp_err owners_add(owners_build *b, const char *name, const char *root, const char *module, const char *referrer,
		  enum mp_owner_kind kind, const mp_tensor *tensor)
{
	mp_owners *o = b->out;
	mp_owned *e;
	mp_err err;

	if ((err = mp_array_grow((void **)&o->tensors, &b->cap_tensors, o->ntensors + 1, sizeof *o->tensors)) != MP_OK)
		return err;
	e = &o->tensors[o->ntensors];
	*e = (mp_owned){ .name = strdup(name), .root = dup_or_null(root), .module = dup_or_null(module),
			 .referrer = dup_or_null(referrer), .kind = kind, .block = SIZE_MAX };
	if (e->name == NULL || (root != NULL && e->root == NULL) || (module != NULL && e->module == NULL) ||
	    (referrer != NULL && e->referrer == NULL) || mp_tensor_copy(&e->tensor, tensor) != MP_OK) {
		free(e->name);
		free(e->root);
		free(e->module);
		free(e->referrer);
		return MP_E_NOMEM;
	}
	o->ntensors++;
	return MP_OK;
}

mp_err owners_add_grad(owners_build *b, const char *name, const char *root, const char *module, const mp_tensor *x)
{
	mp_diag d = { .msg = "" };
	mp_tensor grad;
	char *gname;
	mp_err err;

	if (x->grad_impl == 0)
		return MP_OK;
	if ((err = mp_torch_read_impl(b->t, b->out->layout, x->grad_impl, 0, &grad, &d)) == MP_E_UNSUPPORTED)
		return MP_OK; /* undefined: no gradient yet, or none since zero_grad(set_to_none=False)... */
	if (err != MP_OK) {
		mp_warn_damage(b->diag, "%s.grad not read: %s", name, d.msg);
		b->out->partial = true;
		return MP_OK;
	}
	if (asprintf(&gname, "%s.grad", name) < 0) {
		mp_tensor_release(&grad);
		return MP_E_NOMEM;
	}
	err = owners_add(b, gname, root, module, NULL, MP_OWNER_GRADIENT, &grad);
	free(gname);
	mp_tensor_release(&grad);
	return err;
}

py_tensor *owners_tensor_at(owners_build *b, uint64_t pyobj)
{
	size_t i = owners_pytensor(b, pyobj);

	return i != SIZE_MAX && b->pytensors[i].read ? &b->pytensors[i] : NULL;
}

mp_err owners_remember_param(owners_build *b, uint64_t pyobj, size_t entry)
{
	mp_table_probe p;
	mp_err err;

	for (uint32_t id = mp_table_find(&b->by_param, mp_table_hash_u64(pyobj), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(&b->by_param, &p))
		if (b->params[id].pyobj == pyobj)
			return MP_OK; /* the first name stands */
	if ((err = mp_array_grow((void **)&b->params, &b->cap_params, b->nparams + 1, sizeof *b->params)) != MP_OK ||
	    (err = mp_table_add(&b->by_param, &p, (uint32_t)b->nparams)) != MP_OK)
		return err;
	b->params[b->nparams++] = (struct param_name){ pyobj, entry };
	return MP_OK;
}

size_t owners_param_entry(const owners_build *b, uint64_t pyobj)
{
	mp_table_probe p;

	for (uint32_t id = mp_table_find(&b->by_param, mp_table_hash_u64(pyobj), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(&b->by_param, &p))
		if (b->params[id].pyobj == pyobj)
			return b->params[id].entry;
	return SIZE_MAX;
}

/* One module's walk: its prefix, and the path of modules above it (for cycles). */
struct tree {
	owners_build *b;
	const char *root;        /* the root module's name */
	const char *prefix;
	enum mp_owner_kind kind; /* of the dict being read: parameters or buffers */
	uint64_t path[MAX_DEPTH];
	int depth;
	mp_err err;
};

static bool tensor_item(void *ctx, uint64_t key, uint64_t value)
{
	struct tree *w = ctx;
	owners_build *b = w->b;
	char *name, *qual;
	py_tensor *x;
	size_t entry = b->out->ntensors;

	if (mp_py_is_none(b->heap, value) || mp_py_str(b->heap, key, &name, NULL) != MP_OK)
		return true;
	/* a tensor the walk did not reach (a damaged list) is read all the same */
	if ((x = owners_tensor_at(b, value)) == NULL &&
	    (owners_pytensor(b, value) != SIZE_MAX || (x = owners_adopt_tensor(b, value)) == NULL)) {
		/* one the walk found but could not read (warned about there), or damage */
		if (owners_pytensor(b, value) == SIZE_MAX) {
			mp_warn_damage(b->diag, "%s.%s: the object at 0x%llx is no tensor memprof could read", w->prefix, name,
				(unsigned long long)value);
			b->out->partial = true;
		}
		free(name);
		return true;
	}
	if (asprintf(&qual, "%s.%s", w->prefix, name) < 0) {
		free(name);
		w->err = MP_E_NOMEM;
		return false;
	}
	free(name);
	x->named = true;
	w->err = owners_add(b, qual, w->root, w->prefix, NULL, w->kind, &x->tensor);
	if (w->err == MP_OK && w->kind == MP_OWNER_PARAMETER && (w->err = owners_remember_param(b, value, entry)) == MP_OK)
		w->err = owners_add_grad(b, qual, w->root, w->prefix, &x->tensor);
	free(qual);
	return w->err == MP_OK;
}

static mp_err walk_module(struct tree *w, uint64_t module);

static bool child_item(void *ctx, uint64_t key, uint64_t value)
{
	struct tree *w = ctx;
	const char *prefix = w->prefix;
	char *name, *qual;

	if (mp_py_is_none(w->b->heap, value) || mp_py_str(w->b->heap, key, &name, NULL) != MP_OK)
		return true;
	if (asprintf(&qual, "%s.%s", prefix, name) < 0) {
		free(name);
		w->err = MP_E_NOMEM;
		return false;
	}
	free(name);
	w->prefix = qual;
	w->err = walk_module(w, value);
	w->prefix = prefix;
	free(qual);
	return w->err == MP_OK;
}

/* Read the dict attribute ATTR of MODULE with CB. */
static mp_err each_of(struct tree *w, uint64_t module, const char *attr,
		      bool (*cb)(void *ctx, uint64_t key, uint64_t value))
{
	mp_diag d = { .msg = "" };
	uint64_t dict;
	mp_err err;

	if ((err = mp_py_attr(w->b->heap, module, attr, &dict, &d)) == MP_E_NOTFOUND)
		return MP_OK;
	if (err == MP_OK)
		err = mp_py_dict_each(w->b->heap, dict, cb, w, &d);
	if (w->err != MP_OK)
		return w->err;
	if (err != MP_OK) {
		mp_warn_damage(w->b->diag, "%s.%s not read: %s", w->prefix, attr, d.msg);
		w->b->out->partial = true;
	}
	return MP_OK;
}

static mp_err walk_module(struct tree *w, uint64_t module)
{
	mp_err err;

	for (int i = 0; i < w->depth; i++)
		if (w->path[i] == module) {
			mp_warn(w->b->diag, "%s: a module that holds itself (the cycle is not followed)", w->prefix);
			return MP_OK;
		}
	if (w->depth == MAX_DEPTH) {
		mp_warn(w->b->diag, "%s: modules nested deeper than %d are not read", w->prefix, MAX_DEPTH);
		w->b->out->partial = true;
		return MP_OK;
	}
	w->path[w->depth++] = module;
	w->kind = MP_OWNER_PARAMETER;
	if ((err = each_of(w, module, "_parameters", tensor_item)) == MP_OK) {
		w->kind = MP_OWNER_BUFFER;
		err = each_of(w, module, "_buffers", tensor_item);
	}
	if (err == MP_OK)
		err = each_of(w, module, "_modules", child_item);
	w->depth--;
	return err;
}

/* Mark in IS_CHILD the modules some module's _modules holds (BY_ADDR: module address -> index). */
struct children {
	owners_build *b;
	bool *is_child;
	mp_table by_addr;
};

static bool mark_child(void *ctx, uint64_t key, uint64_t value)
{
	struct children *c = ctx;
	mp_table_probe p;

	(void)key;
	for (uint32_t id = mp_table_find(&c->by_addr, mp_table_hash_u64(value), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(&c->by_addr, &p))
		if (c->b->modules[id] == value)
			c->is_child[id] = true;
	return true;
}

mp_err owners_modules(owners_build *b)
{
	struct children c = { .b = b, .is_child = calloc(b->nmodules + 1, sizeof *c.is_child) };
	struct tree *w = calloc(1, sizeof *w);
	mp_err err = MP_OK;

	for (size_t i = 0; i < b->nmodules && err == MP_OK; i++) {
		mp_table_probe p;

		/* to the end of the run of its hash: the walk visits each object once, so nothing is there */
		for (uint32_t id = mp_table_find(&c.by_addr, mp_table_hash_u64(b->modules[i]), &p); id != MP_TABLE_NONE;
		     id = mp_table_next(&c.by_addr, &p))
			;
		err = mp_table_add(&c.by_addr, &p, (uint32_t)i);
	}
	if (c.is_child == NULL || w == NULL || err != MP_OK) {
		free(c.is_child);
		free(w);
		mp_table_free(&c.by_addr);
		return MP_E_NOMEM;
	}
	for (size_t i = 0; i < b->nmodules; i++) {
		uint64_t dict;

		if (mp_py_attr(b->heap, b->modules[i], "_modules", &dict, NULL) == MP_OK &&
		    mp_py_dict_each(b->heap, dict, mark_child, &c, NULL) != MP_OK)
			continue; /* warned about when the tree is walked */
	}
	w->b = b;
	for (size_t i = 0; i < b->nmodules && err == MP_OK; i++) {
		char label[160];
		const char *name = owners_root_label(b, b->modules[i], "Module", label, sizeof label);

		if (c.is_child[i])
			continue;
		w->root = w->prefix = name;
		w->depth = 0;
		err = walk_module(w, b->modules[i]);
	}
	free(c.is_child);
	free(w);
	mp_table_free(&c.by_addr);
	return err;
}
