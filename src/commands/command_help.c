/* command_help.c - a command's help from its declaration: synopsis, description, options. Each
   front end puts its own first line and what it says about targets around it. */
#include <stdio.h>
#include <string.h>

#include "mp_command.h"

/* "  --name META   " then HELP, its later lines indented as its first. */
static void option_lines(mp_out *out, const mp_option *o)
{
	for (; o != NULL && o->id != MP_O_NONE; o++) {
		char head[40];
		const char *h = o->help;

		snprintf(head, sizeof head, "  %s%s%s", mp_option_name(o->id), o->metavar != NULL ? " " : "",
			 o->metavar != NULL ? o->metavar : "");
		mp_out_printf(out, "%-20s", head);
		if (strlen(head) >= 20)
			mp_out_printf(out, "\n%-20s", "");
		while (*h != '\0') {
			size_t n = strcspn(h, "\n");

			mp_out_write(out, h, n);
			mp_out_putc(out, '\n');
			h += n;
			if (*h == '\n' && *++h != '\0')
				mp_out_printf(out, "%-20s", "");
		}
	}
}

void mp_command_help_body(const mp_command *cmd, const mp_option *extra, mp_out *out)
{
	mp_out_puts(out, cmd->description);
	if ((cmd->options != NULL && cmd->options[0].id != MP_O_NONE) || (extra != NULL && extra->id != MP_O_NONE)) {
		mp_out_puts(out, "Options:\n");
		option_lines(out, cmd->options);
		option_lines(out, extra);
	}
}
