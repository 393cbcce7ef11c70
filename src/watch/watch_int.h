/* watch_int.h - the threads a watch holds (private to src/watch). */
#ifndef MEMPROF_WATCH_INT_H
#define MEMPROF_WATCH_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mp_watch.h"

typedef struct watch_thread {
	pid_t tid;
	bool armed;      /* its debug registers hold the breakpoint */
	bool stopped;    /* in a ptrace-stop we have not resumed */
	bool pending;    /* STATUS is a stop seen while stopping every thread, not acted on yet */
	int status;
} watch_thread;

struct mp_watch {
	pid_t pid;
	uint64_t bp;     /* __cxa_throw in the process */
	watch_thread *threads;
	size_t n, cap;
};

watch_thread *watch_find(mp_watch *w, pid_t tid);
watch_thread *watch_add(mp_watch *w, pid_t tid);
void watch_remove(mp_watch *w, pid_t tid);

/* Set (ON) or clear the breakpoint in thread TID's debug registers; the thread must be ptrace-stopped. */
bool watch_arm(pid_t tid, uint64_t addr, bool on);
/* Resume a stopped thread, delivering SIG (0: none). */
void watch_resume(mp_watch *w, watch_thread *t, int sig);
/* The address of __cxa_throw in the process (from its libstdc++'s .dynsym), 0 when none is mapped. */
uint64_t watch_find_throw(pid_t pid, const mp_target_opts *opts, mp_diag *diag);

#endif
