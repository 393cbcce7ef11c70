/* docgen_roff.c - text of the command tables as roff (man(7)) text. */
#include <ctype.h>
#include <string.h>

#include "docgen.h"

/* Character C as roff writes it: what would be a control word or a typographic glyph escaped, so that
   options and quoted commands copy out as they must be typed. */
static void put_char(FILE *out, char c)
{
	switch (c) {
	case '\\': fputs("\\e", out); break;
	case '-': fputs("\\-", out); break;
	case '\'': fputs("\\(aq", out); break;
	case '`': fputs("\\(ga", out); break;
	case '"': fputs("\\(dq", out); break;
	case '^': fputs("\\(ha", out); break;
	case '~': fputs("\\(ti", out); break;
	default: fputc(c, out);
	}
}

void roff_text(FILE *out, const char *text)
{
	bool line_start = true;

	for (const char *p = text; *p != '\0'; p++) {
		if (line_start && (*p == ' ' || *p == '\t'))
			continue;
		if (line_start && *p == '.')
			fputs("\\&", out);
		put_char(out, *p);
		line_start = *p == '\n';
	}
	if (!line_start)
		fputc('\n', out);
}

void roff_sentence(FILE *out, const char *text)
{
	size_t n = 0;

	if (text[0] == '\0')
		return;
	fputc(toupper((unsigned char)text[0]), out);
	while (text[++n] != '\0')
		put_char(out, text[n]);
	fputs(text[n - 1] == '.' ? "\n" : ".\n", out);
}

void roff_word(FILE *out, const char *word)
{
	for (; *word != '\0'; word++)
		put_char(out, *word);
}

/* "One of: A, B, C." for an option's blank-separated CHOICES, each in bold. */
static void choices(FILE *out, const char *words)
{
	fputs(".br\nOne of:", out);
	while (*words != '\0') {
		size_t n = strcspn(words, " ");

		fputs(" \\fB", out);
		for (size_t i = 0; i < n; i++)
			put_char(out, words[i]);
		fputs("\\fR", out);
		words += n;
		words += strspn(words, " ");
		fputs(*words != '\0' ? "," : ".\n", out);
	}
}

void roff_options(FILE *out, const mp_option *opts)
{
	for (const mp_option *o = opts; o != NULL && o->id != MP_O_NONE; o++) {
		fputs(".TP\n\\fB", out);
		roff_word(out, mp_option_name(o->id));
		fputs("\\fR", out);
		if (o->metavar != NULL) {
			fputs(" \\fI", out);
			roff_word(out, o->metavar);
			fputs("\\fR", out);
		}
		fputc('\n', out);
		roff_text(out, o->help);
		if (o->kind == MP_OPT_CHOICE && o->choices != NULL)
			choices(out, o->choices);
	}
}
