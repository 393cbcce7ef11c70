/* mp_py_threads.h - every Python thread of a target and its Python stack, read from the outside: the thread
   states of each interpreter (pthread id, native id, main thread, GIL holder, the exception it handles or
   raises) and their frames innermost first, as faulthandler and pystack print them. */
#ifndef MEMPROF_PY_THREADS_H
#define MEMPROF_PY_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_py.h"
#include "mp_py_runtime.h"
#include "mp_target.h"

/* Bounds: a longer thread list or frame chain is damage (or a loop) and is cut there with a warning. */
#define MP_PY_MAX_THREADS 4096
#define MP_PY_MAX_FRAMES 100000

/* One Python frame. */
typedef struct mp_py_frame {
	uint64_t frame;                 /* the _PyInterpreterFrame (3.11 on) or PyFrameObject (3.10) */
	uint64_t code;                  /* its code object */
	int lasti;                      /* byte offset of the instruction it is at (-2: not started, 3.10) */
	int line;                       /* PyCode_Addr2Line(code, lasti); -1: not known */
	/* co_filename, co_name, co_qualname (co_name before 3.11), malloc'd; "??" when the code object could
	   not be read (a warning says why). */
	char *filename, *name, *qualname;
} mp_py_frame;

/* One thread state. */
typedef struct mp_py_thread {
	uint64_t tstate;           /* its PyThreadState */
	uint64_t interp;           /* its PyInterpreterState */
	uint64_t thread_id;        /* pthread_self() of the thread (faulthandler's "Thread 0x...") */
	uint64_t native_thread_id; /* the kernel's TID (LWP), 3.11 on; 0: not known */
	bool is_main;              /* the main thread of the main interpreter */
	bool holds_gil;            /* the GIL is taken, by this thread */
	/* The exception this thread is handling (in an except block: sys.exception()), else the one being
	   raised: its object, its type's tp_name and str(args[0]) when that is a str (malloc'd, NULL when
	   not). 0 when none. */
	uint64_t exc;
	bool exc_raising;          /* the exception is being raised, not handled */
	char *exc_type, *exc_msg;
	mp_py_frame *frames;       /* innermost first */
	size_t nframes;
	bool frames_cut;           /* the chain was cut (damage, a loop, the bound): FRAMES is partial */
} mp_py_thread;

/* The threads of every interpreter, in each interpreter's list order (newest thread first). */
typedef struct mp_py_threads {
	mp_py_thread *threads;
	size_t nthreads;
	uint64_t main_interp;      /* the main interpreter's PyInterpreterState */
	bool gil_known;            /* whether HOLDS_GIL was read (false: the GIL's state is not known) */
	bool partial;              /* something was cut or could not be read: warnings said what */
} mp_py_threads;

/* Read every thread and its frames from T, whose CPython PY (mp_py_find) has runtime RT
   (mp_py_runtime_read). Damage below the interpreter list (a thread list or frame chain that loops or is
   too long, an unreadable code object) is a warning through DIAG and a partial result (OUT->partial).
   MP_E_UNSUPPORTED for a version memprof has no thread layout for, MP_E_CORRUPT when no thread could be
   read at all, MP_E_NOMEM. On success the caller frees OUT with mp_py_threads_free; on failure OUT is
   empty. */
mp_err mp_py_threads_read(mp_target *t, const mp_py_interp *py, const mp_py_runtime *rt, mp_py_threads *out,
			  mp_diag *diag) MP_WUR;

/* The same from T alone: finds the interpreter and its runtime first (MP_E_NOTFOUND without CPython). */
mp_err mp_py_threads_read_target(mp_target *t, mp_py_threads *out, mp_diag *diag) MP_WUR;

void mp_py_threads_free(mp_py_threads *threads);

#endif
