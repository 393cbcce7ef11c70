/* owners_read.c - mp_owners_read: find the interpreter, walk its heap, read the tensors, name them, follow
   the autograd graph to what it saves, place them in the snapshot's blocks. */
#include <stdio.h>
#include <stdlib.h>

#include "owners_int.h"

const char *mp_owner_kind_name(enum mp_owner_kind kind)
{
	static const char *const names[MP_OWNER__COUNT] = { "parameter", "buffer", "gradient", "optimizer_state",
							    "activation", "other_python", "not_python" };

	return kind < MP_OWNER__COUNT ? names[kind] : "?";
}

void mp_owners_free(mp_owners *o)
{
	if (o == NULL)
		return;
	for (size_t i = 0; i < o->ntensors; i++) {
		free(o->tensors[i].name);
		free(o->tensors[i].root);
		free(o->tensors[i].module);
		free(o->tensors[i].referrer);
		mp_tensor_release(&o->tensors[i].tensor);
	}
	free(o->tensors);
	free(o->blocks);
	free(o);
}

static void build_free(owners_build *b)
{
	mp_py_heap_close(b->heap);
	if (b->have_threads)
		mp_py_threads_free(&b->threads);
	for (size_t i = 0; i < b->npytensors; i++)
		if (b->pytensors[i].read)
			mp_tensor_release(&b->pytensors[i].tensor);
	free(b->pytensors);
	mp_table_free(&b->by_pyobj);
	free(b->modules);
	free(b->optimizers);
	mp_table_free(&b->type_kinds);
	free(b->type_kind);
	for (size_t i = 0; i < b->nroots; i++)
		free(b->roots[i].name);
	free(b->roots);
	mp_table_free(&b->by_root);
	free(b->params);
	mp_table_free(&b->by_param);
	for (size_t i = 0; i < b->nvars; i++) {
		free(b->vars[i].name);
		free(b->vars[i].where);
	}
	free(b->vars);
	free(b->ref_name);
	free(b->ref_where);
	for (size_t i = 0; i < b->nnodes; i++)
		free(b->nodes[i].module);
	free(b->nodes);
	free(b->edges);
	mp_table_free(&b->by_node);
	free(b->accs);
	mp_table_free(&b->by_acc);
}

/* The interpreter, its runtime, its heap and (for names) its threads. */
static mp_err open_python(owners_build *b, const mp_owners_opts *opts)
{
	mp_py_heap_opts hopts = { .max_objects = opts != NULL ? opts->max_objects : 0 };
	mp_diag quiet = { .msg = "" };
	mp_err err;

	if ((err = mp_py_find(b->t, &b->py, b->diag)) != MP_OK ||
	    (err = mp_py_runtime_read(b->t, &b->py, &b->rt, b->diag)) != MP_OK ||
	    (err = mp_py_heap_open(b->t, &b->py, &b->rt, &hopts, &b->heap, b->diag)) != MP_OK)
		return err;
	if (b->py.micro >= 0)
		snprintf(b->out->python, sizeof b->out->python, "CPython %d.%d.%d", b->py.major, b->py.minor, b->py.micro);
	else
		snprintf(b->out->python, sizeof b->out->python, "CPython %d.%d", b->py.major, b->py.minor);
	/* without threads only globals name the roots */
	if (mp_py_threads_read(b->t, &b->py, &b->rt, &b->threads, &quiet) == MP_OK)
		b->have_threads = true;
	else
		mp_warn_damage(b->diag, "the threads' frames could not be read (%s): only globals name modules", quiet.msg);
	return MP_OK;
}

mp_err mp_owners_read(mp_target *t, const mp_snapshot *snap, const mp_owners_opts *opts, mp_owners **out,
		      mp_diag *diag)
{
	owners_build b = { .t = t, .diag = diag };
	mp_err err;

	*out = NULL;
	if ((b.out = calloc(1, sizeof *b.out)) == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	if ((err = open_python(&b, opts)) == MP_OK && (err = owners_walk_heap(&b)) == MP_OK &&
	    (err = owners_variables(&b)) == MP_OK && (err = owners_name_roots(&b)) == MP_OK &&
	    (err = owners_referrers(&b)) == MP_OK &&
	    (err = owners_modules(&b)) == MP_OK &&
	    (err = owners_optimizers(&b)) == MP_OK && (err = owners_graph(&b)) == MP_OK &&
	    (err = owners_saved(&b)) == MP_OK && (err = owners_others(&b)) == MP_OK)
		err = owners_blocks(&b, snap);
	build_free(&b);
	if (err != MP_OK) {
		if (err == MP_E_NOMEM)
			mp_fail(diag, err, "out of memory");
		mp_owners_free(b.out);
		return err;
	}
	*out = b.out;
	return MP_OK;
}
