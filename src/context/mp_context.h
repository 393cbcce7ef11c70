/* mp_context.h - allocation contexts read out of a target: the torch::CapturedTraceback a Block or
   TraceEntry points at (its GatheredContext), decoded into the frames _snapshot() would give it:
   Python frames through the CPython reader, C++ return addresses through the symbolizer, spliced the
   way PyTorch splices them (allocator-facts §6.1, §3.9).

   Everything is interned: strings and {filename, name, line} frames once each, and each distinct
   sequence of frames once, so that the million contexts of a long job cost a number per context. */
#ifndef MEMPROF_CONTEXT_H
#define MEMPROF_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_target.h"

/* One frame as _snapshot() writes it. LINE is PyTorch's uint64 (a Python line of -1 reads 2^64 - 1). */
typedef struct mp_ctx_frame {
	const char *filename;
	const char *name;
	uint64_t line;
} mp_ctx_frame;

typedef struct mp_ctx_reader mp_ctx_reader;

/* A reader of T's contexts (T outlives it). Finds CapturedTraceback's vtable in libtorch_cpu and the
   CPython interpreter; without them contexts read as damaged (counted, see mp_ctx_report). Fails
   only for lack of memory. */
mp_err mp_ctx_open(mp_target *t, mp_ctx_reader **out, mp_diag *diag) MP_WUR;
void mp_ctx_close(mp_ctx_reader *r);

/* The frame sequence of the context at CTX (a GatheredContext*; 0: none) in *SEQ: an id, equal for
   equal sequences. A context that cannot be read gets the empty sequence (id 0) and is counted.
   Decodes each pointer once. MP_E_NOMEM is the only error. */
mp_err mp_ctx_get(mp_ctx_reader *r, uint64_t ctx, uint32_t *seq) MP_WUR;
/* A hint that mp_ctx_get(R, CTX) comes soon: its memo slot and (from a core) the context's header are
   asked of the memory system now. A million blocks have a million contexts, each lookup and each header a
   cache miss that the caller's loop otherwise waits for one at a time. This function can't fail. */
void mp_ctx_prefetch(mp_ctx_reader *r, uint64_t ctx);

/* The number of sequences (ids are below it) and the frames of sequence SEQ (ids into the frame
   table, innermost first). */
size_t mp_ctx_nseqs(const mp_ctx_reader *r);
const uint32_t *mp_ctx_seq(const mp_ctx_reader *r, uint32_t seq, size_t *n);

/* The number of distinct frames and frame ID. */
size_t mp_ctx_nframes(const mp_ctx_reader *r);
const mp_ctx_frame *mp_ctx_frame_at(const mp_ctx_reader *r, uint32_t id);

/* Counts of what was read so far. */
typedef struct mp_ctx_stats {
	size_t contexts;        /* distinct context pointers decoded */
	size_t damaged;         /* of them, unreadable or not a CapturedTraceback */
	size_t python_frames;   /* Python frames read (with repeats) */
	size_t unreadable_code; /* of them, whose code object could not be read */
	size_t cpp_frames;      /* C++ return addresses (with repeats) */
	size_t cpp_unnamed;     /* distinct C++ addresses no symbol names */
	size_t cpp_nearest;     /* distinct C++ addresses named after the nearest symbol before them */
	size_t script_frames;   /* TorchScript frames, not decoded (left out) */
} mp_ctx_stats;
void mp_ctx_get_stats(const mp_ctx_reader *r, mp_ctx_stats *out);

/* Warn through DIAG, one line per kind, of what could not be decoded (the first case's reason). */
void mp_ctx_report(const mp_ctx_reader *r, mp_diag *diag);

#endif
