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

#endif
