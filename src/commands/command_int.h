/* command_int.h - what the command handlers share (private to src/commands). */
#ifndef MEMPROF_COMMAND_INT_H
#define MEMPROF_COMMAND_INT_H

#include "mp_category.h"
#include "mp_command.h"
#include "mp_owners.h"

/* The snapshot of positional word I of A (absent: the front end's default); see mp_command_front. */
int cmd_snapshot(mp_command_ctx *c, const mp_command_args *a, int i, unsigned load_flags, unsigned walk_flags,
		 mp_snapshot **snap, bool *owned);
/* The same, and when word I is a target memprof reads (a core, or the front end's own process or core),
   the owners of its memory from its Python heap in *OWNERS (NULL otherwise, or when they could not be
   read: a warning says why). The snapshot then comes from the walk the owners are placed in. */
int cmd_snapshot_owners(mp_command_ctx *c, const mp_command_args *a, int i, unsigned walk_flags, mp_snapshot **snap,
			bool *owned, mp_owners **owners);
/* What a command does with the target of a SNAPSHOT word while it is open (pystack-like reads). */
typedef void (*cmd_target_fn)(mp_target *t, void *arg);
/* cmd_snapshot_owners that reads the owners only when WANT_OWNERS, and calls THEN (when not NULL) on the
   target while it is open: not for a snapshot file. */
int cmd_snapshot_owners_then(mp_command_ctx *c, const mp_command_args *a, int i, unsigned walk_flags, bool want_owners,
			     mp_snapshot **snap, bool *owned, mp_owners **owners, cmd_target_fn then, void *arg);
/* cmd_snapshot, or with OWNERS cmd_snapshot_owners with the owners written into the snapshot's blocks
   ('owner', 'category', ...: mp_owners_annotate), for what shows blocks or saves them. */
int cmd_snapshot_annotated(mp_command_ctx *c, const mp_command_args *a, int i, unsigned walk_flags, bool owners,
			   mp_snapshot **snap, bool *owned);
/* cmd_snapshot_annotated (owners written when OWNERS) that calls THEN as cmd_snapshot_owners_then does. */
int cmd_snapshot_annotated_then(mp_command_ctx *c, const mp_command_args *a, int i, unsigned walk_flags, bool owners,
				mp_snapshot **snap, bool *owned, cmd_target_fn then, void *arg);
/* Free SNAP when OWNED. */
void cmd_release(mp_snapshot *snap, bool owned);
/* The name failures about positional word I are told under. */
const char *cmd_label(mp_command_ctx *c, const mp_command_args *a, int i, char *buf, size_t size);
/* Print TEXT (and a newline after it when PRINT_NEWLINE, as Python's print()). */
int cmd_emit(mp_command_ctx *c, mp_out *text, bool print_newline);
/* Write TEXT to PATH ('-': print it), through a temporary name; WHAT names the command in a failure. */
int cmd_write_file(mp_command_ctx *c, const char *what, const char *path, const mp_out *text);
/* Folded flame graph lines: printed, or to PATH (an SVG when it ends in .svg) under TITLE. */
int cmd_flame(mp_command_ctx *c, const char *what, const mp_out *folded, const char *path, const char *title);
/* Say LINE, what the command did not find: in the output (interactive), else as the error after
   LABEL. Returns MP_CMD_NOTHING. */
int cmd_nothing(mp_command_ctx *c, const char *label, const char *line);

/* The --rules FILE of A loaded into *RULES (NULL without one). */
int cmd_rules(mp_command_ctx *c, const mp_command_args *a, const char *what, mp_category_ruleset **rules);

#endif
