/* fuzz_front.c - a front end of the command table whose every snapshot is the fuzz input (fuzz_front.h). */
#include "fuzz_front.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_command.h"
#include "mp_snapshot_file.h"

struct fuzz_data {
	const uint8_t *data;
	size_t len;
};

_Noreturn void fuzz_fail(const char *what)
{
	fprintf(stderr, "fuzz: %s\n", what);
	abort();
}

static int snapshot(mp_command_ctx *c, int i, const char *word, unsigned load_flags, unsigned walk_flags,
		    mp_snapshot **snap, bool *owned)
{
	const struct fuzz_data *in = c->data;
	mp_diag diag = { 0 };

	(void)i, (void)word, (void)walk_flags;
	*owned = true;
	if (mp_snapshot_load_mem("input", in->data, in->len, load_flags, snap, &diag) != MP_OK)
		return mp_command_error(c, "%s", diag.msg[0] ? diag.msg : "not a snapshot");
	return MP_CMD_OK;
}

/* Cores and processes are not what these harnesses read (fuzz_core.c and fuzz_walker.c do). */
static int walked(mp_command_ctx *c, int i, const char *word, mp_target **t, mp_walk **w, bool *owned)
{
	(void)i, (void)word, (void)t, (void)w;
	*owned = true;
	return mp_command_error(c, "no core here");
}

static int target(mp_command_ctx *c, int i, const char *word, mp_target **t, bool *owned)
{
	(void)i, (void)word, (void)t;
	*owned = true;
	return mp_command_error(c, "no core here");
}

static const char *label(mp_command_ctx *c, int i, const char *word, char *buf, size_t size)
{
	(void)c, (void)i, (void)word;
	snprintf(buf, size, "input");
	return buf;
}

static int emit(mp_command_ctx *c, const mp_out *text)
{
	(void)c;
	/* Touch every byte: an output built past its end shows here under ASan. */
	volatile unsigned char sum = 0;
	for (size_t i = 0; i < text->len; i++)
		sum ^= (unsigned char)text->data[i];
	(void)sum;
	return MP_CMD_OK;
}

static void warn(void *ctx, const char *line)
{
	(void)ctx;
	if (strlen(line) > 4096)
		fuzz_fail("a warning longer than 4 KiB");
}

static const mp_command_front fuzz_front = {
	.mask = MP_FRONT_CLI,
	.snapshot = snapshot,
	.walked = walked,
	.target = target,
	.label = label,
	.emit = emit,
	.warn = warn,
};

int fuzz_command(const uint8_t *data, size_t len, const char *const *words)
{
	struct fuzz_data in = { data, len };
	const mp_command *cmd = mp_command_find(mp_commands, mp_ncommands, words[0], MP_FRONT_CLI, NULL);
	mp_command_args a = { 0 };
	mp_command_ctx c = { 0 };
	char *argv[16];
	int argc = 0, rc;

	if (cmd == NULL)
		fuzz_fail("a harness names an unknown command");
	for (const char *const *w = words + 1; *w != NULL && argc < 15; w++)
		argv[argc++] = (char *)*w;
	argv[argc] = NULL;
	c.front = &fuzz_front;
	c.data = &in;
	c.units = MP_UNITS_AUTO;
	c.device = -1;
	c.name = cmd->name;
	if (mp_command_parse(&c, cmd, NULL, argc, argv, &a) != MP_CMD_OK)
		fuzz_fail(c.error);
	rc = cmd->run(&c, &a);
	if (rc != MP_CMD_OK && rc != MP_CMD_NOTHING && rc != MP_CMD_BAD)
		fuzz_fail("a command returned a status the CLI never returns");
	if (rc == MP_CMD_BAD && c.error[0] == '\0')
		fuzz_fail("a command failed without saying why");
	return rc;
}
