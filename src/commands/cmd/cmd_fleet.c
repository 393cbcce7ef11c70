/* cmd_fleet.c - `fleet`: the memory of a distributed job, rank by rank, side by side: the ranks that stand out
   and why, from a directory of rank-R/ snapshots (or rank files, or files one by one); src/fleet. */
#include <stdlib.h>
#include <string.h>

#include "command_int.h"
#include "mp_fleet.h"
#include "mp_snapshot_walk.h"

/* What load_core needs: the run, and its words (a core is read as the command's SNAPSHOT word would be). */
struct core_ctx {
	mp_command_ctx *c;
	const mp_command_args *a;
};

/* A rank's core through the front end, its owners read from its Python heap and written into its blocks. */
static mp_err load_core(void *ctx, const char *path, bool frames, mp_snapshot **out, bool *owned, mp_diag *diag)
{
	struct core_ctx *cc = ctx;
	mp_command_args one = *cc->a;

	if (mp_file_kind(path) != MP_FILE_CORE)
		return mp_fail(diag, MP_E_FORMAT, "'%s': an ELF file but not a core dump", path);
	one.pos[0] = (char *)path;
	one.npos = 1;
	one.nmore = 0;
	if (cmd_snapshot_annotated(cc->c, &one, 0, frames ? 0 : MP_SW_NO_FRAMES, true, out, owned) == MP_CMD_OK)
		return MP_OK;
	mp_fail(diag, MP_E_FORMAT, "%s", cc->c->error);
	cc->c->error[0] = '\0';
	return MP_E_FORMAT;
}

static void read_options(mp_command_ctx *c, const mp_command_args *a, mp_fleet_opts *o, mp_fleet_report_opts *r)
{
	const char *format = mp_arg(a, MP_O_FORMAT), *units = mp_arg(a, MP_O_UNITS), *depth = mp_arg(a, MP_O_DEPTH),
		   *top = mp_arg(a, MP_O_TOP);

	mp_fleet_opts_init(o);
	o->device = mp_arg_device(a, MP_O_DEVICE, -1);
	o->frames = !mp_arg_given(a, MP_O_NO_FRAMES);
	if (depth != NULL)
		o->depth = atoi(depth);
	*r = (mp_fleet_report_opts){ .format = MP_FLEET_PLAIN, .units = c->units, .top = 10 };
	if (format != NULL)
		mp_fleet_format_parse(format, &r->format);
	if (units != NULL)
		mp_units_parse(units, &r->units);
	if (top != NULL)
		r->top = (size_t)atol(top);
}

/* The report of F, printed or written to -o FILE. */
static int report(mp_command_ctx *c, const mp_command_args *a, const mp_fleet *f, const mp_fleet_report_opts *r)
{
	const char *path = mp_arg(a, MP_O_OUTPUT);
	mp_out out;
	int rc;

	mp_out_init(&out);
	if (mp_fleet_report(f, r, &out) != MP_OK)
		rc = mp_command_fail(c, "fleet: output", out.err, NULL);
	else
		rc = path != NULL ? cmd_write_file(c, "fleet", path, &out) : cmd_emit(c, &out, false);
	mp_out_free(&out);
	return rc;
}

static int run_fleet(mp_command_ctx *c, const mp_command_args *a)
{
	int n = a->npos + a->nmore, rc;
	const char **targets = malloc((size_t)(n > 0 ? n : 1) * sizeof *targets);
	struct core_ctx cc = { c, a };
	mp_fleet_report_opts r;
	mp_fleet_opts o;
	mp_fleet *f = NULL;
	mp_diag diag;
	mp_err err;

	if (targets == NULL)
		return mp_command_error(c, "fleet: out of memory");
	for (int i = 0; i < n; i++)
		targets[i] = mp_command_word(a, i);
	read_options(c, a, &o, &r);
	o.load_other = load_core;
	o.load_ctx = &cc;
	mp_command_diag(c, &diag);
	if ((err = mp_fleet_find(targets, (size_t)n, &f, &diag)) == MP_OK)
		err = mp_fleet_read(f, &o, &diag);
	rc = err != MP_OK ? mp_command_fail(c, "fleet", err, &diag) : report(c, a, f, &r);
	mp_fleet_free(f);
	free(targets);
	return rc;
}

const mp_command mp_cmd_fleet = {
	"fleet", MP_FRONT_ALL, "a distributed job's memory rank by rank: the ranks that stand out, and why",
	"TARGET... [--format plain|rst|json|html] [-o FILE] [--top N] [--depth N]\n"
	"       [--device N|all] [--units U] [--no-frames]",
	"Reads the snapshot of every rank of a job and sets the ranks side by side. A TARGET is a\n"
	"directory of rank-R/ directories (rank R: the first of snapshot.pickle, snapshot.json, *.pickle,\n"
	"core, core.* in it, and the oom-N.json or oom-N.txt that memprof watch left there), a directory\n"
	"of rank files (rank-3.pickle is rank 3), or a file: files given one by one are ranks 0, 1, ...\n"
	"Ranks are read on worker threads (MEMPROF_THREADS, else one per processor), each snapshot\n"
	"reduced to its figures and freed. Per rank: bytes reserved, allocated, active, free inside\n"
	"the segments and the largest free block, blocks; bytes by category (the blocks' own, as\n"
	"snapshot save --owners writes them, else from their frames), by module (the owner's module,\n"
	"folded at --depth names below its root; default 1) and by call site (the place of the frames).\n"
	"A rank is an outlier when a figure lies further from the median over the ranks than\n"
	"max(3.5 x 1.4826 x MAD, 1 MiB, 5% of the median); for each, the line that says why and its\n"
	"differences from the median by module and by call site (--top N rows). A rank that cannot\n"
	"be read is a warning, the others' result still given. --format html -o FILE.html writes one\n"
	"self-contained page with a heat map of ranks by category. --no-frames reads no frames:\n"
	"faster, no call sites. JSON: src/fleet/FLEET.md.\n",
	"file...",
	(const mp_option[]){
		{ MP_O_FORMAT, MP_OPT_CHOICE, "plain rst json html", "F", "plain (default), rst, json or html" },
		{ MP_O_OUTPUT, MP_OPT_FILE, NULL, "FILE", "write the report to FILE (default: print it)" },
		{ MP_O_TOP, MP_OPT_COUNT, NULL, "N", "rows of each difference table, outliers detailed (default 10)" },
		{ MP_O_DEPTH, MP_OPT_COUNT, NULL, "N", "fold modules more than N names below their root (default 1)" },
		{ MP_O_DEVICE, MP_OPT_DEVICE, NULL, "N", "only device N of each rank (default: all)" },
		{ MP_O_UNITS, MP_OPT_CHOICE, MP_UNITS_CHOICES, "U", "units of the tables (JSON counts bytes)" },
		{ MP_O_NO_FRAMES, MP_OPT_FLAG, NULL, NULL, "read no frames: faster, no call sites" },
		{ MP_O_NONE, MP_OPT_FLAG, NULL, NULL, NULL },
	},
	"0 done (at least one rank read), 2 bad input or usage, or no rank read",
	run_fleet, 0, NULL,
};
