/* cmd_timeline.c - `memprof timeline`: bytes per category over time from the trace ring, as the
   profiler's JSON forms, a plot, or a text summary. */
#include <string.h>

#include "cli.h"
#include "mp_file.h"
#include "mp_timeline.h"

/* The format: --format, else as the profiler tells it from the file name, else a summary. */
static bool pick_format(const struct cli_opts *o, enum mp_timeline_format *f)
{
	*f = MP_TLF_SUMMARY;
	if (o->format != NULL && !mp_timeline_format_parse(o->format, f)) {
		cli_error("timeline: --format must be json, raw, html or svg, not '%s'", o->format);
		return false;
	}
	if (o->format == NULL && o->output != NULL && !mp_timeline_format_of_path(o->output, f)) {
		cli_error("timeline: cannot tell the format of '%s' (.json, .raw.json, .html or .svg): give --format",
			  o->output);
		return false;
	}
	if (*f != MP_TLF_SUMMARY && o->output == NULL) {
		cli_error("timeline: --format %s writes a file: give -o FILE ('-' for standard output)", o->format);
		return false;
	}
	return true;
}

static bool read_options(const struct cli_opts *o, enum mp_timeline_format *f, mp_timeline_view *v)
{
	*v = (mp_timeline_view){ MP_SCHEME_PROFILER, MP_UNITS_AUTO };
	if (o->explain != NULL || o->blocks || o->sites || o->by != NULL || o->segsum) {
		cli_error("timeline: --explain, --blocks, --sites, --by and --segsum are options of 'memprof categories'");
		return false;
	}
	if (o->scheme != NULL && !mp_category_scheme_parse(o->scheme, &v->scheme)) {
		cli_error("timeline: --scheme must be profiler or tracker, not '%s'", o->scheme);
		return false;
	}
	if (o->units != NULL && !mp_units_parse(o->units, &v->units)) {
		cli_error("timeline: --units must be auto, B, KiB, MiB or GiB, not '%s'", o->units);
		return false;
	}
	return pick_format(o, f);
}

static int run_timeline(const struct cli_command *cmd, int argc, char **argv)
{
	struct cli_opts o;
	mp_timeline_view v;
	mp_category_ruleset *rules = NULL;
	mp_snapshot *snap = NULL;
	mp_timeline *tl = NULL;
	enum mp_timeline_format f;
	char buf[64];
	mp_out out;
	mp_diag diag;
	mp_err err;
	bool done;
	int rc = cli_parse(cmd, argc, argv, 1, 1, &o, &done);

	if (rc != CLI_OK || done)
		return rc;
	if (!read_options(&o, &f, &v))
		return CLI_BAD;
	if ((rc = cli_load_rules_and_target(&o, "timeline", &rules, &snap)) != CLI_OK)
		return rc;
	cli_diag_init(&diag);
	mp_out_init(&out);
	err = mp_timeline_build(snap, rules, o.device_set ? o.device : -1, &tl, &diag);
	if (err == MP_OK)
		err = mp_timeline_write(tl, f, &v, &out, &diag);
	if (err == MP_E_NOTFOUND) { /* no ring: nothing to do, not bad input */
		cli_error("%s: %s", cli_target_name(&o, 0, buf, sizeof buf), diag.msg);
		rc = CLI_NOTHING;
	} else if (err != MP_OK) {
		rc = cli_fail(cli_target_name(&o, 0, buf, sizeof buf), err, &diag);
	} else if (o.output == NULL || strcmp(o.output, "-") == 0) {
		rc = cli_write_stdout(&out);
	} else if ((err = mp_file_write(o.output, out.data, out.len, &diag)) != MP_OK) {
		rc = cli_fail("timeline", err, &diag);
	}
	mp_out_free(&out);
	mp_timeline_free(tl);
	mp_snapshot_free(snap);
	mp_category_ruleset_free(rules);
	return rc;
}

const struct cli_command cli_cmd_timeline = {
	"timeline", "bytes per category over time, from the trace ring (profiler JSON, HTML/SVG plot)",
	"usage: memprof timeline TARGET [-o FILE] [--format json|raw|html|svg] [--device N]\n"
	"                        [--rules FILE] [--scheme profiler|tracker] [--units U]\n"
	"\n"
	"Replay the allocator's trace ring (recorded while torch.cuda.memory._record_memory_history\n"
	"was on) into the bytes of each category over time, per device: an allocation counts\n"
	"from its 'alloc' entry until its 'free_completed', in the category of its 'category' key,\n"
	"else of the first rule its frames match (as 'memprof categories'), else UNKNOWN; blocks\n"
	"the ring does not see allocated count from its start (src/timeline/TIMELINE.md).\n"
	"Without -o, print per device the time span, the peak and when, and each category at\n"
	"the peak and at the end. With -o FILE, write (format from --format, else FILE's end):\n"
	"  json      .json      torch.profiler export_memory_timeline: [times_us, sizes]\n"
	"  raw       .raw.json  export_memory_timeline_raw: [[time_ns, action, bytes, category]]\n"
	"  html      .html      a page with a stacked area plot per device (no script, no downloads)\n"
	"  svg       .svg       the plot alone\n"
	"json, raw and svg hold one device: give --device N when several have a ring. They use\n"
	"the profiler's categories; --scheme tracker names the plots' categories as MemTracker.\n"
	"  --device N      only device N (default: every device with a ring)\n"
	"  --rules FILE    category rules tried before the defaults (CATEGORY-RULES.md)\n"
	"  --units U       B, KiB, MiB, GiB or auto (summary and plots)\n"
	"  -o FILE         where to write ('-': standard output)\n"
	CLI_TARGET_HELP
	"Exit status: 0 done, 1 no trace ring entries, 2 bad input or usage.\n",
	run_timeline,
	CLI_O_OUTPUT | CLI_O_TARGET | CLI_O_DEVICE | CLI_O_CATEGORIES,
};
