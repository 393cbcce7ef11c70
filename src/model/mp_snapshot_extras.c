/* mp_snapshot_extras.c - the unknown keys of a record, by name. */
#include "mp_snapshot_extras.h"

#include <stdlib.h>
#include <string.h>

#include "snapshot_fields_int.h"

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

/* The keys of block B in order: its shape, or for a block built from memory its present fields in spec order. */
static size_t block_keys(const mp_snapshot *snap, const mp_block *b, mp_val *out)
{
	const struct mp_record_spec *rs = &mp_record_specs[MP_REC_BLOCK];
	const char *keys = (const char *)mp_heap_keys(snap->heap);
	size_t n = 0;

	if (b->shape != MP_ABSENT) {
		n = mp_heap_len(snap->heap, b->shape);
		memcpy(out, mp_heap_items(snap->heap, b->shape), n * sizeof *out);
		return n;
	}
	for (size_t i = 0; i < rs->nfields; i++)
		if (b->present & rs->fields[i].bit)
			memcpy(&out[n++], keys + rs->fields[i].key, sizeof *out);
	return n;
}

mp_err mp_block_set_extra(mp_snapshot *snap, size_t i, const char *name, mp_val value)
{
	mp_block *b = &snap->blocks[i];
	size_t nkeys = b->shape != MP_ABSENT ? mp_heap_len(snap->heap, b->shape) : mp_record_specs[MP_REC_BLOCK].nfields;
	size_t nextra = b->extras != MP_ABSENT ? mp_heap_len(snap->heap, b->extras) : 0, n, at = SIZE_MAX, k = 0;
	mp_val key, *keys = malloc((nkeys + 1) * sizeof *keys), *vals = malloc((nextra + 1) * sizeof *vals);
	mp_err err;

	if (keys == NULL || vals == NULL || (err = mp_heap_str(snap->heap, name, strlen(name), &key)) != MP_OK) {
		free(keys);
		free(vals);
		return MP_E_NOMEM;
	}
	if (known_key(snap->heap, MP_REC_BLOCK, key)) {
		free(keys);
		free(vals);
		return MP_E_USAGE;
	}
	n = block_keys(snap, b, keys);
	if (nextra > 0)
		memcpy(vals, mp_heap_items(snap->heap, b->extras), nextra * sizeof *vals);
	/* the extras follow the unknown keys in order: find NAME's, if it has one */
	for (size_t j = 0; j < n; j++) {
		if (known_key(snap->heap, MP_REC_BLOCK, keys[j]))
			continue;
		if (keys[j] == key)
			at = k;
		k++;
	}
	if (at != SIZE_MAX && at < nextra) {
		vals[at] = value;
	} else {
		keys[n++] = key;
		vals[nextra++] = value;
	}
	if ((err = mp_heap_make(snap->heap, MP_T_TUPLE, keys, n, &b->shape)) == MP_OK)
		err = mp_heap_make(snap->heap, MP_T_TUPLE, vals, nextra, &b->extras);
	free(keys);
	free(vals);
	return err;
}
