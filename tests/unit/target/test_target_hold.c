/* test_target_hold.c - holding a live process still (src/target/target_hold.c) and the guards of a read
   (target_guard.c), on child processes whose threads spin on counters this test watches in shared memory. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hold_int.h"
#include "mp_target.h"
#include "unit_main.h"

#define SPINNERS 3
#define MAX_COUNTERS 8

/* Shared with the children (mapped before the fork, so at the same address in both). */
struct shared {
	atomic_ulong spin[MAX_COUNTERS]; /* each spinner's count */
	atomic_ulong spawned;            /* threads the churning child started */
	atomic_ulong signals;            /* SIGUSR1s the child took */
	atomic_int ready;                /* spinners running */
};

static struct shared *sh;

static void *spinner(void *arg)
{
	atomic_ulong *c = arg;

	atomic_fetch_add(&sh->ready, 1);
	for (;;) {
		atomic_fetch_add(c, 1);
		if ((atomic_load(c) & 1023) == 0)
			sched_yield(); /* a 2-core machine is shared */
	}
	return NULL;
}

/* A thread of the churning child's chains: counts a while (a thread the hold missed would count on), starts
   its successor and ends, so that threads are always being started by threads that were just started. */
static void *chain(void *arg)
{
	struct timespec nap = { 0, 100000 };
	pthread_t th;

	(void)arg;
	atomic_fetch_add(&sh->spawned, 1);
	for (int i = 0; i < 3; i++) {
		atomic_fetch_add(&sh->spin[SPINNERS + 1], 1);
		nanosleep(&nap, NULL);
	}
	if (pthread_create(&th, NULL, chain, NULL) == 0)
		pthread_detach(th);
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&sh->signals, 1);
}

static void start_spinners(void)
{
	pthread_t th;

	for (int i = 0; i < SPINNERS; i++)
		pthread_create(&th, NULL, spinner, &sh->spin[i]);
}

enum child_kind { SPIN, CHURN, ZOMBIE_LEADER, IDLE };
#define CHAINS 16

/* A child of kind KIND: spinning threads, and its main thread spinning too, or also chains of threads that
   start threads all the time, or exiting (a zombie leader), or asleep. Returns when its spinners run. */
static pid_t child(enum child_kind kind)
{
	pid_t pid;

	memset(sh, 0, sizeof *sh);
	if ((pid = fork()) != 0) {
		while (kind != IDLE && atomic_load(&sh->ready) < SPINNERS)
			usleep(1000);
		return pid;
	}
	signal(SIGUSR1, on_usr1);
	if (kind == IDLE)
		for (;;)
			pause();
	start_spinners();
	if (kind == ZOMBIE_LEADER)
		pthread_exit(NULL);
	for (int i = 0; kind == CHURN && i < CHAINS; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, chain, NULL) == 0)
			pthread_detach(th);
	}
	for (;;)
		atomic_fetch_add(&sh->spin[SPINNERS], 1);
}

/* Kill and reap child PID. A thread of it the hold left traced (or a zombie it did not reap) would keep it
   from being reaped: a failure here, not a hang. */
static void end_child(pid_t pid)
{
	pid_t r = 0;

	kill(pid, SIGKILL);
	for (int i = 0; i < 500 && (r = waitpid(pid, NULL, WNOHANG)) == 0; i++)
		usleep(10000);
	CU_ASSERT_EQUAL(r, pid);
}

static void snooze_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Whether every spinner counter stands still over MS milliseconds. */
static bool counters_still(int ms)
{
	unsigned long before[MAX_COUNTERS];
	bool still = true;

	for (int i = 0; i <= SPINNERS + 1; i++)
		before[i] = atomic_load(&sh->spin[i]);
	snooze_ms(ms);
	for (int i = 0; i <= SPINNERS + 1; i++)
		still &= atomic_load(&sh->spin[i]) == before[i];
	return still;
}

/* Whether every thread of PID is in a tracing stop (or dead), by /proc. */
static bool all_traced(pid_t pid)
{
	return hold_all_still(pid);
}

static void test_hold_spinning(void)
{
	pid_t pid = child(SPIN);
	enum hold_outcome outcome;
	target_hold *h = NULL;
	char why[160];

	CU_ASSERT_EQUAL_FATAL(hold_start(pid, &h, &outcome, why, sizeof why, NULL), MP_OK);
	CU_ASSERT_EQUAL(outcome, HOLD_HELD);
	CU_ASSERT_PTR_NOT_NULL(h);
	CU_ASSERT_EQUAL(hold_threads(h), SPINNERS + 1);
	CU_ASSERT_TRUE(counters_still(30));
	CU_ASSERT_TRUE(all_traced(pid));
	CU_ASSERT_TRUE(hold_held_ns(h) >= 30000000u);
	CU_ASSERT_TRUE(hold_stop_ns(h) < (uint64_t)HOLD_TIMEOUT_MS * 1000000u);
	hold_release(h);
	CU_ASSERT_FALSE(counters_still(30));
	CU_ASSERT_FALSE(all_traced(pid));
	end_child(pid);
}

/* Threads start all the time while the hold attaches: it must catch every one. */
static void test_hold_churning(void)
{
	pid_t pid = child(CHURN);

	for (int round = 0; round < 20; round++) {
		enum hold_outcome outcome;
		target_hold *h = NULL;
		unsigned long spawned;
		char why[160];

		CU_ASSERT_EQUAL_FATAL(hold_start(pid, &h, &outcome, why, sizeof why, NULL), MP_OK);
		CU_ASSERT_EQUAL_FATAL(outcome, HOLD_HELD);
		spawned = atomic_load(&sh->spawned);
		CU_ASSERT_TRUE(counters_still(20));
		CU_ASSERT_EQUAL(atomic_load(&sh->spawned), spawned);
		CU_ASSERT_TRUE(all_traced(pid));
		hold_release(h);
		snooze_ms(5);
	}
	CU_ASSERT_FALSE(counters_still(30));
	end_child(pid);
}

/* A leader that called pthread_exit is a zombie ptrace refuses: the other threads are held all the same. */
static void test_hold_zombie_leader(void)
{
	pid_t pid = child(ZOMBIE_LEADER);
	enum hold_outcome outcome;
	target_hold *h = NULL;
	char why[160];

	snooze_ms(20);
	CU_ASSERT_EQUAL_FATAL(hold_start(pid, &h, &outcome, why, sizeof why, NULL), MP_OK);
	CU_ASSERT_EQUAL(outcome, HOLD_HELD);
	CU_ASSERT_EQUAL(hold_threads(h), SPINNERS);
	CU_ASSERT_TRUE(counters_still(30));
	hold_release(h);
	CU_ASSERT_FALSE(counters_still(30));
	end_child(pid);
}

/* A process another tracer has is not touched: the outcome says who. */
static void test_hold_traced(void)
{
	pid_t pid = child(SPIN);
	enum hold_outcome outcome;
	target_hold *h = NULL;
	char why[160], want[64];

	CU_ASSERT_EQUAL_FATAL(ptrace(PTRACE_SEIZE, pid, NULL, NULL), 0);
	CU_ASSERT_EQUAL(hold_start(pid, &h, &outcome, why, sizeof why, NULL), MP_OK);
	CU_ASSERT_EQUAL(outcome, HOLD_TRACED);
	CU_ASSERT_PTR_NULL(h);
	snprintf(want, sizeof want, "it is traced by pid %d", (int)getpid());
	CU_ASSERT_TRUE(strncmp(why, want, strlen(want)) == 0);
	CU_ASSERT_FALSE(counters_still(30));
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	end_child(pid);
}

/* A signal sent while the process is held reaches it once it goes on: the hold takes none. */
static void test_hold_keeps_signals(void)
{
	pid_t pid = child(SPIN);
	enum hold_outcome outcome;
	target_hold *h = NULL;
	char why[160];

	CU_ASSERT_EQUAL_FATAL(hold_start(pid, &h, &outcome, why, sizeof why, NULL), MP_OK);
	kill(pid, SIGUSR1);
	snooze_ms(20);
	CU_ASSERT_EQUAL(atomic_load(&sh->signals), 0);
	hold_release(h);
	for (int i = 0; i < 200 && atomic_load(&sh->signals) == 0; i++)
		snooze_ms(5);
	CU_ASSERT_EQUAL(atomic_load(&sh->signals), 1);
	end_child(pid);
}

/* What a signal handler does: every hold let go at once; the hold's own release after it is harmless. */
static void test_release_all(void)
{
	pid_t pid = child(SPIN);
	enum hold_outcome outcome;
	target_hold *h = NULL;
	char why[160];

	CU_ASSERT_EQUAL_FATAL(hold_start(pid, &h, &outcome, why, sizeof why, NULL), MP_OK);
	CU_ASSERT_TRUE(counters_still(20));
	CU_ASSERT_EQUAL(mp_target_release_all(), 0);
	CU_ASSERT_FALSE(counters_still(30));
	hold_release(h);
	CU_ASSERT_FALSE(counters_still(30));
	end_child(pid);
}

/* A holder killed outright (SIGKILL: no handler runs) leaves the process running: the kernel lets go. */
static void test_holder_killed(void)
{
	pid_t pid = child(SPIN), holder;
	int status;

	if ((holder = fork()) == 0) {
		enum hold_outcome outcome;
		target_hold *h = NULL;
		char why[160];

		if (hold_start(pid, &h, &outcome, why, sizeof why, NULL) != MP_OK || outcome != HOLD_HELD)
			_exit(1);
		atomic_store(&sh->ready, -1);
		for (;;)
			pause();
	}
	for (int i = 0; i < 400 && atomic_load(&sh->ready) != -1; i++)
		snooze_ms(5);
	CU_ASSERT_EQUAL_FATAL(atomic_load(&sh->ready), -1);
	CU_ASSERT_TRUE(counters_still(20));
	kill(holder, SIGKILL);
	waitpid(holder, &status, 0);
	CU_ASSERT_FALSE(counters_still(50));
	CU_ASSERT_FALSE(all_traced(pid));
	end_child(pid);
}

/* The pid target: held or running, and its guards. */
static void test_target_live(void)
{
	pid_t pid = child(SPIN);
	mp_target_opts opts = { .stop = true };
	mp_target_hold_info info;
	mp_target *t;
	uint64_t counter = (uint64_t)(uintptr_t)&sh->spin[0], flag = (uint64_t)(uintptr_t)&sh->signals;

	CU_ASSERT_EQUAL_FATAL(mp_target_open_pid(pid, &opts, &t, NULL), MP_OK);
	CU_ASSERT_EQUAL(mp_target_live(t), MP_LIVE_HELD);
	mp_target_hold_info_get(t, &info);
	CU_ASSERT_TRUE(info.held);
	CU_ASSERT_EQUAL(info.threads, SPINNERS + 1);
	mp_target_guard(t, counter, 8); /* held: nothing to guard */
	CU_ASSERT_EQUAL(mp_target_guards(t), 0);
	CU_ASSERT_FALSE(mp_target_moved(t));
	mp_target_close(t);
	CU_ASSERT_FALSE(counters_still(30));

	opts.stop = false;
	CU_ASSERT_EQUAL_FATAL(mp_target_open_pid(pid, &opts, &t, NULL), MP_OK);
	CU_ASSERT_EQUAL(mp_target_live(t), MP_LIVE_RUNNING);
	mp_target_hold_info_get(t, &info);
	CU_ASSERT_FALSE(info.held);
	CU_ASSERT_PTR_NOT_NULL(info.why_not);
	mp_target_guard(t, flag, 8);
	CU_ASSERT_EQUAL(mp_target_guards(t), 1);
	CU_ASSERT_FALSE(mp_target_moved(t)); /* no signal came */
	mp_target_guard(t, counter, (SPINNERS + 1) * sizeof sh->spin[0]);
	for (int i = 0; i < 100 && !mp_target_moved(t); i++)
		snooze_ms(5);
	CU_ASSERT_TRUE(mp_target_moved(t)); /* the spinners counted on */
	mp_target_flush(t);
	CU_ASSERT_EQUAL(mp_target_guards(t), 0);
	kill(pid, SIGSTOP); /* stopped by a signal: it does not move either (once every thread took the stop) */
	for (int i = 0; i < 200 && !all_traced(pid); i++)
		snooze_ms(5);
	mp_target_flush(t);
	CU_ASSERT_EQUAL(mp_target_live(t), MP_LIVE_STILL);
	kill(pid, SIGCONT);
	mp_target_close(t);
	end_child(pid);
}

/* A target over an idle process reads it; one over a process gone says so. */
static void test_target_gone(void)
{
	pid_t pid = child(IDLE);
	mp_target_opts opts = { .stop = true };
	mp_target *t;
	mp_diag diag = { 0 };

	CU_ASSERT_EQUAL_FATAL(mp_target_open_pid(pid, &opts, &t, NULL), MP_OK);
	CU_ASSERT_EQUAL(mp_target_live(t), MP_LIVE_HELD);
	mp_target_close(t);
	end_child(pid);
	CU_ASSERT_EQUAL(mp_target_open_pid(pid, &opts, &t, &diag), MP_E_NOTFOUND);
	CU_ASSERT_PTR_NULL(t);
	CU_ASSERT_TRUE(strstr(diag.msg, "no process") != NULL);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "hold a spinning process", test_hold_spinning },
		{ "hold a process that keeps starting threads", test_hold_churning },
		{ "hold a process whose leader exited", test_hold_zombie_leader },
		{ "a process traced by another", test_hold_traced },
		{ "signals sent while held arrive after", test_hold_keeps_signals },
		{ "release everything from a handler", test_release_all },
		{ "a holder killed lets go", test_holder_killed },
		{ "pid target: held, running, guards", test_target_live },
		{ "pid target: a process gone", test_target_gone },
	};

	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	return unit_run("target_hold", tests, sizeof tests / sizeof tests[0], NULL, NULL);
}
