/* mp_snapshot_stats.c - reading 'device_stats' (and other unknown top-level keys) back. */
#include <stdlib.h>
#include <string.h>

#include "mp_snapshot_fields.h"
#include "mp_snapshot_stats.h"

static bool known_top_key(const mp_heap *heap, mp_val key)
{
	const struct mp_record_spec *rs = &mp_record_specs[MP_REC_TOP];
	const char *keys = (const char *)mp_heap_keys(heap);

	for (size_t i = 0; i < rs->nfields; i++) {
		mp_val k;

		memcpy(&k, keys + rs->fields[i].key, sizeof k);
		if (k == key)
			return true;
	}
	return false;
}

mp_val mp_snapshot_top_extra(const mp_snapshot *snap, const char *name)
{
	const mp_heap *heap = snap->heap;
	size_t nkeys, nextra = 0, len;

	if (snap->shape == MP_ABSENT || snap->extras == MP_ABSENT)
		return MP_ABSENT;
	nkeys = mp_heap_len(heap, snap->shape);
	/* EXTRAS holds the values of the unknown keys, in SHAPE order. */
	for (size_t i = 0; i < nkeys; i++) {
		mp_val key = mp_heap_items(heap, snap->shape)[i];
		const char *s;

		if (known_top_key(heap, key))
			continue;
		s = mp_heap_atom(heap, key, &len);
		if (nextra >= mp_heap_len(heap, snap->extras))
			return MP_ABSENT;
		if (s != NULL && mp_val_type(key) == MP_T_STR && len == strlen(name) && memcmp(s, name, len) == 0)
			return mp_heap_items(heap, snap->extras)[nextra];
		nextra++;
	}
	return MP_ABSENT;
}

mp_err mp_snapshot_device_stats(const mp_snapshot *snap, size_t device, mp_memstats *out, size_t *ndevices,
				mp_diag *diag)
{
	const mp_heap *heap = snap->heap;
	mp_val list = mp_snapshot_top_extra(snap, "device_stats"), dict;
	size_t n;

	*ndevices = 0;
	memset(out, 0, sizeof *out);
	if (list == MP_ABSENT)
		return mp_fail(diag, MP_E_NOTFOUND, "the snapshot carries no statistics ('device_stats')");
	if (mp_val_type(list) != MP_T_LIST)
		return mp_fail(diag, MP_E_TYPE, "'device_stats' is not a list");
	*ndevices = mp_heap_len(heap, list);
	if (device >= *ndevices)
		return mp_fail(diag, MP_E_NOTFOUND, "the snapshot has statistics for %zu device(s), not for device %zu",
			       *ndevices, device);
	dict = mp_heap_items(heap, list)[device];
	if (mp_val_type(dict) != MP_T_DICT)
		return mp_fail(diag, MP_E_TYPE, "'device_stats'[%zu] is not a dict", device);
	n = mp_heap_len(heap, dict);
	out->v = calloc(n ? n : 1, sizeof *out->v);
	if (out->v == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		mp_val k = mp_heap_items(heap, dict)[2 * i], v = mp_heap_items(heap, dict)[2 * i + 1];
		size_t len;

		out->v[i].key = mp_val_type(k) == MP_T_STR ? mp_heap_atom(heap, k, &len) : NULL;
		if (out->v[i].key == NULL || !mp_heap_get_i64(heap, v, &out->v[i].value)) {
			free(out->v);
			out->v = NULL;
			return mp_fail(diag, MP_E_TYPE, "'device_stats'[%zu] holds a key or value that is not str -> int",
				       device);
		}
	}
	out->n = n;
	out->device = (int)device;
	return MP_OK;
}
