/* mp_snapshot_extras.h - reading back the keys of a record that memprof's model does not know
   (kept in the record's SHAPE and EXTRAS, see mp_snapshot.h). */
#ifndef MEMPROF_SNAPSHOT_EXTRAS_H
#define MEMPROF_SNAPSHOT_EXTRAS_H

#include <stddef.h>

#include "mp_err.h"
#include "mp_snapshot.h"

/* The value of block B's key NAME when the model does not know NAME (MP_ABSENT if none). */
mp_val mp_block_extra_value(const mp_snapshot *snap, const mp_block *b, const char *name);

/* The same for trace entry E. */
mp_val mp_trace_extra_value(const mp_snapshot *snap, const mp_trace_entry *e, const char *name);

/* Give block I of SNAP the key NAME (one the model does not know) with VALUE (a value of SNAP's heap): after
   its other keys, or in place of the value it had. The block keeps its keys' order (PyTorch's, for a block
   built from memory). MP_E_NOMEM; MP_E_USAGE for a key the model knows. */
mp_err mp_block_set_extra(mp_snapshot *snap, size_t i, const char *name, mp_val value) MP_WUR;

#endif
