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

/* Whether FR is the job's own code: a user frame outside installed packages (site-packages, dist-packages)
   and the interpreter's standard library: where a person would change the program. */
bool mp_frame_is_own(const mp_frame *fr);

/* The frame of FRAMES (of SNAP) a person would look at: the innermost of the job's own code, else the
   innermost user frame, else the innermost Python frame. False when FRAMES has none. */
bool mp_frames_place(const mp_snapshot *snap, mp_val frames, mp_frame *out);

/* The place FRAMES (of SNAP) name for a person: the innermost frame of the job's own code, else the
   innermost user frame, else the innermost Python frame, as "FILE.py:LINE (function)" with FILE's base
   name, in BUF of N bytes; "" when FRAMES has none. Returns BUF. */
const char *mp_frames_site(const mp_snapshot *snap, mp_val frames, char *buf, size_t n);

#endif
