/* cmd_watch.c - `memprof watch --pid PID`: wait for a running job's CUDA OOMs and keep, at each one, the
   explanation, the snapshot and every thread's Python stack. The waiting is gdb's: it attaches with ptrace,
   puts one breakpoint on __cxa_throw and runs memprof's gdb command `memprof catch oom --continue`, which
   lets every other throw go on and, at a c10::OutOfMemoryError (stripped builds included), writes the files
   and lets the job go on. This command only finds gdb and memprof's gdb script and hands over. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#ifndef MEMPROF_PKGDATADIR
#define MEMPROF_PKGDATADIR "/usr/local/share/memprof"
#endif

/* FILE beside this executable (a build tree: gdbext/memprof.py, .libs/libmemprof.so.0), if it is there. */
static bool beside_me(const char *file, char *out, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	char *slash;

	if (n <= 0)
		return false;
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) == NULL)
		return false;
	*slash = '\0';
	return snprintf(out, size, "%s/%s", self, file) < (int)size && access(out, R_OK) == 0;
}

static int run_watch(mp_command_ctx *c, const mp_command_args *a)
{
	const char *pid = mp_arg(a, "--pid"), *dir = mp_arg(a, "-o"), *format = mp_arg(a, "--format");
	const char *sysroot = mp_arg(a, "--sysroot");
	const char *gdb = getenv("MEMPROF_GDB"), *script = getenv("MEMPROF_GDB_SCRIPT");
	char script_buf[PATH_MAX], lib[PATH_MAX], source[PATH_MAX + 16], catch_cmd[PATH_MAX + 96];
	char sysroot_cmd[PATH_MAX + 16], exe[64];

	if (pid == NULL)
		return mp_command_usage_error(c, "watch: --pid PID is required");
	if (script == NULL) {
		if (beside_me("gdbext/memprof.py", script_buf, sizeof script_buf))
			script = script_buf;
		else
			script = MEMPROF_PKGDATADIR "/gdb/memprof.py";
	}
	if (access(script, R_OK) != 0)
		return mp_command_error(c, "watch: memprof's gdb script %s is not there (MEMPROF_GDB_SCRIPT names another)",
					script);
	if (getenv("MEMPROF_LIBRARY") == NULL && beside_me(".libs/libmemprof.so.0", lib, sizeof lib))
		setenv("MEMPROF_LIBRARY", lib, 1);
	snprintf(source, sizeof source, "source %s", script);
	snprintf(catch_cmd, sizeof catch_cmd, "memprof catch oom --continue -o %s --format %s", dir != NULL ? dir : ".",
		 format != NULL ? format : "plain");
	/* a chrooted job: gdb finds its libraries under the root, once it knows the executable (the kernel's link) */
	if (sysroot != NULL) {
		snprintf(sysroot_cmd, sizeof sysroot_cmd, "set sysroot %s", sysroot);
		snprintf(exe, sizeof exe, "/proc/%s/exe", pid);
	}
	const char *argv[] = { gdb != NULL ? gdb : "gdb", "-nx", "-batch", sysroot != NULL ? "-iex" : "-nx",
			       sysroot != NULL ? sysroot_cmd : "-nx", sysroot != NULL ? exe : "-nx", "-p", pid, "-ex",
			       source, "-ex", catch_cmd, "-ex", "continue", NULL };

	fflush(stdout);
	execvp(argv[0], (char *const *)argv);
	return mp_command_error(c, "watch: cannot run %s: %s (install gdb, or name one in MEMPROF_GDB)",
				gdb != NULL ? gdb : "gdb", strerror(errno));
}

const mp_command cli_cmd_watch = {
	"watch", MP_FRONT_CLI, "wait for a running job's CUDA OOMs; keep the explanation, snapshot and stacks of each",
	"--pid PID [-o DIR] [--format plain|rst|json] [--sysroot DIR]",
	"Attaches to process PID (through gdb, which must be installed) and waits. At each CUDA\n"
	"out-of-memory error of PyTorch's caching allocator (a c10::OutOfMemoryError thrown, found on\n"
	"stripped builds too) it writes into DIR (default: here), for the Nth one, oom-N.txt (`memprof oom`:\n"
	"the explanation; oom-N.json with --format json), oom-N.pickle (the snapshot, for _memory_viz.py and\n"
	"memory_viz) and oom-N.pystack.txt (every thread's Python stack), and oom-N.pause (the seconds the job\n"
	"was stopped for it), then lets the job go on. Nothing is written to the job but gdb's breakpoint\n"
	"and no code runs in it. Ends when the job ends; Ctrl-C detaches and leaves the job running.\n",
	"",
	(const mp_option[]){
		{ "--pid", MP_OPT_COUNT, NULL, "PID", "the process to watch" },
		{ "-o", MP_OPT_FILE, NULL, "DIR", "where the files go (created; default: the current directory)" },
		{ "--format", MP_OPT_CHOICE, "plain rst json", "F", "the explanation's format (default plain)" },
		{ "--sysroot", MP_OPT_FILE, NULL, "DIR", "the job's root when it runs chrooted (gdb's sysroot)" },
		{ NULL, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"the job's end: 0; 2 bad usage, no gdb, no gdb script; otherwise gdb's status",
	run_watch, 0, NULL,
};
