/* py_threads_int.h - what the thread reader's files share: where the fields of thread states, frames and
   the GIL are in one CPython version, and the frame walk. */
#ifndef MEMPROF_PY_THREADS_INT_H
#define MEMPROF_PY_THREADS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_py.h"
#include "mp_py_runtime.h"
#include "mp_py_threads.h"
#include "mp_target.h"

/* How a version chains its frames. */
enum py_frame_kind {
	PY_FRAMES_OBJECTS,     /* 3.10: PyFrameObject, f_back, f_lasti in code units */
	PY_FRAMES_INTERP,      /* 3.11 on: _PyInterpreterFrame, previous, an instruction pointer */
};

/* Byte offsets (0 where the version has no such field, unless said otherwise). */
typedef struct py_thread_layout {
	int minor;
	const char *source;        /* "table" or "_Py_DebugOffsets": for messages */
	/* PyInterpreterState */
	uint32_t interp_threads_head;
	uint32_t interp_threads_main;  /* its main thread's PyThreadState* (3.13 on) */
	uint32_t interp_gil_ptr;       /* ceval.gil, a pointer to the GIL's state (3.12 on) */
	/* _PyRuntime */
	uint32_t runtime_gil;          /* ceval.gil, the GIL's state itself (3.10, 3.11) */
	uint32_t runtime_main_thread;  /* main_thread: the main thread's pthread id (3.10 to 3.12) */
	/* struct _gil_runtime_state */
	uint32_t gil_holder, gil_locked;
	/* PyThreadState */
	uint32_t ts_size;
	uint32_t ts_next, ts_interp, ts_thread_id, ts_native_thread_id;
	uint32_t ts_frame;             /* 3.10: frame; 3.13 on: current_frame */
	uint32_t ts_cframe;            /* 3.11, 3.12: cframe (then CFRAME_CURRENT in it) */
	uint32_t cframe_current;
	uint32_t ts_exc_info;
	uint32_t ts_curexc_type, ts_curexc_value; /* 3.10, 3.11: the exception being raised */
	uint32_t ts_current_exception;  /* 3.12 on */
	/* _PyErr_StackItem */
	uint32_t exc_item_value, exc_item_previous;
	/* frames */
	enum py_frame_kind kind;
	uint32_t frame_size;
	uint32_t f_back, f_code, f_lasti;   /* f_lasti: 3.10's int; 3.11 on: the instruction pointer */
	uint32_t f_owner;                   /* the owner byte (3.11 on) */
	int owner_generator, owner_cstack;  /* owner values; owner_cstack -1: none. 3.14: and above */
	bool code_tagged;                   /* 3.14: f_executable is a tagged _PyStackRef */
	/* PyCodeObject */
	uint32_t code_adaptive, code_firsttraceable;
} py_thread_layout;

/* The layout of PY's version: from RT's _Py_DebugOffsets where it has them (checked: every field inside its
   struct), else from memprof's table. MP_E_UNSUPPORTED for a version with neither. */
mp_err py_thread_layout_get(const mp_py_interp *py, const mp_py_runtime *rt, py_thread_layout *out,
			    mp_diag *diag) MP_WUR;

/* Code objects read once per walk, by address. */
struct py_code_cache;
struct py_code_cache *py_code_cache_new(void);
void py_code_cache_free(struct py_code_cache *cache);

/* The frames of thread state TSTATE into TH (frames, nframes, frames_cut), innermost first. Damage is a
   warning through DIAG and a cut chain; only MP_E_NOMEM is returned. */
mp_err py_frames_read(mp_target *t, const mp_py_interp *py, const py_thread_layout *l, struct py_code_cache *cache,
		      uint64_t tstate, mp_py_thread *th, mp_diag *diag) MP_WUR;

#endif
