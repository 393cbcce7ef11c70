/* mp_snapshot_from.c - turn the generic value of a snapshot dict into the typed model,
   by handing its records to the builder in the order they nest. */
#include "mp_snapshot.h"

#include <stddef.h>

#include "snapshot_build_int.h"

/* Give dict V to the builder as a record of kind REC (TOP, SEGMENT, BLOCK or TRACE). */
static mp_err give_record(mp_snapshot_builder *sb, const mp_heap *heap, enum mp_record rec, mp_val v)
{
	if (mp_val_type(v) != MP_T_DICT)
		return mp_sb_not_a_record(sb, rec, v);
	return mp_sb_record(sb, rec, mp_heap_items(heap, v), mp_heap_len(heap, v));
}

static mp_err read_segments(mp_snapshot_builder *sb, const mp_heap *heap, mp_val list)
{
	size_t n = mp_heap_len(heap, list);
	const mp_val *items = mp_heap_items(heap, list);

	for (size_t i = 0; i < n; i++) {
		mp_val blocks;
		size_t nb;
		mp_err err = give_record(sb, heap, MP_REC_SEGMENT, items[i]);

		if (err != MP_OK)
			return err;
		blocks = mp_sb_children(sb);
		nb = mp_heap_len(heap, blocks);
		if ((err = mp_sb_reserve_blocks(sb, nb)) != MP_OK)
			return err;
		for (size_t j = 0; j < nb && err == MP_OK; j++)
			err = give_record(sb, heap, MP_REC_BLOCK, mp_heap_items(heap, blocks)[j]);
		if (err == MP_OK)
			err = mp_sb_blocks_end(sb);
		if (err != MP_OK)
			return err;
	}
	return MP_OK;
}

static mp_err read_device_traces(mp_snapshot_builder *sb, const mp_heap *heap, mp_val lists, mp_diag *diag)
{
	size_t ndev = mp_heap_len(heap, lists);
	const mp_val *devs = mp_heap_items(heap, lists);

	for (size_t d = 0; d < ndev; d++) {
		size_t n = mp_heap_len(heap, devs[d]);
		mp_err err = MP_OK;

		if (devs[d] == MP_SKIPPED) /* shared with a list a projection passed over: read in full */
			return mp_fail(diag, MP_E_SKIPPED, "snapshot: device_traces[%zu]: was not loaded", d);
		if (mp_val_type(devs[d]) != MP_T_LIST)
			return mp_fail(diag, MP_E_TYPE, "snapshot: device_traces[%zu]: expected a list, got %s",
				       d, mp_val_type_name(devs[d]));
		for (size_t i = 0; i < n && err == MP_OK; i++)
			err = give_record(sb, heap, MP_REC_TRACE, mp_heap_items(heap, devs[d])[i]);
		if (err == MP_OK)
			err = mp_sb_device_end(sb);
		if (err != MP_OK)
			return err;
	}
	return MP_OK;
}

static mp_err read_top(mp_snapshot_builder *sb, const mp_heap *heap, mp_val root, mp_diag *diag)
{
	const mp_keys *k = mp_heap_keys(heap);
	mp_val traces;
	mp_err err;

	if (mp_val_type(root) == MP_T_LIST) {
		mp_sb_bare_list(sb);
		return read_segments(sb, heap, root);
	}
	if ((err = give_record(sb, heap, MP_REC_TOP, root)) != MP_OK)
		return err;
	if (mp_heap_dict_get(heap, root, k->segments) == MP_ABSENT)
		return mp_fail(diag, MP_E_CORRUPT, "snapshot: no 'segments' key: not a memory snapshot");
	err = read_segments(sb, heap, mp_heap_dict_get(heap, root, k->segments));
	traces = mp_heap_dict_get(heap, root, k->device_traces);
	if (err == MP_OK && traces != MP_ABSENT)
		err = read_device_traces(sb, heap, traces, diag);
	return err;
}

mp_err mp_snapshot_from_value(mp_heap *heap, mp_val root, mp_snapshot **out, mp_diag *diag)
{
	mp_snapshot_builder *sb;
	mp_err err;

	if (root == MP_SKIPPED) /* a list a projection passed over: read in full */
		return mp_fail(diag, MP_E_SKIPPED, "snapshot: the top level was not loaded");
	if (mp_val_type(root) != MP_T_DICT && mp_val_type(root) != MP_T_LIST)
		return mp_fail(diag, MP_E_TYPE, "snapshot: expected a dict or a list of segments, got %s",
			       mp_val_type_name(root));
	if ((err = mp_sb_new(heap, diag, &sb)) != MP_OK)
		return err;
	err = read_top(sb, heap, root, diag);
	if (err == MP_OK && (err = mp_sb_finish(sb, out)) == MP_OK)
		return MP_OK;
	if (err == MP_E_NOMEM)
		mp_fail(diag, err, "snapshot: out of memory");
	mp_sb_abandon(sb);
	return err;
}
