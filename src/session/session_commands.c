/* session_commands.c - the command table the debugger registers: names, help, flags, and the
   completion of their words. */
#include <stdlib.h>
#include <string.h>

#include "session_int.h"

/* What the help of a command that reads a SNAPSHOT says about it in the debugger. */
#define SNAPSHOT_ARG                                                                            \
	"SNAPSHOT (default now) is a name from 'memprof snapshot take/load', 'now' (the target as\n" \
	"it stands), or a snapshot file (pickle or memprof JSON).\n"

#define MAX_COMMANDS 64

/* The debugger's commands: its own first (the 'snapshot' prefix before any subcommand, as gdb registers
   them), then the table's that the session offers. Made at the first call. */
static size_t commands(const mp_command *const **out)
{
	static const mp_command *const own[] = {
		&session_cmd_stats, &session_cmd_snapshot, &session_cmd_take, &session_cmd_list,
		&session_cmd_load, &session_cmd_drop, &session_cmd_catch, &session_cmd_catch_oom,
	};
	static const mp_command *list[MAX_COMMANDS];
	static size_t n;

	for (size_t i = 0; n == 0 && i < sizeof own / sizeof own[0]; i++)
		list[i] = own[i];
	if (n == 0) {
		n = sizeof own / sizeof own[0];
		for (size_t i = 0; i < mp_ncommands && n < MAX_COMMANDS; i++)
			if (mp_commands[i]->fronts & MP_FRONT_SESSION)
				list[n++] = mp_commands[i];
	}
	*out = list;
	return n;
}

const mp_command *session_command(int i)
{
	const mp_command *const *list;
	size_t n = commands(&list);

	return i >= 0 && (size_t)i < n ? list[i] : NULL;
}

const mp_command *session_find_command(const char *name, const mp_command **alias)
{
	const mp_command *const *list;
	size_t n = commands(&list);

	return mp_command_find(list, n, name, MP_FRONT_SESSION, alias);
}

const char *mp_session_command_name(int i)
{
	const mp_command *c = session_command(i);

	return c != NULL ? c->name : NULL;
}

/* Command C's help as the debugger shows it: the summary (its first line, which `help memprof`
   lists), the usage, the description, the options, and what SNAPSHOT is. */
static char *make_help(const mp_command *c)
{
	size_t n = strlen(c->summary);
	char *text;
	mp_out out;

	mp_out_init(&out);
	mp_out_printf(&out, "%c%s%s\nUsage: memprof %s%s%s\n", c->summary[0] >= 'a' && c->summary[0] <= 'z' ?
		      c->summary[0] - 'a' + 'A' : c->summary[0], c->summary + 1, n > 0 && c->summary[n - 1] == '.' ?
		      "" : ".", c->name, c->synopsis[0] ? " " : "", c->synopsis);
	mp_command_help_body(c, NULL, &out);
	if (mp_command_takes(c, "snapshot"))
		mp_out_puts(&out, SNAPSHOT_ARG);
	text = mp_out_take(&out, NULL);
	mp_out_free(&out);
	return text;
}

/* Command I's text from MAKE, made at the first call and kept in CACHE (NULL when out of memory). */
static const char *cached(char **cache, int i, char *(*make)(const mp_command *))
{
	const mp_command *c = session_command(i);

	if (c == NULL)
		return NULL;
	if (cache[i] == NULL)
		cache[i] = make(c);
	return cache[i];
}

const char *mp_session_command_help(int i)
{
	static char *help[MAX_COMMANDS];
	const char *text = cached(help, i, make_help);

	return text != NULL || session_command(i) == NULL ? text : session_command(i)->summary;
}

static char *make_spec(const mp_command *c)
{
	static const char *const kinds[] = {
		[MP_OPT_FLAG] = "flag", [MP_OPT_TEXT] = "text", [MP_OPT_FILE] = "file", [MP_OPT_CHOICE] = "choice",
		[MP_OPT_DEVICE] = "device", [MP_OPT_COUNT] = "count", [MP_OPT_INTEGER] = "integer", [MP_OPT_SIZE] = "size",
		[MP_OPT_FLAG_COUNT] = "flag-count",
	};
	char *text;
	mp_out out;

	mp_out_init(&out);
	mp_out_printf(&out, "positional %s\n", c->positional != NULL ? c->positional : "");
	for (const mp_option *o = c->options; o != NULL && o->id != MP_O_NONE; o++)
		mp_out_printf(&out, "option %s %s%s%s\n", mp_option_name(o->id), kinds[o->kind], o->choices != NULL ? " " : "",
			      o->choices != NULL ? o->choices : "");
	text = mp_out_take(&out, NULL);
	mp_out_free(&out);
	return text;
}

const char *mp_session_command_spec(int i)
{
	static char *spec[MAX_COMMANDS];
	const char *text = cached(spec, i, make_spec);

	return text != NULL || session_command(i) == NULL ? text : "";
}

unsigned mp_session_command_flags(int i)
{
	const mp_command *c = session_command(i);
	unsigned f = c != NULL ? c->flags : 0;

	return (f & MP_CMD_PREFIX ? MP_SESSION_PREFIX : 0) | (f & MP_CMD_EXPRESSION ? MP_SESSION_EXPRESSION : 0);
}

/* ---- completion */

/* Append the words of WORDS (space-separated) that start with WORD, one per line. */
static void add_matching(mp_out *out, const char *words, const char *word)
{
	size_t wl = strlen(word);

	while (*words != '\0') {
		size_t n = strcspn(words, " ");

		if (n >= wl && strncmp(words, word, wl) == 0) {
			mp_out_write(out, words, n);
			mp_out_putc(out, '\n');
		}
		words += n;
		words += strspn(words, " ");
	}
}

static void add_snapshot_names(mp_session *s, mp_out *out, const char *word)
{
	add_matching(out, "now", word);
	for (size_t i = 0; i < s->nsnaps; i++)
		add_matching(out, s->snaps[i].name, word);
}

/* The option of C written WORD (N bytes), or NULL. */
static const mp_option *option_of(const mp_command *c, const char *word, size_t n)
{
	char name[32];

	if (n >= sizeof name)
		return NULL;
	memcpy(name, word, n);
	name[n] = '\0';
	return mp_command_option(c, NULL, name);
}

/* Whether option O takes a value (every option but the flags; --sites's count is optional, so
   what follows it is completed as if it had none). */
static bool takes_value(const mp_option *o)
{
	return o != NULL && o->kind != MP_OPT_FLAG && o->kind != MP_OPT_FLAG_COUNT;
}

/* What the words typed before WORD say comes next: an option's value (*OPTION set), or the
   command's positional kind ("snapshot", "file", "name", or ""). */
static const char *expected(const mp_command *c, const char *text, const char *word, const mp_option **option,
			    char *buf, size_t size)
{
	size_t done = strlen(text) - strlen(word); /* TEXT ends with WORD */
	int npos = 0;

	*option = NULL;
	for (size_t i = 0, n; i < done; i += n) {
		const mp_option *o;

		i += strspn(text + i, " \t");
		n = strcspn(text + i, " \t");
		if (n == 0 || i + n > done)
			break;
		if (*option != NULL)
			*option = NULL; /* this word was the option's value */
		else if (text[i] == '-' && takes_value(o = option_of(c, text + i, n)))
			*option = o;
		else if (text[i] != '-')
			npos++;
	}
	return *option != NULL ? "" : mp_command_positional_kind(c, npos, buf, size);
}

/* The names of C's options, blank-separated, into OUT's words matching WORD. */
static void add_options(mp_out *out, const mp_command *c, const char *word)
{
	for (const mp_option *o = c->options; o != NULL && o->id != MP_O_NONE; o++)
		add_matching(out, mp_option_name(o->id), word);
}

const char *mp_session_complete(mp_session *s, int i, const char *text, const char *word)
{
	const mp_command *c;
	const mp_option *o;
	const char *what;
	char buf[32];
	mp_out out;

	free(s->completion);
	s->completion = NULL;
	if ((c = session_command(i)) == NULL || text == NULL || word == NULL || strlen(word) > strlen(text))
		return "";
	if (c->alias_of != NULL) /* an old name completes as the command it is now */
		c = session_find_command(c->alias_of, NULL);
	mp_out_init(&out);
	what = expected(c, text, word, &o, buf, sizeof buf);
	if (word[0] == '-')
		add_options(&out, c, word);
	else if (o != NULL && o->kind == MP_OPT_FILE)
		mp_out_puts(&out, "<file>\n");
	else if (o != NULL && o->choices != NULL) /* a choice, or the words of a list (--state) */
		add_matching(&out, o->choices, word);
	else if (o != NULL && o->kind == MP_OPT_DEVICE)
		add_matching(&out, "all", word);
	else if (o == NULL && strcmp(what, "file") == 0)
		mp_out_puts(&out, "<file>\n");
	else if (o == NULL && strcmp(what, "snapshot") == 0)
		add_snapshot_names(s, &out, word);
	else if (o == NULL && strcmp(what, "off") == 0) /* a word that is itself (catch oom off) */
		add_matching(&out, "off", word);
	s->completion = mp_out_take(&out, NULL);
	mp_out_free(&out);
	return s->completion != NULL ? s->completion : "";
}
