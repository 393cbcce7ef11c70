/* session_cmd_categories.c - `memprof categories`: what the memory is, as the CLI's command. */
#include <stdlib.h>
#include <string.h>

#include "mp_category.h"
#include "session_int.h"

/* Read the options of A and DEVICE into O; the values the CLI shares are read by
   mp_category_args_read. */
static int category_options(mp_session *s, const mp_category_args *a, const char *device, mp_category_opts *o)
{
	mp_diag diag = { 0 };
	long n;

	if (mp_category_args_read(a, o, &diag) != MP_OK)
		return session_error(s, "%s", diag.msg);
	if (device != NULL && strcmp(device, "all") != 0) {
		if (!session_parse_long(device, &n) || n < 0)
			return session_error(s, "categories: --device '%s' is not a device number (or all)", device);
		o->device = n;
	}
	return MP_SESSION_OK;
}

/* The words of ARGV without the count after a --sites (into *COUNT): --sites takes one only
   when it is a count, which the option table cannot say. WORDS has room for ARGC. */
static int take_sites_count(int argc, char **argv, char **words, const char **count)
{
	int n = 0;

	for (int i = 0; i < argc; i++) {
		words[n++] = argv[i];
		if (strcmp(argv[i], "--") == 0) {
			while (++i < argc)
				words[n++] = argv[i];
			break;
		}
		if (strcmp(argv[i], "--sites") == 0 && i + 1 < argc && mp_category_is_count(argv[i + 1]))
			*count = argv[++i];
	}
	return n;
}

int session_cmd_categories(mp_session *s, int argc, char **argv)
{
	const char *rules = NULL, *device = NULL;
	mp_category_args a = { 0 };
	const struct session_opt opts[] = {
		{ "--scheme", &a.scheme, NULL }, { "--rules", &rules, NULL },     { "--format", &a.format, NULL },
		{ "--explain", &a.explain, NULL }, { "--device", &device, NULL }, { "--by", &a.by, NULL },
		{ "--sites", NULL, &a.sites },   { "--segsum", NULL, &a.segsum }, { NULL, NULL, NULL },
	};
	char *pos[1] = { NULL }, **words = malloc((argc > 0 ? (size_t)argc : 1) * sizeof *words);
	mp_category_ruleset *set = NULL;
	mp_category_opts o;
	mp_snapshot *snap = NULL;
	mp_out out;
	mp_diag diag;
	mp_err err;
	bool owned = false;
	int npos, rc;

	if (words == NULL)
		return session_error(s, "categories: out of memory");
	rc = session_args(s, "categories", take_sites_count(argc, argv, words, &a.sites_count), words, opts, pos, 0,
			  1, &npos);
	free(words);
	if (rc != MP_SESSION_OK)
		return rc;
	mp_category_opts_init(&o);
	o.units = s->units;
	o.device = s->device;
	if ((rc = category_options(s, &a, device, &o)) != MP_SESSION_OK)
		return rc;
	session_diag_init(s, &diag);
	if (rules != NULL && (err = mp_category_rules_load(rules, &set, &diag)) != MP_OK)
		return session_fail(s, "categories", err, &diag);
	o.rules = set;
	if ((rc = session_resolve(s, pos[0], &snap, &owned)) == MP_SESSION_OK) {
		mp_out_init(&out);
		if ((err = mp_analysis_categories(snap, &o, &out, &diag)) != MP_OK)
			rc = session_fail(s, "categories", err, &diag);
		else
			session_emit(s, &out, false);
		mp_out_free(&out);
	}
	if (owned)
		mp_snapshot_free(snap);
	mp_category_ruleset_free(set);
	return rc;
}
