/* watch_threads.c - the threads a watch holds, and what ptrace does to one: its debug registers, resuming it. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include "watch_int.h"

watch_thread *watch_find(mp_watch *w, pid_t tid)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->threads[i].tid == tid)
			return &w->threads[i];
	return NULL;
}

watch_thread *watch_add(mp_watch *w, pid_t tid)
{
	watch_thread *t = watch_find(w, tid);

	if (t != NULL)
		return t;
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		watch_thread *nt = realloc(w->threads, cap * sizeof *nt);

		if (nt == NULL)
			return NULL;
		w->threads = nt;
		w->cap = cap;
	}
	t = &w->threads[w->n++];
	*t = (watch_thread){ .tid = tid };
	return t;
}

void watch_remove(mp_watch *w, pid_t tid)
{
	watch_thread *t = watch_find(w, tid);

	if (t != NULL)
		*t = w->threads[--w->n];
}

/* DR0 holds the address; DR7's L0 bit (with R/W0 = 00 and LEN0 = 00: break on executing it) enables it. */
bool watch_arm(pid_t tid, uint64_t addr, bool on)
{
	const size_t dr0 = offsetof(struct user, u_debugreg[0]), dr6 = offsetof(struct user, u_debugreg[6]),
		     dr7 = offsetof(struct user, u_debugreg[7]);

	if (on && ptrace(PTRACE_POKEUSER, tid, (void *)dr0, (void *)(uintptr_t)addr) != 0)
		return false;
	(void)ptrace(PTRACE_POKEUSER, tid, (void *)dr6, NULL);
	return ptrace(PTRACE_POKEUSER, tid, (void *)dr7, (void *)(uintptr_t)(on ? 1 : 0)) == 0;
}

void watch_resume(mp_watch *w, watch_thread *t, int sig)
{
	(void)w;
	t->stopped = false;
	t->pending = false;
	(void)ptrace(PTRACE_CONT, t->tid, NULL, (void *)(intptr_t)sig);
}

size_t mp_watch_threads(const mp_watch *w)
{
	return w != NULL ? w->n : 0;
}
