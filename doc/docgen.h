/* docgen.h - what the files of the documentation generator share: the front ends' command lists and
   the writers of the blocks a template asks for (docgen.c reads the templates). */
#ifndef MEMPROF_DOCGEN_H
#define MEMPROF_DOCGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "mp_command.h"

/* The commands a front end offers, in its help order, aliases included. */
struct docgen_list {
	const mp_command *cmd[64];
	size_t n;
};

/* The command line's commands (cli_commands) and the debugger's (the session's table). */
void docgen_cli_list(struct docgen_list *l);
void docgen_session_list(struct docgen_list *l);

/* Write TEXT as roff text: backslashes, minus signs, quotes escaped; a '.' that starts a line made
   text; each line's leading blanks dropped (roff fills the lines into paragraphs). */
void roff_text(FILE *out, const char *text);
/* WORD as roff text on the current line (no newline after it). */
void roff_word(FILE *out, const char *word);
/* TEXT with its first letter made upper case and a period after it, as roff text. */
void roff_sentence(FILE *out, const char *text);
/* OPTS (ended by a NULL name) as a .TP list: the option, its value's name in italics, its help. */
void roff_options(FILE *out, const mp_option *opts);

/* The generated blocks (docgen_man.c, docgen_bash.c): each writes its part of a page or script. */
void man_cli_commands(FILE *out);
void man_cli_target_options(FILE *out);
void man_gdb_commands(FILE *out);
void man_gdb_settings(FILE *out);
void bash_tables(FILE *out);

#endif
