/* target_pid.c - a target over a live process: process_vm_readv, or /proc/PID/mem where that
   is refused; optionally ptrace-stopped (every thread) while it is read. Never writes to it. */
#include "target_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mp_array.h"

#define CMDLINE_MAX (64u * 1024)
#define STOP_PASSES 8 /* re-scans of /proc/PID/task for threads started meanwhile */

/* A thread we hold stopped, and the signal its stop swallowed (given back at detach). */
struct held {
	pid_t tid;
	int sig;
};

struct pid_src {
	pid_t pid;
	bool proc_mem; /* process_vm_readv refused: read /proc/PID/mem */
	int memfd;     /* /proc/PID/mem, -1 until needed, -2 when it cannot be opened */
	struct held *held;
	size_t nheld, capheld;
};

static size_t read_proc_mem(struct pid_src *s, uint64_t addr, unsigned char *buf, size_t len)
{
	size_t done = 0;
	char path[64];

	if (s->memfd == -1) {
		snprintf(path, sizeof path, "/proc/%d/mem", (int)s->pid);
		s->memfd = open(path, O_RDONLY | O_CLOEXEC);
		if (s->memfd < 0)
			s->memfd = -2;
	}
	if (s->memfd < 0 || addr > (uint64_t)INT64_MAX)
		return 0;
	while (done < len) {
		ssize_t n = pread(s->memfd, buf + done, len - done, (off_t)(addr + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	return done;
}

static size_t pid_read(mp_target *t, uint64_t addr, void *buf, size_t len)
{
	struct pid_src *s = t->src;
	size_t done = 0;

	while (!s->proc_mem && done < len) {
		struct iovec local = { (char *)buf + done, len - done };
		struct iovec remote = { (void *)(uintptr_t)(addr + done), len - done };
		ssize_t n = process_vm_readv(s->pid, &local, 1, &remote, 1, 0);

		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
			s->proc_mem = true; /* seccomp or an old kernel: take the other way */
			break;
		}
		return done;
	}
	if (done < len)
		done += read_proc_mem(s, addr + done, (unsigned char *)buf + done, len - done);
	return done;
}

static void pid_explain(mp_target *t, uint64_t addr, char *msg, size_t n)
{
	struct pid_src *s = t->src;

	(void)addr;
	if (kill(s->pid, 0) != 0 && errno == ESRCH)
		snprintf(msg, n, "the process has exited");
	else
		snprintf(msg, n, "the process does not map it readable");
}

static void release(struct pid_src *s)
{
	for (size_t i = 0; i < s->nheld; i++)
		(void)ptrace(PTRACE_DETACH, s->held[i].tid, NULL, (void *)(intptr_t)s->held[i].sig);
	s->nheld = 0;
}

static void pid_close(mp_target *t)
{
	struct pid_src *s = t->src;

	if (s == NULL)
		return;
	release(s);
	if (s->memfd >= 0)
		close(s->memfd);
	free(s->held);
	free(s);
}

static const struct target_ops pid_ops = {
	.read = pid_read,
	.explain = pid_explain,
	.close = pid_close,
};

static bool is_held(const struct pid_src *s, pid_t tid)
{
	for (size_t i = 0; i < s->nheld; i++)
		if (s->held[i].tid == tid)
			return true;
	return false;
}

/* Seize thread TID and wait until it is stopped. 1 held, 0 gone meanwhile, -1 refused. */
static int hold_thread(struct pid_src *s, pid_t tid, mp_diag *diag)
{
	int status, sig = 0;

	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0) {
		if (errno == ESRCH)
			return 0;
		mp_fail(diag, MP_E_ERRNO, "cannot stop pid %d (thread %d): ptrace: %s", (int)s->pid,
			(int)tid, strerror(errno));
		return -1;
	}
	if (mp_array_grow((void **)&s->held, &s->capheld, s->nheld + 1, sizeof *s->held) != MP_OK) {
		(void)ptrace(PTRACE_DETACH, tid, NULL, NULL);
		mp_fail(diag, MP_E_NOMEM, "out of memory");
		return -1;
	}
	s->held[s->nheld++] = (struct held){ tid, 0 };
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) != 0)
		return errno == ESRCH ? 0 : 1;
	while (waitpid(tid, &status, __WALL) < 0)
		if (errno != EINTR)
			return 0;
	if (!WIFSTOPPED(status)) { /* it exited meanwhile */
		s->nheld--;
		return 0;
	}
	/* A stop for a signal (not our interrupt) swallowed it: it goes back at detach. */
	if (status >> 16 == 0 && WSTOPSIG(status) != SIGTRAP)
		sig = WSTOPSIG(status);
	s->held[s->nheld - 1].sig = sig;
	return 1;
}

/* Hold every thread of the process, re-scanning for threads started meanwhile. */
static mp_err hold_all(struct pid_src *s, mp_diag *diag)
{
	char path[64];

	snprintf(path, sizeof path, "/proc/%d/task", (int)s->pid);
	for (int pass = 0; pass < STOP_PASSES; pass++) {
		DIR *d = opendir(path);
		struct dirent *e;
		bool fresh = false;

		if (d == NULL)
			return mp_fail(diag, MP_E_ERRNO, "cannot list '%s': %s", path, strerror(errno));
		while ((e = readdir(d)) != NULL) {
			pid_t tid = (pid_t)atoi(e->d_name);
			int r;

			if (tid <= 0 || is_held(s, tid))
				continue;
			if ((r = hold_thread(s, tid, diag)) < 0) {
				closedir(d);
				return MP_E_ERRNO;
			}
			fresh |= r > 0;
		}
		closedir(d);
		if (!fresh)
			return MP_OK;
	}
	return mp_fail(diag, MP_E_INTERRUPTED, "pid %d keeps starting threads; cannot stop it",
		       (int)s->pid);
}

/* One line of /proc/PID/maps: a file-backed mapping becomes a target mapping. */
static mp_err maps_line(mp_target *t, char *line, const mp_target_opts *opts, mp_diag *diag)
{
	unsigned long long start, end, off, inode;
	char perms[8];
	int at = 0;
	char *path, *local;
	mp_err err;

	if (sscanf(line, "%llx-%llx %7s %llx %*x:%*x %llu %n", &start, &end, perms, &off, &inode,
		   &at) < 5 || at == 0)
		return MP_OK;
	path = line + at;
	path[strcspn(path, "\n")] = '\0';
	if (inode == 0 || path[0] != '/' || end <= start)
		return MP_OK;
	local = target_find_file(path, opts);
	err = target_add_mapping(t, start, end, off, path, local, diag);
	free(local);
	return err;
}

static mp_err read_maps(mp_target *t, pid_t pid, const mp_target_opts *opts, mp_diag *diag)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;
	mp_err err = MP_OK;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return mp_fail(diag, errno == ENOENT ? MP_E_NOTFOUND : MP_E_ERRNO,
			       errno == ENOENT ? "no process with pid %d" : "cannot read /proc/%d/maps: %s",
			       (int)pid, strerror(errno));
	while (err == MP_OK && getline(&line, &cap, f) > 0)
		err = maps_line(t, line, opts, diag);
	free(line);
	fclose(f);
	target_sort_mappings(t);
	return err;
}

/* /proc/PID/exe and /proc/PID/cmdline (arguments joined by spaces). */
static mp_err read_info(mp_target *t, pid_t pid, mp_diag *diag)
{
	char path[64], exe[4096], *cmd;
	ssize_t n;
	int fd;
	size_t len = 0;

	t->info.pid = (int)pid;
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		if (target_set_string(&t->exe, exe, diag) != MP_OK)
			return MP_E_NOMEM;
	}
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	cmd = malloc(CMDLINE_MAX + 1);
	if (cmd == NULL) {
		if (fd >= 0)
			close(fd);
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	}
	while (fd >= 0 && len < CMDLINE_MAX && (n = read(fd, cmd + len, CMDLINE_MAX - len)) > 0)
		len += (size_t)n;
	if (fd >= 0)
		close(fd);
	while (len > 0 && cmd[len - 1] == '\0')
		len--;
	for (size_t i = 0; i < len; i++)
		if (cmd[i] == '\0')
			cmd[i] = ' ';
	cmd[len] = '\0';
	if (len > 0 && target_set_string(&t->cmdline, cmd, diag) != MP_OK) {
		free(cmd);
		return MP_E_NOMEM;
	}
	free(cmd);
	t->info.exe = t->exe;
	t->info.cmdline = t->cmdline;
	return MP_OK;
}

static mp_err check_alive(pid_t pid, mp_diag *diag)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof path, "/proc/%d", (int)pid);
	if (stat(path, &st) != 0)
		return mp_fail(diag, MP_E_NOTFOUND, "no process with pid %d", (int)pid);
	return MP_OK;
}

mp_err mp_target_open_pid(pid_t pid, const mp_target_opts *opts, mp_target **out, mp_diag *diag)
{
	struct pid_src *s;
	char origin[32];
	mp_target *t;
	mp_err err;

	*out = NULL;
	if (pid <= 0)
		return mp_fail(diag, MP_E_USAGE, "bad pid %d", (int)pid);
	s = calloc(1, sizeof *s);
	if (s == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	s->pid = pid;
	s->memfd = -1;
	s->proc_mem = opts != NULL && opts->proc_mem;
	snprintf(origin, sizeof origin, "pid %d", (int)pid);
	if ((err = target_new(MP_TARGET_PID, &pid_ops, s, origin, &t, diag)) != MP_OK) {
		free(s);
		return err;
	}
	/* Stopped first, so that the maps read are the ones the reads will see. */
	if ((err = check_alive(pid, diag)) != MP_OK ||
	    (opts != NULL && opts->stop && (err = hold_all(s, diag)) != MP_OK) ||
	    (err = read_maps(t, pid, opts, diag)) != MP_OK || (err = read_info(t, pid, diag)) != MP_OK) {
		mp_target_close(t);
		return err;
	}
	*out = t;
	return MP_OK;
}
