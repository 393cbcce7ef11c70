/* cli_target.c - what a subcommand's TARGET is: a snapshot file, a core dump (told apart by
   content), or a live process (--pid); the last two are walked into a snapshot. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mp_layout.h"
#include "mp_snapshot_walk.h"

int cli_ntargets(const struct cli_opts *o)
{
	return o->nargs + (o->pid != 0);
}

const char *cli_target_name(const struct cli_opts *o, int i, char *buf, size_t size)
{
	if (i < o->nargs)
		return o->args[i];
	snprintf(buf, size, "pid %d", o->pid);
	return buf;
}

enum file_kind { FILE_SNAPSHOT, FILE_CORE, FILE_OTHER_ELF, FILE_UNREADABLE };

/* An ELF file whose e_type is ET_CORE is a core; anything else is left to the snapshot reader. */
static enum file_kind file_kind(const char *path)
{
	unsigned char h[18];
	FILE *f;
	size_t n;

	if (strcmp(path, "-") == 0)
		return FILE_SNAPSHOT;
	f = fopen(path, "rb");
	if (f == NULL)
		return FILE_UNREADABLE;
	n = fread(h, 1, sizeof h, f);
	fclose(f);
	if (n < sizeof h || memcmp(h, "\177ELF", 4) != 0)
		return FILE_SNAPSHOT;
	/* e_type sits at 16 in both ELF classes, in the file's byte order (h[5]: 1 LE, 2 BE) */
	return (h[5] == 2 ? (h[16] << 8 | h[17]) : (h[17] << 8 | h[16])) == 4 ? FILE_CORE : FILE_OTHER_ELF;
}

/* Progress on a terminal: the walk of a big heap takes a while. */
static void show_progress(void *ctx, size_t blocks)
{
	(void)ctx;
	fprintf(stderr, "\rmemprof: %zu blocks read...", blocks);
}

static bool open_target(const struct cli_opts *o, int i, mp_target **t, mp_diag *diag)
{
	mp_target_opts topts = { .sysroot = o->sysroot, .solib_path = o->solib_path, .stop = o->stop };
	char name[64];
	mp_err err;

	if (i >= o->nargs)
		err = mp_target_open_pid(o->pid, &topts, t, diag);
	else
		err = mp_target_open_core(o->args[i], &topts, t, diag);
	if (err == MP_OK)
		return true;
	cli_fail(cli_target_name(o, i, name, sizeof name), err, diag);
	return false;
}

bool cli_walk_target(const struct cli_opts *o, int i, mp_target **t, mp_walk **w)
{
	mp_walk_opts wopts = { 0 };
	mp_layout layout;
	char name[64];
	mp_diag diag;
	mp_err err;
	bool tty = isatty(STDERR_FILENO);

	*t = NULL;
	*w = NULL;
	cli_diag_init(&diag);
	if (i < o->nargs && file_kind(o->args[i]) != FILE_CORE) {
		cli_error("'%s': not a core dump", o->args[i]);
		return false;
	}
	if (o->layout != NULL) {
		if ((err = mp_layout_load_file(o->layout, &layout, &diag)) != MP_OK) {
			cli_fail(o->layout, err, &diag);
			return false;
		}
		wopts.layout = &layout;
	}
	if (!open_target(o, i, t, &diag))
		return false;
	if (tty)
		wopts.progress = show_progress;
	err = mp_walk_run(*t, NULL, &wopts, w, &diag);
	if (tty)
		fputs("\r\033[K", stderr);
	if (err != MP_OK) {
		cli_fail(cli_target_name(o, i, name, sizeof name), err, &diag);
		mp_target_close(*t);
		*t = NULL;
		return false;
	}
	return true;
}

bool cli_load_target(const struct cli_opts *o, int i, unsigned load_flags, unsigned snap_flags, mp_snapshot **out)
{
	mp_target *t;
	mp_walk *w;
	char name[64];
	mp_diag diag;
	mp_err err;

	*out = NULL;
	if (i < o->nargs) {
		switch (file_kind(o->args[i])) {
		case FILE_SNAPSHOT:
		case FILE_UNREADABLE: /* the loader says why */
			return cli_load(o->args[i], load_flags, out);
		case FILE_OTHER_ELF:
			cli_error("'%s': an ELF file but not a core dump", o->args[i]);
			return false;
		case FILE_CORE:
			break;
		}
	}
	if (!cli_walk_target(o, i, &t, &w))
		return false;
	cli_diag_init(&diag);
	err = mp_snapshot_from_walk(w, snap_flags, out, &diag);
	mp_walk_free(w);
	mp_target_close(t);
	if (err != MP_OK) {
		cli_fail(cli_target_name(o, i, name, sizeof name), err, &diag);
		return false;
	}
	return true;
}

int cli_load_rules_and_target(const struct cli_opts *o, const char *what, mp_category_ruleset **rules,
			      mp_snapshot **snap)
{
	mp_diag diag;
	mp_err err;

	*rules = NULL;
	*snap = NULL;
	cli_diag_init(&diag);
	if (o->rules != NULL && (err = mp_category_rules_load(o->rules, rules, &diag)) != MP_OK)
		return cli_fail(what, err, &diag);
	if (!cli_load_target(o, 0, 0, 0, snap)) {
		mp_category_ruleset_free(*rules);
		*rules = NULL;
		return CLI_BAD;
	}
	return CLI_OK;
}
