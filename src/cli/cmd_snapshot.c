/* cmd_snapshot.c - `memprof snapshot`: the snapshot PyTorch would have returned, rebuilt from a
   core or a live process, written as a pickle _memory_viz.py and the memory_viz page load. */
#include <stdio.h>

#include "cli.h"
#include "mp_snapshot_file.h"
#include "mp_snapshot_walk.h"

static int run_snapshot(const struct cli_command *cmd, int argc, char **argv)
{
	struct cli_opts o;
	enum mp_format fmt;
	mp_snapshot *snap;
	bool done;
	int rc = cli_parse(cmd, argc, argv, 1, 1, &o, &done);

	if (rc != CLI_OK || done)
		return rc;
	if (o.output == NULL) {
		cli_error("snapshot: name the output with -o FILE.pickle or -o FILE.json");
		return CLI_BAD;
	}
	fmt = mp_format_from_name(o.output);
	if (fmt == MP_FMT_UNKNOWN) {
		cli_error("snapshot: cannot tell the format of '%s': name it .pickle or .json", o.output);
		return CLI_BAD;
	}
	if (!cli_load_target(&o, 0, 0, o.stats ? MP_SW_DEVICE_STATS : 0, &snap))
		return CLI_BAD;
	return cli_export(snap, fmt, o.output, "snapshot");
}

const struct cli_command cli_cmd_snapshot = {
	"snapshot", "write the allocator's snapshot as torch.cuda.memory._snapshot() returns it",
	"usage: memprof snapshot TARGET -o OUT.pickle|OUT.json [--stats]\n"
	"\n"
	"Rebuild the snapshot of TARGET's CUDA caching allocator (segments, blocks, trace\n"
	"ring, settings) and write it as a pickle (as torch.cuda.memory._dump_snapshot\n"
	"writes: python -m torch.cuda._memory_viz and https://pytorch.org/memory_viz read\n"
	"it) or as memprof JSON. --stats adds each device's memory_stats() under the\n"
	"extra key 'device_stats'. Frames are not decoded yet: they are empty lists.\n"
	CLI_TARGET_HELP
	"Exit status: 0 done, 2 bad input or usage.\n",
	run_snapshot,
	CLI_O_TARGET | CLI_O_OUTPUT | CLI_O_STATS,
};
