/* mp_flamelines.h - the folded flamegraph lines of _memory_viz.py's segments(),
   memory() and compare() (what they hand to flamegraph.pl). */
#ifndef MEMPROF_FLAMELINES_H
#define MEMPROF_FLAMELINES_H

#include "mp_err.h"
#include "mp_out.h"
#include "mp_snapshot.h"

/* segments(snapshot): a line per block (and per gap), prefixed
   "stream_{stream};seg_{address}". Fails with a one-line DIAG where Python
   would raise (a missing key, a malformed legacy 'history' record). */
mp_err mp_analysis_segments(const mp_snapshot *snap, mp_out *out, mp_diag *diag) MP_WUR;

/* memory(snapshot): the same lines prefixed "stream_{stream}" only. */
mp_err mp_analysis_memory(const mp_snapshot *snap, mp_out *out, mp_diag *diag) MP_WUR;

/* compare(before['segments'], after['segments']): SUMMARY gets the two lines
   "only_before = [...]\n" and "only_after = [...]\n" listing the addresses of
   the (address, total_size) keys found on one side only, sorted ascending
   (Python prints them in set order, which is not reproducible); FOLDED gets the
   lines of those segments' blocks, prefixed "only_before;stream_S;seg_A" or
   "only_after;...", in list order. */
mp_err mp_analysis_compare(const mp_snapshot *before, const mp_snapshot *after, mp_out *summary,
			   mp_out *folded, mp_diag *diag) MP_WUR;

#endif
