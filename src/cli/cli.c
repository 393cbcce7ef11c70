/* cli.c - shared plumbing of the memprof subcommands. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame_svg.h"
#include "mp_category.h"
#include "mp_file.h"
#include "mp_snapshot_file.h"

/* Write TEXT to stderr with control characters escaped, so that a message
   naming odd keys or file names stays on one line. */
static void put_escaped(const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
		if (*p < 0x20 || *p == 0x7f)
			fprintf(stderr, "\\x%02x", *p);
		else
			fputc(*p, stderr);
	}
}

void cli_error(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fputs("memprof: ", stderr);
	put_escaped(msg);
	fputc('\n', stderr);
}

/* Warnings wait until the command is done: after a failure only its one-line
   error is printed. */
#define MAX_WARNINGS 16

static char warnings[MAX_WARNINGS][256];
static unsigned nwarnings;

static void keep_warning(void *ctx, const char *line)
{
	(void)ctx;
	if (nwarnings < MAX_WARNINGS)
		snprintf(warnings[nwarnings], sizeof warnings[0], "%s", line);
	nwarnings++;
}

void cli_warnings_finish(bool print)
{
	for (unsigned i = 0; print && i < nwarnings && i < MAX_WARNINGS; i++) {
		fputs("memprof: warning: ", stderr);
		put_escaped(warnings[i]);
		fputc('\n', stderr);
	}
	if (print && nwarnings > MAX_WARNINGS)
		fprintf(stderr, "memprof: warning: %u more warnings\n", nwarnings - MAX_WARNINGS);
	nwarnings = 0;
}

void cli_diag_init(mp_diag *diag)
{
	memset(diag, 0, sizeof *diag);
	diag->warn = keep_warning;
}

/* Long options and the group each belongs to. */
enum { OPT_TO = 256, OPT_PID, OPT_STOP, OPT_SYSROOT, OPT_SOLIB, OPT_LAYOUT, OPT_DEVICE, OPT_ABBREV, OPT_STATS,
       OPT_SCHEME, OPT_RULES, OPT_UNITS, OPT_FORMAT, OPT_EXPLAIN, OPT_BLOCKS, OPT_SITES, OPT_BY, OPT_SEGSUM };

static const struct option longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "output", required_argument, NULL, 'o' },
	{ "to", required_argument, NULL, OPT_TO },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "stop", no_argument, NULL, OPT_STOP },
	{ "sysroot", required_argument, NULL, OPT_SYSROOT },
	{ "solib-path", required_argument, NULL, OPT_SOLIB },
	{ "layout", required_argument, NULL, OPT_LAYOUT },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "abbreviated", no_argument, NULL, OPT_ABBREV },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "scheme", required_argument, NULL, OPT_SCHEME },
	{ "rules", required_argument, NULL, OPT_RULES },
	{ "units", required_argument, NULL, OPT_UNITS },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "explain", required_argument, NULL, OPT_EXPLAIN },
	{ "blocks", no_argument, NULL, OPT_BLOCKS },
	{ "sites", optional_argument, NULL, OPT_SITES },
	{ "by", required_argument, NULL, OPT_BY },
	{ "segsum", no_argument, NULL, OPT_SEGSUM },
	{ NULL, 0, NULL, 0 },
};

static unsigned option_group(int c)
{
	switch (c) {
	case 'o':
		return CLI_O_OUTPUT;
	case OPT_TO:
		return CLI_O_TO;
	case OPT_PID:
	case OPT_STOP:
	case OPT_SYSROOT:
	case OPT_SOLIB:
	case OPT_LAYOUT:
		return CLI_O_TARGET;
	case OPT_DEVICE:
		return CLI_O_DEVICE;
	case OPT_ABBREV:
		return CLI_O_ABBREV;
	case OPT_STATS:
		return CLI_O_STATS;
	case OPT_SCHEME:
	case OPT_RULES:
	case OPT_UNITS:
	case OPT_FORMAT:
	case OPT_EXPLAIN:
	case OPT_BLOCKS:
	case OPT_SITES:
	case OPT_BY:
	case OPT_SEGSUM:
		return CLI_O_CATEGORIES;
	}
	return 0;
}

/* A whole decimal number in [MIN, MAX]. */
static bool parse_long(const char *s, long min, long max, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return errno == 0 && end != s && *end == '\0' && *out >= min && *out <= max;
}

static int usage_error(const struct cli_command *cmd, const char *fmt, const char *arg)
{
	char msg[512];

	snprintf(msg, sizeof msg, fmt, arg);
	cli_error("%s: %s", cmd->name, msg);
	fprintf(stderr, "Try 'memprof %s --help'.\n", cmd->name);
	return CLI_BAD;
}

static bool set_option(struct cli_opts *opts, int c, const char *arg)
{
	long v;

	switch (c) {
	case 'o':
		opts->output = arg;
		break;
	case OPT_TO:
		opts->to = arg;
		break;
	case OPT_PID:
		if (!parse_long(arg, 1, 0x7fffffff, &v))
			return false;
		opts->pid = (int)v;
		break;
	case OPT_STOP:
		opts->stop = true;
		break;
	case OPT_SYSROOT:
		opts->sysroot = arg;
		break;
	case OPT_SOLIB:
		opts->solib_path = arg;
		break;
	case OPT_LAYOUT:
		opts->layout = arg;
		break;
	case OPT_DEVICE:
		if (!parse_long(arg, 0, 1023, &opts->device))
			return false;
		opts->device_set = true;
		break;
	case OPT_ABBREV:
		opts->abbreviated = true;
		break;
	case OPT_STATS:
		opts->stats = true;
		break;
	case OPT_SCHEME:
		opts->scheme = arg;
		break;
	case OPT_RULES:
		opts->rules = arg;
		break;
	case OPT_UNITS:
		opts->units = arg;
		break;
	case OPT_FORMAT:
		opts->format = arg;
		break;
	case OPT_EXPLAIN:
		opts->explain = arg;
		break;
	case OPT_BLOCKS:
		opts->blocks = true;
		break;
	case OPT_SITES:
		opts->sites = true;
		opts->sites_count = arg;
		break;
	case OPT_BY:
		opts->by = arg;
		break;
	case OPT_SEGSUM:
		opts->segsum = true;
		break;
	}
	return true;
}

int cli_parse(const struct cli_command *cmd, int argc, char **argv, int min, int max,
	      struct cli_opts *opts, bool *done)
{
	int c, ntargets, li = -1;

	memset(opts, 0, sizeof *opts);
	*done = false;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "ho:", longopts, &li)) != -1) {
		char name[64];

		if (c == 'h') {
			fputs(cmd->usage, stdout);
			*done = true;
			return CLI_OK;
		}
		if (c == '?' || c == ':')
			return usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
		/* A known option this command does not take: name it as written (its value may follow). */
		if (li >= 0)
			snprintf(name, sizeof name, "--%s", longopts[li].name);
		else
			snprintf(name, sizeof name, "-%c", c);
		li = -1;
		if ((option_group(c) & cmd->options) == 0)
			return usage_error(cmd, "unknown option '%s'", name);
		/* --sites [N]: getopt takes an optional value only as --sites=N; the next word is
		   the count too when it is one. */
		if (c == OPT_SITES && optarg == NULL && optind < argc && mp_category_is_count(argv[optind]))
			optarg = argv[optind++];
		if (!set_option(opts, c, optarg))
			return usage_error(cmd, "bad value '%s'", optarg);
	}
	opts->args = argv + optind;
	opts->nargs = argc - optind;
	ntargets = cli_ntargets(opts);
	if (ntargets < min || ntargets > max)
		return usage_error(cmd, "expected %s",
				   min == max ? (min == 1 ? "one target" : "two targets") : "other arguments");
	return CLI_OK;
}

bool cli_load(const char *path, unsigned flags, mp_snapshot **out)
{
	mp_diag diag;
	mp_err err;

	cli_diag_init(&diag);
	err = mp_snapshot_load(path, flags, out, &diag);
	if (err == MP_OK)
		return true;
	if (diag.msg[0] != '\0')
		cli_error("%s", diag.msg);
	else
		cli_error("'%s': %s", path, mp_strerror(err));
	return false;
}

int cli_fail(const char *what, mp_err err, const mp_diag *diag)
{
	if (diag != NULL && diag->msg[0] != '\0')
		cli_error("%s: %s", what, diag->msg);
	else
		cli_error("%s: %s", what, mp_strerror(err));
	return CLI_BAD;
}

int cli_write_stdout(const mp_out *out)
{
	if (out->err != MP_OK)
		return cli_fail("output", out->err, NULL);
	if ((out->len > 0 && fwrite(out->data, 1, out->len, stdout) != out->len) ||
	    fflush(stdout) != 0) {
		cli_error("cannot write to standard output: %s", strerror(errno));
		return CLI_BAD;
	}
	return CLI_OK;
}

/* Write OUT's bytes to PATH ("-" = stdout) through a temporary name, so that a
   failed conversion never leaves half a file behind. */
int cli_save(const char *path, const mp_out *out)
{
	mp_diag diag;
	mp_err err;

	if (strcmp(path, "-") == 0)
		return cli_write_stdout(out);
	cli_diag_init(&diag);
	if ((err = mp_file_write(path, out->data, out->len, &diag)) != MP_OK) {
		cli_error("%s", diag.msg[0] != '\0' ? diag.msg : mp_strerror(err));
		return CLI_BAD;
	}
	return CLI_OK;
}

int cli_export(mp_snapshot *snap, enum mp_format fmt, const char *path, const char *what)
{
	mp_out out;
	mp_diag diag;
	mp_err err;
	int rc;

	mp_out_init(&out);
	cli_diag_init(&diag);
	err = mp_snapshot_save(snap, fmt, &out, &diag);
	rc = err != MP_OK ? cli_fail(what, err, &diag) : cli_save(path, &out);
	mp_out_free(&out);
	mp_snapshot_free(snap);
	return rc;
}

int cli_emit_flame(mp_out *folded, const char *path, const char *title)
{
	mp_diag diag;
	mp_err err;

	if (folded->err != MP_OK)
		return cli_fail("output", folded->err, NULL);
	if (path == NULL || strcmp(path, "-") == 0)
		return cli_write_stdout(folded);
	cli_diag_init(&diag);
	if ((err = mp_flame_write(folded->data, folded->len, path, title, &diag)) != MP_OK)
		return cli_fail("flame graph", err, &diag);
	return CLI_OK;
}
