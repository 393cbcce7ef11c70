/* mp_snapshot_extras.c - the unknown keys of a record, by name. */
#include "mp_snapshot_extras.h"

#include <string.h>

#include "mp_snapshot_fields.h"

static bool known_key(const mp_heap *heap, enum mp_record rec, mp_val key)
{
	const struct mp_record_spec *rs = &mp_record_specs[rec];
	const char *keys = (const char *)mp_heap_keys(heap);

	for (size_t i = 0; i < rs->nfields; i++) {
		mp_val k;

		memcpy(&k, keys + rs->fields[i].key, sizeof k);
		if (k == key)
			return true;
	}
	return false;
}

mp_val mp_record_extra(const mp_heap *heap, enum mp_record rec, mp_val shape, mp_val extras, const char *name)
{
	size_t nkeys, nextra = 0, len;

	/* Most records have no unknown keys: answer before reading SHAPE. */
	if (shape == MP_ABSENT || extras == MP_ABSENT)
		return MP_ABSENT;
	nkeys = mp_heap_len(heap, shape);
	/* EXTRAS holds the values of the unknown keys, in SHAPE order. */
	for (size_t i = 0; i < nkeys; i++) {
		mp_val key = mp_heap_items(heap, shape)[i];
		const char *s;

		if (known_key(heap, rec, key))
			continue;
		s = mp_heap_atom(heap, key, &len);
		if (nextra >= mp_heap_len(heap, extras))
			return MP_ABSENT;
		if (s != NULL && mp_val_type(key) == MP_T_STR && len == strlen(name) && memcmp(s, name, len) == 0)
			return mp_heap_items(heap, extras)[nextra];
		nextra++;
	}
	return MP_ABSENT;
}

mp_val mp_block_extra_value(const mp_snapshot *snap, const mp_block *b, const char *name)
{
	return mp_record_extra(snap->heap, MP_REC_BLOCK, b->shape, b->extras, name);
}

mp_val mp_trace_extra_value(const mp_snapshot *snap, const mp_trace_entry *e, const char *name)
{
	return mp_record_extra(snap->heap, MP_REC_TRACE, e->shape, e->extras, name);
}
