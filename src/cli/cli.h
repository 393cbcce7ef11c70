/* cli.h - what the memprof subcommands share: exit codes, messages, loading, output. */
#ifndef MEMPROF_CLI_H
#define MEMPROF_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "mp_category.h"
#include "mp_err.h"
#include "mp_out.h"
#include "mp_snapshot.h"
#include "mp_snapshot_file.h"
#include "mp_target.h"
#include "mp_walk.h"

/* Exit codes: the project's fixed table. */
enum cli_exit {
	CLI_OK = 0,      /* done */
	CLI_NOTHING = 1, /* the analysis found nothing to do */
	CLI_BAD = 2,     /* bad input or usage */
};

/* Option groups a subcommand accepts (others are usage errors). */
enum cli_option_groups {
	CLI_O_OUTPUT = 1u << 0,  /* -o FILE */
	CLI_O_TO = 1u << 1,      /* --to FORMAT */
	CLI_O_TARGET = 1u << 2,  /* --pid, --stop, --sysroot, --solib-path, --layout */
	CLI_O_DEVICE = 1u << 3,  /* --device N */
	CLI_O_STATS = 1u << 4,   /* --stats */
	CLI_O_ABBREV = 1u << 5,  /* --abbreviated */
	CLI_O_CATEGORIES = 1u << 6, /* --scheme, --rules, --units, --format, --explain, --blocks,
				       --sites, --by, --segsum */
};

/* One subcommand: NAME, a one-line SUMMARY for `memprof --help`, its USAGE
   text for `memprof NAME -h`, the function that runs it, and its OPTIONS. */
struct cli_command {
	const char *name;
	const char *summary;
	const char *usage;
	int (*run)(const struct cli_command *cmd, int argc, char **argv);
	unsigned options; /* enum cli_option_groups */
};

extern const struct cli_command cli_cmd_stats, cli_cmd_trace, cli_cmd_segments, cli_cmd_memory,
	cli_cmd_compare, cli_cmd_convert, cli_cmd_info, cli_cmd_snapshot, cli_cmd_summary, cli_cmd_categories;
extern const struct cli_command cli_cmd_timeline;

/* What the help of every command that reads a TARGET says about it. */
#define CLI_TARGET_HELP                                                                       \
	"TARGET is a snapshot pickle or memprof JSON ('-' reads standard input), a core dump\n" \
	"of a PyTorch process, or a live process given as --pid PID.\n"                          \
	"  --pid PID          read the allocator of live process PID (nothing is written to it)\n" \
	"  --stop             stop the process (ptrace) while it is read\n"                     \
	"  --sysroot DIR      look for the core's libraries under DIR (a core from elsewhere)\n" \
	"  --solib-path DIRS  colon-separated directories to search for the core's libraries\n" \
	"  --layout FILE      struct layout to use instead of DWARF or memprof's tables\n"

/* Options common to the subcommands. */
struct cli_opts {
	const char *output; /* -o FILE, or NULL */
	const char *to;     /* --to FORMAT (convert) */
	char **args;        /* positional arguments */
	int nargs;
	/* Targets: --pid counts as one more target, after the positional ones. */
	int pid;                /* 0: none */
	bool stop;              /* --stop: ptrace-stop the process while reading it */
	const char *sysroot;    /* --sysroot DIR */
	const char *solib_path; /* --solib-path DIRS */
	const char *layout;     /* --layout FILE */
	long device;            /* --device N (default 0) */
	bool device_set;        /* --device was given */
	bool abbreviated;       /* --abbreviated */
	bool stats;             /* --stats: add 'device_stats' to an exported snapshot */
	/* categories: the values as given, read by the command */
	const char *scheme, *rules, *units, *format, *explain, *by;
	bool blocks, sites, segsum;
	const char *sites_count; /* --sites N */
};

/* Parse ARGV of subcommand CMD. Prints help and returns CLI_OK with *DONE set
   for -h; prints a usage error and returns CLI_BAD for misuse (including a
   count of targets (positional arguments, plus one for --pid) outside [MIN, MAX]). */
int cli_parse(const struct cli_command *cmd, int argc, char **argv, int min, int max,
	      struct cli_opts *opts, bool *done);

/* Print "memprof: MESSAGE" on stderr. */
void cli_error(const char *fmt, ...) MP_PRINTF(1, 2);

/* Load PATH (FLAGS: enum mp_load_flags); on failure print the one-line reason and return false. */
bool cli_load(const char *path, unsigned flags, mp_snapshot **out);

/* Number of targets O names, and the name of the I-th ("pid N" for --pid). */
int cli_ntargets(const struct cli_opts *o);
const char *cli_target_name(const struct cli_opts *o, int i, char *buf, size_t size);

/* Open target I of O, which must be a core or --pid, and walk its allocator. On failure print
   the one-line reason and return false; on success the caller closes *T and frees *W. */
bool cli_walk_target(const struct cli_opts *o, int i, mp_target **t, mp_walk **w);

/* Load target I of O as a snapshot: a snapshot file (LOAD_FLAGS: enum mp_load_flags), or a
   core or a live process walked (SNAP_FLAGS: enum mp_snapshot_walk_flags). On failure print
   the one-line reason and return false. */
bool cli_load_target(const struct cli_opts *o, int i, unsigned load_flags, unsigned snap_flags,
		     mp_snapshot **out);

/* For the commands that classify blocks: the --rules file of O (*RULES stays NULL without one), then
   target 0 as a snapshot. CLI_OK, or the exit status after the one-line reason (nothing left to free);
   WHAT names the command in a rules error. */
int cli_load_rules_and_target(const struct cli_opts *o, const char *what, mp_category_ruleset **rules,
			      mp_snapshot **snap);

/* Print an analysis failure (DIAG's line, else ERR's text) and return CLI_BAD. */
int cli_fail(const char *what, mp_err err, const mp_diag *diag);

/* Write folded flame graph lines FOLDED to PATH (an SVG rendering if PATH ends
   in .svg) or to stdout when PATH is NULL. TITLE heads the SVG. Returns an exit code. */
int cli_emit_flame(mp_out *folded, const char *path, const char *title);

/* Write OUT's bytes to PATH ("-" = stdout) through a temporary name, so that a failure never
   leaves half a file behind. Returns an exit code. */
int cli_save(const char *path, const mp_out *out);

/* Write SNAP to PATH in FMT (cli_save's way), then free SNAP; WHAT names the command in errors.
   Returns an exit code. */
int cli_export(mp_snapshot *snap, enum mp_format fmt, const char *path, const char *what);

/* Write all of OUT to stdout; returns an exit code (CLI_BAD on an output error). */
int cli_write_stdout(const mp_out *out);

/* A diag whose warnings are kept for cli_warnings_finish. */
void cli_diag_init(mp_diag *diag);

/* Print the kept warnings as "memprof: warning: ..." lines if PRINT (the
   command did not fail), and forget them. */
void cli_warnings_finish(bool print);

#endif
