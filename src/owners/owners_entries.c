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

mp_err owners_add(owners_build *b, const char *name, const char *module, const char *referrer,
		  enum mp_owner_kind kind, const mp_tensor *tensor)
{
	mp_owners *o = b->out;
	mp_owned *e;
	mp_err err;

	if ((err = mp_array_grow((void **)&o->tensors, &b->cap_tensors, o->ntensors + 1, sizeof *o->tensors)) != MP_OK)
		return err;
	e = &o->tensors[o->ntensors];
	*e = (mp_owned){ .name = strdup(name), .module = dup_or_null(module), .referrer = dup_or_null(referrer),
			 .kind = kind, .tensor = *tensor, .block = SIZE_MAX };
	if (e->name == NULL || (module != NULL && e->module == NULL) || (referrer != NULL && e->referrer == NULL)) {
		free(e->name);
		free(e->module);
		free(e->referrer);
		return MP_E_NOMEM;
	}
	o->ntensors++;
	return MP_OK;
}

/* The Python tensor at PYOBJ, when the walk found and read it (else NULL). */
static py_tensor *tensor_at(owners_build *b, uint64_t pyobj)
{
	size_t i = owners_pytensor(b, pyobj);

	return i != SIZE_MAX && b->pytensors[i].read ? &b->pytensors[i] : NULL;
}

static mp_err remember_param(owners_build *b, uint64_t pyobj, size_t entry)
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

/* The entry that names the parameter at PYOBJ, or SIZE_MAX. */
static size_t param_entry(const owners_build *b, uint64_t pyobj)
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

	if (mp_py_is_none(b->heap, value) || (x = tensor_at(b, value)) == NULL)
		return true;
	if (mp_py_str(b->heap, key, &name, NULL) != MP_OK)
		return true;
	if (asprintf(&qual, "%s.%s", w->prefix, name) < 0) {
		free(name);
		w->err = MP_E_NOMEM;
		return false;
	}
	free(name);
	x->named = true;
	w->err = owners_add(b, qual, w->prefix, NULL, w->kind, &x->tensor);
	if (w->err == MP_OK && w->kind == MP_OWNER_PARAMETER) {
		mp_tensor grad;
		char *gname;

		w->err = remember_param(b, value, entry);
		if (w->err == MP_OK && x->tensor.grad_impl != 0) {
			mp_diag d = { .msg = "" };

			if (mp_torch_read_impl(b->t, b->out->layout, x->tensor.grad_impl, 0, &grad, &d) != MP_OK) {
				mp_warn(b->diag, "%s.grad not read: %s", qual, d.msg);
				b->out->partial = true;
			} else if (asprintf(&gname, "%s.grad", qual) < 0) {
				w->err = MP_E_NOMEM;
			} else {
				w->err = owners_add(b, gname, w->prefix, NULL, MP_OWNER_GRADIENT, &grad);
				free(gname);
			}
		}
	}
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
		mp_warn(w->b->diag, "%s.%s not read: %s", w->prefix, attr, d.msg);
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

/* Mark in IS_CHILD the modules some module's _modules holds. */
struct children {
	owners_build *b;
	bool *is_child;
};

static bool mark_child(void *ctx, uint64_t key, uint64_t value)
{
	struct children *c = ctx;

	(void)key;
	for (size_t i = 0; i < c->b->nmodules; i++)
		if (c->b->modules[i] == value)
			c->is_child[i] = true;
	return true;
}

mp_err owners_modules(owners_build *b)
{
	struct children c = { .b = b, .is_child = calloc(b->nmodules + 1, sizeof *c.is_child) };
	struct tree *w = calloc(1, sizeof *w);
	mp_err err = MP_OK;

	if (c.is_child == NULL || w == NULL) {
		free(c.is_child);
		free(w);
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
		const char *name = owners_root_name(b, b->modules[i]);
		const mp_py_type *ty;
		char fallback[160];

		if (c.is_child[i])
			continue;
		if (name == NULL) {
			uint64_t type = 0;

			ty = mp_py_object_type(b->heap, b->modules[i], &type, NULL) == MP_OK ? mp_py_heap_type(b->heap, type, NULL)
											      : NULL;
			snprintf(fallback, sizeof fallback, "%s@0x%llx", ty != NULL ? ty->name : "Module",
				 (unsigned long long)b->modules[i]);
			name = fallback;
		}
		w->prefix = name;
		w->depth = 0;
		err = walk_module(w, b->modules[i]);
	}
	free(c.is_child);
	free(w);
	return err;
}

/* An optimizer's state: {parameter: {key: value}}. */
struct state {
	owners_build *b;
	const char *optimizer;
	const char *param;       /* the parameter's name */
	const char *module;      /* its module */
	mp_err err;
};

static bool state_value(void *ctx, uint64_t key, uint64_t value)
{
	struct state *s = ctx;
	py_tensor *x = tensor_at(s->b, value);
	char *k, *name;

	if (x == NULL || mp_py_str(s->b->heap, key, &k, NULL) != MP_OK)
		return true;
	if (asprintf(&name, "%s.state[%s].%s", s->optimizer, s->param, k) < 0) {
		free(k);
		s->err = MP_E_NOMEM;
		return false;
	}
	free(k);
	x->named = true;
	s->err = owners_add(s->b, name, s->module, NULL, MP_OWNER_OPTIMIZER_STATE, &x->tensor);
	free(name);
	return s->err == MP_OK;
}

static bool state_item(void *ctx, uint64_t key, uint64_t value)
{
	struct state *s = ctx;
	size_t entry = param_entry(s->b, key);
	py_tensor *p = tensor_at(s->b, key);
	char unnamed[64];
	mp_diag d = { .msg = "" };

	if (entry != SIZE_MAX) {
		s->param = s->b->out->tensors[entry].name;
		s->module = s->b->out->tensors[entry].module;
	} else {
		/* as the manifest names a parameter no module holds */
		snprintf(unnamed, sizeof unnamed, "<param 0x%llx>", p != NULL ? (unsigned long long)p->tensor.data_ptr : 0ull);
		s->param = unnamed;
		s->module = NULL;
	}
	if (mp_py_dict_each(s->b->heap, value, state_value, s, &d) != MP_OK && s->err == MP_OK) {
		mp_warn(s->b->diag, "%s.state[%s] not read: %s", s->optimizer, s->param, d.msg);
		s->b->out->partial = true;
	}
	s->param = NULL;
	return s->err == MP_OK;
}

mp_err owners_optimizers(owners_build *b)
{
	for (size_t i = 0; i < b->noptimizers; i++) {
		struct state s = { .b = b, .err = MP_OK };
		const char *name = owners_root_name(b, b->optimizers[i]);
		char fallback[160];
		uint64_t state, type = 0;
		mp_diag d = { .msg = "" };

		if (name == NULL) {
			const mp_py_type *ty = mp_py_object_type(b->heap, b->optimizers[i], &type, NULL) == MP_OK
						       ? mp_py_heap_type(b->heap, type, NULL)
						       : NULL;

			snprintf(fallback, sizeof fallback, "%s@0x%llx", ty != NULL ? ty->name : "Optimizer",
				 (unsigned long long)b->optimizers[i]);
			name = fallback;
		}
		s.optimizer = name;
		if (mp_py_attr(b->heap, b->optimizers[i], "state", &state, &d) != MP_OK ||
		    mp_py_dict_each(b->heap, state, state_item, &s, &d) != MP_OK) {
			if (s.err != MP_OK)
				return s.err;
			mp_warn(b->diag, "%s.state not read: %s", name, d.msg);
			b->out->partial = true;
		}
	}
	return MP_OK;
}
