/* memprof.c - the memprof command line: a command's words through the command table's parser,
   then its handler, with the command line's targets, output and messages. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_prefetch.h"

/* The command line's list (cli_commands). */
static const mp_command *const *commands;
static size_t ncommands;

static void usage(FILE *to)
{
	fputs("usage: memprof <command> [options] TARGET...\n"
	      "\n"
	      "Read PyTorch CUDA caching-allocator snapshots (the pickles that\n"
	      "torch.cuda.memory._snapshot()/_dump_snapshot() write, or memprof JSON),\n"
	      "core dumps and live processes, and explain them.\n"
	      "\n"
	      "commands:\n",
	      to);
	for (size_t i = 0; i < ncommands; i++)
		if (commands[i]->alias_of == NULL)
				fprintf(to, "  %-14s %s\n", commands[i]->name, commands[i]->summary);
	fputs("\n'memprof COMMAND -h' describes one command. 'memprof snapshot TARGET -o FILE' is short for\n"
	      "'memprof snapshot save TARGET FILE'. 'memprof -V' (--version) prints the version.\n", to);
}

static void help(const mp_command *cmd, const mp_option *extra)
{
	mp_out out;

	mp_out_init(&out);
	mp_out_printf(&out, "usage: memprof %s%s%s\n\n", cmd->name, cmd->synopsis[0] != '\0' ? " " : "", cmd->synopsis);
	mp_command_help_body(cmd, extra, &out);
	if (extra != NULL)
		mp_out_puts(&out, "SNAPSHOT (TARGET) is a snapshot pickle or memprof JSON ('-' reads standard input), a\n"
				  "core dump of a PyTorch process, or a live process given as --pid PID.\n");
	mp_out_printf(&out, "Exit status: %s.\n", cmd->exit_status);
	if (out.err == MP_OK)
		fwrite(out.data, 1, out.len, stdout);
	mp_out_free(&out);
}

/* Print C's error about the words of command NAME, and where its help is when the words do not fit. */
static int usage_failed(const mp_command_ctx *c, const char *name)
{
	cli_error("%s", c->error);
	if (c->usage)
		fprintf(stderr, "Try 'memprof %s --help'.\n", name);
	return MP_CMD_BAD;
}

static int run(const mp_command *cmd, int argc, char **argv)
{
	const mp_option *extra = mp_command_takes(cmd, "snapshot") ? cli_target_options : NULL;
	mp_command_args a = { 0 };
	mp_command_ctx c;
	int rc;

	cli_ctx_init(&c, &a);
	c.name = cmd->name;
	rc = mp_command_parse(&c, cmd, extra, argc, argv, &a);
	if (rc == MP_CMD_OK && a.help) {
		help(cmd, extra);
		return MP_CMD_OK;
	}
	if (rc == MP_CMD_OK)
		rc = cli_check_targets(&c, &a);
	if (rc != MP_CMD_OK)
		return usage_failed(&c, cmd->name);
	rc = mp_command_run(&c, &a);
	cli_ctx_finish(&c);
	cli_prefetch_drop();
	if (rc != MP_CMD_OK && c.error[0] != '\0')
		cli_error("%s", c.error);
	return rc;
}

static int save_one(int argc, char **argv)
{
	return run(&mp_cmd_snapshot_save, argc, argv);
}

/* `snapshot save WORDS`, or the short form `snapshot WORDS -o FILE` as `snapshot save WORDS FILE` (with --ranks,
   FILE is a directory: cli_ranks.c). */
static int snapshot(int argc, char **argv)
{
	const mp_command *save = &mp_cmd_snapshot_save;
	char *words[256], *file = NULL;
	bool ranks = false;
	int n = 0;

	if (argc >= 1 && strcmp(argv[0], "save") == 0)
		return run(save, argc - 1, argv + 1);
	if (argc > (int)(sizeof words / sizeof words[0]) - 1) {
		cli_error("snapshot: too many arguments");
		return MP_CMD_BAD;
	}
	for (int i = 0; i < argc; i++) {
		if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) && i + 1 < argc)
			file = argv[++i];
		else if (strncmp(argv[i], "-o", 2) == 0 && argv[i][2] != '\0')
			file = argv[i] + 2;
		else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return run(save, 1, argv + i);
		else if ((words[n++] = argv[i]) != NULL && strcmp(argv[i], "--ranks") == 0)
			ranks = true;
	}
	if (ranks && file != NULL)
		return cli_snapshot_ranks(n, words, file, save_one);
	if (file == NULL) {
		mp_command_args a = { 0 };
		mp_command_ctx c;

		/* its words' errors first (an unknown option), as `snapshot save` would say them */
		cli_ctx_init(&c, &a);
		if (mp_command_parse(&c, save, cli_target_options, n, words, &a) != MP_CMD_OK)
			return usage_failed(&c, "snapshot");
		cli_error("snapshot: name the output with -o FILE.pickle or -o FILE.json (or: snapshot save TARGET FILE)");
		return MP_CMD_BAD;
	}
	words[n++] = file;
	return run(save, n, words);
}

int main(int argc, char **argv)
{
	const char *name;
	const mp_command *cmd, *alias;
	int rc;

	ncommands = cli_commands(&commands);
	cli_signals_install();
	if (argc < 2) {
		usage(stderr);
		return MP_CMD_BAD;
	}
	name = argv[1];
	if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
		usage(stdout);
		return MP_CMD_OK;
	}
	if (strcmp(name, "-V") == 0 || strcmp(name, "--version") == 0) {
		puts("memprof " PACKAGE_VERSION);
		return MP_CMD_OK;
	}
	if (strcmp(name, "snapshot") == 0) {
		rc = snapshot(argc - 2, argv + 2);
		cli_warnings_finish(rc != MP_CMD_BAD);
		return rc;
	}
	if ((cmd = mp_command_find(commands, ncommands, name, MP_FRONT_CLI, &alias)) == NULL) {
		cli_error("'%s' is not a memprof command", argv[1]);
		fputs("Try 'memprof --help'.\n", stderr);
		return MP_CMD_BAD;
	}
	if (alias != NULL)
		fprintf(stderr, "memprof: note: '%s' is now called '%s'\n", alias->name, cmd->name);
	rc = run(cmd, argc - 2, argv + 2);
	cli_warnings_finish(rc != MP_CMD_BAD);
	return rc;
}
