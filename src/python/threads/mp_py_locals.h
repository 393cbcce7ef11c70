/* mp_py_locals.h - the local variables of a Python frame, read from the outside: what names a module or an
   optimizer that no global names (the usual `model = ...` inside main()). */
#ifndef MEMPROF_PY_LOCALS_H
#define MEMPROF_PY_LOCALS_H

#include <stdbool.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_py.h"
#include "mp_py_runtime.h"
#include "mp_py_threads.h"
#include "mp_target.h"

/* Most locals read of one frame: a code object with more is damage. */
#define MP_PY_MAX_LOCALS 65536

/* Call CB(CTX, NAME, VALUE) for each local variable of frame F (mp_py_threads_read) that holds a value, in
   the code object's order (arguments first); cells and free variables are passed over. CB returns false to
   stop. MP_E_UNSUPPORTED for a version memprof knows no frame layout of, MP_E_CORRUPT for a frame whose
   names cannot be read. */
mp_err mp_py_frame_locals(mp_target *t, const mp_py_interp *py, const mp_py_runtime *rt, const mp_py_frame *f,
			  bool (*cb)(void *ctx, const char *name, uint64_t value), void *ctx, mp_diag *diag) MP_WUR;

#endif
