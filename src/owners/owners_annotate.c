/* owners_annotate.c - the owners written into the snapshot they were placed in: each owned block gets the keys
   'owner' (the tensor's name) and, where its kind names one, 'category' (CATEGORY-RULES.md's names), so that
   what reads the snapshot later (a saved file, a kept snapshot, compare's block lines, categories as data, oom's
   holders) knows them without the target; and for oom's holders: 'root' (the module tree or optimizer the name
   starts from), 'module' (a parameter's module; the module whose forward made an activation), 'saved' (True:
   a live autograd graph saves it for backward) and an activation's 'dtype'. PyTorch's readers pass over keys
   they do not know. */
#include <string.h>

#include "mp_owners_report.h"
#include "mp_snapshot_extras.h"

/* Block BLOCK's extra KEY = the str S (nothing when S is NULL). */
static mp_err put_str(mp_snapshot *snap, size_t block, const char *key, const char *s)
{
	mp_val v;
	mp_err err;

	if (s == NULL)
		return MP_OK;
	if ((err = mp_heap_str(snap->heap, s, strlen(s), &v)) != MP_OK)
		return err;
	return mp_block_set_extra(snap, block, key, v);
}

static mp_err annotate_block(const mp_owned *e, enum mp_owner_kind kind, mp_snapshot *snap, size_t block)
{
	static const char *const categories[MP_OWNER__COUNT] = {
		[MP_OWNER_PARAMETER] = "PARAMETER", [MP_OWNER_BUFFER] = "BUFFER", [MP_OWNER_GRADIENT] = "GRADIENT",
		[MP_OWNER_OPTIMIZER_STATE] = "OPTIMIZER_STATE", [MP_OWNER_ACTIVATION] = "ACTIVATION",
	};
	bool activation = kind == MP_OWNER_ACTIVATION || e->saved;
	mp_err err;

	if ((err = put_str(snap, block, "owner", e->name)) != MP_OK ||
	    (err = put_str(snap, block, "category", categories[kind])) != MP_OK ||
	    (err = put_str(snap, block, "root", e->root)) != MP_OK ||
	    (err = put_str(snap, block, "module", e->module)) != MP_OK ||
	    (err = put_str(snap, block, "dtype", activation ? mp_torch_dtype_name(e->tensor.dtype) : NULL)) != MP_OK)
		return err;
	return e->saved ? mp_block_set_extra(snap, block, "saved", MP_TRUE) : MP_OK;
}

mp_err mp_owners_annotate(const mp_owners *o, mp_snapshot *snap, mp_diag *diag)
{
	mp_err err = MP_OK;

	for (size_t i = 0; i < o->nblocks && err == MP_OK; i++) {
		const mp_owner_block *ob = &o->blocks[i];

		if (ob->owner == SIZE_MAX || ob->block >= snap->nblocks)
			continue;
		err = annotate_block(&o->tensors[ob->owner], ob->kind, snap, ob->block);
	}
	return err != MP_OK ? mp_fail(diag, err, "owners: out of memory") : MP_OK;
}
