/* cmd_info.c - `memprof info`: what memprof found in a core or process: the library, its
   version and build, where the allocator is, which layout fits, and each device in brief. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mp_describe.h"

static int run_info(const struct cli_command *cmd, int argc, char **argv)
{
	struct cli_opts o;
	mp_target *t;
	mp_walk *w;
	mp_out out;
	bool done;
	int rc = cli_parse(cmd, argc, argv, 1, 1, &o, &done);

	if (rc != CLI_OK || done)
		return rc;
	if (!cli_walk_target(&o, 0, &t, &w))
		return CLI_BAD;
	mp_out_init(&out);
	mp_describe_target(&out, t);
	mp_describe_library(&out, &w->c10);
	mp_describe_walk(&out, w);
	rc = cli_write_stdout(&out);
	mp_out_free(&out);
	if (rc == CLI_OK && o.output != NULL) {
		char *text = mp_layout_format(&w->layout);

		mp_out_init(&out);
		if (text != NULL)
			mp_out_puts(&out, text);
		rc = text != NULL ? cli_save(o.output, &out) : cli_fail("layout", MP_E_NOMEM, NULL);
		free(text);
		mp_out_free(&out);
	}
	mp_walk_free(w);
	mp_target_close(t);
	return rc;
}

const struct cli_command cli_cmd_info = {
	"info", "what memprof finds in a core or process: library, version, layout, devices",
	"usage: memprof info TARGET [-o LAYOUT]\n"
	"\n"
	"Print the PyTorch library found in TARGET (a core dump or --pid PID), its\n"
	"build-id, version, C++ ABI and CUDA major, where the allocator lives, which\n"
	"struct layout fits its memory and where that layout came from (DWARF or a\n"
	"version table), and each device's segments, blocks and trace in brief.\n"
	"-o LAYOUT writes the layout used as a layout file (for --layout elsewhere).\n"
	CLI_TARGET_HELP
	"Exit status: 0 done, 2 bad input or usage, or nothing to walk.\n",
	run_info,
	CLI_O_TARGET | CLI_O_OUTPUT,
};
