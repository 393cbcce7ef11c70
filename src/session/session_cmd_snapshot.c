/* session_cmd_snapshot.c - the session's own commands: named snapshots (take, list, save, load, drop). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mp_array.h"
#include "mp_owners_report.h"
#include "mp_snapshot_file.h"
#include "mp_snapshot_walk.h"
#include "session_int.h"

static bool good_name(const char *name)
{
	return name[0] != '\0' && strcmp(name, "now") != 0 && strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
							       "0123456789_-.") == strlen(name);
}

/* Keep SNAP under NAME (replacing one of that name); takes SNAP in all cases. */
static int keep(mp_session *s, const char *name, mp_snapshot *snap, const char *origin)
{
	struct session_snap *old = session_find(s, name);
	char *n, *o;

	if (old != NULL) {
		o = strdup(origin);
		if (o == NULL) {
			mp_snapshot_free(snap);
			return session_error(s, "out of memory");
		}
		mp_snapshot_free(old->snap);
		free(old->origin);
		old->snap = snap;
		old->origin = o;
		mp_out_printf(&s->out, "snapshot '%s' replaced: %s\n", name, origin);
		return MP_SESSION_OK;
	}
	n = strdup(name);
	o = strdup(origin);
	if (n == NULL || o == NULL ||
	    mp_array_grow((void **)&s->snaps, &s->snaps_cap, s->nsnaps + 1, sizeof *s->snaps) != MP_OK) {
		free(n);
		free(o);
		mp_snapshot_free(snap);
		return session_error(s, "out of memory");
	}
	s->snaps[s->nsnaps++] = (struct session_snap){ .name = n, .origin = o, .snap = snap };
	mp_out_printf(&s->out, "snapshot '%s': %s\n", name, origin);
	return MP_SESSION_OK;
}

static int check_name(mp_command_ctx *c, const char *name)
{
	if (!good_name(name))
		return mp_command_error(c, "%s: '%s' is not a snapshot name (letters, digits, _-., not 'now')",
					c->name, name);
	return MP_CMD_OK;
}

/* Write the owners of SNAP's blocks (S's target, just walked) into it; a target without CPython or torch
   tensors has none, silently; damage that stops the reading is a warning. MP_E_NOMEM only. */
static mp_err annotate_owners(mp_session *s, mp_snapshot *snap, mp_diag *diag)
{
	mp_owners *o = NULL;
	mp_diag quiet = { .msg = "" };
	mp_err err = mp_owners_read(s->target, snap, NULL, &o, &quiet);

	if (err != MP_OK) {
		if (err == MP_E_NOMEM)
			return err;
		if (err != MP_E_NOTFOUND)
			mp_warn_damage(diag, "owners not read: %s", quiet.msg);
		return MP_OK;
	}
	err = mp_owners_annotate(o, snap, diag);
	mp_owners_free(o);
	return err;
}

static int run_take(mp_command_ctx *c, const mp_command_args *a)
{
	mp_session *s = c->data;
	char origin[160], when[32];
	const mp_target_info *ti;
	mp_snapshot *snap;
	mp_diag diag;
	mp_err err;
	time_t now = time(NULL);
	int rc;

	if ((rc = check_name(c, a->pos[0])) != MP_CMD_OK || (rc = session_walk(s, c)) != MP_SESSION_OK)
		return rc;
	/* a copy of its own: `now` goes when the target runs on */
	mp_command_diag(c, &diag);
	if ((err = mp_snapshot_from_walk(s->walk, s->target, MP_SW_DEVICE_STATS | s->walk_flags, &snap, &diag)) != MP_OK)
		return session_fail(s, "snapshot take", err, &diag);
	/* the owners, kept with it: what compare says of its blocks later, when the tensors may be gone */
	if ((err = annotate_owners(s, snap, &diag)) != MP_OK) {
		mp_snapshot_free(snap);
		return session_fail(s, "snapshot take", err, &diag);
	}
	if ((rc = mp_command_gate(c)) != MP_CMD_OK) { /* a process that moved under the read: read again */
		mp_snapshot_free(snap);
		return rc;
	}
	ti = mp_target_get_info(s->target);
	strftime(when, sizeof when, "%H:%M:%S", localtime(&now));
	snprintf(origin, sizeof origin, "%s at %s, %zu segments, %zu blocks", ti->origin != NULL ? ti->origin : "target",
		 when, snap->nsegments, snap->nblocks);
	return keep(s, a->pos[0], snap, origin);
}

static int run_load(mp_command_ctx *c, const mp_command_args *a)
{
	mp_session *s = c->data;
	char **pos = (char **)a->pos, origin[160];
	mp_snapshot *snap;
	mp_diag diag;
	mp_err err;
	int rc;

	if ((rc = check_name(c, pos[1])) != MP_CMD_OK)
		return rc;
	session_diag_init(s, &diag);
	if ((err = mp_snapshot_load(pos[0], 0, &snap, &diag)) != MP_OK)
		return diag.msg[0] != '\0' ? session_error(s, "%s", diag.msg) : session_fail(s, pos[0], err, NULL);
	snprintf(origin, sizeof origin, "file %.100s, %zu segments, %zu blocks", pos[0], snap->nsegments, snap->nblocks);
	return keep(s, pos[1], snap, origin);
}

static int run_drop(mp_command_ctx *c, const mp_command_args *a)
{
	mp_session *s = c->data;
	struct session_snap *e;

	if ((e = session_find(s, a->pos[0])) == NULL)
		return mp_command_error(c, "snapshot drop: no snapshot '%s'", a->pos[0]);
	free(e->name);
	free(e->origin);
	mp_snapshot_free(e->snap);
	*e = s->snaps[--s->nsnaps];
	return MP_SESSION_OK;
}

static int run_list(mp_command_ctx *c, const mp_command_args *a)
{
	mp_session *s = c->data;

	(void)a;
	if (s->nsnaps == 0) {
		mp_out_puts(&s->out, "no snapshots (memprof snapshot take NAME)\n");
		return MP_SESSION_NOTHING;
	}
	for (size_t i = 0; i < s->nsnaps; i++)
		mp_out_printf(&s->out, "%-16s %s\n", s->snaps[i].name, s->snaps[i].origin);
	return MP_SESSION_OK;
}

#define NAMES "NAME: letters, digits, '_', '-', '.'; an existing name is replaced.\n"

const mp_command session_cmd_snapshot = {
	"snapshot", MP_FRONT_SESSION, "keep, list, save, load and drop named snapshots of the allocator's state",
	"take|list|save|load|drop ...", "", "", NULL, "", NULL, MP_CMD_PREFIX, NULL,
};

const mp_command session_cmd_take = {
	"snapshot take", MP_FRONT_SESSION, "keep the allocator's state as it stands now under NAME",
	"NAME", NAMES, "name", NULL, "", run_take, 0, NULL,
};

const mp_command session_cmd_list = {
	"snapshot list", MP_FRONT_SESSION, "list the named snapshots: where and when each was taken, its size",
	"", "", "", NULL, "", run_list, 0, NULL,
};

const mp_command session_cmd_load = {
	"snapshot load", MP_FRONT_SESSION, "load a snapshot file (pickle or memprof JSON) under NAME",
	"FILE NAME", NAMES, "file name", NULL, "", run_load, 0, NULL,
};

const mp_command session_cmd_drop = {
	"snapshot drop", MP_FRONT_SESSION, "forget the named snapshot NAME",
	"NAME", "", "name", NULL, "", run_drop, 0, NULL,
};

/* 'stats' was memory_summary() in the debugger until the command table gave each word one meaning
   (on the command line it was segsum). */
const mp_command session_cmd_stats = {
	"stats", MP_FRONT_SESSION, "the old name of summary", "", "", NULL, NULL, "", NULL, 0, "summary",
};
