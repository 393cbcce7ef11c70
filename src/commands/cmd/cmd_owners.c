/* cmd_owners.c - `owners`: whose memory each block of a core or process is, read from its Python heap:
   per device, bytes per category (MemTracker's: parameters, buffers, gradients, optimizer state, ...) for each
   module, per category, or tensor by tensor. No history recording needed: the tensors themselves say. */
#include <stdlib.h>
#include <string.h>

#include "command_int.h"
#include "mp_owners_report.h"
#include "mp_snapshot_walk.h"

static void read_options(mp_command_ctx *c, const mp_command_args *a, mp_owners_report_opts *o)
{
	const char *by = mp_arg(a, MP_O_BY), *format = mp_arg(a, MP_O_FORMAT), *units = mp_arg(a, MP_O_UNITS),
		   *depth = mp_arg(a, MP_O_DEPTH);

	*o = (mp_owners_report_opts){ .by = MP_OWNERS_BY_MODULE, .format = MP_OWNERS_PLAIN, .depth = -1,
				      .device = mp_arg_device(a, MP_O_DEVICE, c->device), .units = c->units };
	if (by != NULL)
		o->by = strcmp(by, "category") == 0 ? MP_OWNERS_BY_CATEGORY
			: strcmp(by, "tensor") == 0 ? MP_OWNERS_BY_TENSOR
						    : MP_OWNERS_BY_MODULE;
	if (format != NULL)
		o->format = strcmp(format, "rst") == 0 ? MP_OWNERS_RST
			    : strcmp(format, "json") == 0 ? MP_OWNERS_JSON
							  : MP_OWNERS_PLAIN;
	if (depth != NULL)
		o->depth = atoi(depth);
	if (units != NULL)
		mp_units_parse(units, &o->units);
}

static int run_owners(mp_command_ctx *c, const mp_command_args *a)
{
	mp_owners_report_opts opts;
	mp_snapshot *snap = NULL;
	mp_owners *o = NULL;
	mp_target *t;
	mp_walk *w;
	mp_out out;
	mp_diag diag;
	char name[64];
	bool owned;
	mp_err err;
	int rc = c->front->walked(c, 0, a->npos > 0 ? a->pos[0] : NULL, &t, &w, &owned);

	if (rc != MP_CMD_OK)
		return rc;
	read_options(c, a, &opts);
	mp_command_diag(c, &diag);
	if ((err = mp_snapshot_from_walk(w, t, MP_SW_NO_FRAMES, &snap, &diag)) == MP_OK)
		err = mp_owners_read(t, snap, NULL, &o, &diag);
	if (owned) {
		mp_walk_free(w);
		mp_target_close(t);
	}
	if (err != MP_OK) {
		mp_snapshot_free(snap);
		return mp_command_fail(c, cmd_label(c, a, 0, name, sizeof name), err, &diag);
	}
	mp_out_init(&out);
	mp_owners_report(o, snap, &opts, &out);
	rc = out.err != MP_OK ? mp_command_fail(c, "output", out.err, NULL) : cmd_emit(c, &out, false);
	mp_out_free(&out);
	mp_owners_free(o);
	mp_snapshot_free(snap);
	return rc;
}

const mp_command mp_cmd_owners = {
	"owners", MP_FRONT_ALL, "whose memory it is: modules, parameters, gradients, optimizer state (Python heap)",
	"TARGET [--by module|category|tensor] [--depth N] [--device N|all]\n"
	"       [--format plain|rst|json] [--units U]",
	"Reads the Python heap of the target (a core dump or a live process; no history recording\n"
	"needed): every torch tensor the garbage collector tracks, the nn.Modules that name them\n"
	"(parameters and buffers, as named_parameters() names them: model.encoder.layers.0.linear1.weight),\n"
	"each parameter's gradient, each optimizer's state (optimizer.state[model.head.bias].exp_avg),\n"
	"and the other Python tensors, named by the global or local variable that holds them (or an\n"
	"item of a list, tuple or dict one holds: pooled[0]). Each\n"
	"active block goes, whole, to the owner of highest priority among the storages in it\n"
	"(parameter, buffer, gradient, optimizer_state, activation, other_python), else to\n"
	"not_python: memory no Python-visible tensor reaches (saved for backward, held by C++, cached\n"
	"workspaces). A module's row counts its own tensors and their gradients and optimizer state;\n"
	"--depth N folds modules deeper than N names below the root into their ancestor. Every\n"
	"device's rows add up to its active bytes. --by category gives one row per category,\n"
	"--by tensor one line per tensor (kind, device, address, size, dtype, shape, name).\n"
	"CPU tensors (e.g. Adam's step counters) are listed under cpu with their storages' sizes.\n"
	"The roots are named by globals of __main__, then by local variables of the running frames (and\n"
	"the items of the lists, tuples and dicts they hold), else TYPE@ADDRESS. Nothing is written to\n"
	"the target and no code runs in it.\n",
	"[snapshot]",
	(const mp_option[]){
		{ MP_O_BY, MP_OPT_CHOICE, "module category tensor", "BY", "rows: modules (default), categories or tensors" },
		{ MP_O_DEPTH, MP_OPT_COUNT, NULL, "N", "fold modules more than N names below their root" },
		{ MP_O_DEVICE, MP_OPT_DEVICE, NULL, "N", "only device N (default: all)" },
		{ MP_O_FORMAT, MP_OPT_CHOICE, "plain rst json", "F", "plain (default), rst or json" },
		{ MP_O_UNITS, MP_OPT_CHOICE, MP_UNITS_CHOICES, "U", "units of the tables (JSON counts bytes)" },
		{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"0 done, 2 bad input or usage, no CPython or no torch tensor in the target",
	run_owners, 0, NULL,
};
