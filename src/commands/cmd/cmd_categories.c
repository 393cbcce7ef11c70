/* cmd_categories.c - `categories`: what the memory is (parameters, gradients, activations,
   optimizer state, ...) per device, and why a block got its category. */
#include "command_int.h"
#include "mp_category.h"

/* The options of A into *O (the parser checked each value; mp_category_args_read checks the modes). */
static int read_options(mp_command_ctx *c, const mp_command_args *a, mp_category_opts *o)
{
	const mp_category_args ca = {
		.scheme = mp_arg(a, MP_O_SCHEME), .format = mp_arg(a, MP_O_FORMAT), .explain = mp_arg(a, MP_O_EXPLAIN),
		.by = mp_arg(a, MP_O_BY), .sites = mp_arg_given(a, MP_O_SITES), .sites_count = mp_arg(a, MP_O_SITES),
		.segsum = mp_arg_given(a, MP_O_SEGSUM),
	};
	const char *units = mp_arg(a, MP_O_UNITS);
	mp_diag diag = { 0 };

	mp_category_opts_init(o);
	o->units = c->units;
	o->device = mp_arg_device(a, MP_O_DEVICE, c->device);
	o->blocks = mp_arg_given(a, MP_O_BLOCKS);
	if (units != NULL)
		mp_units_parse(units, &o->units);
	if (mp_category_args_read(&ca, o, &diag) != MP_OK)
		return mp_command_error(c, "%s", diag.msg);
	return MP_CMD_OK;
}

static int run_categories(mp_command_ctx *c, const mp_command_args *a)
{
	mp_category_ruleset *rules = NULL;
	mp_category_opts o;
	mp_snapshot *snap = NULL;
	mp_owners *owners = NULL;
	char buf[64];
	mp_out out;
	mp_diag diag;
	mp_err err;
	bool owned = false;
	int rc;

	if ((rc = read_options(c, a, &o)) != MP_CMD_OK || (rc = cmd_rules(c, a, "categories", &rules)) != MP_CMD_OK)
		return rc;
	o.rules = rules;
	if ((rc = mp_arg_given(a, MP_O_NO_OWNERS) ? cmd_snapshot(c, a, 0, 0, 0, &snap, &owned)
						 : cmd_snapshot_owners(c, a, 0, 0, &snap, &owned, &owners)) == MP_CMD_OK) {
		o.owners = owners;
		mp_out_init(&out);
		mp_command_diag(c, &diag);
		if ((err = mp_analysis_categories(snap, &o, &out, &diag)) != MP_OK)
			rc = mp_command_fail(c, cmd_label(c, a, 0, buf, sizeof buf), err, &diag);
		else
			rc = cmd_emit(c, &out, false);
		if (rc == MP_CMD_OK && snap->nsegments == 0)
			rc = MP_CMD_NOTHING;
		mp_out_free(&out);
		mp_owners_free(owners);
		cmd_release(snap, owned);
	}
	mp_category_ruleset_free(rules);
	return rc;
}

const mp_command mp_cmd_categories = {
	"categories", MP_FRONT_ALL,
	"bytes per category: parameters, gradients, activations, optimizer state, ...",
	"SNAPSHOT [--scheme profiler|tracker] [--rules FILE] [--units U]\n"
	"         [--format plain|rst|json] [--blocks] [--device N|all]\n"
	"         [--explain ADDR | --sites [N] [--by site|function|file|module] | --segsum] [--no-owners]",
	"Per device, the bytes and blocks of active memory in each category: the names of PyTorch's\n"
	"memory profiler (PARAMETER, OPTIMIZER_STATE, INPUT, TEMPORARY, ACTIVATION, GRADIENT,\n"
	"AUTOGRAD_DETAIL, UNKNOWN) or, with --scheme tracker, MemTracker's (Parameter, Buffer, Gradient,\n"
	"Activation, Temp, Optstate, Unknown). On a core or a live process a block's category comes first\n"
	"from its owner in the Python heap (as `owners` finds them: a parameter, buffer, gradient,\n"
	"optimizer state or activation tensor; --no-owners skips that); else from a 'category' key in the\n"
	"data (on the block or its alloc trace entry), else from the first rule its allocation frames\n"
	"match (the rules of --rules FILE, then memprof's defaults: src/categories/CATEGORY-RULES.md), else\n"
	"it is UNKNOWN. Inactive blocks are free memory and get no category.\n",
	"[snapshot]",
	(const mp_option[]){
		{ MP_O_SCHEME, MP_OPT_CHOICE, "profiler tracker", "S",
		  "the category names: the profiler's (default) or MemTracker's" },
		{ MP_O_RULES, MP_OPT_FILE, NULL, "FILE", "category rules tried before the defaults (CATEGORY-RULES.md)" },
		{ MP_O_UNITS, MP_OPT_CHOICE, MP_UNITS_CHOICES, "U", "units of the tables (JSON counts bytes)" },
		{ MP_O_FORMAT, MP_OPT_CHOICE, "plain rst json", "F", "plain (default), rst (reStructuredText tables) or json" },
		{ MP_O_BLOCKS, MP_OPT_FLAG, NULL, NULL, "with --format json: list every active block and its source" },
		{ MP_O_DEVICE, MP_OPT_DEVICE, NULL, "N", "only device N (default: every device)" },
		{ MP_O_EXPLAIN, MP_OPT_TEXT, NULL, "ADDR", "say which block holds ADDR, its category, and where it came from" },
		{ MP_O_SITES, MP_OPT_FLAG_COUNT, NULL, "[N]",
		  "instead of the table, the N (default 10) call sites with the most active bytes: blocks\n"
		  "grouped by their innermost user frame (Python, not torch's, after _memory_viz's frame\n"
		  "filter), with their top category; then the other sites and the total of the active bytes" },
		{ MP_O_BY, MP_OPT_CHOICE, "site function file module", "K",
		  "group --sites by site (function, file, line; the default), function (function and file),\n"
		  "file, or module (the file's dotted module name)" },
		{ MP_O_SEGSUM, MP_OPT_FLAG, NULL, NULL,
		  "_memory_viz segsum's segment map, each 20 MiB page drawn as the letter of the category\n"
		  "with the most allocated bytes in it ('.' free)" },
		{ MP_O_NO_OWNERS, MP_OPT_FLAG, NULL, NULL,
		  "on a core or a live process, do not read the Python heap: frames and rules decide" },
		{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"0 done, 1 no segments, 2 bad input or usage",
	run_categories, 0, NULL,
};
