/* watch_attach.c - finding __cxa_throw in the process, and attaching to (and detaching from) every thread. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "mp_elf.h"
#include "watch_int.h"

uint64_t watch_find_throw(pid_t pid, const mp_target_opts *opts, mp_diag *diag)
{
	const mp_mapping *maps;
	mp_target *t;
	uint64_t addr = 0;
	size_t n;

	if (mp_target_open_pid(pid, opts, &t, diag) != MP_OK)
		return 0;
	n = mp_target_mappings(t, &maps);
	for (size_t i = 0; i < n && addr == 0; i++) {
		const mp_mapping *m = &maps[i];
		const char *base = m->path != NULL ? strrchr(m->path, '/') : NULL;
		mp_elf_sym sym;
		uint64_t bias;
		mp_elf *e;

		/* the file's first mapping, the one its load bias comes from */
		if (base == NULL || strncmp(base + 1, "libstdc++.so", 12) != 0 || m->file_offset != 0 ||
		    m->local_path == NULL || mp_elf_open(m->local_path, &e, NULL) != MP_OK)
			continue;
		if (mp_elf_load_bias(e, m->start, 0, &bias, NULL) == MP_OK &&
		    mp_elf_symbol(e, "__cxa_throw", MP_ELF_DYNSYM, &sym, NULL) == MP_OK && sym.defined)
			addr = bias + sym.value;
		mp_elf_close(e);
	}
	mp_target_close(t);
	return addr;
}

/* Seize TID, stop it and arm it. False when it is gone (or cannot be traced: ERRNO set). */
static bool hold(mp_watch *w, pid_t tid)
{
	watch_thread *t;
	int st;

	if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(intptr_t)PTRACE_O_TRACECLONE) != 0)
		return false;
	if ((t = watch_add(w, tid)) == NULL) {
		(void)ptrace(PTRACE_DETACH, tid, NULL, NULL);
		errno = ENOMEM;
		return false;
	}
	(void)ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
	if (waitpid(tid, &st, __WALL) != tid || !WIFSTOPPED(st)) {
		watch_remove(w, tid);
		return false;
	}
	t->stopped = true;
	/* a stop other than the interrupt's (a signal) is acted on once the watch runs */
	if (st >> 16 != PTRACE_EVENT_STOP) {
		t->pending = true;
		t->status = st;
	}
	t->armed = watch_arm(tid, w->bp, true);
	return t->armed;
}

/* Hold every thread of the process, those it starts meanwhile too: read the task list until it has no new one. */
static mp_err hold_all(mp_watch *w, mp_diag *diag)
{
	char dir[64];
	bool more = true;

	snprintf(dir, sizeof dir, "/proc/%d/task", (int)w->pid);
	while (more) {
		DIR *d = opendir(dir);
		struct dirent *e;

		if (d == NULL)
			return mp_fail(diag, MP_E_ERRNO, "pid %d: %s", (int)w->pid, strerror(errno));
		more = false;
		while ((e = readdir(d)) != NULL) {
			pid_t tid = (pid_t)atoi(e->d_name);

			if (tid <= 0 || watch_find(w, tid) != NULL)
				continue;
			more = true;
			if (!hold(w, tid) && errno != ESRCH) {
				int saved = errno;

				closedir(d);
				return mp_fail(diag, MP_E_ERRNO, "cannot trace pid %d (thread %d): %s", (int)w->pid, (int)tid,
					       strerror(saved));
			}
		}
		closedir(d);
	}
	return w->n > 0 ? MP_OK : mp_fail(diag, MP_E_NOTFOUND, "pid %d has no thread left", (int)w->pid);
}

mp_err mp_watch_attach(pid_t pid, const mp_target_opts *opts, mp_watch **out, mp_diag *diag)
{
	mp_watch *w;
	mp_err err;

	*out = NULL;
#if !defined(__x86_64__)
	(void)pid;
	(void)opts;
	return mp_fail(diag, MP_E_UNSUPPORTED, "watching needs x86-64's debug registers");
#else
	if ((w = calloc(1, sizeof *w)) == NULL)
		return MP_E_NOMEM;
	w->pid = pid;
	if ((w->bp = watch_find_throw(pid, opts, diag)) == 0) {
		free(w);
		return diag != NULL && diag->msg[0] != '\0'
			       ? MP_E_NOTFOUND
			       : mp_fail(diag, MP_E_NOTFOUND, "pid %d has no libstdc++ with __cxa_throw mapped (has it "
					 "imported torch?)", (int)pid);
	}
	if ((err = hold_all(w, diag)) != MP_OK) {
		mp_watch_detach(w);
		return err;
	}
	for (size_t i = 0; i < w->n; i++)
		if (!w->threads[i].pending)
			watch_resume(w, &w->threads[i], 0);
	*out = w;
	return MP_OK;
#endif
}

void mp_watch_detach(mp_watch *w)
{
	if (w == NULL)
		return;
	/* each thread must be stopped to clear its debug registers: a breakpoint left armed would kill the
	   process (SIGTRAP) at its next throw */
	for (size_t i = 0; i < w->n; i++) {
		watch_thread *t = &w->threads[i];
		int st, sig = 0;

		if (!t->stopped) {
			(void)ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
			if (waitpid(t->tid, &st, __WALL) != t->tid || !WIFSTOPPED(st))
				continue;
			t->pending = st >> 16 != PTRACE_EVENT_STOP;
			t->status = st;
		}
		/* a signal that stopped it is delivered on the way out; our own traps are not */
		if (t->pending && t->status >> 16 == 0 && WSTOPSIG(t->status) != SIGTRAP)
			sig = WSTOPSIG(t->status);
		(void)watch_arm(t->tid, 0, false);
		(void)ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(intptr_t)sig);
	}
	free(w->threads);
	free(w);
}
