/* mp_snapshot_build.c - the typed snapshot, record by record: type checks, shapes, extras. */
#include "snapshot_build_int.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "snapshot_fields_int.h"

/* Most records have a handful of keys; a record with more unknown keys than
   this is still read, its shape just is not cached. */
#define SHAPE_CACHE_KEYS 24

/* The last key sequence seen for one kind of record, and its shape tuple:
   consecutive blocks almost always share their keys. */
struct shape_cache {
	mp_val keys[SHAPE_CACHE_KEYS];
	const struct mp_field_spec *specs[SHAPE_CACHE_KEYS]; /* each key's field, NULL for unknown keys */
	size_t n;
	mp_val shape;
};

struct mp_snapshot_builder {
	mp_snapshot *snap;
	mp_heap *heap;
	const mp_keys *k;
	mp_diag *diag;
	/* Where the record being read sits, formatted only for messages. */
	enum mp_record where_rec;
	size_t where_i, where_j;
	unsigned frames_passed_over; /* bits 1 << MP_REC_* */
	char where[160];
	struct shape_cache shapes[MP_REC__COUNT];
	mp_val children; /* the value of a MP_FK_CHILDREN key of the last record read */
	mp_val *scratch; /* unknown values of the record being read */
	size_t scratch_cap;
	size_t segments_cap, blocks_cap, trace_cap, devices_cap;
	/* The blocks of the I-th segment are the I-th group: a group ends with mp_sb_blocks_end. */
	mp_trace_list *groups;
	size_t ngroups, groups_cap;
	size_t group_first; /* the first block of the group being built */
	size_t dev_first; /* the first entry of the device list being built */
};

const char *mp_val_type_name(mp_val v)
{
	static const char *const names[] = { "nothing", "None", "bool", "int", "int", "float",
					      "str", "bytes", "list", "tuple", "dict" };
	unsigned t = (unsigned)mp_val_type(v);

	return t < sizeof names / sizeof names[0] ? names[t] : "?";
}

/* Format the current place, e.g. "segments[3].blocks[7]", into c->where. */
static const char *where(mp_snapshot_builder *c)
{
	switch (c->where_rec) {
	case MP_REC_SEGMENT:
		snprintf(c->where, sizeof c->where, "segments[%zu]", c->where_i);
		break;
	case MP_REC_BLOCK:
		snprintf(c->where, sizeof c->where, "segments[%zu].blocks[%zu]", c->where_i, c->where_j);
		break;
	case MP_REC_TRACE:
		snprintf(c->where, sizeof c->where, "device_traces[%zu][%zu]", c->where_i, c->where_j);
		break;
	default:
		c->where[0] = '\0';
		break;
	}
	return c->where;
}

static void set_where(mp_snapshot_builder *c, enum mp_record rec, size_t i, size_t j)
{
	c->where_rec = rec;
	c->where_i = i;
	c->where_j = j;
}

static mp_err bad_type(mp_snapshot_builder *c, mp_val key, const char *want, mp_val got)
{
	const char *name = mp_heap_atom(c->heap, key, NULL);

	where(c);
	return mp_fail(c->diag, MP_E_TYPE, "snapshot: %s%s'%s': expected %s, got %s", c->where,
		       c->where[0] ? "." : "", name ? name : "?", want, mp_val_type_name(got));
}


/* ---- one record */

static mp_err store_field(mp_snapshot_builder *c, const struct mp_field_spec *spec, mp_val key, mp_val v,
			  void *rec)
{
	char *at = (char *)rec + spec->offset;
	int64_t i;

	if (v == MP_SKIPPED) {
		/* Only frames and values memprof does not interpret may be left out. */
		if ((spec->kind != MP_FK_FRAMES || !(c->frames_passed_over & (1u << c->where_rec))) &&
		    spec->kind != MP_FK_ANY)
			return mp_fail(c->diag, MP_E_SKIPPED, "snapshot: %s: '%s' was not loaded",
				       where(c), mp_heap_atom(c->heap, key, NULL));
		c->snap->projected = true;
		memcpy(at, &v, sizeof v);
		return MP_OK;
	}
	switch (spec->kind) {
	case MP_FK_INT:
		if (mp_val_type(v) == MP_T_INT) /* the usual case, at once */
			i = mp_val_small_int(v);
		else if (mp_val_type(v) == MP_T_BOOL || !mp_heap_get_i64(c->heap, v, &i))
			return bad_type(c, key, "an int within 64 bits", v);
		memcpy(at, &i, sizeof i);
		return MP_OK;
	case MP_FK_STR:
		if (mp_val_type(v) != MP_T_STR)
			return bad_type(c, key, "a str", v);
		break;
	case MP_FK_BOOL:
		if (mp_val_type(v) != MP_T_BOOL)
			return bad_type(c, key, "a bool", v);
		break;
	case MP_FK_PAIR:
		if ((mp_val_type(v) != MP_T_TUPLE && mp_val_type(v) != MP_T_LIST) ||
		    mp_heap_len(c->heap, v) != 2)
			return bad_type(c, key, "a pair", v);
		if (mp_val_type(v) == MP_T_LIST) { /* JSON has no tuples */
			mp_err err = mp_heap_make(c->heap, MP_T_TUPLE, mp_heap_items(c->heap, v), 2, &v);

			if (err != MP_OK)
				return err;
		}
		break;
	case MP_FK_FRAMES:
		/* Each frame is checked by the analyses that format frames, so that
		   an odd frame does not keep the other analyses from running. */
		if (mp_val_type(v) != MP_T_LIST)
			return bad_type(c, key, "a list of frames", v);
		break;
	case MP_FK_LIST:
		if (mp_val_type(v) != MP_T_LIST)
			return bad_type(c, key, "a list", v);
		break;
	case MP_FK_ANY:
		break;
	case MP_FK_CHILDREN:
		if (mp_val_type(v) != MP_T_LIST)
			return bad_type(c, key, "a list", v);
		c->children = v;
		return MP_OK;
	}
	memcpy(at, &v, sizeof v);
	return MP_OK;
}

static const struct mp_field_spec *find_spec(const mp_snapshot_builder *c, enum mp_record rec, mp_val key)
{
	const struct mp_record_spec *rs = &mp_record_specs[rec];

	for (size_t i = 0; i < rs->nfields; i++)
		if (*(const mp_val *)((const char *)c->k + rs->fields[i].key) == key)
			return &rs->fields[i];
	return NULL;
}

/* Whether the N pairs at ITEMS have the keys of the last shape of REC, in its order. */
static bool same_shape(const mp_snapshot_builder *c, enum mp_record rec, const mp_val *items, size_t n)
{
	const struct shape_cache *sc = &c->shapes[rec];

	if (n != sc->n || sc->shape == MP_ABSENT)
		return false;
	for (size_t i = 0; i < n; i++)
		if (items[2 * i] != sc->keys[i])
			return false;
	return true;
}

/* The shape tuple of the N pairs at ITEMS, whose fields are SPECS (cached when it fits). */
static mp_err new_shape(mp_snapshot_builder *c, enum mp_record rec, const mp_val *items, size_t n,
			const struct mp_field_spec *const *specs, mp_val *shape)
{
	struct shape_cache *sc = &c->shapes[rec];
	mp_err err;

	if ((err = mp_array_grow((void **)&c->scratch, &c->scratch_cap, n, sizeof(mp_val))) != MP_OK)
		return err;
	for (size_t i = 0; i < n; i++)
		c->scratch[i] = items[2 * i];
	if ((err = mp_heap_make(c->heap, MP_T_TUPLE, c->scratch, n, shape)) != MP_OK || n > SHAPE_CACHE_KEYS)
		return err;
	if (n > 0) { /* a record with no keys has no scratch array to copy from (memcpy wants one) */
		memcpy(sc->keys, c->scratch, n * sizeof sc->keys[0]);
		memcpy(sc->specs, specs, n * sizeof sc->specs[0]);
	}
	sc->n = n;
	sc->shape = *shape;
	return MP_OK;
}

/* Read the N pairs at ITEMS as a record of kind REC into REC_PTR (its present/shape/extras too).
   Consecutive records nearly always have the same keys in the same order: then the fields
   found for the previous one serve again. */
static mp_err read_record(mp_snapshot_builder *c, enum mp_record rec, const mp_val *items, size_t n,
			  void *rec_ptr)
{
	const struct mp_record_spec *rs = &mp_record_specs[rec];
	const struct mp_field_spec *specs[SHAPE_CACHE_KEYS];
	bool same = same_shape(c, rec, items, n);
	char *base = rec_ptr;
	mp_val extras = MP_ABSENT, shape;
	uint32_t present = 0;
	size_t nextra = 0;
	mp_err err;

	c->children = MP_ABSENT;
	for (size_t i = 0; i < n; i++) {
		const struct mp_field_spec *spec = same ? c->shapes[rec].specs[i] : find_spec(c, rec, items[2 * i]);

		if (i < SHAPE_CACHE_KEYS)
			specs[i] = spec;
		if (spec == NULL) {
			c->snap->projected |= items[2 * i + 1] == MP_SKIPPED;
			err = mp_array_grow((void **)&c->scratch, &c->scratch_cap, nextra + 1, sizeof(mp_val));
			if (err != MP_OK)
				return err;
			c->scratch[nextra++] = items[2 * i + 1];
			continue;
		}
		err = store_field(c, spec, items[2 * i], items[2 * i + 1], rec_ptr);
		if (err != MP_OK)
			return err;
		present |= spec->bit;
	}
	if (nextra > 0) {
		err = mp_heap_make(c->heap, MP_T_TUPLE, c->scratch, nextra, &extras);
		if (err != MP_OK)
			return err;
	}
	shape = c->shapes[rec].shape;
	err = same ? MP_OK : new_shape(c, rec, items, n, specs, &shape);
	memcpy(base + rs->shape, &shape, sizeof shape);
	memcpy(base + rs->extras, &extras, sizeof extras);
	memcpy(base + rs->present, &present, sizeof present);
	return err;
}

/* ---- the builder */

mp_err mp_sb_new(mp_heap *heap, mp_diag *diag, mp_snapshot_builder **out)
{
	mp_snapshot_builder *c = calloc(1, sizeof *c);

	if (c == NULL || (c->snap = calloc(1, sizeof *c->snap)) == NULL) {
		free(c);
		return mp_fail(diag, MP_E_NOMEM, "snapshot: out of memory");
	}
	c->heap = heap;
	c->k = mp_heap_keys(heap);
	c->diag = diag;
	c->frames_passed_over = ~0u;
	c->snap->heap = heap;
	*out = c;
	return MP_OK;
}

void mp_sb_frames_passed_over(mp_snapshot_builder *c, unsigned records)
{
	c->frames_passed_over = records;
}

mp_err mp_sb_reserve_blocks(mp_snapshot_builder *c, size_t n)
{
	mp_snapshot *s = c->snap;

	if (n > SIZE_MAX - s->nblocks)
		return MP_E_NOMEM;
	return mp_array_grow((void **)&s->blocks, &c->blocks_cap, s->nblocks + n, sizeof *s->blocks);
}

mp_err mp_sb_not_a_record(mp_snapshot_builder *c, enum mp_record rec, mp_val got)
{
	mp_snapshot *s = c->snap;

	if (rec == MP_REC_SEGMENT)
		set_where(c, rec, s->nsegments, 0);
	else if (rec == MP_REC_BLOCK)
		set_where(c, rec, c->ngroups, s->nblocks - c->group_first);
	else
		set_where(c, rec, s->ndevice_traces, s->ntrace - c->dev_first);
	/* A value a projection passed over (an empty list shared with a frames list,
	   say) stands where a record is: the caller reads the input in full. */
	if (got == MP_SKIPPED)
		return mp_fail(c->diag, MP_E_SKIPPED, "snapshot: %s: was not loaded", where(c));
	return mp_fail(c->diag, MP_E_TYPE, "snapshot: %s: expected a dict, got %s", where(c),
		       mp_val_type_name(got));
}

mp_err mp_sb_top(mp_snapshot_builder *c, const mp_val *items, size_t n)
{
	set_where(c, MP_REC_TOP, 0, 0);
	return read_record(c, MP_REC_TOP, items, n, c->snap);
}

void mp_sb_bare_list(mp_snapshot_builder *c)
{
	c->snap->bare_list = true;
	c->snap->present = MP_F_TOP_SEGMENTS;
}

mp_err mp_sb_segment(mp_snapshot_builder *c, const mp_val *items, size_t n)
{
	const uint32_t needed = MP_F_SEG_ADDRESS | MP_F_SEG_TOTAL_SIZE | MP_F_SEG_STREAM | MP_F_SEG_BLOCKS;
	mp_snapshot *s = c->snap;
	mp_segment *seg;
	mp_err err = mp_array_grow((void **)&s->segments, &c->segments_cap, s->nsegments + 1,
				   sizeof *s->segments);

	if (err != MP_OK)
		return err;
	seg = &s->segments[s->nsegments];
	memset(seg, 0, sizeof *seg);
	set_where(c, MP_REC_SEGMENT, s->nsegments, 0);
	err = read_record(c, MP_REC_SEGMENT, items, n, seg);
	if (err != MP_OK)
		return err;
	if ((seg->present & needed) != needed)
		return mp_fail(c->diag, MP_E_CORRUPT,
			       "snapshot: %s: a segment needs 'address', 'total_size', 'stream' and 'blocks'",
			       where(c));
	s->nsegments++;
	return MP_OK;
}

mp_err mp_sb_block(mp_snapshot_builder *c, const mp_val *items, size_t n)
{
	mp_snapshot *s = c->snap;
	mp_block *b;
	mp_err err = mp_array_grow((void **)&s->blocks, &c->blocks_cap, s->nblocks + 1, sizeof *s->blocks);

	if (err != MP_OK)
		return err;
	b = &s->blocks[s->nblocks];
	memset(b, 0, sizeof *b);
	set_where(c, MP_REC_BLOCK, c->ngroups, s->nblocks - c->group_first);
	err = read_record(c, MP_REC_BLOCK, items, n, b);
	if (err != MP_OK)
		return err;
	if (!(b->present & MP_F_BLK_SIZE) || !(b->present & MP_F_BLK_STATE))
		return mp_fail(c->diag, MP_E_CORRUPT, "snapshot: %s: a block needs 'size' and 'state'",
			       where(c));
	s->nblocks++;
	return MP_OK;
}

mp_err mp_sb_blocks_end(mp_snapshot_builder *c)
{
	mp_err err = mp_array_grow((void **)&c->groups, &c->groups_cap, c->ngroups + 1, sizeof *c->groups);

	if (err != MP_OK)
		return err;
	c->groups[c->ngroups].first = c->group_first;
	c->groups[c->ngroups].n = c->snap->nblocks - c->group_first;
	c->ngroups++;
	c->group_first = c->snap->nblocks;
	return MP_OK;
}

mp_err mp_sb_trace_entry(mp_snapshot_builder *c, const mp_val *items, size_t n)
{
	mp_snapshot *s = c->snap;
	mp_trace_entry *e;
	mp_err err = mp_array_grow((void **)&s->trace, &c->trace_cap, s->ntrace + 1, sizeof *s->trace);

	if (err != MP_OK)
		return err;
	e = &s->trace[s->ntrace];
	memset(e, 0, sizeof *e);
	set_where(c, MP_REC_TRACE, s->ndevice_traces, s->ntrace - c->dev_first);
	err = read_record(c, MP_REC_TRACE, items, n, e);
	if (err != MP_OK)
		return err;
	if (!(e->present & MP_F_TR_ACTION))
		return mp_fail(c->diag, MP_E_CORRUPT, "snapshot: %s: a trace entry needs 'action'", where(c));
	s->ntrace++;
	return MP_OK;
}

mp_err mp_sb_device_end(mp_snapshot_builder *c)
{
	mp_snapshot *s = c->snap;
	mp_err err = mp_array_grow((void **)&s->device_traces, &c->devices_cap, s->ndevice_traces + 1,
				   sizeof *s->device_traces);

	if (err != MP_OK)
		return err;
	s->device_traces[s->ndevice_traces].first = c->dev_first;
	s->device_traces[s->ndevice_traces].n = s->ntrace - c->dev_first;
	s->ndevice_traces++;
	c->dev_first = s->ntrace;
	return MP_OK;
}

mp_err mp_sb_record(mp_snapshot_builder *c, enum mp_record rec, const mp_val *items, size_t n)
{
	switch (rec) {
	case MP_REC_TOP: return mp_sb_top(c, items, n);
	case MP_REC_SEGMENT: return mp_sb_segment(c, items, n);
	case MP_REC_BLOCK: return mp_sb_block(c, items, n);
	default: return mp_sb_trace_entry(c, items, n);
	}
}

uint32_t mp_sb_present(const mp_snapshot_builder *c)
{
	return c->snap->present;
}

mp_val mp_sb_children(const mp_snapshot_builder *c)
{
	return c->children;
}

mp_err mp_sb_finish(mp_snapshot_builder *c, mp_snapshot **out)
{
	mp_snapshot *s = c->snap;

	if (c->ngroups != s->nsegments || c->group_first != s->nblocks)
		return mp_fail(c->diag, MP_E_CORRUPT, "snapshot: %zu segments but %zu lists of blocks",
			       s->nsegments, c->ngroups + (c->group_first != s->nblocks));
	for (size_t i = 0; i < s->nsegments; i++) {
		s->segments[i].first_block = c->groups[i].first;
		s->segments[i].nblocks = c->groups[i].n;
	}
	if (s->segments == NULL && (s->segments = calloc(1, sizeof *s->segments)) == NULL)
		return mp_fail(c->diag, MP_E_NOMEM, "snapshot: out of memory");
	if ((s->present & MP_F_TOP_DEVICE_TRACES) && s->device_traces == NULL &&
	    (s->device_traces = calloc(1, sizeof *s->device_traces)) == NULL)
		return mp_fail(c->diag, MP_E_NOMEM, "snapshot: out of memory");
	*out = s;
	free(c->groups);
	free(c->scratch);
	free(c);
	return MP_OK;
}

void mp_sb_abandon(mp_snapshot_builder *c)
{
	if (c == NULL)
		return;
	c->snap->heap = NULL; /* still the caller's */
	mp_snapshot_free(c->snap);
	free(c->groups);
	free(c->scratch);
	free(c);
}
