/* cmd_view.c - the views of one snapshot as _memory_viz and memory_summary() print them: segsum,
   summary, segments, memory, trace; and compare of two. */
#include <stdlib.h>
#include <string.h>

#include "command_int.h"
#include "mp_block_query.h"
#include "mp_flamelines.h"
#include "mp_memstats.h"
#include "mp_segsum.h"
#include "mp_snapshot_file.h"
#include "mp_snapshot_stats.h"
#include "mp_snapshot_walk.h"
#include "mp_summary.h"
#include "mp_trace_text.h"

static int run_segsum(mp_command_ctx *c, const mp_command_args *a)
{
	mp_snapshot *snap;
	char buf[64];
	mp_out out;
	mp_diag diag;
	mp_err err;
	bool owned;
	/* segsum reads no frames: a file's reader may pass over them */
	int rc = cmd_snapshot(c, a, 0, MP_LOAD_NO_FRAMES, 0, &snap, &owned);

	if (rc != MP_CMD_OK)
		return rc;
	mp_out_init(&out);
	mp_command_diag(c, &diag);
	if ((err = mp_analysis_segsum(snap, &out, &diag)) != MP_OK)
		rc = mp_command_fail(c, cmd_label(c, a, 0, buf, sizeof buf), err, &diag);
	else
		rc = cmd_emit(c, &out, true); /* as the reference's print() */
	if (rc == MP_CMD_OK && snap->nsegments == 0)
		rc = MP_CMD_NOTHING;
	mp_out_free(&out);
	cmd_release(snap, owned);
	return rc;
}

/* memory_summary() of DEVICE, printed. */
static int summary_of(mp_command_ctx *c, const mp_command_args *a, const mp_snapshot *snap, size_t device,
		      size_t *ndevices)
{
	mp_memstats stats;
	char buf[64];
	mp_out out;
	mp_diag diag;
	mp_err err;
	int rc;

	mp_command_diag(c, &diag);
	if ((err = mp_snapshot_device_stats(snap, device, &stats, ndevices, &diag)) != MP_OK)
		return mp_command_fail(c, cmd_label(c, a, 0, buf, sizeof buf), err, &diag);
	mp_out_init(&out);
	if ((err = mp_analysis_memory_summary(&stats, mp_arg_given(a, MP_O_ABBREVIATED), &out, &diag)) != MP_OK)
		rc = mp_command_fail(c, cmd_label(c, a, 0, buf, sizeof buf), err, &diag);
	else
		rc = cmd_emit(c, &out, true); /* as print(torch.cuda.memory_summary()) */
	mp_out_free(&out);
	free(stats.v);
	return rc;
}

static int run_summary(mp_command_ctx *c, const mp_command_args *a)
{
	long device = mp_arg_device(a, MP_O_DEVICE, c->one_device);
	size_t ndevices = 1;
	mp_snapshot *snap;
	bool owned;
	int rc = cmd_snapshot(c, a, 0, MP_LOAD_NO_FRAMES, MP_SW_DEVICE_STATS, &snap, &owned);

	if (rc != MP_CMD_OK)
		return rc;
	if (device >= 0)
		rc = summary_of(c, a, snap, (size_t)device, &ndevices);
	else /* every device, one table each */
		for (size_t d = 0; d < ndevices && rc == MP_CMD_OK; d++)
			rc = summary_of(c, a, snap, d, &ndevices);
	cmd_release(snap, owned);
	return rc;
}

static int flame(mp_command_ctx *c, const mp_command_args *a, const char *title,
		 mp_err (*analysis)(const mp_snapshot *, mp_out *, mp_diag *))
{
	const char *path = mp_arg(a, MP_O_OUTPUT);
	mp_snapshot *snap;
	char buf[64];
	mp_out out;
	mp_diag diag;
	mp_err err;
	bool owned;
	/* the blocks' frames only: a file's reader passes over the trace ring's */
	int rc = cmd_snapshot(c, a, 0, MP_LOAD_NO_TRACE_FRAMES, 0, &snap, &owned);

	if (rc != MP_CMD_OK)
		return rc;
	if ((rc = mp_command_gate(c)) != MP_CMD_OK) { /* the stream below is output */
		cmd_release(snap, owned);
		return rc;
	}
	/* Lines printed are written as they are made: hundreds of megabytes for a big snapshot. */
	if ((path == NULL || strcmp(path, "-") == 0) && c->front->stream != NULL)
		mp_out_init_file(&out, c->front->stream(c));
	else
		mp_out_init(&out);
	mp_command_diag(c, &diag);
	if ((err = analysis(snap, &out, &diag)) != MP_OK)
		rc = mp_command_fail(c, cmd_label(c, a, 0, buf, sizeof buf), err, &diag);
	else if (out.sink != NULL)
		rc = mp_out_flush(&out) == MP_OK ? MP_CMD_OK : mp_command_fail(c, "output", out.err, NULL);
	else
		rc = cmd_flame(c, a->cmd->name, &out, path, title);
	if (rc == MP_CMD_OK && out.len == 0 && out.drained == 0)
		rc = MP_CMD_NOTHING;
	mp_out_free(&out);
	cmd_release(snap, owned);
	return rc;
}

static int run_segments(mp_command_ctx *c, const mp_command_args *a)
{
	return flame(c, a, "Memory by segment", mp_analysis_segments);
}

static int run_memory(mp_command_ctx *c, const mp_command_args *a)
{
	return flame(c, a, "Memory by allocation site", mp_analysis_memory);
}

static int run_trace(mp_command_ctx *c, const mp_command_args *a)
{
	const char *last = mp_arg(a, MP_O_LAST);
	mp_snapshot *snap;
	char buf[64];
	long n = 0;
	mp_out out;
	mp_diag diag;
	mp_err err;
	bool owned;
	/* the trace ring's frames only (printed with an entry the reference shows whole): a file's
	   reader passes over the blocks' */
	int rc = cmd_snapshot(c, a, 0, MP_LOAD_NO_BLOCK_FRAMES, 0, &snap, &owned);

	if (rc != MP_CMD_OK)
		return rc;
	if (last != NULL)
		mp_parse_long(last, &n); /* checked by the parser */
	if (!(snap->present & MP_F_TOP_DEVICE_TRACES) || (c->interactive && snap->ntrace == 0)) {
		rc = MP_CMD_NOTHING;
		if (c->interactive)
			cmd_nothing(c, NULL, "no trace entries: the allocator records none unless history is on "
				       "(torch.cuda.memory._record_memory_history())");
		else
			mp_command_error(c, "'%s': no 'device_traces': the snapshot was taken without recording history",
					 cmd_label(c, a, 0, buf, sizeof buf));
		cmd_release(snap, owned);
		return rc;
	}
	mp_out_init(&out);
	mp_command_diag(c, &diag);
	if ((err = mp_analysis_trace_last(snap, (size_t)n, &out, &diag)) != MP_OK)
		rc = mp_command_fail(c, cmd_label(c, a, 0, buf, sizeof buf), err, &diag);
	else
		rc = cmd_emit(c, &out, true);
	if (rc == MP_CMD_OK && snap->ntrace == 0)
		rc = MP_CMD_NOTHING;
	mp_out_free(&out);
	cmd_release(snap, owned);
	return rc;
}

/* What the debugger adds to compare: every block allocated (+) or freed (-) between the two. */
static int block_changes(mp_command_ctx *c, const mp_snapshot *before, const mp_snapshot *after, size_t *nchanges)
{
	mp_out blocks;
	mp_diag diag;
	mp_err err;
	int rc;

	mp_out_init(&blocks);
	mp_out_puts(&blocks, "blocks:\n");
	mp_command_diag(c, &diag);
	if ((err = mp_analysis_block_diff(before, after, c->units, &blocks, nchanges, &diag)) != MP_OK)
		rc = mp_command_fail(c, "compare", err, &diag);
	else
		rc = cmd_emit(c, &blocks, false);
	mp_out_free(&blocks);
	return rc;
}

/* Side I of compare: the block lines name each block's owner where the Python heap of the target
   can be read (OWNERS); compare shows the blocks' frames, never the trace ring's. */
static int compare_side(mp_command_ctx *c, const mp_command_args *a, int i, bool owners, mp_snapshot **snap,
			bool *owned)
{
	if (owners)
		return cmd_snapshot_annotated(c, a, i, 0, true, snap, owned);
	return cmd_snapshot(c, a, i, MP_LOAD_NO_TRACE_FRAMES, 0, snap, owned);
}

static int run_compare(mp_command_ctx *c, const mp_command_args *a)
{
	mp_snapshot *before = NULL, *after = NULL;
	bool owned_before = false, owned_after = false;
	size_t nchanges = 0;
	mp_out summary, folded;
	mp_diag diag;
	mp_err err;
	int rc;

	bool owners = (c->interactive || mp_arg_given(a, MP_O_BLOCKS)) && !mp_arg_given(a, MP_O_NO_OWNERS);

	if ((rc = compare_side(c, a, 0, owners, &before, &owned_before)) != MP_CMD_OK)
		return rc;
	if ((rc = compare_side(c, a, 1, owners, &after, &owned_after)) != MP_CMD_OK) {
		cmd_release(before, owned_before);
		return rc;
	}
	mp_out_init(&summary);
	mp_out_init(&folded);
	mp_command_diag(c, &diag);
	if ((err = mp_analysis_compare(before, after, &summary, &folded, &diag)) != MP_OK)
		rc = mp_command_fail(c, "compare", err, &diag);
	if (rc == MP_CMD_OK)
		rc = cmd_emit(c, &summary, false);
	if (rc == MP_CMD_OK)
		rc = cmd_flame(c, "compare", &folded, mp_arg(a, MP_O_OUTPUT), "Segments only before / only after");
	if (rc == MP_CMD_OK && (c->interactive || mp_arg_given(a, MP_O_BLOCKS)))
		rc = block_changes(c, before, after, &nchanges);
	if (rc == MP_CMD_OK && folded.len == 0 && nchanges == 0)
		rc = MP_CMD_NOTHING;
	mp_out_free(&summary);
	mp_out_free(&folded);
	cmd_release(before, owned_before);
	cmd_release(after, owned_after);
	return rc;
}

static const mp_option output_option[] = {
	{ MP_O_OUTPUT, MP_OPT_FILE, NULL, "FILE", "write to FILE ('-': standard output); an SVG flame graph when it ends in .svg" },
	{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
};

const mp_command mp_cmd_segsum = {
	"segsum", MP_FRONT_ALL, "map how the allocator filled its segments (_memory_viz stats)",
	"SNAPSHOT",
	"Overall statistics, then one line per segment of 20 MiB or more showing each page as allocated,\n"
	"free or empty, byte for byte as `python -m torch.cuda._memory_viz stats`.\n",
	"[snapshot]", NULL, "0 done, 1 the snapshot has no segments, 2 bad input or usage",
	run_segsum, 0, NULL,
};

const mp_command mp_cmd_summary = {
	"summary", MP_FRONT_ALL, "the allocator's statistics as torch.cuda.memory_summary()",
	"SNAPSHOT [--device N|all] [--abbreviated]",
	"Allocated, reserved, active and inactive memory (large and small pools), allocation retries and\n"
	"OOMs of a device, as print(torch.cuda.memory_summary(N)). A snapshot file must carry them:\n"
	"PyTorch's do not; `memprof snapshot save --stats` writes them (the debugger's always).\n",
	"[snapshot]",
	(const mp_option[]){
		{ MP_O_DEVICE, MP_OPT_DEVICE, NULL, "N",
		  "device N, or all: one table each (default: 0 on the command line, as memory_summary();\n"
		  "the 'memprof device' setting in the debugger)" },
		{ MP_O_ABBREVIATED, MP_OPT_FLAG, NULL, NULL, "the short form of the table, as memory_summary(abbreviated=True)" },
		{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"0 done, 2 bad input, usage, or no statistics",
	run_summary, 0, NULL,
};

const mp_command mp_cmd_segments = {
	"segments", MP_FRONT_ALL, "flame graph input: memory of each segment by block and call site",
	"SNAPSHOT [-o FILE]",
	"Folded stack lines (stream;segment;state;frames... bytes) as `_memory_viz segments` feeds to\n"
	"flamegraph.pl, printed or written to FILE; an SVG flame graph when FILE ends in .svg.\n",
	"[snapshot]", output_option, "0 done, 1 no blocks, 2 bad input or usage",
	run_segments, 0, NULL,
};

const mp_command mp_cmd_memory = {
	"memory", MP_FRONT_ALL, "flame graph input: memory by allocation call site",
	"SNAPSHOT [-o FILE]",
	"Like 'segments' without the segment level (as `_memory_viz memory`).\n",
	"[snapshot]", output_option, "0 done, 1 no blocks, 2 bad input or usage",
	run_memory, 0, NULL,
};

const mp_command mp_cmd_trace = {
	"trace", MP_FRONT_ALL, "the recorded alloc/free events as pseudo-Python",
	"SNAPSHOT [--last N]",
	"Each device's trace ring (the most recent allocator events) as `python -m\n"
	"torch.cuda._memory_viz trace` prints it, with its known bugs fixed (tests/oracle/\n"
	"TRACE-DEVIATIONS.md). The ring records only while history is on\n"
	"(torch.cuda.memory._record_memory_history).\n",
	"[snapshot]",
	(const mp_option[]){
		{ MP_O_LAST, MP_OPT_COUNT, NULL, "N", "only the last N events of each ring (the totals stay the whole ring's)" },
		{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"0 done, 1 no trace recorded, 2 bad input or usage",
	run_trace, 0, NULL,
};

const mp_command mp_cmd_compare = {
	"compare", MP_FRONT_ALL, "segments only in BEFORE or only in AFTER",
	"BEFORE AFTER [-o FILE] [--blocks] [--no-owners]",
	"The addresses of the segments found only before and only after (sorted), then the folded stack\n"
	"lines of their blocks (prefixed only_before;/only_after;) as `_memory_viz compare`, printed or\n"
	"written to FILE (an SVG flame graph when it ends in .svg). Then, in the debugger or with\n"
	"--blocks, every block allocated (+) or freed (-) between the two, with the frame that allocated\n"
	"it and, where a side is a core or a live process (or a snapshot taken or saved with its owners),\n"
	"the tensor that owns it from the Python heap (--no-owners: not read).\n",
	"snapshot snapshot",
	(const mp_option[]){
		{ MP_O_OUTPUT, MP_OPT_FILE, NULL, "FILE", "write to FILE ('-': standard output); an SVG flame graph when it ends in .svg" },
		{ MP_O_BLOCKS, MP_OPT_FLAG, NULL, NULL, "also every block allocated or freed between the two (the debugger always)" },
		{ MP_O_NO_OWNERS, MP_OPT_FLAG, NULL, NULL, "on a core or a live process, do not read the Python heap" },
		{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"0 done, 1 no difference, 2 bad input or usage",
	run_compare, 0, NULL,
};
