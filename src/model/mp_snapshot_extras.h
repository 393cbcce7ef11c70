/* mp_snapshot_extras.h - reading back the keys of a record that memprof's model does not know
   (kept in the record's SHAPE and EXTRAS, see mp_snapshot.h). */
#ifndef MEMPROF_SNAPSHOT_EXTRAS_H
#define MEMPROF_SNAPSHOT_EXTRAS_H

#include "mp_snapshot.h"

/* The value of block B's key NAME when the model does not know NAME (MP_ABSENT if none). */
mp_val mp_block_extra_value(const mp_snapshot *snap, const mp_block *b, const char *name);

/* The same for trace entry E. */
mp_val mp_trace_extra_value(const mp_snapshot *snap, const mp_trace_entry *e, const char *name);

#endif
