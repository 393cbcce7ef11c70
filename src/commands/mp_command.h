/* mp_command.h - memprof's commands, declared once for every front end.

   A command is one mp_command: its name, a summary, a synopsis and a description, its options
   with the rule each value must meet, its positional words, and a handler that runs it over the
   library. The CLI (src/cli), the debugger session (src/session) and any later front end read the
   same table, parse the same words with the same parser (so they accept and refuse the same
   words with the same messages), and differ only where a front end must: how a SNAPSHOT word
   becomes a snapshot (a file, a core or --pid on the command line; a kept name, 'now' or a file
   in the debugger), where text and errors go, and what their help adds about targets. */
#ifndef MEMPROF_COMMAND_H
#define MEMPROF_COMMAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_err.h"
#include "mp_format.h"
#include "mp_out.h"
#include "mp_snapshot.h"
#include "mp_target.h"
#include "mp_walk.h"

/* Results of a command: the CLI's exit codes. */
enum mp_command_status {
	MP_CMD_OK = 0,      /* done */
	MP_CMD_NOTHING = 1, /* done, found nothing to show */
	MP_CMD_BAD = 2,     /* bad input or usage: the error line says why */
	MP_CMD_RACED = 3,   /* a read's output held back by mp_command_gate: mp_command_run reads again (it
			       never returns this status) */
};

/* What an option's value must be. The parser checks it; a bad value is a usage error. */
enum mp_option_kind {
	MP_OPT_FLAG,        /* no value */
	MP_OPT_TEXT,        /* any text the handler reads (an address, a file) */
	MP_OPT_FILE,        /* a file name (completed as one) */
	MP_OPT_CHOICE,      /* one of the option's CHOICES */
	MP_OPT_DEVICE,      /* a device number, 0 to MP_CMD_MAX_DEVICE, or 'all' */
	MP_OPT_COUNT,       /* a whole number of at least 1 */
	MP_OPT_INTEGER,     /* a whole number (a stream) */
	MP_OPT_SIZE,        /* a size: 4096, 64KiB, 1.5MiB, ... */
	MP_OPT_FLAG_COUNT,  /* a flag the next word may follow as its count, when it is all digits (--sites [N]) */
};

#define MP_CMD_MAX_DEVICE 1023

/* Every option of every command and front end, once: X(ID, "--name"). Tables and handlers name an option by
   its ID (MP_O_FORMAT), so that a misspelt option is a build error rather than an option never given. */
#define MP_OPTION_NAMES(X) \
	X(ABBREVIATED, "--abbreviated") \
	X(BLOCKS, "--blocks") \
	X(BY, "--by") \
	X(CAPACITY, "--capacity") \
	X(CONF, "--conf") \
	X(CONTINUE, "--continue") \
	X(CXX_EXCEPTION, "--cxx-exception") \
	X(D3, "--d3") \
	X(DEPTH, "--depth") \
	X(DEVICE, "--device") \
	X(EXPLAIN, "--explain") \
	X(FILTER_FREED, "--filter-freed") \
	X(FORMAT, "--format") \
	X(LAST, "--last") \
	X(LAYOUT, "--layout") \
	X(MESSAGE, "--message") \
	X(MIN_SIZE, "--min-size") \
	X(NO_FRAMES, "--no-frames") \
	X(NO_OWNERS, "--no-owners") \
	X(NO_STOP, "--no-stop") \
	X(OFFLINE, "--offline") \
	X(OUTPUT, "-o") \
	X(OWNERS, "--owners") \
	X(PID, "--pid") \
	X(PLOT_SEGMENTS, "--plot-segments") \
	X(RANKS, "--ranks") \
	X(RELEASE, "--release") \
	X(RULES, "--rules") \
	X(SCHEME, "--scheme") \
	X(SEGSUM, "--segsum") \
	X(SITES, "--sites") \
	X(SIZE, "--size") \
	X(SOLIB_PATH, "--solib-path") \
	X(STATE, "--state") \
	X(STATS, "--stats") \
	X(STOP, "--stop") \
	X(STREAM, "--stream") \
	X(SYSROOT, "--sysroot") \
	X(TO, "--to") \
	X(TOP, "--top") \
	X(TORCH, "--torch") \
	X(UNITS, "--units")

enum mp_option_id {
	MP_O_NONE, /* ends a list of options */
#define MP_OPTION_ID(id, name) MP_O_##id,
	MP_OPTION_NAMES(MP_OPTION_ID)
#undef MP_OPTION_ID
	MP_O_COUNT
};

/* The option ID as it is typed ("--device", "-o"); "" for MP_O_NONE. */
const char *mp_option_name(enum mp_option_id id);

typedef struct mp_option {
	enum mp_option_id id; /* MP_O_DEVICE; MP_O_NONE ends the list */
	enum mp_option_kind kind;
	const char *choices; /* MP_OPT_CHOICE: the values, blank-separated; MP_OPT_TEXT: words it is made of (completion) */
	const char *metavar; /* how the help names the value ("N", "FILE") */
	const char *help;    /* one line or more, for the help's option list */
} mp_option;

/* Which front ends offer a command. */
enum mp_front_mask {
	MP_FRONT_CLI = 1u << 0,
	MP_FRONT_SESSION = 1u << 1,
	MP_FRONT_ALL = MP_FRONT_CLI | MP_FRONT_SESSION,
};

/* The words of a run, once parsed. Options by their index in the command's list. */
#define MP_CMD_MAX_OPTIONS 24
#define MP_CMD_MAX_POSITIONAL 4

typedef struct mp_command mp_command;

typedef struct mp_command_args {
	const mp_command *cmd;
	const mp_option *extra; /* the front end's own options (the CLI's --pid, ...), or NULL */
	bool given[2 * MP_CMD_MAX_OPTIONS];
	const char *value[2 * MP_CMD_MAX_OPTIONS]; /* NULL for a flag (or --sites without a count) */
	char *pos[MP_CMD_MAX_POSITIONAL];
	int npos;
	/* A variadic command's words past its last kind's first (mp_command_variadic): how many, read with
	   mp_command_word from the words parsed (ARGC, ARGV: the caller's, which outlive the run). */
	int nmore;
	int argc;
	char **argv;
	bool help; /* -h or --help: print the help, run nothing */
} mp_command_args;

typedef struct mp_command_ctx mp_command_ctx;

/* What a front end does for the commands. Every function gets the run's context. */
typedef struct mp_command_front {
	unsigned mask; /* enum mp_front_mask: which one it is */
	/* The snapshot the I-th SNAPSHOT word names (WORD, NULL when not given: the front end's default).
	   What the command reads of it: LOAD_FLAGS (enum mp_load_flags) for a file, WALK_FLAGS (enum
	   mp_snapshot_walk_flags) for a walk. *OWNED: the caller frees it. On failure: the error is set, MP_CMD_BAD. */
	int (*snapshot)(mp_command_ctx *c, int i, const char *word, unsigned load_flags, unsigned walk_flags,
			mp_snapshot **snap, bool *owned);
	/* The walked target of SNAPSHOT word I (info): *T and *W stay the front end's when *OWNED is false. */
	int (*walked)(mp_command_ctx *c, int i, const char *word, mp_target **t, mp_walk **w, bool *owned);
	/* The target of SNAPSHOT word I opened but not walked (pystack: any CPython process, with or without
	   PyTorch): *T stays the front end's when *OWNED is false. On failure: the error is set, MP_CMD_BAD. */
	int (*target)(mp_command_ctx *c, int i, const char *word, mp_target **t, bool *owned);
	/* Lines the front end adds before and after info's own (the session: its version, backend, settings). */
	void (*info_lines)(mp_command_ctx *c, mp_out *out, bool after);
	/* The name failures of SNAPSHOT word I are told under (the CLI: the target; the session: the command). */
	const char *(*label)(mp_command_ctx *c, int i, const char *word, char *buf, size_t size);
	/* Text the command prints. MP_CMD_OK, or MP_CMD_BAD when it cannot be written. */
	int (*emit)(mp_command_ctx *c, const mp_out *text);
	/* Where text too big to hold (a flame graph's lines) may go as it is made, or NULL (then
	   it is held and emitted): the CLI's standard output. Output cut short by an error then
	   stays printed, the error after it. */
	FILE *(*stream)(mp_command_ctx *c);
	/* Where warnings go: mp_diag's callback. */
	void (*warn)(void *ctx, const char *line);
	/* The run's live process (mp_command_ctx.live) moved under the read: forget what was read of it (a
	   walk kept); mp_command_run reads it again. May be NULL. */
	void (*again)(mp_command_ctx *c);
} mp_command_front;

struct command_attempt; /* one read of a running process: mp_command_run's, private */

/* A run: the front end, its data, and the defaults its settings give. */
struct mp_command_ctx {
	const mp_command_front *front;
	void *data;               /* the front end's */
	enum mp_units units;      /* when no --units is given */
	long device;              /* when no --device is given: -1 all */
	long one_device;          /* the device a one-device view (summary) shows when no --device is given */
	/* Where the pages (trace_plot, segment_plot) take PyTorch's viewer when no --offline, --torch is given:
	   NULL by URL, as PyTorch's page does; "" inlined from python3's torch; else inlined from that path. And
	   the d3 inlined with it when no --d3 is given: NULL this machine's. */
	const char *viewer;
	const char *d3;
	/* A person at a prompt (the debugger): a file written is named in the output, "nothing found" is
	   said there rather than as an error, and compare lists the blocks allocated and freed too. */
	bool interactive;
	const char *name;         /* the command as typed (an old spelling names its failures) */
	char release[32];         /* the PyTorch release of the target walked ("2.6.0"), "" for a file */
	char error[640];          /* the failure, one line without "memprof: " */
	/* The error is about which words the command takes (an unknown option, a word missing or too
	   many): the front end says where its help is. A bad value is said in the one line. */
	bool usage;
	/* The live process this run reads, set by the front end when it hands it out (opened once per run,
	   or the front end's own); NULL for cores and files. mp_command_run reads it again while it moves. */
	mp_target *live;
	unsigned reads;  /* reads of LIVE this run: 1, or more when it moved under one */
	struct command_attempt *attempt; /* mp_command_run's record of the current read */
};

struct mp_command {
	const char *name;     /* "segsum"; a subcommand's full name ("snapshot take") */
	unsigned fronts;      /* enum mp_front_mask */
	const char *summary;  /* one line, no period: `memprof --help` and `help memprof` list it */
	const char *synopsis; /* after the name: "[SNAPSHOT] [-o FILE]" */
	const char *description;
	/* The positional words: blank-separated kinds, "[...]" when optional: "[snapshot]", "address [snapshot]",
	   "snapshot snapshot", "file file"; the last kind followed by "..." takes any number of words ("file...").
	   A snapshot word is one the front end resolves. */
	const char *positional;
	const mp_option *options; /* ended by MP_O_NONE */
	const char *exit_status;  /* the CLI help's last line */
	int (*run)(mp_command_ctx *c, const mp_command_args *a);
	unsigned flags; /* enum mp_command_flags */
	/* An old name kept for those who rely on it: the command it now is. The front end runs that one
	   after a one-line note; NAME's old meaning may differ between front ends (see their lists). */
	const char *alias_of;
};

enum mp_command_flags {
	MP_CMD_PREFIX = 1u << 0,     /* only groups subcommands ("snapshot") */
	MP_CMD_EXPRESSION = 1u << 1, /* the debugger evaluates its first word to an address */
};

/* The commands the front ends share, in help order (command_table.c); the front ends add their own. */
extern const mp_command *const mp_commands[];
extern const size_t mp_ncommands;

/* Commands a front end names: trace (the debugger reads its old words) and snapshot save (the command
   line's short form). */
extern const mp_command mp_cmd_trace, mp_cmd_snapshot_save;

/* The command NAME of LIST (N entries) that front MASK offers, or NULL. An alias resolves to the
   command it names (*ALIAS, when not NULL, gets the alias entry, else NULL). */
const mp_command *mp_command_find(const mp_command *const *list, size_t n, const char *name, unsigned mask,
				  const mp_command **alias);

/* Run A's command: its handler, and, while what the run reads is a live process that runs on (not held
   still), again when the process moved under the read (its guards changed, mp_target_moved) or the read
   found damage that the read before did not find the same: a few times, then the error "the job was
   running: use --stop". No output of a read that moved is emitted and none of its warnings are kept, so
   a race is never reported as damage; a core or a process held still runs once, as the handler says.
   Returns the handler's status. */
int mp_command_run(mp_command_ctx *c, const mp_command_args *a);

/* Whether what this read of the run's live process found may be output: MP_CMD_OK, or MP_CMD_RACED when it
   moved under the read (then output nothing and return that). Every output goes through here first (the
   handlers' emit and file helpers; a front end's command that keeps or prints something itself). */
int mp_command_gate(mp_command_ctx *c);

/* Parse ARGV (the words after the name) for CMD with the front end's EXTRA options (NULL-ended, or
   NULL): every option and its value by its rule, at most as many positional words as CMD takes.
   MP_CMD_OK, or MP_CMD_BAD with the one-line usage error in C->error ("NAME: ..."). */
int mp_command_parse(mp_command_ctx *c, const mp_command *cmd, const mp_option *extra, int argc, char **argv,
		     mp_command_args *a);

/* Whether A has every positional word CMD requires (the debugger's way: an optional SNAPSHOT word
   defaults to 'now'); if not, the usage error. The command line checks its targets itself. */
int mp_command_check_words(mp_command_ctx *c, const mp_command_args *a);

/* The value of option ID (NULL when not given or a flag) and whether it was given; an option the command does
   not take is never given. */
const char *mp_arg(const mp_command_args *a, enum mp_option_id id);
bool mp_arg_given(const mp_command_args *a, enum mp_option_id id);
/* --device's value: DEFAULT when not given, -1 for 'all'. */
long mp_arg_device(const mp_command_args *a, enum mp_option_id id, long def);
/* The number of positional words of kind KIND before position I (the snapshot index of word I). */
int mp_command_positional_index(const mp_command *cmd, int i, const char *kind);
/* The blank-separated kinds of the positional words, without brackets: KIND of word I into BUF ("" past them). */
const char *mp_command_positional_kind(const mp_command *cmd, int i, char *buf, size_t size);
/* Whether CMD's last positional kind takes any number of words ("file..."; the kind is then "file"). */
bool mp_command_variadic(const mp_command *cmd);
/* Positional word I of A, a variadic command's every word counted (I < A->npos + A->nmore), or NULL. */
const char *mp_command_word(const mp_command_args *a, int i);
/* Whether one of CMD's positional words is of kind KIND ("snapshot": the command reads a target). */
bool mp_command_takes(const mp_command *cmd, const char *kind);
/* How many positional words CMD takes: at least *MIN, at most *MAX. */
void mp_command_positional_count(const mp_command *cmd, int *min, int *max);

/* The description of CMD, then its options and EXTRA's, one "  --name VALUE  help" each, into OUT. */
void mp_command_help_body(const mp_command *cmd, const mp_option *extra, mp_out *out);

/* The option NAME among CMD's and EXTRA's, or NULL. */
const mp_option *mp_command_option(const mp_command *cmd, const mp_option *extra, const char *name);

/* What file PATH is ('-', standard input, is a snapshot), by its first bytes. */
enum mp_file_kind { MP_FILE_SNAPSHOT, MP_FILE_CORE, MP_FILE_OTHER_ELF, MP_FILE_UNREADABLE };
enum mp_file_kind mp_file_kind(const char *path);
/* Walk target T, which a front end opened for a SNAPSHOT word, with OPTS; on failure T is closed (unless it is
   the run's live process, C->live, which the front end keeps) and the error told under LABEL. */
int mp_command_walk(mp_command_ctx *c, const char *label, mp_target *t, const mp_walk_opts *opts, mp_walk **w);

/* Parse a size ("4096", "64KiB", "1.5M", "2GiB") into *OUT; false when it is none. */
bool mp_parse_size(const char *text, int64_t *out);
/* Parse a whole number (decimal, or 0x hex) into *OUT; false when it is none. */
bool mp_parse_long(const char *text, long *out);

/* Set C's error to the formatted line; returns MP_CMD_BAD. */
int mp_command_error(mp_command_ctx *c, const char *fmt, ...) MP_PRINTF(2, 3);
/* The same for an error about which words the command takes (sets C->usage). */
int mp_command_usage_error(mp_command_ctx *c, const char *fmt, ...) MP_PRINTF(2, 3);
/* The error of a failed library call: DIAG's line (else ERR's text) after WHAT. */
int mp_command_fail(mp_command_ctx *c, const char *what, mp_err err, const mp_diag *diag);
/* A diag whose warnings go to the front end (held back, with damage counted, while mp_command_run reads a
   running process). */
void mp_command_diag(mp_command_ctx *c, mp_diag *diag);

#endif
