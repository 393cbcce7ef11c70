/* category_args.c - the option values of `memprof categories`, read in one place for both
   front ends (the CLI and the debugger session), so that both accept the same words, refuse
   the same mixes of modes and say so in the same words. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mp_category.h"

/* The largest --sites count: far more rows than anyone reads, small enough to be no hazard. */
#define SITES_MAX 1000000
#define SITES_TEXT "1000000"

/* The index of TEXT in WORDS (N of them), or -1. */
static int word_index(const char *text, const char *const *words, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(text, words[i]) == 0)
			return i;
	return -1;
}

bool mp_category_format_parse(const char *text, enum mp_category_format *out)
{
	static const char *const words[] = { [MP_CFMT_PLAIN] = "plain", [MP_CFMT_RST] = "rst",
					     [MP_CFMT_JSON] = "json" };
	int i = word_index(text, words, 3);

	if (i < 0)
		return false;
	*out = (enum mp_category_format)i;
	return true;
}

bool mp_category_by_parse(const char *text, enum mp_site_key *out)
{
	static const char *const words[] = { [MP_SITES_BY_SITE] = "site", [MP_SITES_BY_FUNCTION] = "function",
					     [MP_SITES_BY_FILE] = "file", [MP_SITES_BY_MODULE] = "module" };
	int i = word_index(text, words, 4);

	if (i < 0)
		return false;
	*out = (enum mp_site_key)i;
	return true;
}

bool mp_category_is_count(const char *word)
{
	if (word == NULL || *word == '\0')
		return false;
	return strspn(word, "0123456789") == strlen(word);
}

/* "categories: --format 'xml': choose plain, rst or json". */
static mp_err usage(mp_diag *diag, const char *option, const char *value, const char *want)
{
	return mp_fail(diag, MP_E_USAGE, "categories: %s '%s': %s", option, value, want);
}

/* The modes A asks for, one bit each: --explain, --sites, --segsum. */
static unsigned modes(const mp_category_args *a)
{
	return (a->explain != NULL) | (unsigned)(a->sites || a->sites_count != NULL) << 1 | (unsigned)a->segsum << 2;
}

/* The checks that do not read a value: modes that exclude each other, options with no use. */
static mp_err check_mix(const mp_category_args *a, mp_diag *diag)
{
	unsigned m = modes(a);

	if (m & (m - 1))
		return mp_fail(diag, MP_E_USAGE,
			       "categories: --explain, --sites and --segsum exclude each other: choose one");
	if (a->by != NULL && !(m & 2))
		return mp_fail(diag, MP_E_USAGE, "categories: --by groups call sites: it needs --sites");
	if (a->segsum && a->format != NULL && strcmp(a->format, "plain") != 0)
		return mp_fail(diag, MP_E_USAGE, "categories: --segsum prints text only, not --format '%s'",
			       a->format);
	return MP_OK;
}

static mp_err read_explain(const char *text, mp_category_opts *o, mp_diag *diag)
{
	char *end;

	errno = 0;
	o->explain_addr = strtoull(text, &end, 0);
	if (errno != 0 || end == text || *end != '\0' || text[0] == '-')
		return usage(diag, "--explain", text, "give an address (0x... or decimal)");
	o->explain = true;
	return MP_OK;
}

static mp_err read_sites(const char *count, mp_category_opts *o, mp_diag *diag)
{
	unsigned long long n = MP_CATEGORY_SITES_DEFAULT;

	if (count != NULL) {
		errno = 0;
		n = mp_category_is_count(count) ? strtoull(count, NULL, 10) : 0;
		if (errno != 0 || n < 1 || n > SITES_MAX)
			return usage(diag, "--sites", count, "give a count of sites from 1 to " SITES_TEXT);
	}
	o->sites = (size_t)n;
	return MP_OK;
}

mp_err mp_category_args_read(const mp_category_args *a, mp_category_opts *o, mp_diag *diag)
{
	mp_err err = check_mix(a, diag);

	if (err != MP_OK)
		return err;
	if (a->scheme != NULL && !mp_category_scheme_parse(a->scheme, &o->scheme))
		return usage(diag, "--scheme", a->scheme, "choose profiler or tracker");
	if (a->format != NULL && !mp_category_format_parse(a->format, &o->format))
		return usage(diag, "--format", a->format, "choose plain, rst or json");
	if (a->by != NULL && !mp_category_by_parse(a->by, &o->by))
		return usage(diag, "--by", a->by, "choose site, function, file or module");
	if (a->explain != NULL)
		return read_explain(a->explain, o, diag);
	if (a->sites || a->sites_count != NULL)
		return read_sites(a->sites_count, o, diag);
	o->segsum = a->segsum;
	return MP_OK;
}
