/* docgen_bash.c - the bash completion's tables: the command line's commands, each one's options, what
   each option's value is, and what its positional words are (doc/memprof.bash.in reads them). */
#include <string.h>

#include "cli.h"
#include "docgen.h"

/* What the completion offers for option O's value: "" (a flag: no value), "choice WORDS", "list WORDS"
   (comma-separated), "device", "pid", "file", "dir" or "text" (nothing to offer). */
static const char *value_kind(const mp_option *o, char *buf, size_t size)
{
	bool dir = o->metavar != NULL && strcmp(o->metavar, "DIR") == 0;

	switch (o->kind) {
	case MP_OPT_FLAG:
	case MP_OPT_FLAG_COUNT:
		return "";
	case MP_OPT_CHOICE:
		snprintf(buf, size, "choice %s", o->choices);
		return buf;
	case MP_OPT_TEXT:
		if (o->choices == NULL)
			return "text";
		snprintf(buf, size, "list %s", o->choices);
		return buf;
	case MP_OPT_DEVICE:
		return "device";
	case MP_OPT_COUNT:
		return o->metavar != NULL && strcmp(o->metavar, "PID") == 0 ? "pid" : "text";
	case MP_OPT_FILE:
		return dir ? "dir" : "file";
	default:
		return "text";
	}
}

/* Each option of OPTS, its name after a blank. */
static void option_names(FILE *out, const mp_option *opts)
{
	for (const mp_option *o = opts; o != NULL && o->id != MP_O_NONE; o++)
		fprintf(out, " %s", mp_option_name(o->id));
}

/* Each option of OPTS as a case of _memprof_value for command NAME. */
static void value_cases(FILE *out, const char *name, const mp_option *opts)
{
	char buf[256];

	for (const mp_option *o = opts; o != NULL && o->id != MP_O_NONE; o++)
		fprintf(out, "\t'%s %s') REPLY='%s' ;;\n", name, mp_option_name(o->id), value_kind(o, buf, sizeof buf));
}

/* The options of command C on the command line: its own, the target options when it reads a target. */
static const mp_option *extra_of(const mp_command *c)
{
	return mp_command_takes(c, "snapshot") ? cli_target_options : NULL;
}

/* The command that runs when C's name is typed: C, or the command an old name stands for. */
static const mp_command *run_by(const struct docgen_list *l, const mp_command *c)
{
	const mp_command *r = mp_command_find(l->cmd, l->n, c->name, MP_FRONT_CLI, NULL);

	return r != NULL ? r : c;
}

/* Whether a command before the I-th of L (an old name aside) starts with the I-th's first word ("snapshot"). */
static bool earlier_first_word(const struct docgen_list *l, size_t i)
{
	size_t n = strcspn(l->cmd[i]->name, " ");

	for (size_t j = 0; j < i; j++)
		if (l->cmd[j]->alias_of == NULL && strcspn(l->cmd[j]->name, " ") == n &&
		    strncmp(l->cmd[j]->name, l->cmd[i]->name, n) == 0)
			return true;
	return false;
}

void bash_tables(FILE *out)
{
	struct docgen_list l;

	docgen_cli_list(&l);
	fputs("# The command line's commands (generated from its command table by doc/docgen).\n"
	      "_memprof_commands='", out);
	for (size_t i = 0; i < l.n; i++)
		if (l.cmd[i]->alias_of == NULL && !earlier_first_word(&l, i))
			fprintf(out, "%s%.*s", i == 0 ? "" : " ", (int)strcspn(l.cmd[i]->name, " "), l.cmd[i]->name);
	fputs("'\n\n# _memprof_options CMD: REPLY is the options of CMD (\"snapshot save\" for a subcommand).\n"
	      "_memprof_options()\n{\n\tcase $1 in\n", out);
	for (size_t i = 0; i < l.n; i++) {
		const mp_command *c = run_by(&l, l.cmd[i]);

		fprintf(out, "\t'%s') REPLY='-h --help", l.cmd[i]->name);
		option_names(out, c->options);
		option_names(out, extra_of(c));
		fputs("' ;;\n", out);
	}
	fputs("\t*) REPLY='' ;;\n\tesac\n}\n\n"
	      "# _memprof_value CMD OPTION: REPLY is what OPTION's value is: '' (a flag), 'choice WORDS', 'list WORDS'\n"
	      "# (comma-separated), 'device', 'pid', 'file', 'dir' or 'text'; '' for an option it does not know.\n"
	      "_memprof_value()\n{\n\tcase \"$1 $2\" in\n", out);
	for (size_t i = 0; i < l.n; i++) {
		value_cases(out, l.cmd[i]->name, run_by(&l, l.cmd[i])->options);
		value_cases(out, l.cmd[i]->name, extra_of(run_by(&l, l.cmd[i])));
	}
	fputs("\t*) REPLY='' ;;\n\tesac\n}\n\n"
	      "# _memprof_positional CMD: REPLY is the kinds of CMD's positional words, '[kind]' when optional.\n"
	      "_memprof_positional()\n{\n\tcase $1 in\n", out);
	for (size_t i = 0; i < l.n; i++)
		fprintf(out, "\t'%s') REPLY='%s' ;;\n", l.cmd[i]->name,
			run_by(&l, l.cmd[i])->positional != NULL ? run_by(&l, l.cmd[i])->positional : "");
	fputs("\t*) REPLY='' ;;\n\tesac\n}\n", out);
}
