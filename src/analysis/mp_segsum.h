/* mp_segsum.h - the `stats` analysis: _memory_viz.py's segsum(). */
#ifndef MEMPROF_SEGSUM_H
#define MEMPROF_SEGSUM_H

#include "mp_err.h"
#include "mp_out.h"
#include "mp_snapshot.h"

/* Segments of more pages than this (20 MiB each, so 80 TiB) are refused with
   MP_E_LIMIT: Python would build a string that long. */
#define MP_SEGSUM_MAX_PAGES ((int64_t)1 << 22)
/* The same for all segments together (1.25 PiB reserved). */
#define MP_SEGSUM_MAX_TOTAL_PAGES ((uint64_t)1 << 26)

/* Write exactly the text segsum(data) returns (without print's final newline).
   Where Python raises (block sizes not summing to total_size, a page index out
   of range, a missing key) this fails with a one-line DIAG and OUT holds
   partial text. MP_E_LIMIT past MP_SEGSUM_MAX_PAGES or MP_SEGSUM_MAX_TOTAL_PAGES, or for page
   maps that would take far more work than the block count explains (only
   possible with overlapping ranges, i.e. hostile sizes). */
mp_err mp_analysis_segsum(const mp_snapshot *snap, mp_out *out, mp_diag *diag) MP_WUR;

#endif
