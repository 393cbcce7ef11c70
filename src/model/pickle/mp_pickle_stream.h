/* mp_pickle_stream.h - read a snapshot pickle straight into the typed model. */
#ifndef MEMPROF_PICKLE_STREAM_H
#define MEMPROF_PICKLE_STREAM_H

#include <stddef.h>

#include "mp_err.h"
#include "mp_pickle_read.h"
#include "mp_snapshot.h"
#include "mp_value.h"

/* Run the pickle in DATA (LEN bytes) as mp_pickle_read does, but hand the
   snapshot's records (the top-level dict, segments, blocks, trace entries) to
   the snapshot builder as they complete instead of building their dicts: the
   fast way for the pickles that torch.cuda.memory._dump_snapshot() writes.
   Values inside records (frames, settings, pool ids) are built as usual, or
   passed over under OPTS' skip keys.

   It reads the shape CPython's pickler gives a snapshot, and nothing else: for
   any other input (another shape, a record shared through the memo or left
   over, a fault of any kind, bytes after STOP) it gives up with
   MP_E_UNSUPPORTED and no message, and the caller reads the same bytes with
   mp_pickle_read and mp_snapshot_from_value, which then say what is wrong. On
   success the result equals what that slower way gives. MP_E_NOMEM is
   reported as such. On success *OUT owns HEAP. */
mp_err mp_pickle_read_snapshot(mp_heap *heap, const unsigned char *data, size_t len,
			       const struct mp_pickle_opts *opts, mp_snapshot **out) MP_WUR;

#endif
