/* mp_frame_filter.h - which frames _memory_viz.py shows (its _frame_filter), and which of those
   are the user's own code. */
#ifndef MEMPROF_FRAME_FILTER_H
#define MEMPROF_FRAME_FILTER_H

#include <stdbool.h>

#include "mp_snapshot.h"

/* Whether _frame_filter keeps FR: false for interpreter and dispatcher
   plumbing (PyEval_*, ceval.c, core/boxing, ...). */
bool mp_frame_kept(const mp_frame *fr);

/* Whether FR is user code: kept by _frame_filter, a Python frame (a '.py'
   file or a pseudo-file such as '<stdin>'; C++ frames are not), and not in
   PyTorch itself (no 'torch/' directory in its path). */
bool mp_frame_is_user(const mp_frame *fr);

#endif
