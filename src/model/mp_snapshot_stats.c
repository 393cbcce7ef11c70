/* mp_snapshot_stats.c - reading 'device_stats' (and other unknown top-level keys) back. */
#include <stdlib.h>
#include <string.h>

#include "mp_snapshot_extras.h"
#include "mp_snapshot_stats.h"
#include "snapshot_fields_int.h"

mp_val mp_snapshot_top_extra(const mp_snapshot *snap, const char *name)
{
	return mp_record_extra(snap->heap, MP_REC_TOP, snap->shape, snap->extras, name);
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
