/* docgen_man.c - the manual pages' generated blocks: every command of memprof(1) and of memprof-gdb(7),
   with its synopsis, description, options and exit status, from the front ends' own lists. */
#include <string.h>

#include "cli.h"
#include "docgen.h"

/* How a command's section differs between the pages. */
struct page {
	bool cli; /* memprof(1): a SNAPSHOT word takes the target options; else the debugger's */
};

/* The names of the old commands in L that run CMD, as "an old name" sentence, if any. */
static void aliases(FILE *out, const struct docgen_list *l, const mp_command *cmd)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->cmd[i]->alias_of != NULL && strcmp(l->cmd[i]->alias_of, cmd->name) == 0) {
			fputs(".PP\nThe old name \\fB", out);
			roff_word(out, l->cmd[i]->name);
			fputs("\\fR still runs it, with a note.\n", out);
		}
}

/* What a command's SNAPSHOT word is, where the command reads one. */
static void snapshot_word(FILE *out, const struct page *p, const mp_command *cmd)
{
	if (!mp_command_takes(cmd, "snapshot"))
		return;
	if (p->cli)
		fputs(".PP\nIts target is a snapshot file, a core dump or \\fB\\-\\-pid\\fR \\fIPID\\fR, with the\n"
		      "target options of \\fBTARGETS\\fR.\n", out);
	else
		fputs(".PP\nIts \\fISNAPSHOT\\fR is a kept name, \\fBnow\\fR (the default) or a snapshot file "
		      "(\\fBSNAPSHOTS\\fR).\n", out);
}

/* Command CMD of list L as a subsection: synopsis, summary, description, options, exit status. */
static void command(FILE *out, const struct page *p, const struct docgen_list *l, const mp_command *cmd)
{
	fputs(".SS \"memprof ", out);
	roff_word(out, cmd->name);
	fputs("\"\n\\fBmemprof ", out);
	roff_word(out, cmd->name);
	fputs("\\fR\n", out);
	roff_text(out, cmd->synopsis);
	fputs(".PP\n", out);
	roff_sentence(out, cmd->summary);
	if (cmd->flags & MP_CMD_PREFIX)
		fputs("Alone, it lists its subcommands.\n", out);
	if (cmd->description[0] != '\0') {
		fputs(".PP\n", out);
		roff_text(out, cmd->description);
	}
	snapshot_word(out, p, cmd);
	if (cmd->options != NULL && cmd->options[0].name != NULL) {
		fputs(".PP\nOptions:\n", out);
		roff_options(out, cmd->options);
	}
	aliases(out, l, cmd);
	if (p->cli && cmd->exit_status[0] != '\0') {
		fputs(".PP\nExit status: ", out);
		roff_sentence(out, cmd->exit_status);
	}
}

/* Every command of L but the aliases (each told under the command it runs). */
static void commands(FILE *out, const struct page *p, const struct docgen_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->cmd[i]->alias_of == NULL)
			command(out, p, l, l->cmd[i]);
}

void man_cli_commands(FILE *out)
{
	static const struct page cli = { .cli = true };
	struct docgen_list l;

	docgen_cli_list(&l);
	commands(out, &cli, &l);
}

void man_cli_target_options(FILE *out)
{
	roff_options(out, cli_target_options);
}

void man_gdb_commands(FILE *out)
{
	static const struct page gdb = { .cli = false };
	struct docgen_list l;

	docgen_session_list(&l);
	commands(out, &gdb, &l);
}
