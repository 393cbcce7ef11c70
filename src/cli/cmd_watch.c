/* cmd_watch.c - `memprof watch --pid PID`: wait in a running job for its CUDA OOMs (src/watch: ptrace and a
   hardware breakpoint, no debugger) and keep, at each one, the explanation, the snapshot and every thread's
   Python stack, then let the job go on. The reports are this program run again on the stopped process
   (`oom --cxx-exception`, `snapshot save`, `pystack`, side by side), so that a report that fails cannot take
   the watch, and with it the stopped job, down. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "mp_catch.h"
#include "mp_watch.h"

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

typedef struct watch_report {
	const char *pid, *dir, *format, *sysroot;
	unsigned n;
} watch_report;

/* Start this program with ARGV (NULL-ended, ARGV[0] ignored), its output into OUT_PATH: its pid, −1. */
static pid_t start_self(const char *out_path, char **argv)
{
	pid_t child = fork();

	if (child == 0) {
		int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(127);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	return child;
}

/* Wait for CHILD: its exit status, −1 when it did not exit. */
static int wait_self(pid_t child)
{
	int st;

	if (child < 0)
		return -1;
	while (waitpid(child, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* At an OOM, every thread stopped: the three files, then how long the job stood. */
static bool report(void *ctx, pid_t pid, pid_t tid, uint64_t exception)
{
	watch_report *r = ctx;
	bool json = strcmp(r->format, "json") == 0;
	char out[4200], snap[4200], names[4300], addr[32];
	struct timespec t0;
	int rc;

	(void)pid;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r->n++;
	snprintf(addr, sizeof addr, "0x%llx", (unsigned long long)exception);
	(void)mp_catch_path(snap, sizeof snap, r->dir, r->n, MP_CATCH_SNAPSHOT, json);
	char *sr = r->sysroot != NULL ? "--sysroot" : NULL, *srv = (char *)r->sysroot;
	char *oom[] = { "memprof", "oom", "--pid", (char *)r->pid, "--cxx-exception", addr, "--format",
			(char *)r->format, sr, srv, NULL };
	char *save[] = { "memprof", "snapshot", "save", "--pid", (char *)r->pid, snap, sr, srv, NULL };
	char *stacks[] = { "memprof", "pystack", "--pid", (char *)r->pid, sr, srv, NULL };

	/* the three read the stopped process side by side */
	(void)mp_catch_path(out, sizeof out, r->dir, r->n, MP_CATCH_REPORT, json);
	pid_t explaining = start_self(out, oom);
	(void)mp_catch_path(out, sizeof out, r->dir, r->n, MP_CATCH_PYSTACK, json);
	pid_t stacking = start_self(out, stacks), saving = start_self("/dev/null", save);

	if ((rc = wait_self(explaining)) != 0)
		fprintf(stderr, "memprof: watch: OOM %u: memprof oom exited %d\n", r->n, rc);
	(void)wait_self(stacking);
	(void)wait_self(saving);
	double pause = seconds_since(&t0);

	(void)mp_catch_write_pause(r->dir, r->n, pause);
	mp_catch_names(names, sizeof names, r->dir, r->n, json);
	printf("memprof: c10::OutOfMemoryError #%u in thread %d: wrote %s (%.3f s)\n", r->n, (int)tid, names, pause);
	fflush(stdout);
	return true;
}

static int run_watch(mp_command_ctx *c, const mp_command_args *a)
{
	watch_report r = { .pid = mp_arg(a, MP_O_PID), .dir = mp_arg(a, MP_O_OUTPUT), .format = mp_arg(a, MP_O_FORMAT),
			   .sysroot = mp_arg(a, MP_O_SYSROOT) };
	mp_target_opts topts = { .sysroot = r.sysroot };
	struct sigaction sa = { .sa_handler = on_stop_signal }; /* no SA_RESTART: the wait returns */
	mp_watch *w;
	mp_diag diag;
	unsigned ooms = 0;
	long pid;
	mp_err err;

	if (r.pid == NULL || !mp_parse_long(r.pid, &pid) || pid <= 0)
		return mp_command_usage_error(c, "watch: --pid PID is required");
	if (r.dir == NULL)
		r.dir = ".";
	if (r.format == NULL)
		r.format = "plain";
	if (mkdir(r.dir, 0755) != 0 && errno != EEXIST)
		return mp_command_error(c, "watch: cannot make %s: %s", r.dir, strerror(errno));
	mp_command_diag(c, &diag);
	if ((err = mp_watch_attach((pid_t)pid, &topts, &w, &diag)) != MP_OK)
		return mp_command_fail(c, "watch", err, &diag);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	printf("memprof: watching pid %ld for CUDA OOMs (Ctrl-C stops watching; the job goes on)\n", pid);
	fflush(stdout);
	err = mp_watch_run(w, report, &r, &stop_requested, &ooms, &diag);
	mp_watch_detach(w);
	printf("memprof: %s; %u OOM%s\n", stop_requested ? "stopped watching" : "the job ended", ooms,
	       ooms == 1 ? "" : "s");
	return err != MP_OK ? mp_command_fail(c, "watch", err, &diag) : MP_CMD_OK;
}

const mp_command cli_cmd_watch = {
	"watch", MP_FRONT_CLI, "wait for a running job's CUDA OOMs; keep the explanation, snapshot and stacks of each",
	"--pid PID [-o DIR] [--format plain|rst|json] [--sysroot DIR]",
	"Attaches to process PID (ptrace) and waits, with a hardware breakpoint on libstdc++'s __cxa_throw\n"
	"(a debug register of each thread: the job's memory is never written; stripped builds have it). At\n"
	"each CUDA out-of-memory error of PyTorch's caching allocator (a c10::OutOfMemoryError thrown, after\n"
	"the allocator's retry, before anything unwinds) it stops every thread and writes into DIR (default:\n"
	"here), for the Nth one, oom-N.txt (`memprof oom`: the explanation; oom-N.json with --format json),\n"
	"oom-N.pickle (the snapshot, for _memory_viz.py and memory_viz), oom-N.pystack.txt (every thread's\n"
	"Python stack) and oom-N.pause (the seconds the job stood), then lets the job go on. Other throws\n"
	"cost the job a stop each. Ends when the job ends; Ctrl-C (or SIGTERM) detaches and leaves the job\n"
	"running. The job must have loaded libstdc++ (imported torch). x86-64 Linux.\n",
	"",
	(const mp_option[]){
		{ MP_O_PID, MP_OPT_COUNT, NULL, "PID", "the process to watch" },
		{ MP_O_OUTPUT, MP_OPT_FILE, NULL, "DIR", "where the files go (made if missing; default: the current directory)" },
		{ MP_O_FORMAT, MP_OPT_CHOICE, "plain rst json", "F", "the explanation's format (default plain)" },
		{ MP_O_SYSROOT, MP_OPT_FILE, NULL, "DIR", "where the job's files are when it runs chrooted" },
		{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"0 the job ended or the watch was stopped, 2 bad usage or the job cannot be watched",
	run_watch, 0, NULL,
};
