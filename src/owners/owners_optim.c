/* owners_optim.c - what optimizers own: the tensors their param_groups optimize (parameters, named by the
   module that holds them, else by the variable that does: a parameter no module holds is a parameter all the
   same), their gradients, and their state, state[param][key], named by the parameter's name. A wrapper
   around another optimizer owns nothing of its own: the one it wraps is read. */
#include <stdio.h>
#include <stdlib.h>

#include "owners_int.h"

/* Why an attribute an optimizer should have was not read when the object's __dict__ lacks it. */
#define NOT_IN_DICT "not in the optimizer's __dict__ (a property, or an optimizer that keeps it elsewhere)"

uint64_t owners_wrapped_optimizer(owners_build *b, uint64_t opt)
{
	static const char *const attrs[] = { "optimizer", "_optimizer" };
	uint64_t inner;

	for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
		if (mp_py_attr(b->heap, opt, attrs[i], &inner, NULL) == MP_OK && inner != opt &&
		    owners_object_kind(b, inner) == OBJ_OPTIMIZER)
			return inner;
	return 0;
}

/* The parameters of param_groups that no module named: PARAMETER entries (and their gradients). */
struct groups {
	owners_build *b;
	mp_err err;
};

static mp_err group_param(owners_build *b, uint64_t param)
{
	size_t i = owners_pytensor(b, param), entry = b->out->ntensors;
	py_tensor *x = owners_tensor_at(b, param);
	char unnamed[64];
	const char *name;
	mp_err err;

	if (x == NULL || owners_param_entry(b, param) != SIZE_MAX)
		return MP_OK;
	snprintf(unnamed, sizeof unnamed, "<param 0x%llx>", (unsigned long long)x->tensor.data_ptr);
	name = b->ref_name[i] != NULL ? b->ref_name[i] : unnamed;
	x->named = true;
	if ((err = owners_add(b, name, NULL, NULL, b->ref_where[i], MP_OWNER_PARAMETER, &x->tensor)) != MP_OK ||
	    (err = owners_remember_param(b, param, entry)) != MP_OK)
		return err;
	return owners_add_grad(b, name, NULL, NULL, &x->tensor);
}

static mp_err group_params(owners_build *b, uint64_t optimizer, const char *name)
{
	uint64_t groups, *list = NULL, *params = NULL, value;
	size_t n = 0, np = 0;
	mp_diag d = { .msg = "" };
	mp_err err = MP_OK;

	if (mp_py_attr(b->heap, optimizer, "param_groups", &groups, &d) != MP_OK ||
	    mp_py_seq_items(b->heap, groups, &list, &n, 1u << 16, &d) != MP_OK) {
		mp_warn_damage(b->diag, "%s.param_groups not read: %s", name, d.msg[0] ? d.msg : NOT_IN_DICT);
		b->out->partial = true;
		return MP_OK;
	}
	for (size_t g = 0; g < n && err == MP_OK; g++) {
		if (mp_py_dict_get_str(b->heap, list[g], "params", &value, &d) != MP_OK ||
		    mp_py_seq_items(b->heap, value, &params, &np, 1u << 24, &d) != MP_OK)
			continue;
		for (size_t k = 0; k < np && err == MP_OK; k++)
			err = group_param(b, params[k]);
		free(params);
		params = NULL;
	}
	free(list);
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
	py_tensor *x = owners_tensor_at(s->b, value);
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
	s->err = owners_add(s->b, name, s->optimizer, s->module, NULL, MP_OWNER_OPTIMIZER_STATE, &x->tensor);
	free(name);
	return s->err == MP_OK;
}

static bool state_item(void *ctx, uint64_t key, uint64_t value)
{
	struct state *s = ctx;
	size_t entry = owners_param_entry(s->b, key);
	py_tensor *p = owners_tensor_at(s->b, key);
	char unnamed[64];
	mp_diag d = { .msg = "" };

	if (entry != SIZE_MAX) {
		s->param = s->b->out->tensors[entry].name;
		s->module = s->b->out->tensors[entry].module;
	} else if (p != NULL && s->b->ref_name[p - s->b->pytensors] != NULL) {
		/* a parameter no module holds, named by the variable that holds it */
		s->param = s->b->ref_name[p - s->b->pytensors];
		s->module = NULL;
	} else {
		snprintf(unnamed, sizeof unnamed, "<param 0x%llx>", p != NULL ? (unsigned long long)p->tensor.data_ptr : 0ull);
		s->param = unnamed;
		s->module = NULL;
	}
	if (mp_py_dict_each(s->b->heap, value, state_value, s, &d) != MP_OK && s->err == MP_OK) {
		mp_warn_damage(s->b->diag, "%s.state[%s] not read: %s", s->optimizer, s->param, d.msg);
		s->b->out->partial = true;
	}
	s->param = NULL;
	return s->err == MP_OK;
}

mp_err owners_optimizers(owners_build *b)
{
	mp_err err;

	/* a wrapper's state is the one it wraps: read there, under the wrapper's name (owners_variables.c) */
	for (size_t i = 0; i < b->noptimizers; i++)
		if (owners_wrapped_optimizer(b, b->optimizers[i]) != 0)
			b->optimizers[i--] = b->optimizers[--b->noptimizers];
	b->out->optimizers = b->noptimizers;
	for (size_t i = 0; i < b->noptimizers; i++) {
		char label[160];

		if ((err = group_params(b, b->optimizers[i],
					owners_root_label(b, b->optimizers[i], "Optimizer", label, sizeof label))) != MP_OK)
			return err;
	}
	for (size_t i = 0; i < b->noptimizers; i++) {
		struct state s = { .b = b, .err = MP_OK };
		char label[160];
		const char *name = owners_root_label(b, b->optimizers[i], "Optimizer", label, sizeof label);
		uint64_t state;
		mp_diag d = { .msg = "" };

		s.optimizer = name;
		if (mp_py_attr(b->heap, b->optimizers[i], "state", &state, &d) != MP_OK ||
		    mp_py_dict_each(b->heap, state, state_item, &s, &d) != MP_OK) {
			if (s.err != MP_OK)
				return s.err;
			mp_warn_damage(b->diag, "%s.state not read: %s", name, d.msg[0] ? d.msg : NOT_IN_DICT);
			b->out->partial = true;
		}
	}
	return MP_OK;
}
