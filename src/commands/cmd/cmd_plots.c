/* cmd_plots.c - `trace_plot` and `segment_plot`: the pages `python -m torch.cuda._memory_viz` writes, PyTorch's
   interactive viewer with the snapshot embedded (src/viz). */
#include <stdlib.h>
#include <string.h>

#include "command_int.h"
#include "mp_viz.h"

/* Write the page of KIND for the snapshot of A's target to -o (default output.html, as PyTorch's). */
static int write_page(mp_command_ctx *c, const mp_command_args *a, const char *name, enum mp_viz_kind kind)
{
	const char *path = mp_arg(a, MP_O_OUTPUT) ? mp_arg(a, MP_O_OUTPUT) : "output.html";
	/* The options, else the front end's settings (the session's viewer and d3). */
	mp_viz_sources src = { mp_arg(a, MP_O_TORCH), mp_arg(a, MP_O_D3) ? mp_arg(a, MP_O_D3) : c->d3 };
	bool offline = mp_arg_given(a, MP_O_OFFLINE) || src.torch != NULL || mp_arg(a, MP_O_D3) != NULL ||
		       c->viewer != NULL;
	mp_viz_viewer viewer;
	mp_snapshot *snap = NULL;
	mp_out page, warnings;
	mp_diag diag;
	mp_err err = MP_OK;
	bool owned = false, *drop = NULL; /* --filter-freed's entries left out: the snapshot may be a session's */
	size_t dropped = 0;
	int rc;

	if (src.torch == NULL && c->viewer != NULL && c->viewer[0] != '\0')
		src.torch = c->viewer;
	mp_command_diag(c, &diag);
	if (offline && (err = mp_viz_viewer_load(&src, &viewer, &diag)) != MP_OK) {
		mp_viz_viewer_free(&viewer);
		return mp_command_fail(c, name, err, &diag);
	}
	if ((rc = cmd_snapshot(c, a, 0, 0, 0, &snap, &owned)) != MP_CMD_OK) {
		if (offline)
			mp_viz_viewer_free(&viewer);
		return rc;
	}
	if (mp_arg_given(a, MP_O_DEVICE))
		mp_warn(&diag, "%s: --device is not needed: the page holds every device, as PyTorch's does", name);
	mp_out_init(&page);
	mp_out_init(&warnings);
	if (mp_arg_given(a, MP_O_FILTER_FREED) &&
	    (err = mp_viz_freed_entries(snap, &drop, &dropped, &warnings, &diag)) == MP_OK && warnings.len > 0) {
		/* one line per entry: the first, and how many */
		size_t lines = 0;

		for (size_t i = 0; i < warnings.len; i++)
			lines += warnings.data[i] == '\n';
		mp_warn(&diag, "%s --filter-freed: %.*s (%zu such entr%s, kept)", name, (int)strcspn(warnings.data, "\n"),
			warnings.data, lines, lines == 1 ? "y" : "ies");
	}
	if (err == MP_OK)
		err = mp_viz_page(snap, kind, drop, offline ? &viewer : NULL, &page, &diag);
	rc = err != MP_OK ? mp_command_fail(c, name, err, &diag) : cmd_write_file(c, name, path, &page);
	free(drop);
	mp_out_free(&warnings);
	mp_out_free(&page);
	cmd_release(snap, owned);
	if (offline)
		mp_viz_viewer_free(&viewer);
	return rc;
}

static int run_trace_plot(mp_command_ctx *c, const mp_command_args *a)
{
	return write_page(c, a, "trace_plot",
			  mp_arg_given(a, MP_O_PLOT_SEGMENTS) ? MP_VIZ_ACTIVE_CACHED : MP_VIZ_ACTIVE_MEMORY);
}

static int run_segment_plot(mp_command_ctx *c, const mp_command_args *a)
{
	return write_page(c, a, "segment_plot", MP_VIZ_STATE_HISTORY);
}

/* The options both pages take; trace_plot's own come first in its list. */
#define PAGE_OPTIONS                                                                                              \
	{ MP_O_OUTPUT, MP_OPT_FILE, NULL, "FILE", "where to write the page (default output.html; '-': standard output)" }, \
	{ MP_O_DEVICE, MP_OPT_DEVICE, NULL, "N",                                                                    \
	  "accepted as PyTorch's -d, and as there not needed: the page holds every device" },                       \
	{ MP_O_OFFLINE, MP_OPT_FLAG, NULL, NULL,                                                                     \
	  "a page that needs no network: PyTorch's viewer (MemoryViz.js) and a d3 inlined from this\n"              \
	  "machine (--torch, --d3)" },                                                                               \
	{ MP_O_TORCH, MP_OPT_FILE, NULL, "DIR",                                                                      \
	  "with --offline, the viewer from DIR: a PyTorch source tree, a torch package holding\n"                  \
	  "utils/viz/MemoryViz.js, or the file itself (default: python3's torch; its wheels lack it)" },            \
	{ MP_O_D3, MP_OPT_FILE, NULL, "FILE", "with --offline, the d3 bundle to inline (default: Debian's node-d3)" }, \
	{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL }

#define PAGE_HELP                                                                                                  \
	"The page embeds the snapshot as a pickle (what torch.cuda.memory._dump_snapshot writes),\n"             \
	"rebuilt from a core or a live process or read from a file; around it, the text PyTorch's\n"               \
	"page has. As PyTorch's, it loads the viewer from PyTorch's repository by URL, and the viewer\n"        \
	"loads d3 from a CDN: open it with network access. --offline (or --torch, --d3) inlines both\n"           \
	"instead: the viewer, torch/utils/viz/MemoryViz.js, from a PyTorch source tree (PyTorch's\n"              \
	"wheels and Debian's package do not install it), and a d3 v5 bundle from this machine.\n"           \
	"In a session, the settings viewer and d3 give the defaults (viewer offline: python3's torch).\n"

const mp_command mp_cmd_trace_plot = {
	"trace_plot", MP_FRONT_ALL, "write the memory timeline page of _memory_viz.py trace_plot (HTML)",
	"SNAPSHOT [-o FILE] [--plot-segments] [--filter-freed] [--offline [--torch DIR] [--d3 FILE]]",
	"Write the page `python -m torch.cuda._memory_viz trace_plot` writes: PyTorch's interactive\n"
	"viewer opening on the memory over time from the trace ring (Active Memory Timeline), each\n"
	"allocation with its frames on hover. --plot-segments opens on the segments cudaMalloc gave\n"
	"(Active Cached Segment Timeline, which PyTorch's -s page asks for by a name its viewer\n"
	"lacks). --filter-freed leaves out the allocations freed inside the ring (PyTorch 2.14's\n"
	"--filter_freed): what stays is what was still allocated.\n" PAGE_HELP,
	"[snapshot]",
	(const mp_option[]){
		{ MP_O_PLOT_SEGMENTS, MP_OPT_FLAG, NULL, NULL, "plot the segments rather than the allocations (PyTorch's -s)" },
		{ MP_O_FILTER_FREED, MP_OPT_FLAG, NULL, NULL,
		  "leave out each allocation freed within the ring, and its free (PyTorch 2.14's -f)" },
		PAGE_OPTIONS,
	},
	"0 done, 2 bad input or usage",
	run_trace_plot, 0, NULL,
};

const mp_command mp_cmd_segment_plot = {
	"segment_plot", MP_FRONT_ALL, "write the segment map page of _memory_viz.py segment_plot (HTML)",
	"SNAPSHOT [-o FILE] [--offline [--torch DIR] [--d3 FILE]]",
	"Write the page `python -m torch.cuda._memory_viz segment_plot` writes: PyTorch's interactive\n"
	"viewer opening on how allocations are packed into the allocator's segments at each point of\n"
	"the trace ring (Allocator State History).\n" PAGE_HELP,
	"[snapshot]",
	(const mp_option[]){ PAGE_OPTIONS },
	"0 done, 2 bad input or usage",
	run_segment_plot, 0, NULL,
};
