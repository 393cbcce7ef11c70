/* target_pid.c - a target over a live process: process_vm_readv, or /proc/PID/mem where that
   is refused; held still (every thread, target_hold.c) while it is read, or read while it runs.
   Never writes to it. */
#include "target_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "hold_int.h"

#define CMDLINE_MAX (64u * 1024)

struct pid_src {
	pid_t pid;
	bool proc_mem;             /* process_vm_readv refused: read /proc/PID/mem */
	int memfd;                 /* /proc/PID/mem, -1 until needed, -2 when it cannot be opened */
	int memfd_errno;           /* why it cannot be */
	bool asked;                /* to hold it still */
	target_hold *hold;         /* every thread held still, or NULL */
	char why_not[160];         /* not held: why */
	size_t held_threads;       /* the last hold's */
	uint64_t held_ns, stop_ns; /* the holds let go so far, in all (a hold taken again adds one) */
};

static size_t read_proc_mem(struct pid_src *s, uint64_t addr, unsigned char *buf, size_t len)
{
	size_t done = 0;
	char path[64];

	if (s->memfd == -1) {
		snprintf(path, sizeof path, "/proc/%d/mem", (int)s->pid);
		s->memfd = open(path, O_RDONLY | O_CLOEXEC);
		if (s->memfd < 0) {
			s->memfd_errno = errno;
			s->memfd = -2;
		}
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
	else if (s->memfd == -2 && (s->memfd_errno == EACCES || s->memfd_errno == EPERM))
		snprintf(msg, n, "its memory may not be read (/proc/%d/mem: %s)", (int)s->pid, strerror(s->memfd_errno));
	else
		snprintf(msg, n, "the process does not map it readable");
}

/* Whether the kernel refuses to let memprof read PID's memory at all (what refuses ptrace refuses that too). */
static bool memory_denied(pid_t pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		close(fd);
		return false;
	}
	return errno == EACCES || errno == EPERM;
}

/* Hold the process still when OPTS ask. When it cannot be, it is read while it runs, with a warning,
   unless its tracer holds it still (gdb at a prompt): then it does not move either. */
static mp_err hold(struct pid_src *s, const mp_target_opts *opts, mp_diag *diag)
{
	enum hold_outcome outcome;
	mp_err err;

	if (opts == NULL || !opts->stop) {
		snprintf(s->why_not, sizeof s->why_not, "not asked to hold it");
		return MP_OK;
	}
	s->asked = true;
	err = hold_start(s->pid, &s->hold, &outcome, s->why_not, sizeof s->why_not, diag);
	if (err != MP_OK || outcome == HOLD_HELD || (outcome == HOLD_TRACED && hold_all_still(s->pid)))
		return err;
	if (outcome == HOLD_REFUSED && memory_denied(s->pid))
		return mp_fail(diag, MP_E_ERRNO, "cannot read its memory: %s", s->why_not);
	mp_warn(diag, "cannot stop pid %d: %s: read while it runs, the result may race", (int)s->pid, s->why_not);
	return MP_OK;
}

/* Let the process go on, counting how long it was held. */
static void release(struct pid_src *s)
{
	s->held_ns += hold_held_ns(s->hold);
	s->stop_ns += hold_stop_ns(s->hold);
	s->held_threads = hold_threads(s->hold);
	hold_release(s->hold);
	s->hold = NULL;
}

static void pid_let_go(mp_target *t)
{
	struct pid_src *s = t->src;

	if (s->hold == NULL)
		return;
	release(s);
	snprintf(s->why_not, sizeof s->why_not, "let go once read");
}

/* Let the process go a moment, for a thread caught inside a critical section to leave it, and hold it again. */
static mp_err pid_hold_again(mp_target *t, mp_diag *diag)
{
	struct pid_src *s = t->src;
	mp_target_opts opts = { .stop = true };
	struct timespec moment = { 0, 1000000 };

	if (s->hold == NULL)
		return MP_OK;
	release(s);
	nanosleep(&moment, NULL);
	return hold(s, &opts, diag);
}

static void pid_close(mp_target *t)
{
	struct pid_src *s = t->src;

	if (s == NULL)
		return;
	pid_let_go(t);
	if (s->memfd >= 0)
		close(s->memfd);
	free(s);
}

static enum mp_target_live pid_live(mp_target *t)
{
	struct pid_src *s = t->src;

	if (s->hold != NULL)
		return MP_LIVE_HELD;
	return hold_all_still(s->pid) ? MP_LIVE_STILL : MP_LIVE_RUNNING;
}

static void pid_hold_info(const mp_target *t, mp_target_hold_info *out)
{
	const struct pid_src *s = t->src;

	out->held = s->hold != NULL;
	out->threads = s->hold != NULL ? hold_threads(s->hold) : s->held_threads;
	out->stop_ns = s->stop_ns + hold_stop_ns(s->hold);
	out->held_ns = s->held_ns + hold_held_ns(s->hold);
	out->why_not = s->hold != NULL ? NULL : s->why_not;
	out->still = s->hold == NULL && hold_all_still(s->pid);
	out->asked = s->asked;
}

static const struct target_ops pid_ops = {
	.read = pid_read,
	.explain = pid_explain,
	.close = pid_close,
	.live = pid_live,
	.hold_info = pid_hold_info,
	.let_go = pid_let_go,
	.hold_again = pid_hold_again,
};

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
	/* Held first, so that the maps read are the ones the reads will see. */
	if ((err = check_alive(pid, diag)) != MP_OK || (err = hold(s, opts, diag)) != MP_OK ||
	    (err = read_maps(t, pid, opts, diag)) != MP_OK || (err = read_info(t, pid, diag)) != MP_OK) {
		mp_target_close(t);
		return err;
	}
	*out = t;
	return MP_OK;
}
