/* mp_procs.h - the processes of a job on this machine, from /proc: a launcher (torchrun's agent, an srun step, a
   shell) and every process below it, what their environment names them (RANK, LOCAL_RANK), and whether they have
   mapped a given library (PyTorch's CUDA allocator). Read-only; processes that end meanwhile are passed over. */
#ifndef MEMPROF_PROCS_H
#define MEMPROF_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "mp_err.h"

/* The most processes one job is looked for among (a node's). */
#define MP_PROCS_MAX 65536

/* ROOT and every process below it (children, their children, ...), ROOT first, then in the order of their pids,
   into *OUT (N of them; the caller frees it). MP_E_NOTFOUND when ROOT is not a process here. */
mp_err mp_procs_below(pid_t root, pid_t **out, size_t *n, mp_diag *diag) MP_WUR;

/* The value of NAME in PID's environment as it was at exec (/proc/PID/environ) into BUF (SIZE bytes, cut to
   fit); false when PID has no NAME or cannot be read. */
bool mp_proc_getenv(pid_t pid, const char *name, char *buf, size_t size);

/* Whether PID maps a file whose base name starts with PREFIX ("libc10_cuda.so"). */
bool mp_proc_maps(pid_t pid, const char *prefix);

#endif
