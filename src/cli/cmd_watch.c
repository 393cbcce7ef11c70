/* cmd_watch.c - `memprof watch --pid PID`: wait in a running job for its CUDA OOMs (src/watch: ptrace and a
   hardware breakpoint, no debugger) and keep, at each one, the explanation, the snapshot and every thread's
   Python stack, then let the job go on. The reports are this program run again on the stopped process
   (`oom --cxx-exception`, `snapshot save`, `pystack`, side by side), so that a report that fails cannot take
   the watch, and with it the stopped job, down. With --ranks, PID is a distributed job's launcher: every rank
   below it is watched (and those a restart brings, looked for every second), each into DIR/rank-R/, and at one
   rank's OOM every other rank is held still too and its snapshot kept as DIR/rank-Q/oom-N.pickle. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "mp_array.h"
#include "mp_catch.h"
#include "mp_file.h"
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
	/* --ranks: the launcher, the ranks found (by pid), and whether the launcher still runs */
	long launcher;
	cli_rank *ranks;
	size_t nranks, ranks_cap;
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

/* The three files of OOM N of process PID into DIR, read side by side while every thread is stopped. */
static void write_reports(const watch_report *r, const char *pid, const char *dir, unsigned n, uint64_t exception)
{
	bool json = strcmp(r->format, "json") == 0;
	char out[4200], snap[4200], addr[32];
	int rc;

	snprintf(addr, sizeof addr, "0x%llx", (unsigned long long)exception);
	(void)mp_catch_path(snap, sizeof snap, dir, n, MP_CATCH_SNAPSHOT, json);
	char *sr = r->sysroot != NULL ? "--sysroot" : NULL, *srv = (char *)r->sysroot;
	char *oom[] = { "memprof", "oom", "--pid", (char *)pid, "--cxx-exception", addr, "--format",
			(char *)r->format, sr, srv, NULL };
	char *save[] = { "memprof", "snapshot", "save", "--pid", (char *)pid, snap, sr, srv, NULL };
	char *stacks[] = { "memprof", "pystack", "--pid", (char *)pid, sr, srv, NULL };

	(void)mp_catch_path(out, sizeof out, dir, n, MP_CATCH_REPORT, json);
	pid_t explaining = start_self(out, oom);
	(void)mp_catch_path(out, sizeof out, dir, n, MP_CATCH_PYSTACK, json);
	pid_t stacking = start_self(out, stacks), saving = start_self("/dev/null", save);

	if ((rc = wait_self(explaining)) != 0)
		fprintf(stderr, "memprof: watch: OOM %u: memprof oom exited %d\n", n, rc);
	(void)wait_self(stacking);
	(void)wait_self(saving);
}

/* At an OOM, every thread stopped: the three files, then how long the job stood. */
static bool report(void *ctx, pid_t pid, pid_t tid, uint64_t exception)
{
	watch_report *r = ctx;
	bool json = strcmp(r->format, "json") == 0;
	char names[4300];
	struct timespec t0;

	(void)pid;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r->n++;
	write_reports(r, r->pid, r->dir, r->n, exception);
	double pause = seconds_since(&t0);

	(void)mp_catch_write_pause(r->dir, r->n, pause);
	mp_catch_names(names, sizeof names, r->dir, r->n, json);
	printf("memprof: c10::OutOfMemoryError #%u in thread %d: wrote %s (%.3f s)\n", r->n, (int)tid, names, pause);
	fflush(stdout);
	return true;
}

/* --ranks: the rank of process PID, NULL when none. */
static const cli_rank *rank_of(const watch_report *r, pid_t pid)
{
	for (size_t i = 0; i < r->nranks; i++)
		if (r->ranks[i].pid == pid)
			return &r->ranks[i];
	return NULL;
}

/* --ranks, at rank PID's OOM with every rank held still: its three files in its directory, and every other
   rank's snapshot of this moment beside its own, then how long the job stood. */
static bool report_rank(void *ctx, pid_t pid, pid_t tid, uint64_t exception)
{
	watch_report *r = ctx;
	const cli_rank *who = rank_of(r, pid);
	bool json = strcmp(r->format, "json") == 0;
	char dir[4200], pidtext[24], names[4300];
	struct timespec t0;
	pid_t *saving;
	unsigned others = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r->n++;
	if ((saving = calloc(r->nranks, sizeof *saving)) == NULL)
		return true;
	/* the others' snapshots first (they run while the OOM rank's three files are written) */
	for (size_t i = 0; i < r->nranks; i++) {
		char rank_dir[4200], path[4300], other[24];

		saving[i] = -1;
		if (r->ranks[i].pid == pid)
			continue;
		snprintf(other, sizeof other, "%d", (int)r->ranks[i].pid);
		snprintf(rank_dir, sizeof rank_dir, "%s/rank-%s", r->dir, r->ranks[i].name);
		(void)mp_catch_path(path, sizeof path, rank_dir, r->n, MP_CATCH_SNAPSHOT, json);
		char *save[] = { "memprof", "snapshot", "save", "--pid", other, path, NULL };

		saving[i] = start_self("/dev/null", save);
	}
	snprintf(dir, sizeof dir, "%s/rank-%s", r->dir, who != NULL ? who->name : "unknown");
	snprintf(pidtext, sizeof pidtext, "%d", (int)pid);
	write_reports(r, pidtext, dir, r->n, exception);
	for (size_t i = 0; i < r->nranks; i++)
		if (saving[i] > 0 && wait_self(saving[i]) == 0)
			others++;
	free(saving);
	double pause = seconds_since(&t0);

	(void)mp_catch_write_pause(dir, r->n, pause);
	mp_catch_names(names, sizeof names, dir, r->n, json);
	printf("memprof: c10::OutOfMemoryError #%u in rank %s (pid %d, thread %d): wrote %s; the other %u rank%s' "
	       "snapshots of that moment in %s/rank-*/oom-%u.pickle (%.3f s)\n", r->n, who != NULL ? who->name : "?",
	       (int)pid, (int)tid, names, others, others == 1 ? "" : "s", r->dir, r->n, pause);
	fflush(stdout);
	return true;
}

/* --ranks, every second: watch the ranks that came since (a restart's, or one that had not imported torch yet);
   false once the launcher ended and no rank is left. */
static bool look_for_ranks(void *ctx, mp_watch_set *set)
{
	watch_report *r = ctx;
	mp_target_opts topts = { .sysroot = r->sysroot };
	mp_diag diag = { .msg = "" };
	cli_rank *found;
	size_t n;

	/* A rank that ended (a restart's predecessor) is let go: no report of another rank's OOM is its. The ranks
	   and the set's watches were added together, one for one. */
	for (size_t i = 0; i < set->n;) {
		if (mp_watch_threads(set->w[i]) > 0) {
			i++;
			continue;
		}
		printf("memprof: rank %s (pid %d) ended\n", r->ranks[i].name, (int)r->ranks[i].pid);
		fflush(stdout);
		mp_watch_set_remove(set, i);
		memmove(&r->ranks[i], &r->ranks[i + 1], (r->nranks - i - 1) * sizeof *r->ranks);
		r->nranks--;
	}
	if (cli_find_ranks(r->launcher, &found, &n, &diag) != MP_OK)
		return set->n > 0; /* the launcher ended: on until the last rank does */
	for (size_t i = 0; i < n; i++) {
		char dir[4200];
		mp_watch *w;

		if (rank_of(r, found[i].pid) != NULL)
			continue;
		if (mp_watch_attach(found[i].pid, &topts, &w, &diag) != MP_OK)
			continue; /* not yet (no libstdc++ before torch loads): looked for again */
		if (mp_array_grow((void **)&r->ranks, &r->ranks_cap, r->nranks + 1, sizeof *r->ranks) != MP_OK ||
		    mp_watch_set_add(set, w) != MP_OK) {
			mp_watch_detach(w);
			continue;
		}
		r->ranks[r->nranks++] = found[i];
		snprintf(dir, sizeof dir, "%s/rank-%s", r->dir, found[i].name);
		diag.msg[0] = '\0';
		if (mp_file_mkdirs(dir, &diag) != MP_OK) /* its reports then fail, each saying so */
			fprintf(stderr, "memprof: warning: watch: %s\n", diag.msg);
		printf("memprof: watching rank %s (pid %d)\n", found[i].name, (int)found[i].pid);
		fflush(stdout);
	}
	free(found);
	return true;
}

static void on_tick(int sig)
{
	(void)sig; /* only interrupts the wait */
}

/* --ranks: watch every rank below the launcher until it and they end, or a signal stops the watch. */
static int watch_ranks(mp_command_ctx *c, watch_report *r, unsigned *ooms)
{
	struct sigaction tick = { .sa_handler = on_tick }; /* no SA_RESTART: the wait returns each second */
	struct itimerval every = { { 1, 0 }, { 1, 0 } }, off = { { 0, 0 }, { 0, 0 } };
	mp_watch_set set = { 0 };
	mp_diag diag = { .msg = "" };
	mp_err err;

	if (!look_for_ranks(r, &set) || set.n == 0) {
		mp_watch_set_detach(&set);
		free(r->ranks);
		return mp_command_error(c, "watch --ranks: no rank below pid %ld can be watched (none has PyTorch's "
					   "CUDA allocator and libstdc++ mapped)", r->launcher);
	}
	sigaction(SIGALRM, &tick, NULL);
	setitimer(ITIMER_REAL, &every, NULL);
	err = mp_watch_run_set(&set, report_rank, look_for_ranks, r, &stop_requested, ooms, &diag);
	setitimer(ITIMER_REAL, &off, NULL);
	mp_watch_set_detach(&set);
	free(r->ranks);
	return err != MP_OK ? mp_command_fail(c, "watch", err, &diag) : MP_CMD_OK;
}

static int run_watch(mp_command_ctx *c, const mp_command_args *a)
{
	watch_report r = { .pid = mp_arg(a, MP_O_PID), .dir = mp_arg(a, MP_O_OUTPUT), .format = mp_arg(a, MP_O_FORMAT),
			   .sysroot = mp_arg(a, MP_O_SYSROOT) };
	mp_target_opts topts = { .sysroot = r.sysroot };
	struct sigaction sa = { .sa_handler = on_stop_signal }; /* no SA_RESTART: the wait returns */
	bool ranks = mp_arg_given(a, MP_O_RANKS);
	mp_watch *w = NULL;
	mp_diag diag;
	unsigned ooms = 0;
	long pid;
	mp_err err;
	int rc;

	if (r.pid == NULL || !mp_parse_long(r.pid, &pid) || pid <= 0)
		return mp_command_usage_error(c, "watch: --pid PID is required");
	if (r.dir == NULL)
		r.dir = ".";
	if (r.format == NULL)
		r.format = "plain";
	mp_command_diag(c, &diag);
	if (mp_file_mkdirs(r.dir, &diag) != MP_OK)
		return mp_command_fail(c, "watch", MP_E_ERRNO, &diag);
	if (!ranks && (err = mp_watch_attach((pid_t)pid, &topts, &w, &diag)) != MP_OK)
		return mp_command_fail(c, "watch", err, &diag);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	printf("memprof: watching %s %ld for CUDA OOMs (Ctrl-C stops watching; the job goes on)\n",
	       ranks ? "the ranks below pid" : "pid", pid);
	fflush(stdout);
	if (ranks) {
		r.launcher = pid;
		rc = watch_ranks(c, &r, &ooms);
	} else {
		err = mp_watch_run(w, report, &r, &stop_requested, &ooms, &diag);
		mp_watch_detach(w);
		rc = err != MP_OK ? mp_command_fail(c, "watch", err, &diag) : MP_CMD_OK;
	}
	printf("memprof: %s; %u OOM%s\n", stop_requested ? "stopped watching" : "the job ended", ooms,
	       ooms == 1 ? "" : "s");
	return rc;
}

const mp_command cli_cmd_watch = {
	"watch", MP_FRONT_CLI, "wait for a running job's CUDA OOMs; keep the explanation, snapshot and stacks of each",
	"--pid PID [--ranks] [-o DIR] [--format plain|rst|json] [--sysroot DIR]",
	"Attaches to process PID (ptrace) and waits, with a hardware breakpoint on libstdc++'s __cxa_throw\n"
	"(a debug register of each thread: the job's memory is never written; stripped builds have it). At\n"
	"each CUDA out-of-memory error of PyTorch's caching allocator (a c10::OutOfMemoryError thrown, after\n"
	"the allocator's retry, before anything unwinds) it stops every thread and writes into DIR (default:\n"
	"here), for the Nth one, oom-N.txt (`memprof oom`: the explanation; oom-N.json with --format json),\n"
	"oom-N.pickle (the snapshot, for _memory_viz.py and memory_viz), oom-N.pystack.txt (every thread's\n"
	"Python stack) and oom-N.pause (the seconds the job stood), then lets the job go on. Other throws\n"
	"cost the job a stop each. Ends when the job ends; Ctrl-C (or SIGTERM) detaches and leaves the job\n"
	"running. The job must have loaded libstdc++ (imported torch). x86-64 Linux.\n"
	"With --ranks, PID is a distributed job's launcher (torchrun's agent, an srun step, a shell): every\n"
	"process below it with PyTorch's CUDA allocator is a rank (RANK in its environment), watched into\n"
	"DIR/rank-R/ (ranks that start later, a restart's, are looked for every second); at one rank's OOM\n"
	"every rank is held still, the OOM rank's files are written and each other rank's snapshot of that\n"
	"moment is kept as DIR/rank-Q/oom-N.pickle ('memprof fleet DIR' reads them side by side).\n",
	"",
	(const mp_option[]){
		{ MP_O_PID, MP_OPT_COUNT, NULL, "PID", "the process to watch" },
		{ MP_O_RANKS, MP_OPT_FLAG, NULL, NULL, "PID is a job's launcher: watch every rank below it" },
		{ MP_O_OUTPUT, MP_OPT_FILE, NULL, "DIR", "where the files go (made if missing; default: the current directory)" },
		{ MP_O_FORMAT, MP_OPT_CHOICE, "plain rst json", "F", "the explanation's format (default plain)" },
		{ MP_O_SYSROOT, MP_OPT_FILE, NULL, "DIR", "where the job's files are when it runs chrooted" },
		{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"0 the job ended or the watch was stopped, 2 bad usage or the job cannot be watched",
	run_watch, 0, NULL,
};
