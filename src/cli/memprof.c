/* memprof.c - the memprof command line: dispatch to subcommands. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct cli_command *const commands[] = {
	&cli_cmd_stats, &cli_cmd_segments, &cli_cmd_memory, &cli_cmd_compare,
	&cli_cmd_trace, &cli_cmd_convert, &cli_cmd_snapshot, &cli_cmd_summary, &cli_cmd_categories,
	&cli_cmd_timeline,
	&cli_cmd_info,
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *to)
{
	fputs("usage: memprof <command> [options] FILE...\n"
	      "\n"
	      "Read PyTorch CUDA caching-allocator snapshots (the pickles that\n"
	      "torch.cuda.memory._snapshot()/_dump_snapshot() write, or memprof JSON)\n"
	      "and explain them.\n"
	      "\n"
	      "commands:\n",
	      to);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(to, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
	fputs("\n'memprof COMMAND -h' describes one command.\n", to);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CLI_BAD;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return CLI_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		puts("memprof " PACKAGE_VERSION);
		return CLI_OK;
	}
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strcmp(argv[1], commands[i]->name) == 0) {
			int rc = commands[i]->run(commands[i], argc - 1, argv + 1);

			cli_warnings_finish(rc != CLI_BAD);
			return rc;
		}
	}
	cli_error("'%s' is not a memprof command", argv[1]);
	fputs("Try 'memprof --help'.\n", stderr);
	return CLI_BAD;
}
