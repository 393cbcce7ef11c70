/* cli_signals.c - memprof killed by a signal while it holds a process still lets the process go first. (Were
   memprof killed outright, SIGKILL, the kernel would let it go: a tracer's end detaches its tracees.) */
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli.h"

static const int fatal[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };

static void on_fatal(int sig)
{
	pid_t holder = mp_target_release_all();

	if (holder != 0) { /* another thread of memprof holds the process: only it can let go */
		syscall(SYS_tgkill, getpid(), holder, sig);
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void cli_signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_fatal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
		struct sigaction old;

		/* a signal ignored when memprof started (nohup, a shell's background job) stays ignored */
		if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(fatal[i], &sa, NULL);
	}
}
