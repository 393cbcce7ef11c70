/* mp_py_runtime.h - CPython's runtime state in a target: _PyRuntime, its interpreters, and (3.13 on) the
   _Py_DebugOffsets the interpreter publishes at its start for out-of-process readers like memprof. The
   thread and heap readers start from here. */
#ifndef MEMPROF_PY_RUNTIME_H
#define MEMPROF_PY_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_py.h"
#include "mp_target.h"

/* More interpreters than this in one process is a damaged list: the walk stops there with a warning. */
#define MP_PY_MAX_INTERPS 256
/* The bytes of _Py_DebugOffsets memprof keeps (3.13's is 584, 3.14's larger). */
#define MP_PY_DEBUG_OFFSETS_MAX 2048

typedef struct mp_py_runtime {
	uint64_t addr;       /* _PyRuntime */
	/* 3.13 on: the interpreter's own table of offsets, its cookie checked ("xdebugpy"). */
	bool has_debug_offsets;
	uint64_t debug_version;                        /* its version field: PY_VERSION_HEX of the build */
	bool free_threaded;                            /* a free-threaded (no GIL) build */
	unsigned char debug[MP_PY_DEBUG_OFFSETS_MAX];
	size_t debug_len;
	/* The interpreters, in the runtime's list order (the main one is last: new ones go to the head). */
	uint64_t interps[MP_PY_MAX_INTERPS];
	size_t ninterps;
	uint64_t main_interp;
} mp_py_runtime;

/* The runtime of the CPython PY describes (mp_py_find): MP_E_NOTFOUND when its file exports no _PyRuntime,
   MP_E_UNSUPPORTED for a free-threaded build (its objects are laid out otherwise), MP_E_CORRUPT when the
   debug cookie or the interpreter list is not what that version has. A list longer than MP_PY_MAX_INTERPS or
   with a cycle is cut there, with a warning. */
mp_err mp_py_runtime_read(mp_target *t, const mp_py_interp *py, mp_py_runtime *out, mp_diag *diag) MP_WUR;

/* The 64-bit field at byte AT of the runtime's _Py_DebugOffsets (3.13 on), or 0 when it has none or AT lies
   beyond what was read. */
uint64_t mp_py_debug_field(const mp_py_runtime *rt, size_t at);

#endif
