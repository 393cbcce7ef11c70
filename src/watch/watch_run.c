/* watch_run.c - the watch's wait loop: new threads get the breakpoint, signals go on to the process, and at
   the breakpoint a c10::OutOfMemoryError stops every thread (of every process watched) for the caller's function; any other throw, and
   the OOM once reported, steps over the breakpoint (disarmed for one instruction) and goes on. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mp_array.h"
#include "mp_torch_error.h"
#include "watch_int.h"

static bool read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	pid_t pid = *(const pid_t *)ctx;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

/* Run thread T, stopped at the breakpoint, over its first instruction with the breakpoint off, and arm it again:
   it stays stopped. A signal that comes instead is kept for it (it is delivered when T resumes). */
static void step_over(mp_watch *w, watch_thread *t, int *sig)
{
	int st;

	*sig = 0;
	(void)watch_arm(t->tid, 0, false);
	if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, NULL) != 0)
		return;
	while (waitpid(t->tid, &st, __WALL) == t->tid) {
		if (!WIFSTOPPED(st)) {
			watch_remove(w, t->tid);
			return;
		}
		if (WSTOPSIG(st) == SIGTRAP && st >> 16 == 0)
			break;
		if (st >> 16 == 0)
			*sig = WSTOPSIG(st);
		if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, NULL) != 0)
			return;
	}
	t->armed = watch_arm(t->tid, w->bp, true);
}

/* Stop every other thread; the stops they report instead of the interrupt's are kept to act on after. */
static void stop_others(mp_watch *w, pid_t me)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->threads[i].tid != me && !w->threads[i].stopped)
			(void)ptrace(PTRACE_INTERRUPT, w->threads[i].tid, NULL, NULL);
	for (size_t i = 0; i < w->n; i++) {
		watch_thread *t = &w->threads[i];
		int st;

		if (t->tid == me || t->stopped)
			continue;
		if (waitpid(t->tid, &st, __WALL) != t->tid || !WIFSTOPPED(st)) {
			watch_remove(w, t->tid);
			i--;
			continue;
		}
		t->stopped = true;
		/* a thread created since is armed on its first stop, which this may be */
		if (!t->armed)
			t->armed = watch_arm(t->tid, w->bp, true);
		if (st >> 16 != PTRACE_EVENT_STOP) {
			t->pending = true;
			t->status = st;
		}
	}
}

typedef struct run {
	mp_watch_set *set;
	mp_watch_fn fn;
	void *ctx;
	unsigned *ooms;
	bool done;
} run;

static void dispatch(run *r, pid_t tid, int st);

/* The process thread TID belongs to (/proc/TID/status's Tgid), -1 when it cannot be read. */
static pid_t process_of(pid_t tid)
{
	char path[64], line[256];
	long tgid = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (tgid < 0 && fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "Tgid: %ld", &tgid) != 1)
			tgid = -1;
	fclose(f);
	return (pid_t)tgid;
}

/* The watch of thread TID: the one that holds it, else the one of its process (a new thread's first stop
   comes before its creator's clone event); NULL for a thread of none. */
static mp_watch *watch_of(run *r, pid_t tid)
{
	pid_t pid;

	for (size_t i = 0; i < r->set->n; i++)
		if (watch_find(r->set->w[i], tid) != NULL)
			return r->set->w[i];
	if (r->set->n == 1) /* one process: every thread traced is its */
		return r->set->w[0];
	pid = process_of(tid);
	for (size_t i = 0; pid > 0 && i < r->set->n; i++)
		if (r->set->w[i]->pid == pid)
			return r->set->w[i];
	return NULL;
}

/* Let every stopped thread of W but TID go on; those that stopped for something of their own are dealt with. */
static void resume_others(run *r, mp_watch *w, pid_t tid)
{
	for (size_t i = 0; i < w->n; i++) {
		watch_thread *o = &w->threads[i];

		if (o->tid == tid || !o->stopped)
			continue;
		if (o->pending)
			dispatch(r, o->tid, o->status);
		else
			watch_resume(w, o, 0);
	}
}

/* Thread T of W stopped at the breakpoint. At an OOM every thread of every watched process is held for the
   caller's function (the others' state at that moment), then they go on. */
static void hit(run *r, mp_watch *w, watch_thread *t)
{
	struct user_regs_struct regs;
	pid_t tid = t->tid;
	int sig;

	if (ptrace(PTRACE_GETREGS, tid, NULL, &regs) == 0 && (uint64_t)regs.rip == w->bp &&
	    mp_torch_throws_oom(read_mem, &w->pid, (uint64_t)regs.rsi)) {
		(*r->ooms)++;
		for (size_t i = 0; i < r->set->n; i++)
			stop_others(r->set->w[i], tid);
		if (!r->fn(r->ctx, w->pid, tid, regs.rdi))
			r->done = true;
		/* the others go on first */
		for (size_t i = 0; i < r->set->n; i++)
			resume_others(r, r->set->w[i], tid);
		if ((t = watch_find(w, tid)) == NULL)
			return;
	}
	step_over(w, t, &sig);
	if ((t = watch_find(w, tid)) != NULL)
		watch_resume(w, t, sig);
}

static bool group_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Act on status ST of thread TID. */
static void dispatch(run *r, pid_t tid, int st)
{
	mp_watch *w = watch_of(r, tid);
	watch_thread *t = w != NULL ? watch_find(w, tid) : NULL;
	int event = st >> 16, sig;

	if (w == NULL)
		return; /* no thread of ours (a process that ended, a child of the caller's) */
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		watch_remove(w, tid);
		return;
	}
	if (!WIFSTOPPED(st))
		return;
	sig = WSTOPSIG(st);
	if (t == NULL) {
		/* a new thread's first stop, before its creator's clone event */
		if ((t = watch_add(w, tid)) == NULL) {
			(void)ptrace(PTRACE_DETACH, tid, NULL, NULL);
			return;
		}
	}
	t->stopped = true;
	t->pending = false;
	if (!t->armed)
		t->armed = watch_arm(tid, w->bp, true);
	if (event == PTRACE_EVENT_CLONE) {
		unsigned long child;

		/* the child reports its own first stop; it is armed then */
		if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &child) == 0 && watch_find(w, (pid_t)child) == NULL)
			(void)watch_add(w, (pid_t)child);
		watch_resume(w, t, 0);
	} else if (event == PTRACE_EVENT_STOP) {
		/* a group stop (SIGSTOP and the like) is left in place, as without us; any other is our interrupt */
		if (group_stop_signal(sig)) {
			t->stopped = false;
			(void)ptrace(PTRACE_LISTEN, tid, NULL, NULL);
		} else {
			watch_resume(w, t, 0);
		}
	} else if (sig == SIGTRAP && event == 0) {
		unsigned long dr6 = (unsigned long)ptrace(PTRACE_PEEKUSER, tid,
							  (void *)offsetof(struct user, u_debugreg[6]), NULL);

		if (dr6 & 1)
			hit(r, w, t);
		else
			watch_resume(w, t, SIGTRAP); /* not ours */
	} else {
		watch_resume(w, t, event == 0 ? sig : 0);
	}
}

/* Act on the stops each watch saw while it was attached (those acted on are no longer pending). */
static void dispatch_pending(run *r)
{
	for (size_t k = 0; k < r->set->n; k++)
		for (size_t i = 0; i < r->set->w[k]->n; i++)
			if (r->set->w[k]->threads[i].pending)
				dispatch(r, r->set->w[k]->threads[i].tid, r->set->w[k]->threads[i].status);
}

static size_t threads_watched(const mp_watch_set *set)
{
	size_t n = 0;

	for (size_t i = 0; i < set->n; i++)
		n += set->w[i]->n;
	return n;
}

mp_err mp_watch_run_set(mp_watch_set *set, mp_watch_fn fn, mp_watch_tick_fn tick, void *ctx,
			volatile sig_atomic_t *stop, unsigned *ooms, mp_diag *diag)
{
	run r = { set, fn, ctx, ooms, false };

	*ooms = 0;
	dispatch_pending(&r);
	while (!r.done && !(stop != NULL && *stop) && (tick != NULL || threads_watched(set) > 0)) {
		int st;
		pid_t tid = waitpid(-1, &st, __WALL);

		if (tid < 0 && errno != EINTR && errno != ECHILD)
			return mp_fail(diag, MP_E_ERRNO, "waiting for the watched processes: %s", strerror(errno));
		if (tid < 0 && errno == ECHILD && tick == NULL)
			break;
		if (tid < 0) { /* interrupted (the caller's timer), or nothing to wait for yet: the caller's turn */
			if (errno == ECHILD)
				pause();
			if (tick != NULL && !(stop != NULL && *stop) && !tick(ctx, set))
				break;
			dispatch_pending(&r); /* the stops of the watches it added */
			continue;
		}
		dispatch(&r, tid, st);
	}
	return MP_OK;
}

mp_err mp_watch_run(mp_watch *w, mp_watch_fn fn, void *ctx, volatile sig_atomic_t *stop, unsigned *ooms,
		    mp_diag *diag)
{
	mp_watch *one[1] = { w };
	mp_watch_set set = { one, 1, 1 };

	return mp_watch_run_set(&set, fn, NULL, ctx, stop, ooms, diag);
}

mp_err mp_watch_set_add(mp_watch_set *set, mp_watch *w)
{
	mp_err err = mp_array_grow((void **)&set->w, &set->cap, set->n + 1, sizeof *set->w);

	if (err == MP_OK)
		set->w[set->n++] = w;
	return err;
}

void mp_watch_set_remove(mp_watch_set *set, size_t i)
{
	if (i >= set->n)
		return;
	mp_watch_detach(set->w[i]);
	memmove(&set->w[i], &set->w[i + 1], (set->n - i - 1) * sizeof *set->w);
	set->n--;
}

void mp_watch_set_detach(mp_watch_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		mp_watch_detach(set->w[i]);
	free(set->w);
	*set = (mp_watch_set){ 0 };
}
