/* owners_referrers.c - one referrer path for each Python tensor: the global of __main__ or, innermost frame
   first (the frame that uses it now), the local variable that holds it, or an item of a list, tuple or dict one
   of them holds (owners_variables.c's list; the names are borrowed from it). Deeper containers and attributes
   of objects that are not modules are not followed: such a tensor keeps its address as a name. */
#include <stdlib.h>

#include "owners_int.h"

mp_err owners_referrers(owners_build *b)
{
	b->ref_name = calloc(b->npytensors + 1, sizeof *b->ref_name);
	b->ref_where = calloc(b->npytensors + 1, sizeof *b->ref_where);
	if (b->ref_name == NULL || b->ref_where == NULL)
		return MP_E_NOMEM;
	/* globals, then the innermost frames first: the frame that uses a tensor now names it */
	for (size_t i = 0; i < b->nvars; i++) {
		size_t k = owners_pytensor(b, b->vars[i].value);

		if (k == SIZE_MAX || b->ref_name[k] != NULL)
			continue;
		b->ref_name[k] = b->vars[i].name;
		b->ref_where[k] = b->vars[i].where;
	}
	return MP_OK;
}
