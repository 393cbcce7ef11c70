/* command_run.c - a command's run, and what its handlers share: snapshots through the front end,
   output, files, flame graphs, "nothing found". */
#include <stdio.h>
#include <string.h>

#include "command_int.h"
#include "flame_svg.h"
#include "mp_file.h"
#include "mp_snapshot_file.h"
#include "mp_snapshot_walk.h"

int cmd_snapshot(mp_command_ctx *c, const mp_command_args *a, int i, unsigned load_flags, unsigned walk_flags,
		 mp_snapshot **snap, bool *owned)
{
	*snap = NULL;
	*owned = false;
	/* what needs no frames from a file needs none from a walk (which reads both kinds or neither) */
	if ((load_flags & MP_LOAD_NO_FRAMES) == MP_LOAD_NO_FRAMES)
		walk_flags |= MP_SW_NO_FRAMES;
	return c->front->snapshot(c, mp_command_positional_index(a->cmd, i, "snapshot"), i < a->npos ? a->pos[i] : NULL,
				  load_flags, walk_flags, snap, owned);
}

void cmd_release(mp_snapshot *snap, bool owned)
{
	if (owned)
		mp_snapshot_free(snap);
}

const char *cmd_label(mp_command_ctx *c, const mp_command_args *a, int i, char *buf, size_t size)
{
	return c->front->label(c, mp_command_positional_index(a->cmd, i, "snapshot"), i < a->npos ? a->pos[i] : NULL,
			       buf, size);
}

int cmd_emit(mp_command_ctx *c, mp_out *text, bool print_newline)
{
	int rc;

	if ((rc = mp_command_gate(c)) != MP_CMD_OK)
		return rc;
	if (print_newline)
		mp_out_putc(text, '\n');
	if (text->err != MP_OK)
		return mp_command_fail(c, "output", text->err, NULL);
	return c->front->emit(c, text);
}

static int wrote(mp_command_ctx *c, const char *path)
{
	mp_out line;
	int rc;

	if (!c->interactive)
		return MP_CMD_OK;
	mp_out_init(&line);
	mp_out_printf(&line, "wrote %s\n", path);
	rc = cmd_emit(c, &line, false);
	mp_out_free(&line);
	return rc;
}

int cmd_write_file(mp_command_ctx *c, const char *what, const char *path, const mp_out *text)
{
	mp_diag diag;
	mp_err err;
	int rc;

	if ((rc = mp_command_gate(c)) != MP_CMD_OK)
		return rc;
	if (text->err != MP_OK)
		return mp_command_fail(c, "output", text->err, NULL);
	if (strcmp(path, "-") == 0)
		return c->front->emit(c, text);
	mp_command_diag(c, &diag);
	if ((err = mp_file_write(path, text->data, text->len, &diag)) != MP_OK)
		return mp_command_fail(c, what, err, &diag);
	return wrote(c, path);
}

int cmd_flame(mp_command_ctx *c, const char *what, const mp_out *folded, const char *path, const char *title)
{
	mp_diag diag;
	mp_err err;
	int rc;

	if ((rc = mp_command_gate(c)) != MP_CMD_OK)
		return rc;
	if (folded->err != MP_OK)
		return mp_command_fail(c, "output", folded->err, NULL);
	if (path == NULL || strcmp(path, "-") == 0)
		return c->front->emit(c, folded);
	mp_command_diag(c, &diag);
	if ((err = mp_flame_write(folded->data, folded->len, path, title, &diag)) != MP_OK)
		return mp_command_fail(c, what, err, &diag);
	return wrote(c, path);
}

int cmd_nothing(mp_command_ctx *c, const char *label, const char *line)
{
	mp_out out;
	int rc;

	if ((rc = mp_command_gate(c)) != MP_CMD_OK) /* found nothing in a process that moved: read again */
		return rc;
	if (!c->interactive) {
		mp_command_error(c, "%s: %s", label, line);
		return MP_CMD_NOTHING;
	}
	mp_out_init(&out);
	mp_out_printf(&out, "%s\n", line);
	cmd_emit(c, &out, false);
	mp_out_free(&out);
	return MP_CMD_NOTHING;
}

int cmd_rules(mp_command_ctx *c, const mp_command_args *a, const char *what, mp_category_ruleset **rules)
{
	const char *path = mp_arg(a, MP_O_RULES);
	mp_diag diag;
	mp_err err;

	*rules = NULL;
	if (path == NULL)
		return MP_CMD_OK;
	mp_command_diag(c, &diag);
	if ((err = mp_category_rules_load(path, rules, &diag)) != MP_OK)
		return mp_command_fail(c, what, err, &diag);
	return MP_CMD_OK;
}
