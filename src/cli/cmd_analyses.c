/* cmd_analyses.c - the subcommands that mirror `python -m torch.cuda._memory_viz`. */
#include <stdio.h>

#include "cli.h"
#include "mp_flamelines.h"
#include "mp_snapshot_file.h"
#include "mp_segsum.h"
#include "mp_trace_text.h"

/* How one single-file subcommand runs. */
struct one_file {
	unsigned load_flags;                                     /* enum mp_load_flags */
	mp_err (*analysis)(mp_snapshot *, mp_out *, mp_diag *);
	const char *flame_title; /* NULL: text printed as by print(); else flame graph lines */
	/* What the analysis needs that the snapshot lacks (NULL: nothing). */
	const char *(*lacks)(const mp_snapshot *snap);
	/* Whether the analysis found nothing to do (exit status 1). */
	bool (*nothing)(const mp_snapshot *snap, const mp_out *out);
};

static int run_one(const struct cli_command *cmd, int argc, char **argv, const struct one_file *how)
{
	struct cli_opts o;
	mp_snapshot *snap = NULL;
	const char *lacks, *name;
	char buf[64];
	mp_out out;
	mp_diag diag;
	mp_err err;
	bool done;
	int rc = cli_parse(cmd, argc, argv, 1, 1, &o, &done);

	if (rc != CLI_OK || done)
		return rc;
	if (!cli_load_target(&o, 0, how->load_flags, 0, &snap))
		return CLI_BAD;
	name = cli_target_name(&o, 0, buf, sizeof buf);
	lacks = how->lacks ? how->lacks(snap) : NULL;
	if (lacks != NULL) {
		cli_error("'%s': %s", name, lacks);
		mp_snapshot_free(snap);
		return CLI_NOTHING;
	}
	mp_out_init(&out);
	cli_diag_init(&diag);
	err = how->analysis(snap, &out, &diag);
	if (err != MP_OK) {
		rc = cli_fail(name, err, &diag);
	} else if (how->flame_title == NULL) {
		mp_out_putc(&out, '\n'); /* the reference prints its result with print() */
		rc = cli_write_stdout(&out);
	} else {
		rc = cli_emit_flame(&out, o.output, how->flame_title);
	}
	if (rc == CLI_OK && how->nothing(snap, &out))
		rc = CLI_NOTHING;
	mp_out_free(&out);
	mp_snapshot_free(snap);
	return rc;
}

static mp_err segsum(mp_snapshot *snap, mp_out *out, mp_diag *diag)
{
	return mp_analysis_segsum(snap, out, diag);
}

static mp_err segments(mp_snapshot *snap, mp_out *out, mp_diag *diag)
{
	return mp_analysis_segments(snap, out, diag);
}

static mp_err memory(mp_snapshot *snap, mp_out *out, mp_diag *diag)
{
	return mp_analysis_memory(snap, out, diag);
}

static bool no_segments(const mp_snapshot *snap, const mp_out *out)
{
	(void)out;
	return snap->nsegments == 0;
}

static bool no_trace_entries(const mp_snapshot *snap, const mp_out *out)
{
	(void)out;
	return snap->ntrace == 0;
}

static bool no_lines(const mp_snapshot *snap, const mp_out *out)
{
	(void)snap;
	return out->len == 0;
}

static const char *lacks_traces(const mp_snapshot *snap)
{
	if (snap->present & MP_F_TOP_DEVICE_TRACES)
		return NULL;
	return "no 'device_traces': the snapshot was taken without recording history";
}

static int run_stats(const struct cli_command *cmd, int argc, char **argv)
{
	/* segsum reads no frames: let the reader pass over them */
	static const struct one_file how = { MP_LOAD_NO_FRAMES, segsum, NULL, NULL, no_segments };

	return run_one(cmd, argc, argv, &how);
}

static int run_trace(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct one_file how = { 0, mp_analysis_trace, NULL, lacks_traces, no_trace_entries };

	return run_one(cmd, argc, argv, &how);
}

static int run_segments(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct one_file how = { 0, segments, "Memory by segment", NULL, no_lines };

	return run_one(cmd, argc, argv, &how);
}

static int run_memory(const struct cli_command *cmd, int argc, char **argv)
{
	static const struct one_file how = { 0, memory, "Memory by allocation site", NULL, no_lines };

	return run_one(cmd, argc, argv, &how);
}

static int run_compare(const struct cli_command *cmd, int argc, char **argv)
{
	struct cli_opts o;
	mp_snapshot *before = NULL, *after = NULL;
	mp_out summary, folded;
	mp_diag diag;
	mp_err err;
	bool done;
	int rc = cli_parse(cmd, argc, argv, 2, 2, &o, &done);

	if (rc != CLI_OK || done)
		return rc;
	if (!cli_load_target(&o, 0, 0, 0, &before) || !cli_load_target(&o, 1, 0, 0, &after)) {
		mp_snapshot_free(before);
		return CLI_BAD;
	}
	mp_out_init(&summary);
	mp_out_init(&folded);
	cli_diag_init(&diag);
	err = mp_analysis_compare(before, after, &summary, &folded, &diag);
	if (err != MP_OK)
		rc = cli_fail("compare", err, &diag);
	if (rc == CLI_OK)
		rc = cli_write_stdout(&summary);
	if (rc == CLI_OK)
		rc = cli_emit_flame(&folded, o.output, "Segments only before / only after");
	if (rc == CLI_OK && folded.len == 0)
		rc = CLI_NOTHING;
	mp_out_free(&summary);
	mp_out_free(&folded);
	mp_snapshot_free(before);
	mp_snapshot_free(after);
	return rc;
}

const struct cli_command cli_cmd_stats = {
	"stats", "summarise how the allocator filled its segments (segsum)",
	"usage: memprof stats TARGET\n"
	"\n"
	"Print overall allocation statistics and a map of how each segment of 20 MiB\n"
	"or more is filled, byte for byte as `python -m torch.cuda._memory_viz stats`.\n"
	CLI_TARGET_HELP
	"Exit status: 0 done, 1 the snapshot has no segments, 2 bad input or usage.\n",
	run_stats,
	CLI_O_TARGET,
};

const struct cli_command cli_cmd_trace = {
	"trace", "print the recorded alloc/free events as pseudo-Python",
	"usage: memprof trace TARGET\n"
	"\n"
	"Print the trace ring of each device (the most recent allocator events) in the\n"
	"style of `python -m torch.cuda._memory_viz trace`, with its known bugs fixed\n"
	"(see tests/oracle/TRACE-DEVIATIONS.md).\n"
	CLI_TARGET_HELP
	"Exit status: 0 done, 1 no trace recorded, 2 bad input or usage.\n",
	run_trace,
	CLI_O_TARGET,
};

const struct cli_command cli_cmd_segments = {
	"segments", "flame graph input: memory of each segment by block and call site",
	"usage: memprof segments TARGET [-o OUT]\n"
	"\n"
	"Write folded stack lines (stream;segment;state;frames... bytes) as\n"
	"`_memory_viz segments` feeds to flamegraph.pl, to OUT or standard output.\n"
	"If OUT ends in .svg, render the flame graph as SVG instead.\n"
	CLI_TARGET_HELP
	"Exit status: 0 done, 1 no blocks, 2 bad input or usage.\n",
	run_segments,
	CLI_O_TARGET | CLI_O_OUTPUT,
};

const struct cli_command cli_cmd_memory = {
	"memory", "flame graph input: memory by allocation call site",
	"usage: memprof memory TARGET [-o OUT]\n"
	"\n"
	"Like 'segments' without the segment level (as `_memory_viz memory`).\n"
	"If OUT ends in .svg, render the flame graph as SVG instead.\n"
	CLI_TARGET_HELP
	"Exit status: 0 done, 1 no blocks, 2 bad input or usage.\n",
	run_memory,
	CLI_O_TARGET | CLI_O_OUTPUT,
};

const struct cli_command cli_cmd_compare = {
	"compare", "segments only in BEFORE or only in AFTER",
	"usage: memprof compare BEFORE AFTER [-o OUT]\n"
	"\n"
	"Print the addresses of segments found only before and only after (sorted),\n"
	"then folded stack lines of their blocks (prefix only_before;/only_after;) to\n"
	"OUT or standard output; an OUT ending in .svg gets a rendered flame graph.\n"
	CLI_TARGET_HELP
	"Exit status: 0 done, 1 no difference, 2 bad input or usage.\n",
	run_compare,
	CLI_O_TARGET | CLI_O_OUTPUT,
};
