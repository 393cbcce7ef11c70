/* hold_int.h - holding every thread of a live process still with ptrace while it is read (not installed). */
#ifndef MEMPROF_HOLD_INT_H
#define MEMPROF_HOLD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mp_err.h"

typedef struct target_hold target_hold;

/* What an attempt to hold a process came to. */
enum hold_outcome {
	HOLD_HELD,    /* every thread is stopped (PTRACE_SEIZE + PTRACE_INTERRUPT), none left running */
	HOLD_TRACED,  /* another process traces it (gdb, memprof watch): nothing was done */
	HOLD_REFUSED, /* ptrace is not permitted (yama's ptrace_scope, no privilege, seccomp): nothing held */
	HOLD_SLOW,    /* a thread did not stop in time, or threads kept starting: nothing held */
};

/* Longest wait for the threads to stop, in milliseconds (a thread in uninterruptible sleep stops only
   when it wakes). */
#define HOLD_TIMEOUT_MS 2000

/* Stop every thread of process PID, including threads started while it attaches (the task list is read
   again until a pass finds no thread not yet held). No signal is sent to the process: a signal a thread
   was about to take when it stopped is given back at release. *OUT gets the hold (HOLD_HELD) or NULL;
   *OUTCOME what came of it, and WHY (SIZE bytes) a phrase saying why it is not held ("traced by pid 12
   (gdb)", "ptrace not permitted: ..."). MP_E_NOMEM, MP_E_ERRNO (the task list cannot be read) or MP_E_OK
   with any outcome. */
mp_err hold_start(pid_t pid, target_hold **out, enum hold_outcome *outcome, char *why, size_t size,
		  mp_diag *diag) MP_WUR;

/* Let every thread of H go on (giving back the signals their stops took) and free H. H may be NULL.
   Must be called from the thread that called hold_start (ptrace's rule). */
void hold_release(target_hold *h);

/* How many threads H holds, how long stopping them took and how long they have been held so far (ns). */
size_t hold_threads(const target_hold *h);
uint64_t hold_stop_ns(const target_hold *h);
uint64_t hold_held_ns(const target_hold *h);

/* Let go of every hold this process has, from a signal handler (async-signal-safe): see
   mp_target_release_all. */
pid_t hold_release_all(void);

/* Whether every thread of PID is stopped (by a tracer or a stop signal) or gone; true for a process that
   has exited. */
bool hold_all_still(pid_t pid);

#endif
