/* command_parse.c - the one parser of a command's words: options by the command's table (and the
   front end's own), each value checked by its kind's rule, then the positional words counted. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mp_command.h"

/* C's error, formatted; USAGE: about which words the command takes. */
static int set_error(mp_command_ctx *c, bool usage, const char *fmt, va_list ap)
{
	vsnprintf(c->error, sizeof c->error, fmt, ap);
	c->usage = usage;
	return MP_CMD_BAD;
}

int mp_command_error(mp_command_ctx *c, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = set_error(c, false, fmt, ap);
	va_end(ap);
	return rc;
}

int mp_command_usage_error(mp_command_ctx *c, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = set_error(c, true, fmt, ap);
	va_end(ap);
	return rc;
}

int mp_command_fail(mp_command_ctx *c, const char *what, mp_err err, const mp_diag *diag)
{
	if (err == MP_E_INTERRUPTED && (diag == NULL || diag->msg[0] == '\0'))
		return mp_command_error(c, "interrupted");
	if (diag != NULL && diag->msg[0] != '\0')
		return mp_command_error(c, "%s: %s", what, diag->msg);
	return mp_command_error(c, "%s: %s", what, mp_strerror(err));
}

bool mp_parse_long(const char *text, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(text, &end, 0);
	return text[0] != '\0' && *end == '\0' && errno == 0;
}

/* "4096", "64K", "64KiB", "1.5M", "2GiB", "10B" (binary multiples, as the allocator counts). */
bool mp_parse_size(const char *text, int64_t *out)
{
	static const struct {
		const char *suffix;
		double factor;
	} units[] = {
		{ "", 1 }, { "B", 1 }, { "K", 1024.0 }, { "KiB", 1024.0 }, { "KB", 1024.0 },
		{ "M", 1048576.0 }, { "MiB", 1048576.0 }, { "MB", 1048576.0 },
		{ "G", 1073741824.0 }, { "GiB", 1073741824.0 }, { "GB", 1073741824.0 },
	};
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (end == text || errno != 0 || v < 0)
		return false;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcasecmp(end, units[i].suffix) == 0) {
			double bytes = v * units[i].factor;

			if (bytes > 9.2e18)
				return false;
			*out = (int64_t)bytes;
			return true;
		}
	}
	return false;
}

/* Whether WORD is one of the blank-separated WORDS, in any case (as the library reads them). */
static bool one_of(const char *words, const char *word)
{
	size_t n = strlen(word);

	while (*words != '\0') {
		size_t m = strcspn(words, " ");

		if (m == n && strncasecmp(words, word, n) == 0)
			return true;
		words += m;
		words += strspn(words, " ");
	}
	return false;
}

/* "a, b or c" of the blank-separated CHOICES into BUF. */
static const char *choice_list(const char *choices, char *buf, size_t size)
{
	size_t len = 0, left = strlen(choices);

	buf[0] = '\0';
	while (*choices != '\0' && len + 1 < size) {
		size_t m = strcspn(choices, " ");
		const char *sep = len == 0 ? "" : m == left ? " or " : ", ";
		int w = snprintf(buf + len, size - len, "%s%.*s", sep, (int)m, choices);

		len += w > 0 ? (size_t)w : 0;
		left -= m;
		choices += m;
		left -= strspn(choices, " ");
		choices += strspn(choices, " ");
	}
	return buf;
}

/* Whether WORD is all digits: the count --sites may take. */
static bool is_count_word(const char *word)
{
	return word[0] != '\0' && strspn(word, "0123456789") == strlen(word);
}

/* Check VALUE against O's rule; MP_CMD_OK or the usage error. */
static int check_value(mp_command_ctx *c, const char *cmd, const mp_option *o, const char *value)
{
	char buf[160];
	int64_t size;
	long n;

	switch (o->kind) {
	case MP_OPT_FLAG:
	case MP_OPT_TEXT:
	case MP_OPT_FILE:
		return MP_CMD_OK;
	case MP_OPT_FLAG_COUNT:
	case MP_OPT_COUNT:
		if (value == NULL || (mp_parse_long(value, &n) && n >= 1))
			return MP_CMD_OK;
		return mp_command_error(c, "%s: %s '%s': not a positive count", cmd, mp_option_name(o->id), value);
	case MP_OPT_INTEGER:
		if (mp_parse_long(value, &n))
			return MP_CMD_OK;
		return mp_command_error(c, "%s: %s '%s': not a whole number", cmd, mp_option_name(o->id), value);
	case MP_OPT_DEVICE:
		if (strcmp(value, "all") == 0 || (mp_parse_long(value, &n) && n >= 0 && n <= MP_CMD_MAX_DEVICE))
			return MP_CMD_OK;
		return mp_command_error(c, "%s: %s '%s': not a device number (0 to %d) or all", cmd, mp_option_name(o->id),
					value, MP_CMD_MAX_DEVICE);
	case MP_OPT_SIZE:
		if (mp_parse_size(value, &size))
			return MP_CMD_OK;
		return mp_command_error(c, "%s: %s '%s': not a size (4096, 64KiB, 1.5MiB, ...)", cmd, mp_option_name(o->id),
					value);
	case MP_OPT_CHOICE:
		if (one_of(o->choices, value))
			return MP_CMD_OK;
		return mp_command_error(c, "%s: %s '%s': choose %s", cmd, mp_option_name(o->id), value,
					choice_list(o->choices, buf, sizeof buf));
	}
	return MP_CMD_OK;
}

const char *mp_option_name(enum mp_option_id id)
{
	static const char *const names[MP_O_COUNT] = {
		[MP_O_NONE] = "",
#define MP_OPTION_NAME(id, name) [MP_O_##id] = name,
		MP_OPTION_NAMES(MP_OPTION_NAME)
#undef MP_OPTION_NAME
	};

	return (unsigned)id < MP_O_COUNT ? names[id] : "";
}

/* The option NAME (N bytes) in LIST, or NULL. */
static const mp_option *find_in(const mp_option *list, const char *name, size_t n)
{
	for (; list != NULL && list->id != MP_O_NONE; list++)
		if (strlen(mp_option_name(list->id)) == n && strncmp(mp_option_name(list->id), name, n) == 0)
			return list;
	return NULL;
}

/* The option ID in LIST, or NULL. */
static const mp_option *find_id(const mp_option *list, enum mp_option_id id)
{
	for (; list != NULL && list->id != MP_O_NONE; list++)
		if (list->id == id)
			return list;
	return NULL;
}

const mp_option *mp_command_option(const mp_command *cmd, const mp_option *extra, const char *name)
{
	const mp_option *o = find_in(cmd->options, name, strlen(name));

	return o != NULL ? o : find_in(extra, name, strlen(name));
}

/* The slot of option O in A's arrays: the command's first, then the front end's. */
static int slot_of(const mp_command_args *a, const mp_option *o)
{
	size_t n = 0;

	while (a->cmd->options != NULL && a->cmd->options[n].id != MP_O_NONE)
		n++;
	if (o >= a->cmd->options && o < a->cmd->options + n)
		return (int)(o - a->cmd->options);
	return (int)(MP_CMD_MAX_OPTIONS + (o - a->extra));
}

/* Whether WORD is an option word: '-' and more ('-' alone is standard input, a positional word). */
static bool is_option_word(const char *word)
{
	return word[0] == '-' && word[1] != '\0';
}

/* An option CMD does not take: named as written, and the command that takes it when one does (a user
   who mixed up two commands learns which one). */
static int unknown_option(mp_command_ctx *c, const mp_command *cmd, const char *word, size_t n)
{
	for (size_t i = 0; i < mp_ncommands; i++)
		if (mp_commands[i] != cmd && find_in(mp_commands[i]->options, word, n) != NULL)
			return mp_command_usage_error(c, "%s: unknown option '%.*s' (an option of '%s')", cmd->name, (int)n,
						      word, mp_commands[i]->name);
	return mp_command_usage_error(c, "%s: unknown option '%.*s'", cmd->name, (int)n, word);
}

/* What option word ARGV[I] names among A's options, as the parser reads it: the option (NULL: none, N the
   length of its name in the word), its value (NULL: none; IN_WORD when the word holds it, --name=value or
   -oFILE) and how many words it takes (USED: 2 when the next word is its value). */
struct option_words {
	const mp_option *o;
	const char *value;
	size_t n;
	bool in_word;
	int used;
};

static struct option_words option_words(const mp_command_args *a, int argc, char **argv, int i)
{
	const char *word = argv[i], *eq = NULL;
	struct option_words w = { .n = strlen(word), .used = 1 };

	if (word[1] == '-' && (eq = strchr(word, '=')) != NULL)
		w.n = (size_t)(eq - word); /* --name=value */
	else if (word[1] != '-' && w.n > 2)
		w.n = 2; /* -oFILE */
	if ((w.o = find_in(a->cmd->options, word, w.n)) == NULL && (w.o = find_in(a->extra, word, w.n)) == NULL)
		return w;
	if (eq != NULL || w.n < strlen(word)) {
		w.value = eq != NULL ? eq + 1 : word + w.n;
		w.in_word = true;
	} else if (i + 1 < argc && (w.o->kind == MP_OPT_FLAG_COUNT ? is_count_word(argv[i + 1]) : w.o->kind != MP_OPT_FLAG)) {
		w.value = argv[i + 1];
		w.used = 2;
	}
	return w;
}

/* Take option word ARGV[*I] (and its value) into A. */
static int take_option(mp_command_ctx *c, mp_command_args *a, int argc, char **argv, int *i)
{
	struct option_words w = option_words(a, argc, argv, *i);
	int rc, slot;

	if (w.o == NULL)
		return unknown_option(c, a->cmd, argv[*i], w.n);
	if (w.o->kind == MP_OPT_FLAG && w.in_word)
		return mp_command_usage_error(c, "%s: option '%s' takes no value", a->cmd->name, mp_option_name(w.o->id));
	if (w.value == NULL && w.o->kind != MP_OPT_FLAG && w.o->kind != MP_OPT_FLAG_COUNT)
		return mp_command_usage_error(c, "%s: option '%s' needs a value", a->cmd->name, mp_option_name(w.o->id));
	if ((rc = check_value(c, a->cmd->name, w.o, w.value)) != MP_CMD_OK)
		return rc;
	*i += w.used - 1;
	slot = slot_of(a, w.o);
	a->given[slot] = true;
	a->value[slot] = w.value;
	return MP_CMD_OK;
}

int mp_command_parse(mp_command_ctx *c, const mp_command *cmd, const mp_option *extra, int argc, char **argv,
		     mp_command_args *a)
{
	bool only_positional = false;
	int min, max, rc;

	memset(a, 0, sizeof *a);
	a->cmd = cmd;
	a->extra = extra;
	a->argc = argc;
	a->argv = argv;
	c->error[0] = '\0';
	c->usage = false;
	mp_command_positional_count(cmd, &min, &max);
	for (int i = 0; i < argc; i++) {
		if (!only_positional && strcmp(argv[i], "--") == 0) {
			only_positional = true;
		} else if (!only_positional && (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)) {
			a->help = true;
			return MP_CMD_OK;
		} else if (!only_positional && is_option_word(argv[i])) {
			if ((rc = take_option(c, a, argc, argv, &i)) != MP_CMD_OK)
				return rc;
		} else if (a->npos == max && max > 0 && mp_command_variadic(cmd)) {
			a->nmore++;
		} else if (a->npos == max || a->npos == MP_CMD_MAX_POSITIONAL) {
			return mp_command_usage_error(c, "%s: too many arguments (from '%s')", cmd->name, argv[i]);
		} else {
			a->pos[a->npos++] = argv[i];
		}
	}
	return MP_CMD_OK;
}

const char *mp_command_word(const mp_command_args *a, int i)
{
	bool only_positional = false;

	if (i < a->npos)
		return a->pos[i];
	for (int j = 0, k = 0; j < a->argc; j++) {
		if (!only_positional && strcmp(a->argv[j], "--") == 0)
			only_positional = true;
		else if (!only_positional && is_option_word(a->argv[j]))
			j += option_words(a, a->argc, a->argv, j).used - 1;
		else if (k++ == i)
			return a->argv[j];
	}
	return NULL;
}

int mp_command_check_words(mp_command_ctx *c, const mp_command_args *a)
{
	char kind[32];
	int min, max;

	mp_command_positional_count(a->cmd, &min, &max);
	if (a->npos < min)
		return mp_command_usage_error(c, "%s: missing %s", a->cmd->name,
					mp_command_positional_kind(a->cmd, a->npos, kind, sizeof kind));
	return MP_CMD_OK;
}

/* The option ID of A's command or front end, or NULL. */
static const mp_option *option_of(const mp_command_args *a, enum mp_option_id id)
{
	const mp_option *o = find_id(a->cmd->options, id);

	return o != NULL ? o : find_id(a->extra, id);
}

const char *mp_arg(const mp_command_args *a, enum mp_option_id id)
{
	const mp_option *o = option_of(a, id);

	return o != NULL ? a->value[slot_of(a, o)] : NULL;
}

bool mp_arg_given(const mp_command_args *a, enum mp_option_id id)
{
	const mp_option *o = option_of(a, id);

	return o != NULL && a->given[slot_of(a, o)];
}

long mp_arg_device(const mp_command_args *a, enum mp_option_id id, long def)
{
	const char *v = mp_arg(a, id);
	long n;

	if (v == NULL)
		return def;
	if (strcmp(v, "all") == 0 || !mp_parse_long(v, &n))
		return -1;
	return n;
}
