/* cli_commands.c - the command line's commands: the shared table's that it offers, then its own. */
#include "cli.h"

/* 'stats' was segsum on the command line until the command table gave each word one meaning
   (in the debugger it was memory_summary()). */
static const mp_command cli_cmd_stats = {
	"stats", MP_FRONT_CLI, "the old name of segsum", "", "", NULL, NULL, "", NULL, 0, "segsum",
};

#define MAX_COMMANDS 32

size_t cli_commands(const mp_command *const **out)
{
	static const mp_command *list[MAX_COMMANDS];
	static size_t n;

	if (n == 0) {
		for (size_t i = 0; i < mp_ncommands && n < MAX_COMMANDS - 3; i++)
			if (mp_commands[i]->fronts & MP_FRONT_CLI)
				list[n++] = mp_commands[i];
		list[n++] = &cli_cmd_convert;
		list[n++] = &cli_cmd_stats;
		list[n++] = &cli_cmd_watch;
	}
	*out = list;
	return n;
}
