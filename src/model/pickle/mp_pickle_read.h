/* mp_pickle_read.h - read the data subset of Python pickles (protocols 2-5) into generic values. */
#ifndef MEMPROF_PICKLE_READ_H
#define MEMPROF_PICKLE_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "mp_err.h"
#include "mp_value.h"

/* Called now and then with the number of input bytes fully consumed, so that a
   caller reading from a mapping can drop pages it will not need again. */
typedef void (*mp_pickle_progress_fn)(void *ctx, size_t consumed);

enum { MP_PICKLE_SKIP_IN_BLOCKS = 1u << 0, MP_PICKLE_SKIP_IN_TRACE = 1u << 1 };

/* Options; a NULL pointer means none. */
struct mp_pickle_opts {
	mp_pickle_progress_fn progress;
	void *progress_ctx;
	/* A projection: values stored in a dict under one of these (str) keys are
	   passed over without being built, and MP_SKIPPED stands in for them. A
	   value the skipper cannot delimit with certainty is built as usual. */
	const mp_val *skip_keys;
	size_t nskip_keys;
	/* Where they apply, for the snapshot reader (mp_pickle_read_snapshot), which knows a
	   snapshot's records: in blocks (MP_PICKLE_SKIP_IN_BLOCKS), in the trace ring's entries
	   (MP_PICKLE_SKIP_IN_TRACE), or anywhere (0, or both). The generic reader cannot tell
	   records apart: it passes over values only where they apply anywhere. */
	unsigned skip_in;
	/* Read with this thread only: no second thread passing over skipped
	   values ahead (mp_pickle_ahead.c), as the reference for tests. */
	bool one_thread;
};

/* Run the pickle in DATA (LEN bytes) and store its result in *ROOT, built in
   HEAP. Only data opcodes are understood (dict, list, tuple, str, bytes, int,
   float, bool, None, memo, frames, marks); anything that would import or call
   (GLOBAL, REDUCE, BUILD, ...) or any unknown opcode is refused with
   MP_E_UNSUPPORTED, naming the opcode and its byte offset in DIAG. Truncated
   input is MP_E_TRUNCATED; malformed input MP_E_CORRUPT; limits MP_E_LIMIT.
   OPTS may be NULL. Nothing is executed and memory stays proportional to LEN. */
mp_err mp_pickle_read(mp_heap *heap, const unsigned char *data, size_t len, mp_val *root,
		      const struct mp_pickle_opts *opts, mp_diag *diag) MP_WUR;

#endif
