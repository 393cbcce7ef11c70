/* cli.h - the command line as a front end of the command table (src/commands): how it names
   targets, where its text, errors and warnings go, and its own commands. */
#ifndef MEMPROF_CLI_H
#define MEMPROF_CLI_H

#include <stdbool.h>
#include <sys/types.h>

#include "mp_command.h"
#include "mp_err.h"
#include "mp_out.h"
#include "mp_snapshot_file.h"

/* The front end: targets are snapshot files, core dumps, or --pid (the options of cli_target_options). */
extern const mp_command_front cli_front;
/* --pid, --stop, --no-stop, --sysroot, --solib-path, --layout, --no-frames: what every command that reads a
   target takes. */
extern const mp_option cli_target_options[];

/* A run's context for CMD (its words parsed into A, which the front end reads for the targets). */
void cli_ctx_init(mp_command_ctx *c, const mp_command_args *a);
/* The end of the run of C: --pid closed (and let go on, when it was held). */
void cli_ctx_finish(mp_command_ctx *c);

/* Handlers for the signals that end memprof (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE): a process held still
   is let go first, then memprof dies of the signal as it would have. */
void cli_signals_install(void);
/* Whether the words of A fit its command on the command line: every positional word given, a target
   for each SNAPSHOT word (--pid counts as one, the last); if not, the usage error is set. */
int cli_check_targets(mp_command_ctx *c, mp_command_args *a);

/* A rank of a distributed job: a process below its launcher with PyTorch's CUDA allocator mapped. */
typedef struct cli_rank {
	pid_t pid;
	char name[32];       /* RANK (or SLURM_PROCID, ...) in its environment, else "pidPID": DIR/rank-NAME */
	char local_rank[32]; /* LOCAL_RANK (or SLURM_LOCALID, ...), "" when not set */
	bool numbered;       /* its environment gave its rank */
} cli_rank;

/* The ranks below LAUNCHER now, in pid order, into *OUT (N; the caller frees it; none is no error): the processes
   with the allocator mapped and a rank number in their environment, or, where none has one, all with it. */
mp_err cli_find_ranks(long launcher, cli_rank **out, size_t *n, mp_diag *diag) MP_WUR;

/* `snapshot --pid LAUNCHER --ranks -o DIR` (WORDS: the short form's N words but -o DIR): every rank below the
   launcher held still together, each saved by SAVE (`snapshot save` with ARGV), DIR/ranks-HOST.json written. An exit
   status. */
int cli_snapshot_ranks(int n, char **words, const char *dir, int (*save)(int argc, char **argv));

/* The commands only the command line has. */
extern const mp_command cli_cmd_convert, cli_cmd_watch;
/* The command line's commands, in help order: the shared table's it offers, then its own (aliases
   included); *LIST gets them, the return is how many. This function can't fail. */
size_t cli_commands(const mp_command *const **list);

/* Print "memprof: MESSAGE" on stderr, control characters escaped. */
void cli_error(const char *fmt, ...) MP_PRINTF(1, 2);
/* Print the kept warnings as "memprof: warning: ..." lines if PRINT (the command did not fail), and forget them. */
void cli_warnings_finish(bool print);
/* mp_diag's warn callback: keep the warning for cli_warnings_finish. */
void cli_keep_warning(void *ctx, const char *line);

/* Write SNAP to PATH in FMT ('-': standard output), then free SNAP; WHAT names the command in errors. */
int cli_export(mp_command_ctx *c, mp_snapshot *snap, enum mp_format fmt, const char *path, const char *what);

#endif
