/* cmd_convert.c - `memprof convert`: snapshot pickle <-> JSON (the command line's own command). */
#include <string.h>

#include "cli.h"

static int run_convert(mp_command_ctx *c, const mp_command_args *a)
{
	const char *to = mp_arg(a, MP_O_TO);
	enum mp_format fmt = mp_format_from_name(a->pos[1]);
	mp_snapshot *snap;
	mp_diag diag;
	mp_err err;

	if (to != NULL)
		fmt = strcmp(to, "json") == 0 ? MP_FMT_JSON : MP_FMT_PICKLE; /* the parser checked it */
	if (fmt == MP_FMT_UNKNOWN)
		return mp_command_error(c, "convert: cannot tell the format of '%s': name it .json or .pickle, or pass --to",
					a->pos[1]);
	mp_command_diag(c, &diag);
	if ((err = mp_snapshot_load(a->pos[0], 0, &snap, &diag)) != MP_OK)
		return diag.msg[0] != '\0' ? mp_command_error(c, "%s", diag.msg)
					   : mp_command_error(c, "'%s': %s", a->pos[0], mp_strerror(err));
	return cli_export(c, snap, fmt, a->pos[1], "convert");
}

const mp_command cli_cmd_convert = {
	"convert", MP_FRONT_CLI, "convert a snapshot between pickle and JSON",
	"IN OUT [--to json|pickle]",
	"Read IN (pickle or JSON, recognised by content) and write OUT in the format\n"
	"named by its extension (.json, .pickle, .pkl) or by --to. Pickles are written\n"
	"with protocol 4 and only the opcodes that PyTorch's memory_viz web page reads.\n"
	"The JSON schema is described in src/model/SCHEMA.md. OUT '-' is standard output.\n",
	"file file",
	(const mp_option[]){
		{ MP_O_TO, MP_OPT_CHOICE, "json pickle", "FORMAT", "the format of OUT, whatever its name" },
		{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"0 done, 2 bad input or usage",
	run_convert, 0, NULL,
};
