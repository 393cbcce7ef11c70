/* command_words.c - what a command's positional words are, read from its declaration
   ("address [snapshot]": blank-separated kinds, the optional ones in brackets, the last one followed by
   "..." when it takes any number of words: "file..."). */
#include <string.h>

#include "mp_command.h"

/* The I-th blank-separated word of LIST, its brackets dropped, into BUF ("" past the end);
   *OPTIONAL tells whether it was bracketed. */
static const char *nth(const char *list, int i, char *buf, size_t size, bool *optional)
{
	*optional = false;
	buf[0] = '\0';
	for (list = list != NULL ? list : ""; *list != '\0'; i--) {
		size_t n = strcspn(list, " ");

		if (i == 0) {
			const char *w = list;

			*optional = w[0] == '[';
			if (*optional)
				w++, n -= n >= 2 ? 2 : n;
			if (n >= 3 && strncmp(w + n - 3, "...", 3) == 0)
				n -= 3;
			if (n >= size)
				n = size - 1;
			memcpy(buf, w, n);
			buf[n] = '\0';
			return buf;
		}
		list += n;
		list += strspn(list, " ");
	}
	return buf;
}

const char *mp_command_positional_kind(const mp_command *cmd, int i, char *buf, size_t size)
{
	bool optional;

	return nth(cmd->positional, i, buf, size, &optional);
}

void mp_command_positional_count(const mp_command *cmd, int *min, int *max)
{
	char buf[32];
	bool optional;

	*min = *max = 0;
	while (nth(cmd->positional, *max, buf, sizeof buf, &optional)[0] != '\0') {
		if (!optional)
			*min = *max + 1;
		++*max;
	}
}

bool mp_command_variadic(const mp_command *cmd)
{
	size_t n = cmd->positional != NULL ? strlen(cmd->positional) : 0;

	while (n > 0 && cmd->positional[n - 1] == ']')
		n--;
	return n >= 3 && strncmp(cmd->positional + n - 3, "...", 3) == 0;
}

int mp_command_positional_index(const mp_command *cmd, int i, const char *kind)
{
	char buf[32];
	int n = 0;

	for (int j = 0; j < i; j++)
		n += strcmp(mp_command_positional_kind(cmd, j, buf, sizeof buf), kind) == 0;
	return n;
}

bool mp_command_takes(const mp_command *cmd, const char *kind)
{
	char buf[32];

	for (int i = 0; mp_command_positional_kind(cmd, i, buf, sizeof buf)[0] != '\0'; i++)
		if (strcmp(buf, kind) == 0)
			return true;
	return false;
}
