/* cmd_timeline.c - `timeline`: bytes per category over time from the trace ring, as the profiler's
   JSON forms, a plot, or a text summary. */
#include <string.h>

#include "command_int.h"
#include "mp_timeline.h"

/* The format: --format, else as the profiler tells it from the file name, else a summary. */
static int pick_format(mp_command_ctx *c, const char *format, const char *path, enum mp_timeline_format *f)
{
	*f = MP_TLF_SUMMARY;
	if (format != NULL && !mp_timeline_format_parse(format, f))
		return mp_command_error(c, "timeline: --format must be json, raw, html or svg, not '%s'", format);
	if (format == NULL && path != NULL && !mp_timeline_format_of_path(path, f))
		return mp_command_error(c, "timeline: cannot tell the format of '%s' (.json, .raw.json, .html or "
					   ".svg): give --format", path);
	if (*f != MP_TLF_SUMMARY && path == NULL)
		return mp_command_error(c, "timeline: --format %s writes a file: give -o FILE ('-' for standard "
					   "output)", format);
	return MP_CMD_OK;
}

/* Build SNAP's timeline and write it: to PATH, else printed. */
static int timeline_of(mp_command_ctx *c, const mp_command_args *a, const mp_snapshot *snap,
		       const mp_category_ruleset *rules, const mp_owners *owners, enum mp_timeline_format f,
		       const mp_timeline_view *v)
{
	const char *path = mp_arg(a, MP_O_OUTPUT);
	mp_timeline *tl = NULL;
	char buf[64];
	mp_out out;
	mp_diag diag;
	mp_err err;
	int rc;

	mp_command_diag(c, &diag);
	mp_out_init(&out);
	err = mp_timeline_build(snap, rules, owners, mp_arg_device(a, MP_O_DEVICE, c->device), &tl, &diag);
	if (err == MP_OK)
		err = mp_timeline_write(tl, f, v, &out, &diag);
	if (err == MP_E_NOTFOUND) /* no ring: nothing to do, not bad input */
		rc = cmd_nothing(c, cmd_label(c, a, 0, buf, sizeof buf), diag.msg);
	else if (err != MP_OK)
		rc = mp_command_fail(c, cmd_label(c, a, 0, buf, sizeof buf), err, &diag);
	else if (path == NULL)
		rc = cmd_emit(c, &out, false);
	else
		rc = cmd_write_file(c, "timeline", path, &out);
	mp_out_free(&out);
	mp_timeline_free(tl);
	return rc;
}

static int run_timeline(mp_command_ctx *c, const mp_command_args *a)
{
	mp_timeline_view v = { MP_SCHEME_PROFILER, c->units };
	const char *scheme = mp_arg(a, MP_O_SCHEME), *units = mp_arg(a, MP_O_UNITS);
	enum mp_timeline_format f;
	mp_category_ruleset *rules = NULL;
	mp_snapshot *snap = NULL;
	mp_owners *owners = NULL;
	bool owned = false;
	int rc;

	if (scheme != NULL)
		mp_category_scheme_parse(scheme, &v.scheme); /* checked by the parser */
	if (units != NULL)
		mp_units_parse(units, &v.units);
	if ((rc = pick_format(c, mp_arg(a, MP_O_FORMAT), mp_arg(a, MP_O_OUTPUT), &f)) != MP_CMD_OK ||
	    (rc = cmd_rules(c, a, "timeline", &rules)) != MP_CMD_OK)
		return rc;
	if ((rc = mp_arg_given(a, MP_O_NO_OWNERS) ? cmd_snapshot(c, a, 0, 0, 0, &snap, &owned)
						 : cmd_snapshot_owners(c, a, 0, 0, &snap, &owned, &owners)) == MP_CMD_OK)
		rc = timeline_of(c, a, snap, rules, owners, f, &v);
	mp_owners_free(owners);
	cmd_release(snap, owned);
	mp_category_ruleset_free(rules);
	return rc;
}

const mp_command mp_cmd_timeline = {
	"timeline", MP_FRONT_ALL, "bytes per category over time, from the trace ring (profiler JSON, HTML/SVG plot)",
	"SNAPSHOT [-o FILE] [--format json|raw|html|svg] [--device N|all]\n"
	"         [--rules FILE] [--scheme profiler|tracker] [--units U] [--no-owners]",
	"Replay the allocator's trace ring (recorded while torch.cuda.memory._record_memory_history\n"
	"was on) into the bytes of each category over time, per device: an allocation counts\n"
	"from its 'alloc' entry until its 'free_completed', in the category of its 'category' key,\n"
	"else of the first rule its frames match (as 'memprof categories'), else UNKNOWN; blocks\n"
	"the ring does not see allocated count from its start (src/timeline/TIMELINE.md). On a core\n"
	"or a live process an allocation still live at the end takes the category of the tensor that\n"
	"owns its block (a parameter, buffer, gradient, optimizer state), over its whole lifetime\n"
	"(--no-owners: not read).\n"
	"Without -o, print per device the time span, the peak and when, and each category at\n"
	"the peak and at the end. With -o FILE, write (format from --format, else FILE's end):\n"
	"  json      .json      torch.profiler export_memory_timeline: [times_us, sizes]\n"
	"  raw       .raw.json  export_memory_timeline_raw: [[time_ns, action, bytes, category]]\n"
	"  html      .html      a page with a stacked area plot per device (no script, no downloads)\n"
	"  svg       .svg       the plot alone\n"
	"json, raw and svg hold one device: give --device N when several have a ring. They use\n"
	"the profiler's categories; --scheme tracker names the plots' categories as MemTracker.\n",
	"[snapshot]",
	(const mp_option[]){
		{ MP_O_OUTPUT, MP_OPT_FILE, NULL, "FILE", "where to write ('-': standard output)" },
		{ MP_O_FORMAT, MP_OPT_CHOICE, "json raw html svg", "F", "the form of FILE (default: from its name)" },
		{ MP_O_DEVICE, MP_OPT_DEVICE, NULL, "N", "only device N (default: every device with a ring)" },
		{ MP_O_RULES, MP_OPT_FILE, NULL, "FILE", "category rules tried before the defaults (CATEGORY-RULES.md)" },
		{ MP_O_SCHEME, MP_OPT_CHOICE, "profiler tracker", "S", "the plots' category names" },
		{ MP_O_UNITS, MP_OPT_CHOICE, MP_UNITS_CHOICES, "U", "units of the summary and the plots" },
		{ MP_O_NO_OWNERS, MP_OPT_FLAG, NULL, NULL, "on a core or a live process, do not read the Python heap" },
		{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"0 done, 1 no trace ring entries, 2 bad input or usage",
	run_timeline, 0, NULL,
};
