/* mp_frame_filter.h - which frames _memory_viz.py shows (its _frame_filter), and which of those
   are the user's own code. */
#ifndef MEMPROF_FRAME_FILTER_H
#define MEMPROF_FRAME_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "mp_snapshot.h"

/* Whether _frame_filter keeps FR: false for interpreter and dispatcher
   plumbing (PyEval_*, ceval.c, core/boxing, ...). */
bool mp_frame_kept(const mp_frame *fr);

/* Whether FR is user code: kept by _frame_filter, a Python frame (a '.py'
   file or a pseudo-file such as '<stdin>'; C++ frames are not), and not in
   PyTorch itself (no 'torch/' directory in its path). */
bool mp_frame_is_user(const mp_frame *fr);

/* Whether the source file FILE (LEN bytes, not NUL-terminated) belongs to installed code, not to the
   job's own: a package under site-packages/ or dist-packages/, the interpreter's standard library
   (.../lib/python3.N/), a frozen module ("<frozen runpy>"), or PyTorch itself. */
bool mp_path_installed(const char *file, size_t len);

/* Whether FR is the job's own code: a user frame (mp_frame_is_user) whose file is not installed. */
bool mp_frame_is_own(const mp_frame *fr);

/* The frame of FRAMES (of SNAP) a person would look at ("the place"): the innermost of the job's own code,
   else the innermost user frame (Python, not torch's; an installed package's then), else the innermost Python
   frame, else the innermost C++ frame _memory_viz keeps outside the stack capture itself (memory_snapshot.cpp).
   False when FRAMES has none. */
bool mp_frames_place(const mp_snapshot *snap, mp_val frames, mp_frame *out);

/* How much frame F is "the place" mp_frames_place looks for: 4 the job's own code, 3 other user code, 2 other
   Python, 1 C++ outside the stack capture itself, 0 a frame never chosen (filtered out, no file). The highest,
   innermost first, is the place; a caller that meets the same frame dicts again and again may keep the rank of
   each. This function can't fail. */
int mp_frame_place_rank(const mp_frame *f);

/* Frame F as "FILE:LINE (function)" with FILE's base name, in BUF of N bytes. Returns BUF. */
const char *mp_frame_site_text(const mp_frame *f, char *buf, size_t n);

/* mp_frames_place's frame as mp_frame_site_text writes it; "" when FRAMES has none. Returns BUF. */
const char *mp_frames_site(const mp_snapshot *snap, mp_val frames, char *buf, size_t n);

#endif
