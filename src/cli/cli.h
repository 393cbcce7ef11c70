/* cli.h - what the memprof subcommands share: exit codes, messages, loading, output. */
#ifndef MEMPROF_CLI_H
#define MEMPROF_CLI_H

#include <stdbool.h>

#include "mp_err.h"
#include "mp_out.h"
#include "mp_snapshot.h"

/* Exit codes: the project's fixed table. */
enum cli_exit {
	CLI_OK = 0,      /* done */
	CLI_NOTHING = 1, /* the analysis found nothing to do */
	CLI_BAD = 2,     /* bad input or usage */
};

/* One subcommand: NAME, a one-line SUMMARY for `memprof --help`, its USAGE
   text for `memprof NAME -h`, and the function that runs it. */
struct cli_command {
	const char *name;
	const char *summary;
	const char *usage;
	int (*run)(const struct cli_command *cmd, int argc, char **argv);
};

extern const struct cli_command cli_cmd_stats, cli_cmd_trace, cli_cmd_segments, cli_cmd_memory,
	cli_cmd_compare, cli_cmd_convert;

/* Options common to the subcommands. */
struct cli_opts {
	const char *output; /* -o FILE, or NULL */
	const char *to;     /* --to FORMAT (convert) */
	char **args;        /* positional arguments */
	int nargs;
};

/* Parse ARGV of subcommand CMD. Prints help and returns CLI_OK with *DONE set
   for -h; prints a usage error and returns CLI_BAD for misuse (including a
   positional count outside [MIN, MAX]). */
int cli_parse(const struct cli_command *cmd, int argc, char **argv, int min, int max,
	      struct cli_opts *opts, bool *done);

/* Print "memprof: MESSAGE" on stderr. */
void cli_error(const char *fmt, ...) MP_PRINTF(1, 2);

/* Load PATH (FLAGS: enum mp_load_flags); on failure print the one-line reason and return false. */
bool cli_load(const char *path, unsigned flags, mp_snapshot **out);

/* Print an analysis failure (DIAG's line, else ERR's text) and return CLI_BAD. */
int cli_fail(const char *what, mp_err err, const mp_diag *diag);

/* Write folded flame graph lines FOLDED to PATH (an SVG rendering if PATH ends
   in .svg) or to stdout when PATH is NULL. TITLE heads the SVG. Returns an exit code. */
int cli_emit_flame(mp_out *folded, const char *path, const char *title);

/* Write all of OUT to stdout; returns an exit code (CLI_BAD on an output error). */
int cli_write_stdout(const mp_out *out);

/* A diag whose warnings are kept for cli_warnings_finish. */
void cli_diag_init(mp_diag *diag);

/* Print the kept warnings as "memprof: warning: ..." lines if PRINT (the
   command did not fail), and forget them. */
void cli_warnings_finish(bool print);

#endif
