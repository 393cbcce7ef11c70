/* mp_session.h - memprof as a debugger uses it: one inspected target, its walk cached until the
   target runs again, named snapshots, settings, and commands that answer in text.

   The gdb extension (gdbext/) drives a session through ctypes, so every function here takes and
   returns plain C types: ints, NUL-terminated strings, and one read callback. A session never
   prints; each command leaves its text in mp_session_output() and, on failure, one line in
   mp_session_error(). Nothing is ever written to the inspected process. */
#ifndef MEMPROF_SESSION_H
#define MEMPROF_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "mp_target.h"

/* What libmemprof.so exports (src/libmemprof.map names the same): the library is built with hidden
   visibility, so only the functions marked here can be. */
#define MP_SESSION_API __attribute__((visibility("default")))

typedef struct mp_session mp_session;

/* Results of mp_session_run, the CLI's exit codes. */
enum mp_session_status {
	MP_SESSION_OK = 0,      /* done */
	MP_SESSION_NOTHING = 1, /* done, found nothing (the output says so) */
	MP_SESSION_ERROR = 2,   /* failed: mp_session_error() says why in one line */
};

/* The library's version (PACKAGE_VERSION); the extension refuses a library of another. */
MP_SESSION_API const char *mp_session_version(void);

/* A new session with no target. NULL when out of memory. */
MP_SESSION_API mp_session *mp_session_new(void);
MP_SESSION_API void mp_session_free(mp_session *s);

/* Which target the next commands read. Naming the same target as before keeps the cached walk;
   another drops it. Return 0 (these only record; opening happens when a command needs it). */
/* No target: commands that need one fail with WHY ("no process or core file"). */
MP_SESSION_API int mp_session_use_none(mp_session *s, const char *why);
/* A live local process, read through /proc/PID/mem or process_vm_readv. With the setting "stop" on
   (the default) every thread of it is held still (ptrace) while each command reads it and goes on
   after the command (one hold per mp_session_run, from the calling thread); off, it is read as it
   is: a debugger that is its tracer and holds it still (gdb at its prompt) sets it off, and a
   process that runs on is read again while it moves under the read (then the command fails with
   "the job was running: use --stop"). */
MP_SESSION_API int mp_session_use_pid(mp_session *s, int pid);
/* A core file, read by memprof itself; SYSROOT and SOLIB_PATH (may be NULL) as --sysroot and
   --solib-path. */
MP_SESSION_API int mp_session_use_core(mp_session *s, const char *core, const char *sysroot, const char *solib_path);
/* Any other target: memory through READ(CTX, ...) (counted, see mp_session_reads), files mapped
   where MAPS_TEXT says: the text of gdb's `info proc mappings` (both the layout with and without
   the Perms column). NAME is shown as the target's origin; PID may be 0. */
MP_SESSION_API int mp_session_use_callback(mp_session *s, const char *name, int pid, mp_read_fn read, void *ctx,
			    const char *maps_text);

/* The target ran, or loaded or unloaded code: walk again when next asked. */
MP_SESSION_API void mp_session_invalidate(mp_session *s);

/* POLL(CTX) is called now and then during a walk; nonzero stops it (Ctrl-C), and the command
   fails with "interrupted". POLL may be NULL. */
typedef int (*mp_session_poll_fn)(void *ctx);
MP_SESSION_API void mp_session_set_poll(mp_session *s, mp_session_poll_fn poll, void *ctx);

/* Settings, by name (the table below lists them: units, device, layout, max-blocks, frames, stop).
   Set: 0, or -1 with mp_session_error set (the old value stays). */
MP_SESSION_API int mp_session_set(mp_session *s, const char *name, const char *value);
/* The current value of setting NAME as text (NULL for an unknown name); valid until the next call on S. */
MP_SESSION_API const char *mp_session_show(mp_session *s, const char *name);

/* The settings, for a front end to offer (gdb's `set/show memprof NAME`, the Python API's options): I from
   0 until the name is NULL. Help: a sentence or more. Spec: what a value is, "KIND [WORDS...]": "choice
   W1 W2..." (one of the words; "on off" for a switch), "device all" (a device number or all), "number"
   (a whole number from 0), "file auto" (a file's name, or auto). Default: a new session's value. */
MP_SESSION_API const char *mp_session_setting_name(int i);
MP_SESSION_API const char *mp_session_setting_help(int i);
MP_SESSION_API const char *mp_session_setting_spec(int i);
MP_SESSION_API const char *mp_session_setting_default(int i);
MP_SESSION_API unsigned mp_session_setting_flags(int i);

enum mp_session_setting_flags {
	/* The front end sets it for its own reasons, not the user: a debugger holds its process itself
	   (stop off), so it does not offer it. */
	MP_SESSION_SETTING_HOST = 1u << 0,
};

/* Run ARGV[0] (a command word: "segsum", "snapshot", ...) with its arguments ARGV[1..ARGC).
   Returns an mp_session_status. Output and warnings of the previous run are replaced. */
MP_SESSION_API int mp_session_run(mp_session *s, int argc, char **argv);

/* The text the last run produced (possibly empty, never NULL) and its length in bytes. */
MP_SESSION_API const char *mp_session_output(const mp_session *s);
MP_SESSION_API size_t mp_session_output_len(const mp_session *s);
/* The one-line reason the last run failed ("" when it did not). */
MP_SESSION_API const char *mp_session_error(const mp_session *s);
/* The warnings of the last run, one per line ("" when none). */
MP_SESSION_API const char *mp_session_warnings(const mp_session *s);

/* How many times the session called a callback target's READ since it was named. */
MP_SESSION_API uint64_t mp_session_reads(const mp_session *s);

/* The commands, for the extension to register: names in help order, I from 0 until NULL.
   A name with a space is a subcommand ("snapshot take") of the prefix before it. */
MP_SESSION_API const char *mp_session_command_name(int i);
/* The help text of command I: its first line is the summary `help memprof` lists. */
MP_SESSION_API const char *mp_session_command_help(int i);
/* What command I takes, for a front end that builds its own calls (a Python API, the tests), one
   line each: "positional KINDS" (blank-separated, "[...]" optional: "[snapshot]", "address
   [snapshot]"), then "option NAME KIND [WORDS...]" per option, KIND one of flag, text, file, choice,
   device, count, integer, size, flag-count, and WORDS its choices (or a list's words). */
MP_SESSION_API const char *mp_session_command_spec(int i);
/* Flags of command I (enum mp_session_command_flags). */
MP_SESSION_API unsigned mp_session_command_flags(int i);

enum mp_session_command_flags {
	MP_SESSION_PREFIX = 1u << 0,     /* only groups subcommands ("snapshot") */
	MP_SESSION_EXPRESSION = 1u << 1, /* its argument is an expression the debugger evaluates to
					    an address first ("block") */
};

/* `memprof catch oom` (a command of the table) asks the debugger to stop where PyTorch throws a CUDA OOM. After
   each command the debugger asks where: the function to break at ("__cxa_throw", at its first instruction),
   or NULL when nothing is to be caught (then it removes its breakpoint). */
MP_SESSION_API const char *mp_session_catch_location(const mp_session *s);
/* The registers that hold that function's first two arguments on this machine, blank-separated ("rdi rsi"
   on x86-64, "x0 x1" on AArch64), NULL where memprof does not know them. */
MP_SESSION_API const char *mp_session_catch_registers(void);
/* At each stop there, with the two registers' values (the thrown object, its std::type_info): whether the
   throw is a c10::OutOfMemoryError and, if so, its report (`memprof oom` of it; with -o DIR, the files of
   mp_catch.h), in the output as after mp_session_run. An enum mp_session_catch_action. */
MP_SESSION_API int mp_session_catch_throw(mp_session *s, uint64_t thrown, uint64_t type_info);

enum mp_session_catch_action {
	MP_SESSION_CATCH_PASS = 0,    /* not an OOM (or not catching): go on, say nothing */
	MP_SESSION_CATCH_STOP = 1,    /* reported: stop the program */
	MP_SESSION_CATCH_GO_ON = 2,   /* reported (--continue): let it go on */
	MP_SESSION_CATCH_FAILED = 3,  /* an OOM whose report failed (mp_session_error says why): stop */
};

/* Completions of WORD, the last word of TEXT (what was typed after command I's name), one per
   line; the single line "<file>" asks the debugger to complete a file name. Valid until the next
   call on S. */
MP_SESSION_API const char *mp_session_complete(mp_session *s, int i, const char *text, const char *word);

#endif
