/* cmd_snapshot_save.c - `snapshot save`: a snapshot written as PyTorch's pickle (what
   _memory_viz.py and the memory_viz page read) or as memprof JSON. */
#include <string.h>
#include <strings.h>

#include "command_int.h"
#include "mp_file.h"
#include "mp_snapshot_file.h"
#include "mp_snapshot_walk.h"

/* --format, else the file's name: .json, .pickle or .pkl. */
static int pick_format(mp_command_ctx *c, const char *format, const char *path, enum mp_format *fmt)
{
	if (format != NULL) /* the parser checked it */
		*fmt = strcasecmp(format, "json") == 0 ? MP_FMT_JSON : MP_FMT_PICKLE;
	else if ((*fmt = mp_format_from_name(path)) == MP_FMT_UNKNOWN)
		return mp_command_error(c, "snapshot save: cannot tell the format of '%s': name it .pickle or .json, "
					   "or give --format", path);
	return MP_CMD_OK;
}

static int run_save(mp_command_ctx *c, const mp_command_args *a)
{
	const char *path = a->pos[1];
	enum mp_format fmt;
	mp_snapshot *snap;
	mp_out out, line;
	mp_diag diag;
	mp_err err;
	bool owned;
	int rc;

	if ((rc = pick_format(c, mp_arg(a, MP_O_FORMAT), path, &fmt)) != MP_CMD_OK ||
	    (rc = cmd_snapshot_annotated(c, a, 0, mp_arg_given(a, MP_O_STATS) ? MP_SW_DEVICE_STATS : 0,
					 mp_arg_given(a, MP_O_OWNERS), &snap, &owned)) != MP_CMD_OK)
		return rc;
	if ((rc = mp_command_gate(c)) != MP_CMD_OK) { /* the file below is output */
		cmd_release(snap, owned);
		return rc;
	}
	mp_out_init(&out);
	mp_command_diag(c, &diag);
	if ((err = mp_snapshot_save(snap, fmt, &out, &diag)) != MP_OK)
		rc = mp_command_fail(c, "snapshot save", err, &diag);
	else if (strcmp(path, "-") == 0)
		rc = cmd_emit(c, &out, false);
	else if ((err = mp_file_write(path, out.data, out.len, &diag)) != MP_OK)
		rc = mp_command_fail(c, "snapshot save", err, &diag);
	if (rc == MP_CMD_OK && c->interactive && strcmp(path, "-") != 0) {
		mp_out_init(&line);
		mp_out_printf(&line, "wrote %s (%s, %zu segments, %zu blocks)\n", path,
			      fmt == MP_FMT_JSON ? "JSON" : "pickle", snap->nsegments, snap->nblocks);
		rc = cmd_emit(c, &line, false);
		mp_out_free(&line);
	}
	mp_out_free(&out);
	cmd_release(snap, owned);
	return rc;
}

const mp_command mp_cmd_snapshot_save = {
	"snapshot save", MP_FRONT_ALL, "write a snapshot to FILE as PyTorch's pickle or memprof JSON",
	"SNAPSHOT FILE [--format pickle|json] [--stats] [--owners]",
	"The snapshot PyTorch's torch.cuda.memory._snapshot() would have returned (segments, blocks,\n"
	"trace ring, settings), rebuilt from a core or a live process, or read from a file: as a pickle\n"
	"(as torch.cuda.memory._dump_snapshot writes it: python -m torch.cuda._memory_viz and\n"
	"https://pytorch.org/memory_viz read it) or as memprof JSON (src/model/SCHEMA.md). The format\n"
	"is --format's, else FILE's name's (.pickle, .pkl or .json); FILE '-' is standard output.\n"
	"Allocation frames are decoded where the job recorded history (--no-frames: not). --owners adds\n"
	"to each block the tensor that owns it from the Python heap ('owner', and 'category' for\n"
	"parameters, buffers, gradients, optimizer state and activations; for `oom`'s holders 'root',\n"
	"'module', 'saved' and an activation's 'dtype'), keys PyTorch's tools pass over and memprof's\n"
	"`categories`, `blocks`, `compare` and `oom` read.\n",
	"snapshot file",
	(const mp_option[]){
		{ MP_O_FORMAT, MP_OPT_CHOICE, "pickle json", "F", "the file's format, whatever its name" },
		{ MP_O_STATS, MP_OPT_FLAG, NULL, NULL,
		  "add each device's memory_stats() under the extra key 'device_stats' (which PyTorch's tools\n"
		  "ignore; `memprof summary` reads it); the debugger's snapshots always carry them" },
		{ MP_O_OWNERS, MP_OPT_FLAG, NULL, NULL,
		  "on a core or a live process, each block's owner from the Python heap ('owner', 'category')" },
		{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"0 done, 2 bad input or usage",
	run_save, 0, NULL,
};
