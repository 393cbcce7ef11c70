/* cmd_snapshot.c - `memprof snapshot`: the snapshot PyTorch would have returned, rebuilt from a
   core or a live process, written as a pickle _memory_viz.py and the memory_viz page load. */
#include "cli.h"
#include "mp_snapshot_walk.h"

static int run_snapshot(mp_command_ctx *c, const mp_command_args *a)
{
	const char *path = mp_arg(a, "-o");
	enum mp_format fmt;
	mp_snapshot *snap;
	bool owned;
	int rc;

	if (path == NULL)
		return mp_command_error(c, "snapshot: name the output with -o FILE.pickle or -o FILE.json");
	fmt = mp_format_from_name(path);
	if (fmt == MP_FMT_UNKNOWN)
		return mp_command_error(c, "snapshot: cannot tell the format of '%s': name it .pickle or .json", path);
	rc = c->front->snapshot(c, 0, a->npos > 0 ? a->pos[0] : NULL, 0,
				mp_arg_given(a, "--stats") ? MP_SW_DEVICE_STATS : 0, &snap, &owned);
	if (rc != MP_CMD_OK)
		return rc;
	return cli_export(c, snap, fmt, path, "snapshot");
}

const mp_command cli_cmd_snapshot = {
	"snapshot", MP_FRONT_CLI, "write the allocator's snapshot as torch.cuda.memory._snapshot() returns it",
	"SNAPSHOT -o OUT.pickle|OUT.json [--stats]",
	"Rebuild the snapshot of the target's CUDA caching allocator (segments, blocks, trace\n"
	"ring, settings) and write it as a pickle (as torch.cuda.memory._dump_snapshot\n"
	"writes: python -m torch.cuda._memory_viz and https://pytorch.org/memory_viz read\n"
	"it) or as memprof JSON. --stats adds each device's memory_stats() under the\n"
	"extra key 'device_stats'. Frames are not decoded yet: they are empty lists.\n",
	"[snapshot]",
	(const mp_option[]){
		{ "-o", MP_OPT_FILE, NULL, "OUT", "the file to write: .pickle or .json" },
		{ "--stats", MP_OPT_FLAG, NULL, NULL, "add each device's memory_stats() as 'device_stats'" },
		{ NULL, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"0 done, 2 bad input or usage",
	run_snapshot, 0, NULL,
};
