/* mp_snapshot_to.c - turn the typed model back into generic values, in the original key order. */
#include "mp_snapshot.h"

#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "snapshot_fields_int.h"

/* A growable array of handles used to assemble one container. */
struct handles {
	mp_val *v;
	size_t n, cap;
};

static mp_err handles_push(struct handles *h, mp_val v)
{
	mp_err err = mp_array_grow((void **)&h->v, &h->cap, h->n + 1, sizeof *h->v);

	if (err != MP_OK)
		return err;
	h->v[h->n++] = v;
	return MP_OK;
}

static mp_val key_of(const mp_heap *heap, const struct mp_field_spec *spec)
{
	return *(const mp_val *)((const char *)mp_heap_keys(heap) + spec->key);
}

static const struct mp_field_spec *spec_for_key(const mp_heap *heap, enum mp_record rec, mp_val key)
{
	const struct mp_record_spec *rs = &mp_record_specs[rec];

	for (size_t i = 0; i < rs->nfields; i++)
		if (key_of(heap, &rs->fields[i]) == key)
			return &rs->fields[i];
	return NULL;
}

/* The value of a known field of record REC_PTR; CHILDREN comes from the caller. */
static mp_err field_value(mp_heap *heap, const struct mp_field_spec *spec, const void *rec_ptr,
			  mp_val children, unsigned flags, mp_val *out)
{
	const char *at = (const char *)rec_ptr + spec->offset;
	int64_t i;

	switch (spec->kind) {
	case MP_FK_INT:
		memcpy(&i, at, sizeof i);
		return mp_heap_int(heap, i, out);
	case MP_FK_CHILDREN:
		*out = children;
		return MP_OK;
	case MP_FK_PAIR:
		memcpy(out, at, sizeof *out);
		if ((flags & MP_TV_POOL_ID_AS_LIST) && mp_val_type(*out) == MP_T_TUPLE)
			return mp_heap_make(heap, MP_T_LIST, mp_heap_items(heap, *out), 2, out);
		return MP_OK;
	default:
		memcpy(out, at, sizeof *out);
		return MP_OK;
	}
}

/* Build the dict of a record. CHILDREN[k] is the value of the k-th MP_FK_CHILDREN
   field in spec order. Records without a shape get PyTorch's key order. */
static mp_err record_value(mp_heap *heap, enum mp_record rec, const void *rec_ptr,
			   const mp_val *children, unsigned flags, struct handles *tmp, mp_val *out)
{
	const struct mp_record_spec *rs = &mp_record_specs[rec];
	const char *base = rec_ptr;
	mp_val shape, extras, v;
	uint32_t present;
	size_t nextra_used = 0;
	mp_err err = MP_OK;

	memcpy(&shape, base + rs->shape, sizeof shape);
	memcpy(&extras, base + rs->extras, sizeof extras);
	memcpy(&present, base + rs->present, sizeof present);
	tmp->n = 0;
	if (shape == MP_ABSENT) {
		for (size_t i = 0, kids = 0; err == MP_OK && i < rs->nfields; i++) {
			const struct mp_field_spec *spec = &rs->fields[i];
			mp_val kid = spec->kind == MP_FK_CHILDREN ? children[kids++] : MP_ABSENT;

			if (!(present & spec->bit))
				continue;
			err = field_value(heap, spec, rec_ptr, kid, flags, &v);
			if (err == MP_OK)
				err = handles_push(tmp, key_of(heap, spec));
			if (err == MP_OK)
				err = handles_push(tmp, v);
		}
		return err == MP_OK ? mp_heap_make(heap, MP_T_DICT, tmp->v, tmp->n / 2, out) : err;
	}
	for (size_t i = 0; err == MP_OK && i < mp_heap_len(heap, shape); i++) {
		mp_val key = mp_heap_items(heap, shape)[i];
		const struct mp_field_spec *spec = spec_for_key(heap, rec, key);

		if (spec == NULL) {
			if (nextra_used >= mp_heap_len(heap, extras))
				return MP_E_CORRUPT;
			v = mp_heap_items(heap, extras)[nextra_used++];
		} else {
			size_t kid = 0;

			for (const struct mp_field_spec *s = rs->fields; s < spec; s++)
				kid += s->kind == MP_FK_CHILDREN;
			err = field_value(heap, spec, rec_ptr,
					  spec->kind == MP_FK_CHILDREN ? children[kid] : MP_ABSENT, flags, &v);
		}
		if (err == MP_OK)
			err = handles_push(tmp, key);
		if (err == MP_OK)
			err = handles_push(tmp, v);
	}
	return err == MP_OK ? mp_heap_make(heap, MP_T_DICT, tmp->v, tmp->n / 2, out) : err;
}

mp_err mp_trace_entry_to_value(mp_snapshot *snap, const mp_trace_entry *e, mp_val *out)
{
	struct handles tmp = { 0 };
	mp_err err = record_value(snap->heap, MP_REC_TRACE, e, NULL, 0, &tmp, out);

	free(tmp.v);
	return err;
}

static mp_err segments_value(mp_snapshot *snap, unsigned flags, struct handles *tmp, mp_val *out)
{
	struct handles list = { 0 }, blocks = { 0 };
	mp_err err = MP_OK;

	for (size_t s = 0; err == MP_OK && s < snap->nsegments; s++) {
		const mp_segment *seg = &snap->segments[s];
		mp_val v;

		blocks.n = 0;
		for (size_t b = 0; err == MP_OK && b < seg->nblocks; b++) {
			err = record_value(snap->heap, MP_REC_BLOCK, &snap->blocks[seg->first_block + b],
					   NULL, flags, tmp, &v);
			if (err == MP_OK)
				err = handles_push(&blocks, v);
		}
		if (err == MP_OK)
			err = mp_heap_make(snap->heap, MP_T_LIST, blocks.v, blocks.n, &v);
		if (err == MP_OK)
			err = record_value(snap->heap, MP_REC_SEGMENT, seg, &v, flags, tmp, &v);
		if (err == MP_OK)
			err = handles_push(&list, v);
	}
	if (err == MP_OK)
		err = mp_heap_make(snap->heap, MP_T_LIST, list.v, list.n, out);
	free(list.v);
	free(blocks.v);
	return err;
}

static mp_err traces_value(mp_snapshot *snap, unsigned flags, struct handles *tmp, mp_val *out)
{
	struct handles devs = { 0 }, entries = { 0 };
	mp_err err = MP_OK;

	for (size_t d = 0; err == MP_OK && d < snap->ndevice_traces; d++) {
		const mp_trace_list *tl = &snap->device_traces[d];
		mp_val v;

		entries.n = 0;
		for (size_t i = 0; err == MP_OK && i < tl->n; i++) {
			err = record_value(snap->heap, MP_REC_TRACE, &snap->trace[tl->first + i], NULL,
					   flags, tmp, &v);
			if (err == MP_OK)
				err = handles_push(&entries, v);
		}
		if (err == MP_OK)
			err = mp_heap_make(snap->heap, MP_T_LIST, entries.v, entries.n, &v);
		if (err == MP_OK)
			err = handles_push(&devs, v);
	}
	if (err == MP_OK)
		err = mp_heap_make(snap->heap, MP_T_LIST, devs.v, devs.n, out);
	free(devs.v);
	free(entries.v);
	return err;
}

mp_err mp_snapshot_to_value(mp_snapshot *snap, unsigned flags, mp_val *out, mp_diag *diag)
{
	struct handles tmp = { 0 };
	mp_val kids[2] = { MP_ABSENT, MP_ABSENT };
	mp_err err = segments_value(snap, flags, &tmp, &kids[0]);

	if (err == MP_OK && snap->bare_list) {
		*out = kids[0];
		free(tmp.v);
		return MP_OK;
	}
	if (err == MP_OK && (snap->present & MP_F_TOP_DEVICE_TRACES))
		err = traces_value(snap, flags, &tmp, &kids[1]);
	if (err == MP_OK)
		err = record_value(snap->heap, MP_REC_TOP, snap, kids, flags, &tmp, out);
	free(tmp.v);
	if (err != MP_OK)
		return mp_fail(diag, err, "snapshot: cannot rebuild the snapshot value: %s",
			       mp_strerror(err));
	return MP_OK;
}
