/* command_table.c - the commands every front end offers, in the order help lists them. */
#include <string.h>

#include "mp_command.h"

/* Each is declared in its own file (cmd_*.c): a new command is its file and one line here. */
extern const mp_command mp_cmd_segsum, mp_cmd_summary, mp_cmd_segments, mp_cmd_memory, mp_cmd_compare,
	mp_cmd_blocks, mp_cmd_block, mp_cmd_categories, mp_cmd_timeline, mp_cmd_trace_plot, mp_cmd_segment_plot,
	mp_cmd_info;
extern const mp_command mp_cmd_pystack, mp_cmd_owners, mp_cmd_oom, mp_cmd_whatif, mp_cmd_fleet, mp_cmd_version;

const mp_command *const mp_commands[] = {
	&mp_cmd_segsum, &mp_cmd_summary, &mp_cmd_segments, &mp_cmd_memory, &mp_cmd_compare, &mp_cmd_trace,
	&mp_cmd_blocks, &mp_cmd_block, &mp_cmd_categories, &mp_cmd_timeline, &mp_cmd_trace_plot, &mp_cmd_segment_plot,
	&mp_cmd_info, &mp_cmd_snapshot_save,
	&mp_cmd_pystack, &mp_cmd_owners, &mp_cmd_oom, &mp_cmd_whatif, &mp_cmd_fleet, &mp_cmd_version,
};
const size_t mp_ncommands = sizeof mp_commands / sizeof mp_commands[0];

static const mp_command *find(const mp_command *const *list, size_t n, const char *name, unsigned mask)
{
	for (size_t i = 0; i < n; i++)
		if ((list[i]->fronts & mask) != 0 && strcmp(list[i]->name, name) == 0)
			return list[i];
	return NULL;
}

const mp_command *mp_command_find(const mp_command *const *list, size_t n, const char *name, unsigned mask,
				  const mp_command **alias)
{
	const mp_command *c = find(list, n, name, mask);

	if (alias != NULL)
		*alias = NULL;
	if (c == NULL || c->alias_of == NULL)
		return c;
	if (alias != NULL)
		*alias = c;
	return find(list, n, c->alias_of, mask);
}
