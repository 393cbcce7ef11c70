/* mp_snapshot_from.c - turn the generic value of a snapshot dict into the typed model. */
#include "mp_snapshot.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "mp_snapshot_fields.h"

/* Most records have a handful of keys; a record with more unknown keys than
   this is still read, its shape just is not cached. */
#define SHAPE_CACHE_KEYS 24

/* The last key sequence seen for one kind of record, and its shape tuple:
   consecutive blocks almost always share their keys. */
struct shape_cache {
	mp_val keys[SHAPE_CACHE_KEYS];
	size_t n;
	mp_val shape;
};

struct conv {
	mp_snapshot *snap;
	mp_heap *heap;
	const mp_keys *k;
	mp_diag *diag;
	/* Where the record being read sits, formatted only for messages. */
	enum mp_record where_rec;
	size_t where_i, where_j;
	char where[160];
	struct shape_cache shapes[MP_REC__COUNT];
	mp_val children; /* the value of a MP_FK_CHILDREN key of the last record read */
	mp_val *scratch; /* unknown values of the record being read */
	size_t scratch_cap;
	size_t blocks_cap, trace_cap;
};

static const char *type_name(mp_val v)
{
	static const char *const names[] = { "nothing", "None", "bool", "int", "int", "float",
					      "str", "bytes", "list", "tuple", "dict" };
	unsigned t = (unsigned)mp_val_type(v);

	return t < sizeof names / sizeof names[0] ? names[t] : "?";
}

/* Format the current place, e.g. "segments[3].blocks[7]", into c->where. */
static const char *where(struct conv *c)
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

static void set_where(struct conv *c, enum mp_record rec, size_t i, size_t j)
{
	c->where_rec = rec;
	c->where_i = i;
	c->where_j = j;
}

static mp_err bad_type(struct conv *c, mp_val key, const char *want, mp_val got)
{
	const char *name = mp_heap_atom(c->heap, key, NULL);

	where(c);
	return mp_fail(c->diag, MP_E_TYPE, "snapshot: %s%s'%s': expected %s, got %s", c->where,
		       c->where[0] ? "." : "", name ? name : "?", want, type_name(got));
}


/* ---- one record */

static mp_err store_field(struct conv *c, const struct mp_field_spec *spec, mp_val key, mp_val v,
			  void *rec)
{
	char *at = (char *)rec + spec->offset;
	int64_t i;

	if (v == MP_SKIPPED) {
		/* Only frames and values memprof does not interpret may be left out. */
		if (spec->kind != MP_FK_FRAMES && spec->kind != MP_FK_ANY)
			return mp_fail(c->diag, MP_E_SKIPPED, "snapshot: %s: '%s' was not loaded",
				       where(c), mp_heap_atom(c->heap, key, NULL));
		c->snap->projected = true;
		memcpy(at, &v, sizeof v);
		return MP_OK;
	}
	switch (spec->kind) {
	case MP_FK_INT:
		if (mp_val_type(v) == MP_T_BOOL || !mp_heap_get_i64(c->heap, v, &i))
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

static const struct mp_field_spec *find_spec(const struct conv *c, enum mp_record rec, mp_val key)
{
	const struct mp_record_spec *rs = &mp_record_specs[rec];

	for (size_t i = 0; i < rs->nfields; i++)
		if (*(const mp_val *)((const char *)c->k + rs->fields[i].key) == key)
			return &rs->fields[i];
	return NULL;
}

static mp_err record_shape(struct conv *c, enum mp_record rec, const mp_val *items, size_t n,
			   mp_val *shape)
{
	struct shape_cache *sc = &c->shapes[rec];
	mp_val keys[SHAPE_CACHE_KEYS];
	mp_err err;

	if (n <= SHAPE_CACHE_KEYS) {
		bool same = n == sc->n && sc->shape != MP_ABSENT;

		for (size_t i = 0; i < n; i++) {
			keys[i] = items[2 * i];
			same = same && keys[i] == sc->keys[i];
		}
		if (same) {
			*shape = sc->shape;
			return MP_OK;
		}
		err = mp_heap_make(c->heap, MP_T_TUPLE, keys, n, shape);
		if (err == MP_OK) {
			memcpy(sc->keys, keys, n * sizeof keys[0]);
			sc->n = n;
			sc->shape = *shape;
		}
		return err;
	}
	if ((err = mp_array_grow((void **)&c->scratch, &c->scratch_cap, n, sizeof(mp_val))) != MP_OK)
		return err;
	for (size_t i = 0; i < n; i++)
		c->scratch[i] = items[2 * i];
	return mp_heap_make(c->heap, MP_T_TUPLE, c->scratch, n, shape);
}

/* Read DICT as a record of kind REC into REC_PTR (its present/shape/extras too). */
static mp_err read_record(struct conv *c, enum mp_record rec, mp_val dict, void *rec_ptr)
{
	const struct mp_record_spec *rs = &mp_record_specs[rec];
	char *base = rec_ptr;
	const mp_val *items;
	mp_val extras = MP_ABSENT, shape;
	uint32_t present = 0;
	size_t n, nextra = 0;
	mp_err err;

	if (mp_val_type(dict) != MP_T_DICT)
		return mp_fail(c->diag, MP_E_TYPE, "snapshot: %s: expected a dict, got %s", where(c),
			       type_name(dict));
	items = mp_heap_items(c->heap, dict);
	n = mp_heap_len(c->heap, dict);
	c->children = MP_ABSENT;
	for (size_t i = 0; i < n; i++) {
		const struct mp_field_spec *spec = find_spec(c, rec, items[2 * i]);

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
	err = record_shape(c, rec, items, n, &shape);
	memcpy(base + rs->shape, &shape, sizeof shape);
	memcpy(base + rs->extras, &extras, sizeof extras);
	memcpy(base + rs->present, &present, sizeof present);
	return err;
}

/* ---- the tree */

static mp_err read_blocks(struct conv *c, mp_val list, mp_segment *seg, size_t segi)
{
	mp_snapshot *s = c->snap;
	size_t n = mp_heap_len(c->heap, list);
	const mp_val *items = mp_heap_items(c->heap, list);
	mp_err err = mp_array_grow((void **)&s->blocks, &c->blocks_cap, s->nblocks + n, sizeof *s->blocks);

	if (err != MP_OK)
		return err;
	seg->first_block = s->nblocks;
	seg->nblocks = n;
	for (size_t i = 0; i < n; i++) {
		mp_block *b = &s->blocks[s->nblocks];

		memset(b, 0, sizeof *b);
		set_where(c, MP_REC_BLOCK, segi, i);
		err = read_record(c, MP_REC_BLOCK, items[i], b);
		if (err != MP_OK)
			return err;
		if (!(b->present & MP_F_BLK_SIZE) || !(b->present & MP_F_BLK_STATE))
			return mp_fail(c->diag, MP_E_CORRUPT, "snapshot: %s: a block needs 'size' and 'state'",
				       where(c));
		s->nblocks++;
	}
	return MP_OK;
}

static mp_err read_segments(struct conv *c, mp_val list)
{
	mp_snapshot *s = c->snap;
	size_t n = mp_heap_len(c->heap, list);
	const mp_val *items = mp_heap_items(c->heap, list);

	s->segments = calloc(n ? n : 1, sizeof *s->segments);
	if (s->segments == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		mp_segment *seg = &s->segments[i];
		mp_err err;

		set_where(c, MP_REC_SEGMENT, i, 0);
		err = read_record(c, MP_REC_SEGMENT, items[i], seg);
		if (err != MP_OK)
			return err;
		if ((seg->present & (MP_F_SEG_ADDRESS | MP_F_SEG_TOTAL_SIZE | MP_F_SEG_STREAM |
				     MP_F_SEG_BLOCKS)) !=
		    (MP_F_SEG_ADDRESS | MP_F_SEG_TOTAL_SIZE | MP_F_SEG_STREAM | MP_F_SEG_BLOCKS))
			return mp_fail(c->diag, MP_E_CORRUPT,
				       "snapshot: %s: a segment needs 'address', 'total_size', 'stream' and 'blocks'",
				       where(c));
		err = read_blocks(c, c->children, seg, i);
		if (err != MP_OK)
			return err;
		s->nsegments++;
	}
	return MP_OK;
}

static mp_err read_device_traces(struct conv *c, mp_val lists)
{
	mp_snapshot *s = c->snap;
	size_t ndev = mp_heap_len(c->heap, lists);
	const mp_val *devs = mp_heap_items(c->heap, lists);

	s->device_traces = calloc(ndev ? ndev : 1, sizeof *s->device_traces);
	if (s->device_traces == NULL)
		return MP_E_NOMEM;
	for (size_t d = 0; d < ndev; d++) {
		size_t n;
		const mp_val *items;
		mp_err err;

		if (mp_val_type(devs[d]) != MP_T_LIST)
			return mp_fail(c->diag, MP_E_TYPE, "snapshot: device_traces[%zu]: expected a list, got %s",
				       d, type_name(devs[d]));
		n = mp_heap_len(c->heap, devs[d]);
		items = mp_heap_items(c->heap, devs[d]);
		err = mp_array_grow((void **)&s->trace, &c->trace_cap, s->ntrace + n, sizeof *s->trace);
		if (err != MP_OK)
			return err;
		s->device_traces[d].first = s->ntrace;
		s->device_traces[d].n = n;
		for (size_t i = 0; i < n; i++) {
			mp_trace_entry *e = &s->trace[s->ntrace];

			memset(e, 0, sizeof *e);
			set_where(c, MP_REC_TRACE, d, i);
			err = read_record(c, MP_REC_TRACE, items[i], e);
			if (err != MP_OK)
				return err;
			if (!(e->present & MP_F_TR_ACTION))
				return mp_fail(c->diag, MP_E_CORRUPT, "snapshot: %s: a trace entry needs 'action'",
					       where(c));
			s->ntrace++;
		}
		s->ndevice_traces++;
	}
	return MP_OK;
}

static mp_err read_top(struct conv *c, mp_val root)
{
	mp_snapshot *s = c->snap;
	mp_val segs, traces;
	mp_err err;

	if (mp_val_type(root) == MP_T_LIST) {
		s->bare_list = true;
		s->present = MP_F_TOP_SEGMENTS;
		return read_segments(c, root);
	}
	set_where(c, MP_REC_TOP, 0, 0);
	err = read_record(c, MP_REC_TOP, root, s);
	if (err != MP_OK)
		return err;
	if (!(s->present & MP_F_TOP_SEGMENTS))
		return mp_fail(c->diag, MP_E_CORRUPT, "snapshot: no 'segments' key: not a memory snapshot");
	segs = mp_heap_dict_get(c->heap, root, c->k->segments);
	traces = mp_heap_dict_get(c->heap, root, c->k->device_traces);
	err = read_segments(c, segs);
	if (err == MP_OK && traces != MP_ABSENT)
		err = read_device_traces(c, traces);
	return err;
}

mp_err mp_snapshot_from_value(mp_heap *heap, mp_val root, mp_snapshot **out, mp_diag *diag)
{
	struct conv c = { .heap = heap, .k = mp_heap_keys(heap), .diag = diag };
	mp_err err;

	c.snap = calloc(1, sizeof *c.snap);
	if (c.snap == NULL)
		return MP_E_NOMEM;
	c.snap->heap = heap;
	if (mp_val_type(root) != MP_T_DICT && mp_val_type(root) != MP_T_LIST)
		err = mp_fail(diag, MP_E_TYPE, "snapshot: expected a dict or a list of segments, got %s",
			      type_name(root));
	else
		err = read_top(&c, root);
	free(c.scratch);
	if (err != MP_OK) {
		if (err == MP_E_NOMEM)
			mp_fail(diag, err, "snapshot: out of memory");
		c.snap->heap = NULL; /* still the caller's */
		mp_snapshot_free(c.snap);
		return err;
	}
	*out = c.snap;
	return MP_OK;
}
