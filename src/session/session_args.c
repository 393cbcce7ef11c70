/* session_args.c - the words of a command: options, positional arguments, numbers and sizes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "session_int.h"

static const struct session_opt *find_opt(const struct session_opt *opts, const char *word)
{
	for (; opts != NULL && opts->name != NULL; opts++)
		if (strcmp(opts->name, word) == 0)
			return opts;
	return NULL;
}

int session_args(mp_session *s, const char *cmd, int argc, char **argv, const struct session_opt *opts,
		 char **pos, int minpos, int maxpos, int *npos)
{
	bool only_positional = false;

	*npos = 0;
	for (int i = 0; i < argc; i++) {
		const struct session_opt *o;

		if (!only_positional && strcmp(argv[i], "--") == 0) {
			only_positional = true;
			continue;
		}
		if (!only_positional && argv[i][0] == '-' && argv[i][1] != '\0') {
			if ((o = find_opt(opts, argv[i])) == NULL)
				return session_error(s, "%s: no option '%s' (see 'help memprof %s')", cmd, argv[i], cmd);
			if (o->value == NULL) {
				*o->flag = true;
				continue;
			}
			if (i + 1 == argc)
				return session_error(s, "%s: option '%s' needs a value", cmd, argv[i]);
			*o->value = argv[++i];
			continue;
		}
		if (*npos == maxpos)
			return session_error(s, "%s: too many arguments (from '%s'; see 'help memprof %s')", cmd,
					     argv[i], cmd);
		pos[(*npos)++] = argv[i];
	}
	if (*npos < minpos)
		return session_error(s, "%s: missing argument (see 'help memprof %s')", cmd, cmd);
	return MP_SESSION_OK;
}

bool session_parse_long(const char *text, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(text, &end, 0);
	return text[0] != '\0' && *end == '\0' && errno == 0;
}

/* "4096", "64K", "64KiB", "1.5M", "2GiB", "10B" (binary multiples, as the allocator counts). */
bool session_parse_size(const char *text, int64_t *out)
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
