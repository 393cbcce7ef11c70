/* cli.c - shared plumbing of the memprof subcommands. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame_svg.h"
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

int cli_parse(const struct cli_command *cmd, int argc, char **argv, int min, int max,
	      struct cli_opts *opts, bool *done)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "output", required_argument, NULL, 'o' },
		{ "to", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(opts, 0, sizeof *opts);
	*done = false;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(cmd->usage, stdout);
			*done = true;
			return CLI_OK;
		case 'o':
			opts->output = optarg;
			break;
		case 't':
			opts->to = optarg;
			break;
		default:
			cli_error("%s: unknown option '%s'", cmd->name, argv[optind - 1]);
			fprintf(stderr, "Try 'memprof %s --help'.\n", cmd->name);
			return CLI_BAD;
		}
	}
	opts->args = argv + optind;
	opts->nargs = argc - optind;
	if (opts->nargs < min || opts->nargs > max) {
		cli_error("%s: expected %s", cmd->name,
			  min == max ? (min == 1 ? "one file" : "two files") : "other arguments");
		fprintf(stderr, "Try 'memprof %s --help'.\n", cmd->name);
		return CLI_BAD;
	}
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

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
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

static int write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (f == NULL) {
		cli_error("cannot write '%s': %s", path, strerror(errno));
		return CLI_BAD;
	}
	if (fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		cli_error("cannot write '%s': %s", path, strerror(errno));
		return CLI_BAD;
	}
	return CLI_OK;
}

int cli_emit_flame(mp_out *folded, const char *path, const char *title)
{
	mp_out svg;
	mp_diag diag;
	mp_err err;
	int rc;

	if (folded->err != MP_OK)
		return cli_fail("output", folded->err, NULL);
	if (path == NULL)
		return cli_write_stdout(folded);
	if (!ends_with(path, ".svg"))
		return write_file(path, folded->data ? folded->data : "", folded->len);
	cli_diag_init(&diag);
	mp_out_init(&svg);
	err = mp_flame_svg(folded->data ? folded->data : "", folded->len, title, "bytes", &svg, &diag);
	if (err == MP_OK && svg.err != MP_OK)
		err = svg.err;
	rc = err == MP_OK ? write_file(path, svg.data, svg.len) : cli_fail("svg", err, &diag);
	mp_out_free(&svg);
	return rc;
}
