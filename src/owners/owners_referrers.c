/* owners_referrers.c - one referrer path for each Python tensor: the first path of owners_variables.c's list
   that reaches it (a global of __main__, a local of the job's own outer frames, an attribute or item below
   one; the names are borrowed from the list). A tensor only the frames of installed code or of a forward hold
   (an activation being computed, `input` of a GELU) keeps its address as a name: those locals are gone at the
   next call, and deleting them is nothing a user can do; where they hold it is kept as its referrer. */
#include <stdlib.h>

#include "owners_int.h"

mp_err owners_referrers(owners_build *b)
{
	b->ref_name = calloc(b->npytensors + 1, sizeof *b->ref_name);
	b->ref_where = calloc(b->npytensors + 1, sizeof *b->ref_where);
	if (b->ref_name == NULL || b->ref_where == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; i < b->nvars; i++) {
		size_t k = owners_pytensor(b, b->vars[i].value);

		if (k == SIZE_MAX || b->ref_where[k] != NULL)
			continue;
		b->ref_name[k] = b->vars[i].stable ? b->vars[i].name : NULL;
		b->ref_where[k] = b->vars[i].where;
	}
	return MP_OK;
}
