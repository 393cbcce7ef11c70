/* session_int.h - what the session's files share: the session itself, its commands and helpers. */
#ifndef MEMPROF_SESSION_INT_H
#define MEMPROF_SESSION_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mp_command.h"
#include "mp_err.h"
#include "mp_format.h"
#include "mp_layout.h"
#include "mp_out.h"
#include "mp_session.h"
#include "mp_session_table.h"
#include "mp_snapshot.h"
#include "mp_target.h"
#include "mp_walk.h"

enum session_target { ST_NONE, ST_PID, ST_CORE, ST_CALLBACK };

/* What `catch oom` asked for (session_cmd_catch.c). */
struct session_catch {
	bool armed;
	bool go_on;     /* --continue: report, then the program goes on */
	char *dir;      /* -o DIR, or NULL: the report goes to the output */
	char format[8]; /* the report's */
	unsigned count; /* OOMs caught since it was armed */
};

/* A snapshot kept under a name (`snapshot take`/`load`). */
struct session_snap {
	char *name;
	char *origin; /* where it came from and when, for `snapshot list` */
	mp_snapshot *snap;
};

struct mp_session {
	/* The target as the debugger named it. */
	enum session_target kind;
	char *why; /* ST_NONE: why there is none */
	int pid;
	char *core, *sysroot, *solib_path;
	char *cb_name, *maps_text;
	mp_read_fn cb_read;
	void *cb_ctx;
	uint64_t reads;
	/* Opened and walked when a command first needs it; dropped when the target runs. */
	mp_target *target;
	mp_walk *walk;
	mp_snapshot *now;
	/* Settings. */
	enum mp_units units;
	long device; /* -1: all */
	char *layout_path;
	mp_layout layout;
	size_t max_blocks; /* 0: the walker's default */
	unsigned walk_flags; /* MP_SW_NO_FRAMES when frames are off */
	bool stop;           /* a live process is held still while each command reads it (and let go after) */
	char *viewer;        /* pages' viewer: NULL online (by URL), "" python3's torch's, else a path (mp_command_ctx) */
	char *d3;            /* pages' d3 when inlined: NULL this machine's, else a path */
	char show_buf[32];
	struct session_catch catching;
	/* Named snapshots. */
	struct session_snap *snaps;
	size_t nsnaps, snaps_cap;
	/* The last run. */
	mp_out out;
	mp_out warnings;
	char error[640];
	char *completion;
	mp_session_poll_fn poll;
	void *poll_ctx;
};

/* The command NAME (an old name's command, *ALIAS set to the old name's entry when ALIAS is not NULL). */
const mp_command *session_find_command(const char *name, const mp_command **alias);

/* The session as a front end of the command table: SNAPSHOT words are kept names, 'now' or files. */
extern const mp_command_front session_front;
/* A run's context: the session's settings as the defaults; TYPED is the command as typed. */
void session_ctx_init(mp_session *s, mp_command_ctx *c, const char *typed);

/* Set the run's error ("memprof: " and the formatted text); returns MP_SESSION_ERROR. */
int session_error(mp_session *s, const char *fmt, ...) MP_PRINTF(2, 3);
/* The error of a failed library call: DIAG's line, else ERR's text, after WHAT. */
int session_fail(mp_session *s, const char *what, mp_err err, const mp_diag *diag);
/* A diag whose warnings go to the run's warnings. */
void session_diag_init(mp_session *s, mp_diag *diag);

/* Walk the target unless this stop's walk is cached, for run C (its diag; a process is C's live one);
   MP_SESSION_OK or an error. */
int session_walk(mp_session *s, mp_command_ctx *c);
/* Open the session's target unless it is open. */
mp_err session_open(mp_session *s, mp_diag *diag);
/* Close the target and forget the walk. */
void session_drop_target(mp_session *s);

/* The snapshot NAME stands for: "now" (the target's, walked), a name taken or loaded, or a
   snapshot file. *OWNED tells whether the caller must free it (a file). */
int session_resolve(mp_session *s, mp_command_ctx *c, const char *name, mp_snapshot **snap, bool *owned);
/* The named snapshot NAME, or NULL. */
struct session_snap *session_find(mp_session *s, const char *name);

/* Append OUT's text to the run's output, with the newline print() adds when PRINT_NEWLINE. */
void session_emit(mp_session *s, mp_out *out, bool print_newline);

/* Every setting at its default (session_settings.c: the table of settings). */
void session_settings_defaults(mp_session *s);
/* info's line of every setting and its value. */
void session_settings_line(const mp_session *s, mp_out *out);

/* What every run does first (the last run's output, warnings and error go) and last. */
void session_begin_run(mp_session *s);
void session_end_run(mp_session *s);
/* Run command ARGV (its name first) in the run begun, its output and warnings added to the run's. */
int session_run_words(mp_session *s, int argc, char **argv);

/* Forget what `catch oom` asked for. */
void session_catch_free(mp_session *s);

/* The session's own commands (session_cmd_snapshot.c, session_cmd_catch.c). */
extern const mp_command session_cmd_snapshot, session_cmd_take, session_cmd_list,
	session_cmd_load, session_cmd_drop, session_cmd_stats, session_cmd_catch, session_cmd_catch_oom;

#endif
