/* mp_json_stream.h - read a JSON snapshot straight into the typed model, one record at a time. */
#ifndef MEMPROF_JSON_STREAM_H
#define MEMPROF_JSON_STREAM_H

#include <stddef.h>

#include "mp_err.h"
#include "mp_snapshot.h"
#include "mp_value.h"

struct mp_json_stream_opts {
	/* Called now and then with how many bytes at the start of the text are
	   done with (never read again), so that the caller may drop their pages. */
	void (*progress)(void *ctx, size_t consumed);
	void *progress_ctx;
	/* Lists under this key of a dict are parsed but not built (MP_SKIPPED in
	   their place), as mp_json_read does; MP_ABSENT: none. */
	mp_val skip_key;
};

/* Read the JSON snapshot in TEXT (LEN bytes, no NUL terminator needed) as
   mp_json_read and mp_snapshot_from_value do together, but with cJSON given
   one value at a time: the top-level dict, its 'segments' and
   'device_traces', each segment and its 'blocks' are walked here, and each
   block and trace entry is parsed, handed to the snapshot builder and freed
   before the next, so that a big file never becomes one cJSON tree.

   It reads the shape memprof and PyTorch give a snapshot (a dict at the top),
   and nothing else: for any other input (a bare list of segments, a repeated
   key or one named like a tag where a record is, an error of any kind,
   whitespace JSON does not define) it gives up with MP_E_UNSUPPORTED and no
   message, and the caller reads the same text with mp_json_read and
   mp_snapshot_from_value, which then say what is wrong. On success the result
   equals what that way gives. MP_E_NOMEM is reported as such. On success
   *OUT owns HEAP. */
mp_err mp_json_read_snapshot(mp_heap *heap, const char *text, size_t len, const struct mp_json_stream_opts *opts,
			     mp_snapshot **out) MP_WUR;

#endif
