/* mp_target.h - the memory of an inspected process, read-only: a core file, a live pid, or a
   debugger's read callback, behind one interface with a page cache in front. */
#ifndef MEMPROF_TARGET_H
#define MEMPROF_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mp_err.h"

/* A file mapped into the target: NT_FILE of a core, /proc/PID/maps of a process. */
typedef struct mp_mapping {
	uint64_t start, end;    /* [start, end) in the target's address space */
	uint64_t file_offset;   /* offset in the file of START */
	const char *path;       /* the file as the target named it */
	const char *local_path; /* where memprof found it here (after --sysroot/--solib-path);
				   NULL when it was not found */
} mp_mapping;

typedef struct mp_target mp_target;

typedef struct mp_target_opts {
	const char *sysroot;    /* prefix for the absolute paths of mapped files (a core from another machine) */
	const char *solib_path; /* colon-separated directories searched by base name, before SYSROOT */
	bool stop;              /* live pid: hold every thread still (ptrace) while it is read, until
				   mp_target_close; without it the process runs on while it is read */
	bool proc_mem;          /* live pid: read /proc/PID/mem only, never process_vm_readv (which
				   is otherwise tried first, and left for /proc/PID/mem when refused) */
} mp_target_opts;

/* What kind of source a target reads. */
enum mp_target_kind {
	MP_TARGET_CORE,
	MP_TARGET_PID,
	MP_TARGET_CALLBACK,
};

/* Facts about the process; strings are NULL when unknown. */
typedef struct mp_target_info {
	enum mp_target_kind kind;
	const char *origin;  /* "core.1234", "pid 1234", or the callback's name */
	int pid;             /* 0 when unknown */
	const char *exe;     /* executable path (NT_FILE/AUXV AT_EXECFN, /proc/PID/exe) */
	const char *cmdline; /* NT_PRPSINFO pr_psargs, /proc/PID/cmdline with spaces */
} mp_target_info;

/* Open the core file PATH (an ELF ET_CORE). Pages the core left out but a mapped file holds
   (read-only file mappings) are read from that file; files are looked for under OPTS (may
   be NULL). A mapped file whose build-id differs from the one in the core's memory is a
   warning through DIAG (mp_target_mapping_mismatch tells the caller, which may refuse).
   Bad input (not ELF, not a core, truncated headers, notes out of bounds) fails with a
   one-line reason in DIAG; a core cut short by a size limit opens, with a warning, and reads
   past its end fail. */
mp_err mp_target_open_core(const char *path, const mp_target_opts *opts, mp_target **out,
			   mp_diag *diag) MP_WUR;

/* Attach to live process PID for reading (process_vm_readv, falling back to /proc/PID/mem).
   Nothing is ever written to it. With OPTS->stop every thread is held still (PTRACE_SEIZE +
   PTRACE_INTERRUPT: no signal reaches it) until mp_target_close, from the same thread. When it
   cannot be (another process traces it, ptrace is not permitted, a thread does not stop), it is
   read while it runs, with a warning through DIAG that the result may race, unless its tracer
   holds it still (gdb at a prompt): then silently. */
mp_err mp_target_open_pid(pid_t pid, const mp_target_opts *opts, mp_target **out,
			  mp_diag *diag) MP_WUR;

/* Read callback: copy LEN bytes at ADDR into BUF and return how many leading bytes it could
   copy (less than LEN: the rest is unreadable). */
typedef size_t (*mp_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* A target over READ (a debugger's memory). MAPS (NMAPS, copied) says which files are mapped
   where; NAME is the origin shown to users. */
mp_err mp_target_open_callback(const char *name, mp_read_fn read, void *ctx, const mp_mapping *maps,
			       size_t nmaps, mp_target **out, mp_diag *diag) MP_WUR;

/* Close T (detaching from a stopped process). T may be NULL. */
void mp_target_close(mp_target *t);

/* Whether the memory of T can change while it is read. */
enum mp_target_live {
	MP_LIVE_NONE,    /* a core, or a debugger's memory: it does not change under memprof */
	MP_LIVE_HELD,    /* a process memprof holds still (--stop) */
	MP_LIVE_STILL,   /* a process held still by its tracer or a stop signal, or one that has exited */
	MP_LIVE_RUNNING, /* a process that runs on while it is read */
};
/* What T is now (a process that is not held is looked at again after each mp_target_flush). */
enum mp_target_live mp_target_live(mp_target *t);

/* How a live process is held. */
typedef struct mp_target_hold_info {
	bool held;           /* memprof holds every thread (MP_LIVE_HELD) */
	size_t threads;      /* threads held (or that were, once let go) */
	uint64_t stop_ns;    /* how long stopping them took (every hold of T in all) */
	uint64_t held_ns;    /* how long they have been held, until now (every hold of T in all) */
	const char *why_not; /* not held: why ("not asked to hold it", "it is traced by pid 12 (gdb)", ...); NULL
				for a core */
	bool still;          /* not held, but stopped now by its tracer or a stop signal, or exited */
	bool asked;          /* memprof was asked to hold it (why it could not is WHY_NOT) */
} mp_target_hold_info;
/* How T's process is held, into *OUT. This function can't fail. */
void mp_target_hold_info_get(const mp_target *t, mp_target_hold_info *out);

/* The reads of T are done: let its process go on now, if memprof holds it (before the output is written,
   which may wait on a slow pipe); T stays open, and a later read sees the process running. Nothing for
   other targets. */
void mp_target_let_go(mp_target *t);

/* Let go of every process this program holds: for a signal handler (async-signal-safe), before the
   program dies of the signal. Returns 0, or the thread id of another thread of this program that holds
   one (ptrace lets only it let go): send it the signal. */
pid_t mp_target_release_all(void);

/* Guards: words a reader knows change whenever the state it reads changes (an allocator's statistics,
   the heads of the garbage collector's lists), read when registered and again by mp_target_moved.
   On a running process (MP_LIVE_RUNNING) register [ADDR, ADDR+LEN) (at most 4 KiB; one already
   registered is kept with its first value) and forget the cached pages, so that everything read after
   the guard is at least as new as its value; on any other target nothing. */
void mp_target_guard(mp_target *t, uint64_t addr, size_t len);
/* The same for a lock word that must be all zero when registered and at the end (an allocator's mutex:
   a read that began or ended while a writer was inside is not vouched for, even if the other guards
   read the same). On a process held still (MP_LIVE_HELD) the word is looked at once: taken, the hold
   caught a thread inside, mid-update, and mp_target_moved says so. */
void mp_target_guard_idle(mp_target *t, uint64_t addr, size_t len);
/* Whether the read of T cannot be vouched for: a guard changed (or cannot be read again, or a lock word
   was taken) since it was registered, the state moved during the read; or, held, the hold caught a
   writer inside. */
bool mp_target_moved(mp_target *t);
/* How many guards T has. */
size_t mp_target_guards(const mp_target *t);

/* Read exactly LEN bytes at ADDR into BUF. MP_E_NOTFOUND with DIAG naming the first
   unreadable address when any byte cannot be read. LEN may be 0. */
mp_err mp_target_read(mp_target *t, uint64_t addr, void *buf, size_t len, mp_diag *diag) MP_WUR;

/* A hint that LEN bytes at ADDR will be read soon: a core's mapped bytes are asked of the memory system now,
   so that a walk reading many small structs in a known order waits for several at once rather than for each
   in turn; nothing for a target that copies (a process: its cache reads ahead), nor for unreadable bytes. */
void mp_target_prefetch(mp_target *t, uint64_t addr, size_t len);
/* Whether mp_target_prefetch does anything for T (a core): callers that must read to find what to prefetch
   skip those reads otherwise. */
bool mp_target_prefetches(const mp_target *t);

/* Little-endian scalars at ADDR; same errors as mp_target_read. */
mp_err mp_target_read_u64(mp_target *t, uint64_t addr, uint64_t *out, mp_diag *diag) MP_WUR;
mp_err mp_target_read_u32(mp_target *t, uint64_t addr, uint32_t *out, mp_diag *diag) MP_WUR;
mp_err mp_target_read_u8(mp_target *t, uint64_t addr, uint8_t *out, mp_diag *diag) MP_WUR;

/* Read a NUL-terminated string at ADDR of at most MAX bytes (without the NUL) into a malloc'd
   buffer (*OUT, length *LEN). MP_E_LIMIT when no NUL comes within MAX bytes. */
mp_err mp_target_read_cstr(mp_target *t, uint64_t addr, size_t max, char **out, size_t *len,
			   mp_diag *diag) MP_WUR;

/* Whether every byte of [ADDR, ADDR+LEN) is readable. */
bool mp_target_readable(mp_target *t, uint64_t addr, size_t len);

/* The files mapped into T, in address order (valid until mp_target_close). */
size_t mp_target_mappings(const mp_target *t, const mp_mapping **out);

/* Whether mapping M's local file has another build-id than the target's memory shows (cores:
   checked at open; other targets: false). */
bool mp_target_mapping_mismatch(const mp_target *t, const mp_mapping *m);

/* The GNU build-id of mapping M's file as T's memory shows it (the ELF headers and notes at
   the start of the file's mapping at file offset 0) into ID (CAP bytes), its length in *LEN.
   MP_E_NOTFOUND when the memory holds no ELF headers or no build-id note there. */
mp_err mp_target_mapping_build_id(mp_target *t, const mp_mapping *m, unsigned char *id, size_t cap,
				  size_t *len, mp_diag *diag) MP_WUR;

const mp_target_info *mp_target_get_info(const mp_target *t);

/* Forget cached pages and guards (a live process moved on: read again). */
void mp_target_flush(mp_target *t);
/* Read T again from scratch (mp_target_flush), and a process held still is let go a moment and held again
   (a hold that caught a thread mid-update). MP_OK, or why it cannot be held again (the process is gone:
   later reads fail too). */
mp_err mp_target_again(mp_target *t, mp_diag *diag) MP_WUR;

#endif
