/* category_owners.c - the owners from the target's Python heap (src/owners) as the first source of a block's
   category: what the tensors themselves say beats a rule's guess from frames. Only the kinds that name a
   category do: parameters, buffers, gradients, optimizer state and activations; a block of another Python
   tensor, or of none, is left to the data and the rules. */
#include <stdlib.h>

#include "category_int.h"

mp_err category_classifier_owners(mp_category_classifier *c, const mp_owners *o)
{
	c->owners = o;
	if ((c->owner_of = calloc(c->snap->nblocks + 1, sizeof *c->owner_of)) == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; i < o->nblocks; i++)
		if (o->blocks[i].block < c->snap->nblocks)
			c->owner_of[o->blocks[i].block] = (uint32_t)i + 1;
	return MP_OK;
}

bool category_from_owner(const mp_category_classifier *c, const mp_block_ref *r, mp_category_why *why)
{
	static const int categories[MP_OWNER__COUNT] = {
		[MP_OWNER_PARAMETER] = MP_CAT_PARAMETER, [MP_OWNER_BUFFER] = MP_CAT_BUFFER,
		[MP_OWNER_GRADIENT] = MP_CAT_GRADIENT, [MP_OWNER_OPTIMIZER_STATE] = MP_CAT_OPTIMIZER_STATE,
		[MP_OWNER_ACTIVATION] = MP_CAT_ACTIVATION, [MP_OWNER_OTHER_PYTHON] = -1, [MP_OWNER_NOT_PYTHON] = -1,
	};
	const mp_owner_block *ob;

	if (c->owner_of == NULL || r->block >= c->snap->nblocks || c->owner_of[r->block] == 0)
		return false;
	ob = &c->owners->blocks[c->owner_of[r->block] - 1];
	if (ob->owner == SIZE_MAX || categories[ob->kind] < 0)
		return false;
	why->category = (enum mp_category)categories[ob->kind];
	why->source = MP_CSRC_OWNER;
	why->owner = &c->owners->tensors[ob->owner];
	return true;
}

mp_err mp_category_classifier_owners(mp_category_classifier *c, const mp_owners *o)
{
	return o == NULL ? MP_OK : category_classifier_owners(c, o);
}

bool mp_category_owned(const mp_category_classifier *c, const mp_block_ref *r, mp_category_why *why)
{
	return category_from_owner(c, r, why);
}
