/* cmd_whatif.c - `whatif`: the job's recorded requests replayed through the allocator model under other
   settings (src/whatif), after the check that the model under the job's own settings does what the job did. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command_int.h"
#include "mp_oom.h"
#include "mp_whatif.h"

/* "2.6" or "2.6.0" (a walk's version) into R; false for anything else. */
static bool parse_release(const char *text, mp_sim_release *r)
{
	return text != NULL && sscanf(text, "%d.%d", &r->major, &r->minor) == 2 && mp_sim_release_known(*r);
}

static int run_whatif(mp_command_ctx *c, const mp_command_args *a)
{
	const char *conf_text = mp_arg(a, MP_O_CONF), *format = mp_arg(a, MP_O_FORMAT), *units = mp_arg(a, MP_O_UNITS);
	const char *release = mp_arg(a, MP_O_RELEASE), *capacity = mp_arg(a, MP_O_CAPACITY);
	const char *message = mp_arg(a, MP_O_MESSAGE);
	mp_whatif_opts opts = { .device = mp_arg_device(a, MP_O_DEVICE, -1), .capacity = -1, .device_free = -1,
				.allowed = -1 };
	mp_snapshot *snap = NULL;
	mp_owners *owners = NULL;
	mp_whatif *w = NULL;
	mp_sim_outcome o;
	mp_sim_conf conf;
	enum mp_units u = c->units;
	char name[64];
	mp_diag diag;
	mp_out out;
	bool owned;
	mp_err err;
	int rc;

	if (release != NULL && !parse_release(release, &opts.release))
		return mp_command_error(c, "whatif: --release: '%s' is no release memprof has rules for (2.0 to 2.14)",
					release);
	if (capacity != NULL && (!mp_parse_size(capacity, &opts.capacity) || opts.capacity <= 0))
		return mp_command_error(c, "whatif: --capacity: '%s' is no size", capacity);
	if (message != NULL) {
		mp_oom_message m;

		if (!mp_oom_message_parse(message, &m))
			return mp_command_error(c, "whatif: --message: not a CUDA out-of-memory message");
		if (opts.capacity < 0)
			opts.capacity = m.capacity;
		opts.device_free = m.free;
		opts.allowed = m.allowed; /* a memory fraction's cap, when the message names one */
	}
	if (units != NULL)
		mp_units_parse(units, &u);
	if ((rc = cmd_snapshot_owners_then(c, a, 0, 0, false, &snap, &owned, &owners, NULL, NULL)) != MP_CMD_OK)
		return rc;
	if (opts.release.major == 0)
		parse_release(c->release, &opts.release);
	mp_command_diag(c, &diag);
	if ((err = mp_whatif_open(snap, &opts, &w, &diag)) != MP_OK) {
		cmd_release(snap, owned);
		return err == MP_E_NOTFOUND ? cmd_nothing(c, cmd_label(c, a, 0, name, sizeof name), diag.msg)
					    : mp_command_fail(c, cmd_label(c, a, 0, name, sizeof name), err, &diag);
	}
	conf = w->recorded;
	if (conf_text != NULL && (err = mp_sim_conf_parse(&conf, conf_text, w->release, &diag)) != MP_OK) {
		mp_whatif_close(w);
		cmd_release(snap, owned);
		return mp_command_fail(c, "whatif: --conf", err, &diag);
	}
	if ((err = mp_whatif_try(w, &conf, &o)) != MP_OK) {
		rc = mp_command_fail(c, "whatif", err, NULL);
	} else {
		mp_out_init(&out);
		mp_whatif_report(w, conf_text != NULL ? conf_text : w->recorded_text, &o,
				 format != NULL && strcmp(format, "json") == 0 ? MP_WHATIF_JSON : MP_WHATIF_PLAIN, u, &out);
		rc = out.err != MP_OK ? mp_command_fail(c, "output", out.err, NULL) : cmd_emit(c, &out, false);
		mp_out_free(&out);
	}
	mp_whatif_close(w);
	cmd_release(snap, owned);
	return rc;
}

const mp_command mp_cmd_whatif = {
	"whatif", MP_FRONT_ALL, "what the job would have done under other allocator settings",
	"TARGET [--conf SETTINGS] [--device N] [--release X.Y] [--capacity BYTES] [--message TEXT]\n"
	"       [--format plain|json] [--units U]",
	"Replays the requests the job recorded (the trace of _record_memory_history: every allocation and\n"
	"free, and the request that ran out of memory) through memprof's model of the caching allocator\n"
	"under SETTINGS (PYTORCH_CUDA_ALLOC_CONF's syntax, on top of the job's own), and says whether and\n"
	"where the job would have run out of memory, and its peak of reserved memory. Where the trace holds\n"
	"the step before the OOM (the same call sites allocating again), the rest of the step is replayed\n"
	"too: a setting that serves the request but runs out a few allocations later is told as such.\n"
	"First the model replays the requests under the job's own settings: it must run out at the job's\n"
	"request with the job's segments, else the replay is no evidence and says why. The device is the\n"
	"one at the OOM: what the allocator reserved and what was free then (the trace's oom entry, or\n"
	"--message's numbers). The model is proven against PyTorch's own allocator (tests/allocsim/); its\n"
	"rules follow the release (a core's, --release, or guessed from the snapshot's keys).\n",
	"[snapshot]",
	(const mp_option[]){
		{ MP_O_CONF, MP_OPT_TEXT, NULL, "SETTINGS", "the settings to try (default: the job's own)" },
		{ MP_O_DEVICE, MP_OPT_DEVICE, NULL, "N", "the device (default: the one whose trace ends in an OOM)" },
		{ MP_O_RELEASE, MP_OPT_TEXT, NULL, "X.Y", "the PyTorch release's rules (default: the core's, or guessed)" },
		{ MP_O_CAPACITY, MP_OPT_SIZE, NULL, "BYTES", "the device's memory (for expandable segments' address space)" },
		{ MP_O_MESSAGE, MP_OPT_TEXT, NULL, "TEXT", "the OutOfMemoryError's message (free memory and capacity)" },
		{ MP_O_FORMAT, MP_OPT_CHOICE, "plain json", "F", "plain (default) or json" },
		{ MP_O_UNITS, MP_OPT_CHOICE, MP_UNITS_CHOICES, "U", "units of the sizes (JSON counts bytes)" },
		{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"0 replayed, 1 nothing to replay (no trace), 2 bad input or usage",
	run_whatif, 0, NULL,
};
