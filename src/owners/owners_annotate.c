/* owners_annotate.c - the owners written into the snapshot they were placed in: each owned block gets the keys
   'owner' (the tensor's name) and, where its kind names one, 'category' (CATEGORY-RULES.md's names), so that
   what reads the snapshot later (a saved file, a kept snapshot, compare's block lines, categories as data)
   knows them without the target. PyTorch's readers pass over keys they do not know. */
#include <string.h>

#include "mp_owners_report.h"
#include "mp_snapshot_extras.h"

mp_err mp_owners_annotate(const mp_owners *o, mp_snapshot *snap, mp_diag *diag)
{
	static const char *const categories[MP_OWNER__COUNT] = {
		[MP_OWNER_PARAMETER] = "PARAMETER", [MP_OWNER_BUFFER] = "BUFFER", [MP_OWNER_GRADIENT] = "GRADIENT",
		[MP_OWNER_OPTIMIZER_STATE] = "OPTIMIZER_STATE", [MP_OWNER_ACTIVATION] = "ACTIVATION",
	};
	mp_err err = MP_OK;

	for (size_t i = 0; i < o->nblocks && err == MP_OK; i++) {
		const mp_owner_block *ob = &o->blocks[i];
		const char *name, *category;
		mp_val v;

		if (ob->owner == SIZE_MAX || ob->block >= snap->nblocks)
			continue;
		name = o->tensors[ob->owner].name;
		category = categories[ob->kind];
		if ((err = mp_heap_str(snap->heap, name, strlen(name), &v)) == MP_OK)
			err = mp_block_set_extra(snap, ob->block, "owner", v);
		if (err == MP_OK && category != NULL && (err = mp_heap_str(snap->heap, category, strlen(category), &v)) == MP_OK)
			err = mp_block_set_extra(snap, ob->block, "category", v);
	}
	return err != MP_OK ? mp_fail(diag, err, "owners: out of memory") : MP_OK;
}
