/* cmd_categories.c - `memprof categories`: what the memory is (parameters, gradients,
   activations, optimizer state, ...) per device, and why a block got its category. */
#include "cli.h"
#include "mp_category.h"

/* Read the command's own options into *C; false (after a usage error) on a bad value. The
   values shared with the debugger's command are read by mp_category_args_read. */
static bool read_options(const struct cli_opts *o, mp_category_opts *c)
{
	const mp_category_args a = {
		.scheme = o->scheme, .format = o->format, .explain = o->explain, .by = o->by,
		.sites = o->sites, .sites_count = o->sites_count, .segsum = o->segsum,
	};
	mp_diag diag = { 0 };

	mp_category_opts_init(c);
	c->device = o->device_set ? o->device : -1;
	c->blocks = o->blocks;
	if (o->units != NULL && !mp_units_parse(o->units, &c->units)) {
		cli_error("categories: --units must be auto, B, KiB, MiB or GiB, not '%s'", o->units);
		return false;
	}
	if (mp_category_args_read(&a, c, &diag) != MP_OK) {
		cli_error("%s", diag.msg);
		return false;
	}
	return true;
}

static int run_categories(const struct cli_command *cmd, int argc, char **argv)
{
	struct cli_opts o;
	mp_category_opts c;
	mp_category_ruleset *rules = NULL;
	mp_snapshot *snap = NULL;
	char buf[64];
	mp_out out;
	mp_diag diag;
	mp_err err;
	bool done;
	int rc = cli_parse(cmd, argc, argv, 1, 1, &o, &done);

	if (rc != CLI_OK || done)
		return rc;
	if (!read_options(&o, &c))
		return CLI_BAD;
	if ((rc = cli_load_rules_and_target(&o, "categories", &rules, &snap)) != CLI_OK)
		return rc;
	c.rules = rules;
	cli_diag_init(&diag);
	mp_out_init(&out);
	err = mp_analysis_categories(snap, &c, &out, &diag);
	if (err != MP_OK)
		rc = cli_fail(cli_target_name(&o, 0, buf, sizeof buf), err, &diag);
	else
		rc = cli_write_stdout(&out);
	if (rc == CLI_OK && snap->nsegments == 0)
		rc = CLI_NOTHING;
	mp_out_free(&out);
	mp_snapshot_free(snap);
	mp_category_ruleset_free(rules);
	return rc;
}

const struct cli_command cli_cmd_categories = {
	"categories", "bytes per category: parameters, gradients, activations, optimizer state, ...",
	"usage: memprof categories TARGET [--scheme profiler|tracker] [--rules FILE] [--units U]\n"
	"                          [--format plain|rst|json] [--blocks] [--device N]\n"
	"                          [--explain ADDR | --sites [N] [--by site|function|file|module] | --segsum]\n"
	"\n"
	"Print, per device, the bytes and blocks of active memory in each category: the\n"
	"names of PyTorch's memory profiler (PARAMETER, OPTIMIZER_STATE, INPUT, TEMPORARY,\n"
	"ACTIVATION, GRADIENT, AUTOGRAD_DETAIL, UNKNOWN) or, with --scheme tracker,\n"
	"MemTracker's (Parameter, Buffer, Gradient, Activation, Temp, Optstate, Unknown).\n"
	"A block's category comes from a 'category' key in the data (on the block or its\n"
	"alloc trace entry), else from the first rule its allocation matches (the rules\n"
	"of --rules FILE, then memprof's defaults: src/categories/CATEGORY-RULES.md), else\n"
	"it is UNKNOWN. Inactive blocks are free memory and get no category.\n"
	"  --units U       B, KiB, MiB, GiB or auto (tables; JSON counts bytes)\n"
	"  --format F      plain (default), rst (reStructuredText tables) or json\n"
	"  --blocks        with --format json: list every active block and its source\n"
	"  --explain ADDR  say which block holds ADDR, its category, and where it came from\n"
	"  --sites [N]     instead of the table, the N (default 10) call sites with the most\n"
	"                  active bytes: blocks grouped by their innermost user frame (Python,\n"
	"                  not torch's, after _memory_viz's frame filter), with their top\n"
	"                  category; then the other sites and the total of the active bytes\n"
	"  --by K          group --sites by site (function, file, line; the default), function\n"
	"                  (function and file), file, or module (the file's dotted module name)\n"
	"  --segsum        _memory_viz segsum's segment map, each 20 MiB page drawn as the letter\n"
	"                  of the category with the most allocated bytes in it ('.' free)\n"
	"  --device N      only device N (default: every device)\n"
	CLI_TARGET_HELP
	"Exit status: 0 done, 1 no segments, 2 bad input or usage.\n",
	run_categories,
	CLI_O_TARGET | CLI_O_DEVICE | CLI_O_CATEGORIES,
};
