/* session_cmd_snapshot.c - named snapshots (take, list, save, load, drop) and compare. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mp_array.h"
#include "flame_svg.h"
#include "mp_block_query.h"
#include "mp_file.h"
#include "mp_flamelines.h"
#include "mp_snapshot_file.h"
#include "mp_snapshot_walk.h"
#include "session_int.h"

int session_cmd_snapshot(mp_session *s, int argc, char **argv)
{
	char full[64];

	if (argc < 1)
		return session_error(s, "snapshot: say take, list, save, load or drop (see 'help memprof snapshot')");
	snprintf(full, sizeof full, "snapshot %s", argv[0]);
	for (size_t i = 0; i < session_ncommands; i++)
		if (strcmp(session_commands[i].name, full) == 0)
			return session_commands[i].run(s, argc - 1, argv + 1);
	return session_error(s, "snapshot: no subcommand '%s' (take, list, save, load, drop)", argv[0]);
}

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

static int check_name(mp_session *s, const char *cmd, const char *name)
{
	if (!good_name(name))
		return session_error(s, "%s: '%s' is not a snapshot name (letters, digits, _-., not 'now')", cmd, name);
	return MP_SESSION_OK;
}

int session_cmd_take(mp_session *s, int argc, char **argv)
{
	char *pos[1], origin[160], when[32];
	const mp_target_info *ti;
	mp_snapshot *snap;
	mp_diag diag;
	mp_err err;
	time_t now = time(NULL);
	int npos, rc = session_args(s, "snapshot take", argc, argv, NULL, pos, 1, 1, &npos);

	if (rc != MP_SESSION_OK || (rc = check_name(s, "snapshot take", pos[0])) != MP_SESSION_OK ||
	    (rc = session_walk(s)) != MP_SESSION_OK)
		return rc;
	/* a copy of its own: `now` goes when the target runs on */
	session_diag_init(s, &diag);
	if ((err = mp_snapshot_from_walk(s->walk, MP_SW_DEVICE_STATS, &snap, &diag)) != MP_OK)
		return session_fail(s, "snapshot take", err, &diag);
	ti = mp_target_get_info(s->target);
	strftime(when, sizeof when, "%H:%M:%S", localtime(&now));
	snprintf(origin, sizeof origin, "%s at %s, %zu segments, %zu blocks", ti->origin != NULL ? ti->origin : "target",
		 when, snap->nsegments, snap->nblocks);
	return keep(s, pos[0], snap, origin);
}

int session_cmd_load(mp_session *s, int argc, char **argv)
{
	char *pos[2], origin[160];
	mp_snapshot *snap;
	mp_diag diag;
	mp_err err;
	int npos, rc = session_args(s, "snapshot load", argc, argv, NULL, pos, 2, 2, &npos);

	if (rc != MP_SESSION_OK || (rc = check_name(s, "snapshot load", pos[1])) != MP_SESSION_OK)
		return rc;
	session_diag_init(s, &diag);
	if ((err = mp_snapshot_load(pos[0], 0, &snap, &diag)) != MP_OK)
		return diag.msg[0] != '\0' ? session_error(s, "%s", diag.msg) : session_fail(s, pos[0], err, NULL);
	snprintf(origin, sizeof origin, "file %.100s, %zu segments, %zu blocks", pos[0], snap->nsegments, snap->nblocks);
	return keep(s, pos[1], snap, origin);
}

int session_cmd_drop(mp_session *s, int argc, char **argv)
{
	char *pos[1];
	struct session_snap *e;
	int npos, rc = session_args(s, "snapshot drop", argc, argv, NULL, pos, 1, 1, &npos);

	if (rc != MP_SESSION_OK)
		return rc;
	if ((e = session_find(s, pos[0])) == NULL)
		return session_error(s, "snapshot drop: no snapshot '%s'", pos[0]);
	free(e->name);
	free(e->origin);
	mp_snapshot_free(e->snap);
	*e = s->snaps[--s->nsnaps];
	return MP_SESSION_OK;
}

int session_cmd_list(mp_session *s, int argc, char **argv)
{
	int npos, rc = session_args(s, "snapshot list", argc, argv, NULL, NULL, 0, 0, &npos);

	if (rc != MP_SESSION_OK)
		return rc;
	if (s->nsnaps == 0) {
		mp_out_puts(&s->out, "no snapshots (memprof snapshot take NAME)\n");
		return MP_SESSION_NOTHING;
	}
	for (size_t i = 0; i < s->nsnaps; i++)
		mp_out_printf(&s->out, "%-16s %s\n", s->snaps[i].name, s->snaps[i].origin);
	return MP_SESSION_OK;
}

int session_cmd_save(mp_session *s, int argc, char **argv)
{
	char *pos[2];
	const char *format = NULL;
	const struct session_opt opts[] = { { "--format", &format, NULL }, { NULL, NULL, NULL } };
	enum mp_format fmt;
	mp_snapshot *snap;
	mp_out out;
	mp_diag diag;
	mp_err err;
	bool owned;
	int npos, rc = session_args(s, "snapshot save", argc, argv, opts, pos, 2, 2, &npos);

	if (rc != MP_SESSION_OK)
		return rc;
	if (format == NULL)
		fmt = mp_format_from_name(pos[1]) == MP_FMT_JSON ? MP_FMT_JSON : MP_FMT_PICKLE;
	else if (strcmp(format, "pickle") == 0)
		fmt = MP_FMT_PICKLE;
	else if (strcmp(format, "json") == 0)
		fmt = MP_FMT_JSON;
	else
		return session_error(s, "snapshot save: --format '%s' is neither pickle nor json", format);
	if ((rc = session_resolve(s, pos[0], &snap, &owned)) != MP_SESSION_OK)
		return rc;
	mp_out_init(&out);
	session_diag_init(s, &diag);
	err = mp_snapshot_save(snap, fmt, &out, &diag);
	if (err == MP_OK)
		err = mp_file_write(pos[1], out.data, out.len, &diag);
	if (err != MP_OK)
		rc = session_fail(s, "snapshot save", err, &diag);
	else
		mp_out_printf(&s->out, "wrote %s (%s, %zu segments, %zu blocks)\n", pos[1],
			      fmt == MP_FMT_JSON ? "JSON" : "pickle", snap->nsegments, snap->nblocks);
	mp_out_free(&out);
	if (owned)
		mp_snapshot_free(snap);
	return rc;
}

/* _memory_viz compare's segments only before / only after, then the blocks allocated and freed. */
static int compare_two(mp_session *s, mp_snapshot *before, mp_snapshot *after, const char *path)
{
	mp_out summary, folded, blocks;
	size_t nchanges = 0;
	mp_diag diag;
	mp_err err;
	int rc = MP_SESSION_OK;

	mp_out_init(&summary);
	mp_out_init(&folded);
	mp_out_init(&blocks);
	session_diag_init(s, &diag);
	err = mp_analysis_compare(before, after, &summary, &folded, &diag);
	if (err == MP_OK && path != NULL)
		err = mp_flame_write(folded.data, folded.len, path, "Segments only before / only after", &diag);
	if (err == MP_OK)
		err = mp_analysis_block_diff(before, after, s->units, &blocks, &nchanges, &diag);
	if (err != MP_OK) {
		rc = session_fail(s, "compare", err, &diag);
	} else {
		session_emit(s, &summary, false);
		if (path == NULL)
			session_emit(s, &folded, false);
		else
			mp_out_printf(&s->out, "wrote %s\n", path);
		mp_out_puts(&s->out, "blocks:\n");
		session_emit(s, &blocks, false);
		if (folded.len == 0 && nchanges == 0)
			rc = MP_SESSION_NOTHING;
	}
	mp_out_free(&summary);
	mp_out_free(&folded);
	mp_out_free(&blocks);
	return rc;
}

int session_cmd_compare(mp_session *s, int argc, char **argv)
{
	char *pos[2];
	const char *path = NULL;
	const struct session_opt opts[] = { { "-o", &path, NULL }, { NULL, NULL, NULL } };
	mp_snapshot *a = NULL, *b = NULL;
	bool owned_a = false, owned_b = false;
	int npos, rc = session_args(s, "compare", argc, argv, opts, pos, 2, 2, &npos);

	if (rc != MP_SESSION_OK)
		return rc;
	if ((rc = session_resolve(s, pos[0], &a, &owned_a)) == MP_SESSION_OK &&
	    (rc = session_resolve(s, pos[1], &b, &owned_b)) == MP_SESSION_OK)
		rc = compare_two(s, a, b, path);
	if (owned_a)
		mp_snapshot_free(a);
	if (owned_b)
		mp_snapshot_free(b);
	return rc;
}
