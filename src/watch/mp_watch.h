/* mp_watch.h - wait in a running process for PyTorch's CUDA out-of-memory errors, the way a debugger would,
   without one: ptrace, and a hardware breakpoint (a debug register of every thread, so the process's memory is
   never written) on libstdc++'s __cxa_throw, the function every C++ throw calls with the thrown object and its
   type_info. Only a type_info named c10::OutOfMemoryError counts: the allocator has made its retry and raised,
   nothing has unwound yet. Then every thread is stopped, the caller's function runs (it reads the process:
   /proc/PID/mem), and the process goes on. Linux on x86-64 only. */
#ifndef MEMPROF_WATCH_H
#define MEMPROF_WATCH_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mp_err.h"
#include "mp_target.h"

typedef struct mp_watch mp_watch;

/* Attach to every thread of PID and arm the breakpoint. OPTS->sysroot, when set, is where the process's files
   are (a chrooted job). MP_E_NOTFOUND when the process has not loaded libstdc++ (PyTorch not imported yet),
   MP_E_ERRNO when it cannot be traced, MP_E_UNSUPPORTED off x86-64. On failure nothing stays attached. */
mp_err mp_watch_attach(pid_t pid, const mp_target_opts *opts, mp_watch **out, mp_diag *diag) MP_WUR;

/* Called at each OOM with every thread stopped: the thread that throws and the c10::OutOfMemoryError object's
   address (mp_torch_error_message reads its message). Returns false to stop watching. */
typedef bool (*mp_watch_fn)(void *ctx, pid_t pid, pid_t tid, uint64_t exception);

/* Let the process run, calling FN at each OOM, until it ends, FN returns false or *STOP becomes true (a signal
   handler's flag: waiting is interrupted by signals). *OOMS counts the OOMs seen. MP_OK when the process ended
   or the watch was stopped; MP_E_ERRNO when ptrace failed (the watch is then over: detach). */
mp_err mp_watch_run(mp_watch *w, mp_watch_fn fn, void *ctx, volatile sig_atomic_t *stop, unsigned *ooms,
		    mp_diag *diag) MP_WUR;

/* How many threads of its process W holds (0 once the process ended). */
size_t mp_watch_threads(const mp_watch *w);

/* Several processes watched in one loop (the ranks of a job): W[N], CAP allocated (zero it to start). */
typedef struct mp_watch_set {
	mp_watch **w;
	size_t n, cap;
} mp_watch_set;

/* Add W (attached) to SET; MP_E_NOMEM. */
mp_err mp_watch_set_add(mp_watch_set *set, mp_watch *w) MP_WUR;
/* Detach watch I of SET (a process that ended) and take it out, the later ones moving down one. */
void mp_watch_set_remove(mp_watch_set *set, size_t i);
/* Detach every watch of SET and empty it. */
void mp_watch_set_detach(mp_watch_set *set);

/* Called when the wait is interrupted by a signal (the caller's timer) or has nothing to wait for: it may add
   watches to SET (processes that started since) or remove those whose process ended; false ends the run. */
typedef bool (*mp_watch_tick_fn)(void *ctx, mp_watch_set *set);

/* mp_watch_run over every process of SET: at an OOM in one of them every thread of every one is stopped for FN
   (the others' state at that moment), then all go on. With TICK the run goes on while TICK wants it (when
   every process ended too: a restart brings new ones); without it, until every process ended. */
mp_err mp_watch_run_set(mp_watch_set *set, mp_watch_fn fn, mp_watch_tick_fn tick, void *ctx,
			volatile sig_atomic_t *stop, unsigned *ooms, mp_diag *diag) MP_WUR;

/* Disarm and detach from every thread still there; free W (may be NULL). */
void mp_watch_detach(mp_watch *w);

#endif
