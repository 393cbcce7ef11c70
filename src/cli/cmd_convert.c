/* cmd_convert.c - `memprof convert`: snapshot pickle <-> JSON. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "mp_snapshot_file.h"

static bool parse_format(const char *name, enum mp_format *fmt)
{
	if (strcmp(name, "json") == 0)
		*fmt = MP_FMT_JSON;
	else if (strcmp(name, "pickle") == 0)
		*fmt = MP_FMT_PICKLE;
	else
		return false;
	return true;
}

static int run_convert(const struct cli_command *cmd, int argc, char **argv)
{
	struct cli_opts o;
	enum mp_format fmt;
	mp_snapshot *snap;
	bool done;
	int rc = cli_parse(cmd, argc, argv, 2, 2, &o, &done);

	if (rc != CLI_OK || done)
		return rc;
	fmt = mp_format_from_name(o.args[1]);
	if (o.to != NULL && !parse_format(o.to, &fmt)) {
		cli_error("convert: unknown format '%s' (json or pickle)", o.to);
		return CLI_BAD;
	}
	if (fmt == MP_FMT_UNKNOWN) {
		cli_error("convert: cannot tell the format of '%s': name it .json or .pickle, or pass --to",
			  o.args[1]);
		return CLI_BAD;
	}
	if (!cli_load(o.args[0], 0, &snap))
		return CLI_BAD;
	return cli_export(snap, fmt, o.args[1], "convert");
}

const struct cli_command cli_cmd_convert = {
	"convert", "convert a snapshot between pickle and JSON",
	"usage: memprof convert IN OUT [--to json|pickle]\n"
	"\n"
	"Read IN (pickle or JSON, recognised by content) and write OUT in the format\n"
	"named by its extension (.json, .pickle, .pkl) or by --to. Pickles are written\n"
	"with protocol 4 and only the opcodes that PyTorch's memory_viz web page reads.\n"
	"The JSON schema is described in src/model/SCHEMA.md. OUT '-' is standard output.\n"
	"Exit status: 0 done, 2 bad input or usage.\n",
	run_convert,
	CLI_O_TO,
};
