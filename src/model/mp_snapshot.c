/* mp_snapshot.c - snapshot lifetime and frame access. */
#include "mp_snapshot.h"

#include <stdlib.h>

mp_err mp_snapshot_new(mp_snapshot **out)
{
	mp_snapshot *snap = calloc(1, sizeof *snap);

	if (snap == NULL)
		return MP_E_NOMEM;
	snap->heap = mp_heap_new();
	if (snap->heap == NULL) {
		free(snap);
		return MP_E_NOMEM;
	}
	*out = snap;
	return MP_OK;
}

void mp_snapshot_free(mp_snapshot *snap)
{
	if (snap == NULL)
		return;
	mp_heap_free(snap->heap);
	free(snap->segments);
	free(snap->blocks);
	free(snap->trace);
	free(snap->device_traces);
	free(snap);
}

size_t mp_frames_len(const mp_snapshot *snap, mp_val frames)
{
	if (mp_val_type(frames) != MP_T_LIST)
		return 0;
	return mp_heap_len(snap->heap, frames);
}

bool mp_frames_get(const mp_snapshot *snap, mp_val frames, size_t i, mp_frame *out)
{
	const mp_keys *k = mp_heap_keys(snap->heap);
	mp_val f, filename, name;

	if (i >= mp_frames_len(snap, frames))
		return false;
	f = mp_heap_items(snap->heap, frames)[i];
	filename = mp_heap_dict_get(snap->heap, f, k->filename);
	name = mp_heap_dict_get(snap->heap, f, k->name);
	if (mp_val_type(filename) != MP_T_STR || mp_val_type(name) != MP_T_STR ||
	    !mp_heap_get_i64(snap->heap, mp_heap_dict_get(snap->heap, f, k->line), &out->line))
		return false;
	out->filename = mp_heap_atom(snap->heap, filename, &out->filename_len);
	out->name = mp_heap_atom(snap->heap, name, &out->name_len);
	return true;
}
