/* cli.c - the command line's messages and warnings. */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mp_file.h"

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

void cli_keep_warning(void *ctx, const char *line)
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

int cli_export(mp_command_ctx *c, mp_snapshot *snap, enum mp_format fmt, const char *path, const char *what)
{
	mp_out out;
	mp_diag diag;
	mp_err err;
	int rc;

	mp_out_init(&out);
	mp_command_diag(c, &diag);
	err = mp_snapshot_save(snap, fmt, &out, &diag);
	if (err != MP_OK)
		rc = mp_command_fail(c, what, err, &diag);
	else if (strcmp(path, "-") == 0)
		rc = c->front->emit(c, &out);
	else if ((err = mp_file_write(path, out.data, out.len, &diag)) != MP_OK)
		rc = mp_command_error(c, "%s", diag.msg[0] != '\0' ? diag.msg : mp_strerror(err));
	else
		rc = MP_CMD_OK;
	mp_out_free(&out);
	mp_snapshot_free(snap);
	return rc;
}
