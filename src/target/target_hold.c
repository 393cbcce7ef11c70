/* target_hold.c - every thread of a live process held still with ptrace (PTRACE_SEIZE + PTRACE_INTERRUPT:
   no signal reaches the process) while memprof reads it, and let go afterwards, from a signal handler too. */
#include "hold_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mp_array.h"

#define REGISTRY_SLOTS 8 /* holds one process keeps at once (a session per thread); more go unregistered */

/* A thread held, and the signal its stop took from it (given back at release). */
struct held {
	pid_t tid;
	int sig;
	bool stopped; /* its stop was seen */
};

struct target_hold {
	pid_t pid;
	pid_t tracer; /* memprof's thread that seized the threads: only it may let them go */
	/* The held threads: the signal handler reads ARRAY and COUNT without a lock, so a grown array is
	   published whole before COUNT grows, and the old one is kept until release. */
	_Atomic(struct held *) array;
	atomic_size_t count;
	size_t cap;
	struct held **retired;
	size_t nretired;
	uint64_t t0, t_stopped;
	int slot; /* in the registry, or -1 */
};

static _Atomic(target_hold *) registry[REGISTRY_SLOTS];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The state letter of thread TID of PID ('R', 'S', 't', 'Z', ...), or 0 when it is gone. */
static char thread_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "TID (COMM) S ...": the command may hold ')' itself */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ')
		return 0;
	return p[2];
}

static bool is_dead(char state)
{
	return state == 0 || state == 'Z' || state == 'X' || state == 'x';
}

/* The tracer of thread TID of PID (its TracerPid), 0 when none or unknown. */
static pid_t tracer_of(pid_t pid, pid_t tid)
{
	char path[64], line[256];
	int tracer = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "TracerPid: %d", &tracer) == 1)
			break;
	fclose(f);
	return (pid_t)tracer;
}

/* "traced by pid N (COMM)" into WHY. */
static void say_traced(pid_t tracer, char *why, size_t size)
{
	char path[64], comm[64] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "/proc/%d/comm", (int)tracer);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		if ((n = read(fd, comm, sizeof comm - 1)) > 0)
			comm[n] = '\0';
		close(fd);
	}
	comm[strcspn(comm, "\n")] = '\0';
	snprintf(why, size, "it is traced by pid %d%s%s%s", (int)tracer, comm[0] ? " (" : "", comm, comm[0] ? ")" : "");
}

/* Why PTRACE_SEIZE said EPERM (ERR), into WHY: yama's setting when it is what refuses. */
static void say_refused(int err, char *why, size_t size)
{
	int scope = -1;
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");

	if (f != NULL) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = -1;
		fclose(f);
	}
	if (scope >= 1)
		snprintf(why, size, "ptrace not permitted (kernel.yama.ptrace_scope is %d%s)", scope,
			 scope == 3 ? ": no process may attach" : geteuid() != 0 ? " and memprof is not root" : "");
	else
		snprintf(why, size, "ptrace not permitted (%s)", strerror(err));
}

/* Publish one more held thread (TID), growing the array as the signal handler expects. */
static mp_err add_held(target_hold *h, pid_t tid)
{
	size_t n = atomic_load(&h->count);
	struct held *a = atomic_load(&h->array);

	if (n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64, rcap = h->nretired;
		struct held *grown = malloc(cap * sizeof *grown);

		if (grown == NULL || mp_array_grow((void **)&h->retired, &rcap, h->nretired + 1, sizeof *h->retired) != MP_OK) {
			free(grown);
			return MP_E_NOMEM;
		}
		if (n > 0)
			memcpy(grown, a, n * sizeof *a);
		atomic_store(&h->array, grown);
		if (a != NULL)
			h->retired[h->nretired++] = a;
		h->cap = cap;
		a = grown;
	}
	a[n] = (struct held){ .tid = tid };
	atomic_store(&h->count, n + 1);
	return MP_OK;
}

static bool is_held(const target_hold *h, pid_t tid)
{
	const struct held *a = atomic_load(&h->array);
	size_t n = atomic_load(&h->count);

	for (size_t i = 0; i < n; i++)
		if (a[i].tid == tid)
			return true;
	return false;
}

/* Drop thread I from the list (it exited): the last takes its place. Never seen by the handler half done:
   the count shrinks first. */
static void drop_held(target_hold *h, size_t i)
{
	struct held *a = atomic_load(&h->array);
	size_t n = atomic_load(&h->count);
	struct held last = a[n - 1];

	atomic_store(&h->count, n - 1);
	a[i] = last;
}

/* One more look at thread I's stop: 0 not yet, 1 stopped, 2 gone (dropped: slot I holds another now). */
static int check_stop(target_hold *h, size_t i)
{
	struct held *a = atomic_load(&h->array);
	int status;
	pid_t r = waitpid(a[i].tid, &status, __WALL | WNOHANG);

	if ((r == 0 && !is_dead(thread_state(h->pid, a[i].tid))) || (r < 0 && errno == EINTR))
		return 0;
	/* A thread that exited while traced is its tracer's to reap, or it stays a zombie that keeps the job from
	   ending (its exit's notice is on its way); a leader's comes only when the others end: the kernel reaps it
	   when memprof lets go or ends. */
	if (r == 0 && a[i].tid != h->pid)
		r = waitpid(a[i].tid, &status, __WALL);
	if (r <= 0 || !WIFSTOPPED(status)) { /* it exited meanwhile */
		drop_held(h, i);
		return 2;
	}
	a[i].stopped = true;
	/* a stop for a signal (not our interrupt, not a group stop) took that signal: it goes back at release */
	if (status >> 16 == 0)
		a[i].sig = WSTOPSIG(status);
	return 1;
}

/* Wait until every held thread from FROM on has stopped; false at DEADLINE. */
static bool wait_stops(target_hold *h, size_t from, uint64_t deadline)
{
	struct timespec nap = { 0, 20000 };

	for (;;) {
		bool all = true;

		for (size_t i = from; i < atomic_load(&h->count);) {
			int r = atomic_load(&h->array)[i].stopped ? 1 : check_stop(h, i);

			all &= r != 0;
			i += r != 2;
		}
		if (all)
			return true;
		if (now_ns() > deadline)
			return false;
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 250000) /* the job stands still from the first stop on: look often */
			nap.tv_nsec *= 2;
	}
}

/* Seize and interrupt thread TID. 1 seized, 0 gone or dead, -1 refused (*OUTCOME and WHY set). */
static int seize(target_hold *h, pid_t tid, enum hold_outcome *outcome, char *why, size_t size)
{
	pid_t tracer;
	int err;

	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0) {
		err = errno;
		if (err == ESRCH || is_dead(thread_state(h->pid, tid)))
			return 0; /* exited, or a zombie (a leader that called pthread_exit): nothing to stop */
		if ((tracer = tracer_of(h->pid, tid)) != 0) {
			*outcome = HOLD_TRACED;
			say_traced(tracer, why, size);
		} else {
			*outcome = HOLD_REFUSED;
			say_refused(err, why, size);
		}
		return -1;
	}
	if (add_held(h, tid) != MP_OK) {
		(void)ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return -2;
	}
	(void)ptrace(PTRACE_INTERRUPT, tid, NULL, NULL); /* ESRCH: it is exiting; its wait says so */
	return 1;
}

/* One pass over the task list: seize every thread not yet held. *FRESH: any was. 0, -1 refused, -2 no memory. */
static int seize_pass(target_hold *h, DIR *d, bool *fresh, enum hold_outcome *outcome, char *why, size_t size)
{
	struct dirent *e;

	*fresh = false;
	rewinddir(d);
	while ((e = readdir(d)) != NULL) {
		pid_t tid = (pid_t)atoi(e->d_name);
		int r;

		if (tid <= 0 || is_held(h, tid))
			continue;
		if ((r = seize(h, tid, outcome, why, size)) < 0)
			return r;
		*fresh |= r > 0;
	}
	return 0;
}

static void registry_add(target_hold *h)
{
	h->slot = -1;
	for (int i = 0; i < REGISTRY_SLOTS && h->slot < 0; i++) {
		target_hold *none = NULL;

		if (atomic_compare_exchange_strong(&registry[i], &none, h))
			h->slot = i;
	}
}

/* Before letting go: a thread interrupted but not seen stopped yet (a hold given up) cannot be detached until
   its stop comes, and would stay traced, and then stopped for good: wait a little for it. */
static void settle_stops(target_hold *h)
{
	uint64_t deadline = now_ns() + 200000000u;

	for (size_t i = 0; i < atomic_load(&h->count); i++)
		if (!atomic_load(&h->array)[i].stopped) {
			(void)wait_stops(h, 0, deadline);
			return;
		}
}

/* Detach every thread of H (the signal handler's way too: no allocation, no lock). */
static void detach_all(target_hold *h)
{
	size_t n = atomic_load(&h->count);
	const struct held *a = atomic_load(&h->array);

	for (size_t i = 0; i < n; i++)
		(void)ptrace(PTRACE_DETACH, a[i].tid, NULL, (void *)(intptr_t)a[i].sig);
}

/* Seize every thread, pass after pass, until a pass finds none new and all have stopped. */
static mp_err hold_all(target_hold *h, enum hold_outcome *outcome, char *why, size_t size, mp_diag *diag)
{
	uint64_t deadline = h->t0 + (uint64_t)HOLD_TIMEOUT_MS * 1000000u;
	char path[64];
	bool fresh = true;
	DIR *d;
	int r = 0;

	snprintf(path, sizeof path, "/proc/%d/task", (int)h->pid);
	if ((d = opendir(path)) == NULL && errno == ENOENT)
		return mp_fail(diag, MP_E_NOTFOUND, "no process with pid %d", (int)h->pid);
	if (d == NULL)
		return mp_fail(diag, MP_E_ERRNO, "cannot list '%s': %s", path, strerror(errno));
	while (fresh) {
		size_t from = atomic_load(&h->count);

		if ((r = seize_pass(h, d, &fresh, outcome, why, size)) < 0)
			break;
		if (!wait_stops(h, from, deadline)) {
			*outcome = HOLD_SLOW;
			snprintf(why, size, "its threads did not all stop within %d ms", HOLD_TIMEOUT_MS);
			r = -1;
			break;
		}
	}
	closedir(d);
	if (r == -2)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	return MP_OK;
}

bool hold_all_still(pid_t pid)
{
	char path[64];
	struct dirent *e;
	bool still = true;
	DIR *d;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return true; /* gone */
	while (still && (e = readdir(d)) != NULL) {
		pid_t tid = (pid_t)atoi(e->d_name);
		char s = tid > 0 ? thread_state(pid, tid) : 't';

		still = s == 't' || s == 'T' || is_dead(s);
	}
	closedir(d);
	return still;
}

mp_err hold_start(pid_t pid, target_hold **out, enum hold_outcome *outcome, char *why, size_t size, mp_diag *diag)
{
	target_hold *h;
	pid_t tracer;
	mp_err err;

	*out = NULL;
	*outcome = HOLD_HELD;
	why[0] = '\0';
	/* Traced already (gdb holds it, memprof watch waits in it): ptrace allows one tracer. */
	if ((tracer = tracer_of(pid, pid)) != 0) {
		*outcome = HOLD_TRACED;
		say_traced(tracer, why, size);
		return MP_OK;
	}
	if ((h = calloc(1, sizeof *h)) == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	h->pid = pid;
	h->tracer = gettid();
	h->t0 = now_ns();
	registry_add(h);
	err = hold_all(h, outcome, why, size, diag);
	if (err != MP_OK || *outcome != HOLD_HELD) {
		hold_release(h);
		return err;
	}
	h->t_stopped = now_ns();
	*out = h;
	return MP_OK;
}

void hold_release(target_hold *h)
{
	target_hold *me = h;

	if (h == NULL)
		return;
	settle_stops(h);
	/* the signal handler may have let it go already (and taken it out) */
	if (h->slot >= 0 && atomic_compare_exchange_strong(&registry[h->slot], &me, NULL))
		detach_all(h);
	else if (h->slot < 0)
		detach_all(h);
	for (size_t i = 0; i < h->nretired; i++)
		free(h->retired[i]);
	free(h->retired);
	free(atomic_load(&h->array));
	free(h);
}

size_t hold_threads(const target_hold *h)
{
	return h != NULL ? atomic_load(&h->count) : 0;
}

uint64_t hold_stop_ns(const target_hold *h)
{
	return h != NULL ? h->t_stopped - h->t0 : 0;
}

uint64_t hold_held_ns(const target_hold *h)
{
	return h != NULL ? now_ns() - h->t_stopped : 0;
}

pid_t hold_release_all(void)
{
	pid_t me = gettid(), other = 0;

	for (int i = 0; i < REGISTRY_SLOTS; i++) {
		target_hold *h = atomic_load(&registry[i]);

		if (h == NULL)
			continue;
		if (h->tracer != me) { /* only its tracer thread may let it go */
			other = h->tracer;
			continue;
		}
		if (atomic_compare_exchange_strong(&registry[i], &h, NULL))
			detach_all(h);
	}
	return other;
}
