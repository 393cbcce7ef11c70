/* command_owners.c - a snapshot with the owners of its blocks, for the commands that name them (block,
   categories): from one walk of the target, so that the owners' block indexes are the snapshot's. */
#include "command_int.h"
#include "mp_snapshot_walk.h"

int cmd_snapshot_owners(mp_command_ctx *c, const mp_command_args *a, int i, unsigned walk_flags, mp_snapshot **snap,
			bool *owned, mp_owners **owners)
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
	if ((err = mp_snapshot_from_walk(w, t, walk_flags, snap, &diag)) != MP_OK) {
		rc = mp_command_fail(c, "snapshot", err, &diag);
	} else if ((err = mp_owners_read(t, *snap, NULL, owners, &diag)) != MP_OK) {
		/* a process without CPython or torch tensors has a snapshot all the same */
		if (err != MP_E_NOTFOUND)
			mp_warn(&diag, "owners not read: %s", diag.msg);
		*owners = NULL;
	}
	if (walk_owned) {
		mp_walk_free(w);
		mp_target_close(t);
	}
	return rc;
}
