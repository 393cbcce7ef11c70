/* snapshot_fields_int.h - the known keys of each snapshot record, as data shared by
   the value-to-model reader and the model-to-value writer (private to src/model). */
#ifndef MEMPROF_SNAPSHOT_FIELDS_INT_H
#define MEMPROF_SNAPSHOT_FIELDS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "mp_snapshot.h"

enum mp_record { MP_REC_TOP, MP_REC_SEGMENT, MP_REC_BLOCK, MP_REC_TRACE, MP_REC__COUNT };

enum mp_field_kind {
	MP_FK_INT,      /* int64_t field */
	MP_FK_STR,      /* mp_val field holding a str */
	MP_FK_BOOL,     /* mp_val field holding a bool */
	MP_FK_PAIR,     /* mp_val field holding a 2-tuple (a 2-list is accepted and made a tuple) */
	MP_FK_FRAMES,   /* mp_val field holding a list of frame dicts */
	MP_FK_LIST,     /* mp_val field holding a list */
	MP_FK_ANY,      /* mp_val field holding anything */
	MP_FK_CHILDREN, /* a list of child records, read by the caller: not stored */
};

struct mp_field_spec {
	size_t key;    /* offsetof(mp_keys, ...) */
	uint32_t bit;  /* in the record's present mask */
	enum mp_field_kind kind;
	size_t offset; /* of the field in the record struct */
};

/* Fields are listed in the order PyTorch writes them, which is also the order
   used for records that have no shape (built from memory rather than a file). */
struct mp_record_spec {
	const struct mp_field_spec *fields;
	size_t nfields;
	size_t shape, extras, present; /* offsets of the record's bookkeeping fields */
};

extern const struct mp_record_spec mp_record_specs[MP_REC__COUNT];

/* The value of key NAME, unknown to records of kind REC, in a record with
   SHAPE and EXTRAS (MP_ABSENT if none) (mp_snapshot_extras.c). */
mp_val mp_record_extra(const mp_heap *heap, enum mp_record rec, mp_val shape, mp_val extras, const char *name);

#endif
