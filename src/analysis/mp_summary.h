/* mp_summary.h - the `summary` analysis: torch.cuda.memory_summary() from one device's memory_stats(). */
#ifndef MEMPROF_SUMMARY_H
#define MEMPROF_SUMMARY_H

#include <stdbool.h>

#include "mp_err.h"
#include "mp_memstats.h"
#include "mp_out.h"

/* Write exactly the string torch.cuda.memory_summary(STATS->device, ABBREVIATED)
   returns when memory_stats() of that device is STATS (PyTorch 2.6 through
   2.14 print the same): the bordered table, ending in "|\n" (print() would
   add one more newline). Keys are looked up by exact name, so STATS need not
   be sorted; with repeated keys the first wins.
   As in PyTorch, keys "_" and "device" in STATS (which memory_stats() never
   has) replace the padding and the device ID in the two header lines.
   Where PyTorch raises KeyError (memory_stats() is {} before CUDA is
   initialised, or a key is missing) this fails with MP_E_NOTFOUND and a
   one-line DIAG naming the first key PyTorch would miss, and writes nothing.
   Otherwise MP_OK, or OUT's sticky error. */
mp_err mp_analysis_memory_summary(const mp_memstats *stats, bool abbreviated, mp_out *out,
				  mp_diag *diag) MP_WUR;

#endif
