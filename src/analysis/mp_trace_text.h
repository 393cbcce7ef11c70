/* mp_trace_text.h - the `trace` analysis: _memory_viz.py's trace(), with its bugs fixed. */
#ifndef MEMPROF_TRACE_TEXT_H
#define MEMPROF_TRACE_TEXT_H

#include "mp_err.h"
#include "mp_out.h"
#include "mp_snapshot.h"

/* Write what trace(data) returns (without print's final newline), for each
   non-empty ring of device_traces, with the four fixes listed at the top of
   mp_trace_text.c and in tests/oracle/TRACE-DEVIATIONS.md. Entries of other
   actions are written as repr() of their dict, which is built in SNAP's heap
   (hence the non-const SNAP). Fails with a one-line DIAG where Python would
   raise: no 'device_traces', or an entry without a key its action needs. */
mp_err mp_analysis_trace(mp_snapshot *snap, mp_out *out, mp_diag *diag) MP_WUR;

/* mp_analysis_trace writing only the last N entries of each ring (N = 0, or N
   at least the ring's length: all of it, byte for byte as mp_analysis_trace).
   The entries before still name allocations and segments and count in TOTAL
   MEM (which stays the whole ring's), so what is shown reads as in the full
   listing; a ring cut short says so in its count line: "40 entries, the last
   5 shown". Fails as mp_analysis_trace does, for hidden entries too. */
mp_err mp_analysis_trace_last(mp_snapshot *snap, size_t n, mp_out *out, mp_diag *diag) MP_WUR;

#endif
