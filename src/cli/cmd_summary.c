/* cmd_summary.c - `memprof summary`: torch.cuda.memory_summary() of a device, from the
   allocator's statistics (a core, a live process, or a snapshot file that carries them). */
#include <stdlib.h>

#include "cli.h"
#include "mp_snapshot_file.h"
#include "mp_snapshot_stats.h"
#include "mp_snapshot_walk.h"
#include "mp_summary.h"

static int run_summary(const struct cli_command *cmd, int argc, char **argv)
{
	struct cli_opts o;
	mp_snapshot *snap;
	mp_memstats stats;
	size_t ndevices;
	char buf[64];
	const char *name;
	mp_out out;
	mp_diag diag;
	mp_err err;
	bool done;
	int rc = cli_parse(cmd, argc, argv, 1, 1, &o, &done);

	if (rc != CLI_OK || done)
		return rc;
	if (!cli_load_target(&o, 0, MP_LOAD_NO_FRAMES, MP_SW_DEVICE_STATS, &snap))
		return CLI_BAD;
	name = cli_target_name(&o, 0, buf, sizeof buf);
	cli_diag_init(&diag);
	err = mp_snapshot_device_stats(snap, (size_t)o.device, &stats, &ndevices, &diag);
	if (err != MP_OK) {
		rc = cli_fail(name, err, &diag);
		mp_snapshot_free(snap);
		return rc;
	}
	mp_out_init(&out);
	err = mp_analysis_memory_summary(&stats, o.abbreviated, &out, &diag);
	if (err != MP_OK) {
		rc = cli_fail(name, err, &diag);
	} else {
		mp_out_putc(&out, '\n'); /* as print(torch.cuda.memory_summary()) */
		rc = cli_write_stdout(&out);
	}
	mp_out_free(&out);
	free(stats.v);
	mp_snapshot_free(snap);
	return rc;
}

const struct cli_command cli_cmd_summary = {
	"summary", "print the allocator's statistics as torch.cuda.memory_summary()",
	"usage: memprof summary TARGET [--device N] [--abbreviated]\n"
	"\n"
	"Print device N's (default 0) statistics as print(torch.cuda.memory_summary(N))\n"
	"does. A snapshot file must carry them: PyTorch's do not; memprof snapshot --stats\n"
	"writes them.\n"
	CLI_TARGET_HELP
	"Exit status: 0 done, 2 bad input, usage, or no statistics.\n",
	run_summary,
	CLI_O_TARGET | CLI_O_DEVICE | CLI_O_ABBREV,
};
