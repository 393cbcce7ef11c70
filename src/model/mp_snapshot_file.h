/* mp_snapshot_file.h - load snapshot files (format detected by content) and save them. */
#ifndef MEMPROF_SNAPSHOT_FILE_H
#define MEMPROF_SNAPSHOT_FILE_H

#include <stddef.h>

#include "mp_err.h"
#include "mp_out.h"
#include "mp_snapshot.h"

enum mp_format { MP_FMT_UNKNOWN, MP_FMT_PICKLE, MP_FMT_JSON };

/* Which format the first LEN bytes of a file (HEAD) look like. This function can't fail. */
enum mp_format mp_format_detect(const unsigned char *head, size_t len);

/* The format named by PATH's extension (.json, .pickle, .pkl), or MP_FMT_UNKNOWN. */
enum mp_format mp_format_from_name(const char *path);

/* What a caller needs of a snapshot. */
enum mp_load_flags {
	/* The blocks' frames are not needed (trace), or the trace ring's (memory,
	   segments, compare), or neither's (MP_LOAD_NO_FRAMES: segsum): a file's
	   reader passes over them when the input allows (a pickle's stream reader
	   over either; the other readers over frames only when neither is needed).
	   The result is marked projected when it left some out, and cannot be saved. */
	MP_LOAD_NO_BLOCK_FRAMES = 1u << 0,
	MP_LOAD_NO_TRACE_FRAMES = 1u << 2,
	MP_LOAD_NO_FRAMES = MP_LOAD_NO_BLOCK_FRAMES | MP_LOAD_NO_TRACE_FRAMES,
	/* Read a pickle or JSON only the generic way (every value built, then
	   converted; a pickle on one thread), not with the stream readers and the
	   thread reading ahead: their reference, for tests and benchmarks. The
	   environment variables MEMPROF_NO_PICKLE_STREAM and MEMPROF_NO_JSON_STREAM
	   turn off each stream reader alone. */
	MP_LOAD_GENERIC = 1u << 1,
};

/* Load the snapshot in PATH ("-" reads standard input), pickle or JSON by content.
   FLAGS: enum mp_load_flags. On failure DIAG holds one line that names PATH. */
mp_err mp_snapshot_load(const char *path, unsigned flags, mp_snapshot **out, mp_diag *diag) MP_WUR;

/* Load a snapshot from LEN bytes at DATA; NAME is used in messages. */
mp_err mp_snapshot_load_mem(const char *name, const unsigned char *data, size_t len,
			    unsigned flags, mp_snapshot **out, mp_diag *diag) MP_WUR;

/* Write SNAP to OUT as FMT (pickle: protocol 4 that PyTorch's tools and the
   memory_viz page read; JSON: memprof's schema, src/model/SCHEMA.md). */
mp_err mp_snapshot_save(mp_snapshot *snap, enum mp_format fmt, mp_out *out, mp_diag *diag) MP_WUR;

#endif
