/* command_owners.c - a snapshot with the owners of its blocks, for the commands that name them (block,
   categories): from one walk of the target, so that the owners' block indexes are the snapshot's. */
#include <stdio.h>

#include "command_int.h"
#include "mp_owners_report.h"
#include "mp_snapshot_walk.h"

int cmd_snapshot_owners(mp_command_ctx *c, const mp_command_args *a, int i, unsigned walk_flags, mp_snapshot **snap,
			bool *owned, mp_owners **owners)
{
	return cmd_snapshot_owners_then(c, a, i, walk_flags, true, snap, owned, owners, NULL, NULL);
}

int cmd_snapshot_owners_then(mp_command_ctx *c, const mp_command_args *a, int i, unsigned walk_flags, bool want_owners,
			     mp_snapshot **snap, bool *owned, mp_owners **owners, cmd_target_fn then, void *arg)
{
	const char *word = i < a->npos ? a->pos[i] : NULL;
	mp_target *t;
	mp_walk *w;
	mp_diag diag;
	bool walk_owned;
	mp_err err;
	int rc;

	*snap = NULL;
	*owners = NULL;
	*owned = true;
	if (word != NULL && mp_file_kind(word) != MP_FILE_CORE)
		return cmd_snapshot(c, a, i, 0, walk_flags, snap, owned);
	if ((rc = c->front->walked(c, mp_command_positional_index(a->cmd, i, "snapshot"), word, &t, &w, &walk_owned)) !=
	    MP_CMD_OK) {
		if (word != NULL)
			return rc;
		/* the front end has no target of its own: its default snapshot, without owners */
		c->error[0] = '\0';
		c->usage = false;
		return cmd_snapshot(c, a, i, 0, walk_flags, snap, owned);
	}
	mp_command_diag(c, &diag);
	snprintf(c->release, sizeof c->release, "%s", w->c10.version);
	if ((err = mp_snapshot_from_walk(w, t, walk_flags, snap, &diag)) != MP_OK) {
		rc = mp_command_fail(c, "snapshot", err, &diag);
	} else {
		if (want_owners && (err = mp_owners_read(t, *snap, NULL, owners, &diag)) != MP_OK) {
			/* a process without CPython or torch tensors has a snapshot all the same */
			if (err != MP_E_NOTFOUND)
				mp_warn_damage(&diag, "owners not read: %s", diag.msg);
			*owners = NULL;
		}
		if (then != NULL)
			then(t, arg);
	}
	if (walk_owned) {
		mp_walk_free(w);
		mp_target_close(t);
	}
	return rc;
}

int cmd_snapshot_annotated(mp_command_ctx *c, const mp_command_args *a, int i, unsigned walk_flags, bool owners,
			   mp_snapshot **snap, bool *owned)
{
	if (!owners)
		return cmd_snapshot(c, a, i, 0, walk_flags, snap, owned);
	return cmd_snapshot_annotated_then(c, a, i, walk_flags, true, snap, owned, NULL, NULL);
}

int cmd_snapshot_annotated_then(mp_command_ctx *c, const mp_command_args *a, int i, unsigned walk_flags, bool owners,
				mp_snapshot **snap, bool *owned, cmd_target_fn then, void *arg)
{
	mp_owners *o = NULL;
	mp_diag diag;
	int rc;

	if ((rc = cmd_snapshot_owners_then(c, a, i, walk_flags, owners, snap, owned, &o, then, arg)) != MP_CMD_OK ||
	    o == NULL)
		return rc;
	mp_command_diag(c, &diag);
	/* O was placed in *SNAP, a snapshot of its own walk (owned): nobody else's is changed */
	if (mp_owners_annotate(o, *snap, &diag) != MP_OK) {
		rc = mp_command_fail(c, "owners", MP_E_NOMEM, &diag);
		cmd_release(*snap, *owned);
		*snap = NULL;
	}
	mp_owners_free(o);
	return rc;
}
