/* fuzz_analyses.c - libFuzzer harness: every analysis over what the snapshot reader accepts, through the command
   table as the CLI runs them: segsum (stats), summary, segments, memory, compare of the input with itself, trace,
   blocks, categories (default rules; by call site), timeline (text; SVG written to /dev/null), the pages of
   trace_plot (its ring filtered) and segment_plot (to /dev/null), oom and whatif (the trace replayed through the
   allocator model). Each loads
   the input with the flags it asks for. Seeds: the pickle and JSON corpora. */
#include "fuzz_front.h"
#include "mp_snapshot_file.h"

static const char *const runs[][8] = {
	{ "segsum", "in", NULL },
	{ "summary", "in", "--device", "all", NULL },
	{ "segments", "in", NULL },
	{ "memory", "in", NULL },
	{ "compare", "in", "in", "--blocks", NULL },
	{ "trace", "in", NULL },
	{ "blocks", "in", "--device", "all", NULL },
	{ "categories", "in", NULL },
	{ "categories", "in", "--sites", "--scheme", "tracker", NULL },
	{ "timeline", "in", NULL },
	{ "timeline", "in", "--format", "svg", "-o", "/dev/null", NULL },
	{ "trace_plot", "in", "--filter-freed", "-o", "/dev/null", NULL },
	{ "segment_plot", "in", "-o", "/dev/null", NULL },
	{ "oom", "in", NULL },
	{ "whatif", "in", "--conf", "expandable_segments:True,max_split_size_mb:64", NULL },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (mp_format_detect(data, size) == MP_FMT_UNKNOWN)
		return 0;
	for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++)
		fuzz_command(data, size, runs[i]);
	return 0;
}
