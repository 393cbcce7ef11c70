/* session_commands.c - the command table the debugger registers: names, help, flags, and the
   completion of their words. */
#include <stdlib.h>
#include <string.h>

#include "session_int.h"

/* What the help of a command that reads a SNAPSHOT says about it in the debugger. */
#define SNAPSHOT_ARG                                                                            \
	"SNAPSHOT (default now) is a name from 'memprof snapshot take/load', 'now' (the target as\n" \
	"it stands), or a snapshot file (pickle or memprof JSON).\n"

/* In the order `help memprof` lists them: the shared ones with the named snapshots after segsum and summary. */
const mp_command *const session_commands[] = {
	&mp_cmd_segsum, &mp_cmd_summary, &session_cmd_stats, &session_cmd_snapshot, &session_cmd_take, &session_cmd_list,
	&mp_cmd_snapshot_save, &session_cmd_load, &session_cmd_drop, &mp_cmd_compare, &mp_cmd_segments,
	&mp_cmd_memory, &mp_cmd_trace, &mp_cmd_blocks, &mp_cmd_block, &mp_cmd_categories, &mp_cmd_timeline,
	&mp_cmd_info,
};
const size_t session_ncommands = sizeof session_commands / sizeof session_commands[0];

const char *mp_session_command_name(int i)
{
	return i >= 0 && (size_t)i < session_ncommands ? session_commands[i]->name : NULL;
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
	if (c->positional != NULL && strstr(c->positional, "snapshot") != NULL)
		mp_out_puts(&out, SNAPSHOT_ARG);
	text = mp_out_take(&out, NULL);
	mp_out_free(&out);
	return text;
}

/* Command I's text from MAKE, made at the first call and kept in CACHE (NULL when out of memory). */
static const char *cached(char **cache, int i, char *(*make)(const mp_command *))
{
	if (i < 0 || (size_t)i >= session_ncommands)
		return NULL;
	if (cache[i] == NULL)
		cache[i] = make(session_commands[i]);
	return cache[i];
}

const char *mp_session_command_help(int i)
{
	static char *help[sizeof session_commands / sizeof session_commands[0]];
	const char *text = cached(help, i, make_help);

	return text != NULL || i < 0 || (size_t)i >= session_ncommands ? text : session_commands[i]->summary;
}

static char *make_spec(const mp_command *c)
{
	static const char *const kinds[] = {
		[MP_OPT_FLAG] = "flag", [MP_OPT_TEXT] = "text", [MP_OPT_FILE] = "file", [MP_OPT_CHOICE] = "choice",
		[MP_OPT_DEVICE] = "device", [MP_OPT_COUNT] = "count", [MP_OPT_INTEGER] = "integer", [MP_OPT_SIZE] = "size",
		[MP_OPT_SNAPSHOT] = "snapshot", [MP_OPT_FLAG_COUNT] = "flag-count",
	};
	char *text;
	mp_out out;

	mp_out_init(&out);
	mp_out_printf(&out, "positional %s\n", c->positional != NULL ? c->positional : "");
	for (const mp_option *o = c->options; o != NULL && o->name != NULL; o++)
		mp_out_printf(&out, "option %s %s%s%s\n", o->name, kinds[o->kind], o->choices != NULL ? " " : "",
			      o->choices != NULL ? o->choices : "");
	text = mp_out_take(&out, NULL);
	mp_out_free(&out);
	return text;
}

const char *mp_session_command_spec(int i)
{
	static char *spec[sizeof session_commands / sizeof session_commands[0]];
	const char *text = cached(spec, i, make_spec);

	return text != NULL || i < 0 || (size_t)i >= session_ncommands ? text : "";
}

unsigned mp_session_command_flags(int i)
{
	unsigned f;

	if (i < 0 || (size_t)i >= session_ncommands)
		return 0;
	f = session_commands[i]->flags;
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
	for (const mp_option *o = c->options; o != NULL && o->name != NULL; o++)
		add_matching(out, o->name, word);
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
	if (i < 0 || (size_t)i >= session_ncommands || text == NULL || word == NULL || strlen(word) > strlen(text))
		return "";
	c = session_commands[i];
	if (c->alias_of != NULL) /* an old name completes as the command it is now */
		c = mp_command_find(session_commands, session_ncommands, c->alias_of, MP_FRONT_SESSION, NULL);
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
	else if (o != NULL && o->kind == MP_OPT_SNAPSHOT)
		add_snapshot_names(s, &out, word);
	else if (o == NULL && strcmp(what, "file") == 0)
		mp_out_puts(&out, "<file>\n");
	else if (o == NULL && strcmp(what, "snapshot") == 0)
		add_snapshot_names(s, &out, word);
	s->completion = mp_out_take(&out, NULL);
	mp_out_free(&out);
	return s->completion != NULL ? s->completion : "";
}
