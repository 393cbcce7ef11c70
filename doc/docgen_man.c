/* docgen_man.c - the manual pages' generated blocks: every command of memprof(1) and of memprof-gdb(7),
   with its synopsis, description, options and exit status, from the front ends' own lists. */
#include <string.h>

#include "cli.h"
#include "docgen.h"
#include "mp_session.h"

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
	if (cmd->options != NULL && cmd->options[0].id != MP_O_NONE) {
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

/* A setting's values as its spec says them: "choice auto B" as auto|B, "device all" as all|N, "number" N,
   "file auto" as auto|FILE. */
static void setting_values(FILE *out, const char *spec)
{
	static const struct {
		const char *kind, *value;
	} kinds[] = { { "device", "N" }, { "number", "N" }, { "file", "FILE" } };
	const char *words = strchr(spec, ' ');
	size_t kind_len = words != NULL ? (size_t)(words - spec) : strlen(spec);
	const char *value = NULL;

	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (strlen(kinds[i].kind) == kind_len && strncmp(spec, kinds[i].kind, kind_len) == 0)
			value = kinds[i].value;
	for (const char *w = words; w != NULL && *w != '\0';) {
		size_t n;
		char word[64];

		w += strspn(w, " ");
		n = strcspn(w, " ");
		if (n == 0 || n >= sizeof word)
			break;
		memcpy(word, w, n);
		word[n] = '\0';
		fputs(w == words + 1 ? "\\fB" : "|\\fB", out);
		roff_word(out, word);
		fputs("\\fR", out);
		w += n;
	}
	if (value != NULL)
		fprintf(out, "%s\\fI%s\\fR", words != NULL ? "|" : "", value);
}

void man_gdb_settings(FILE *out)
{
	for (int i = 0; mp_session_setting_name(i) != NULL; i++) {
		if (mp_session_setting_flags(i) & MP_SESSION_SETTING_HOST)
			continue;
		fputs(".TP\n\\fBset memprof ", out);
		roff_word(out, mp_session_setting_name(i));
		fputs("\\fR ", out);
		setting_values(out, mp_session_setting_spec(i));
		fputs("\n", out);
		roff_text(out, mp_session_setting_help(i));
		fprintf(out, "Default: \\fB");
		roff_word(out, mp_session_setting_default(i));
		fputs("\\fR.\n", out);
	}
}
