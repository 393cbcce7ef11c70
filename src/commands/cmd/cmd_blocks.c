/* cmd_blocks.c - `blocks` (the allocator's blocks, filtered) and `block ADDRESS` (who owns an
   address). */
#include <stdint.h>
#include <stdlib.h>

#include "command_int.h"
#include "mp_block_query.h"
#include "mp_owners_report.h"

/* The filter A's options describe (the parser checked each value). */
static int read_filter(mp_command_ctx *c, const mp_command_args *a, mp_block_filter *f)
{
	const char *stream = mp_arg(a, MP_O_STREAM), *state = mp_arg(a, MP_O_STATE);
	const char *min_size = mp_arg(a, MP_O_MIN_SIZE), *top = mp_arg(a, MP_O_TOP);
	mp_diag diag;
	mp_err err;
	long n;

	mp_block_filter_init(f);
	f->device = mp_arg_device(a, MP_O_DEVICE, c->device);
	if (stream != NULL && mp_parse_long(stream, &n)) {
		f->any_stream = false;
		f->stream = n;
	}
	mp_command_diag(c, &diag);
	if (state != NULL && (err = mp_block_states_parse(state, &f->states, &diag)) != MP_OK)
		return mp_command_fail(c, "blocks: --state", err, &diag);
	if (min_size != NULL)
		mp_parse_size(min_size, &f->min_size);
	if (top != NULL && mp_parse_long(top, &n))
		f->top = (size_t)n;
	return MP_CMD_OK;
}

static int run_blocks(mp_command_ctx *c, const mp_command_args *a)
{
	mp_block_filter f;
	mp_snapshot *snap;
	size_t nmatched = 0;
	char buf[64];
	mp_out out;
	mp_diag diag;
	mp_err err;
	bool owned;
	int rc;

	if ((rc = read_filter(c, a, &f)) != MP_CMD_OK ||
	    (rc = cmd_snapshot_annotated(c, a, 0, 0, !mp_arg_given(a, MP_O_NO_OWNERS), &snap, &owned)) != MP_CMD_OK)
		return rc;
	mp_out_init(&out);
	mp_command_diag(c, &diag);
	if ((err = mp_analysis_blocks(snap, &f, c->units, &out, &nmatched, &diag)) != MP_OK)
		rc = mp_command_fail(c, cmd_label(c, a, 0, buf, sizeof buf), err, &diag);
	else
		rc = cmd_emit(c, &out, false);
	if (rc == MP_CMD_OK && nmatched == 0)
		rc = MP_CMD_NOTHING;
	mp_out_free(&out);
	cmd_release(snap, owned);
	return rc;
}

static int run_block(mp_command_ctx *c, const mp_command_args *a)
{
	unsigned long long addr;
	mp_snapshot *snap;
	mp_owners *owners;
	char *end, buf[64];
	mp_out out;
	mp_diag diag;
	mp_err err;
	bool owned, found = false;
	int rc;

	addr = strtoull(a->pos[0], &end, 0);
	if (end == a->pos[0] || *end != '\0')
		return mp_command_error(c, "block: '%s' is not an address", a->pos[0]);
	if ((rc = cmd_snapshot_owners(c, a, 1, 0, &snap, &owned, &owners)) != MP_CMD_OK)
		return rc;
	mp_out_init(&out);
	mp_command_diag(c, &diag);
	if ((err = mp_analysis_block_at(snap, (uint64_t)addr, c->units, &out, &found, &diag)) != MP_OK) {
		rc = mp_command_fail(c, cmd_label(c, a, 1, buf, sizeof buf), err, &diag);
	} else if (!found) {
		rc = mp_command_error(c, "block: 0x%llx is in no segment of the caching allocator", addr);
	} else {
		if (owners != NULL)
			mp_owners_describe_addr(owners, snap, (uint64_t)addr, c->units, &out);
		rc = cmd_emit(c, &out, false);
	}
	mp_out_free(&out);
	mp_owners_free(owners);
	cmd_release(snap, owned);
	return rc;
}

const mp_command mp_cmd_blocks = {
	"blocks", MP_FRONT_ALL, "the allocator's blocks, filtered",
	"SNAPSHOT [--device N|all] [--stream S] [--state LIST] [--min-size SIZE] [--top N] [--no-owners]",
	"One line per block that passes the filters: its address, size, state, stream and segment, and the frame\n"
	"that allocated it: the first of the user's own code, else the first _memory_viz.py shows; on a core\n"
	"or a live process also the tensor that owns it, from the Python heap (--no-owners: not read).\n"
	"Sizes follow --units on the command line, 'set memprof units' in the debugger.\n",
	"[snapshot]",
	(const mp_option[]){
		{ MP_O_DEVICE, MP_OPT_DEVICE, NULL, "N",
		  "only device N, or all (default: every device; in the debugger 'set memprof device')" },
		{ MP_O_STREAM, MP_OPT_INTEGER, NULL, "S", "only blocks of stream S" },
		{ MP_O_STATE, MP_OPT_TEXT, "allocated pending inactive active active_allocated active_pending_free", "LIST",
		  "comma-separated states: allocated, pending (active_pending_free), inactive, active (allocated\n"
		  "and pending)" },
		{ MP_O_MIN_SIZE, MP_OPT_SIZE, NULL, "SIZE", "only blocks of SIZE or more: 4096, 64KiB, 1.5MiB, ..." },
		{ MP_O_TOP, MP_OPT_COUNT, NULL, "N", "the N largest" },
		{ MP_O_NO_OWNERS, MP_OPT_FLAG, NULL, NULL, "on a core or a live process, do not read the Python heap" },
		{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"0 done, 1 no block passed, 2 bad input or usage",
	run_blocks, 0, NULL,
};

const mp_command mp_cmd_block = {
	"block", MP_FRONT_ALL, "which segment and block own an address",
	"ADDRESS SNAPSHOT",
	"The segment, the block, ADDRESS's offset in it, its state and sizes, and its allocation frames\n"
	"when they were recorded. On a core or a live process, also its owner from the Python heap:\n"
	"the tensors whose storage holds ADDRESS (model.layers.3.attn.q_proj.weight, its .grad,\n"
	"optimizer.state[...].exp_avg, a variable), as `owners` names them. In the debugger ADDRESS is\n"
	"an expression (a pointer variable, tensor.data_ptr() as a number, ...).\n",
	"address [snapshot]", NULL, "0 done, 2 bad input, usage, or an address in no segment",
	run_block, MP_CMD_EXPRESSION, NULL,
};
