/* docgen.c - the documentation generator: copies a template to standard output, with the blocks it
   names written from the command tables, so the manual pages and the bash completion say what the
   code does. Usage: docgen TEMPLATE. A line "@GENERATED NAME@" becomes block NAME; "@VERSION@"
   anywhere becomes the package's version. Exit status 0, or 1 with a message on stderr. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "docgen.h"
#include "mp_session_table.h"

static const struct block {
	const char *name;
	void (*write)(FILE *out);
} blocks[] = {
	{ "cli-commands", man_cli_commands },
	{ "cli-target-options", man_cli_target_options },
	{ "gdb-commands", man_gdb_commands },
	{ "gdb-settings", man_gdb_settings },
	{ "bash-tables", bash_tables },
};

void docgen_cli_list(struct docgen_list *l)
{
	const mp_command *const *list;
	size_t n = cli_commands(&list);

	for (l->n = 0; l->n < n && l->n < sizeof l->cmd / sizeof l->cmd[0]; l->n++)
		l->cmd[l->n] = list[l->n];
}

void docgen_session_list(struct docgen_list *l)
{
	for (l->n = 0; l->n < sizeof l->cmd / sizeof l->cmd[0] && session_command((int)l->n) != NULL; l->n++)
		l->cmd[l->n] = session_command((int)l->n);
}

/* LINE (without its newline) with every @VERSION@ replaced. */
static void put_line(const char *line)
{
	static const char key[] = "@VERSION@";
	const char *at;

	while ((at = strstr(line, key)) != NULL) {
		fwrite(line, 1, (size_t)(at - line), stdout);
		fputs(PACKAGE_VERSION, stdout);
		line = at + sizeof key - 1;
	}
	puts(line);
}

/* The block LINE names ("@GENERATED NAME@"), or NULL when LINE names none; *BAD when it names an unknown one. */
static const struct block *block_of(const char *line, bool *bad)
{
	static const char head[] = "@GENERATED ";
	size_t n = strlen(line);

	*bad = false;
	if (strncmp(line, head, sizeof head - 1) != 0 || n < sizeof head || line[n - 1] != '@')
		return NULL;
	for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
		if (strlen(blocks[i].name) == n - sizeof head && strncmp(line + sizeof head - 1, blocks[i].name,
									     n - sizeof head) == 0)
			return &blocks[i];
	*bad = true;
	return NULL;
}

int main(int argc, char **argv)
{
	char line[4096];
	unsigned lineno = 0;
	FILE *in;
	int rc = 0;

	if (argc != 2) {
		fputs("usage: docgen TEMPLATE\n", stderr);
		return 1;
	}
	if ((in = fopen(argv[1], "r")) == NULL) {
		fprintf(stderr, "docgen: cannot open '%s'\n", argv[1]);
		return 1;
	}
	while (rc == 0 && fgets(line, sizeof line, in) != NULL) {
		const struct block *b;
		bool bad;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if ((b = block_of(line, &bad)) != NULL)
			b->write(stdout);
		else if (bad) {
			fprintf(stderr, "docgen: %s:%u: no block '%s'\n", argv[1], lineno, line);
			rc = 1;
		} else
			put_line(line);
	}
	if (ferror(in) || fclose(in) != 0 || fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "docgen: cannot copy '%s'\n", argv[1]);
		rc = 1;
	}
	return rc;
}
