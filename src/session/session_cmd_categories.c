/* session_cmd_categories.c - `memprof categories`: what the memory is, as the CLI's command. */
#include <stdlib.h>
#include <string.h>

#include "mp_category.h"
#include "session_int.h"

/* Read the options into O (RULES loaded when named). */
static int category_options(mp_session *s, const char *scheme, const char *format, const char *explain,
			    const char *device, mp_category_opts *o)
{
	char *end;
	long n;

	if (scheme != NULL && !mp_category_scheme_parse(scheme, &o->scheme))
		return session_error(s, "categories: --scheme '%s' is neither profiler nor tracker", scheme);
	if (format == NULL || strcmp(format, "plain") == 0)
		o->format = MP_CFMT_PLAIN;
	else if (strcmp(format, "rst") == 0)
		o->format = MP_CFMT_RST;
	else if (strcmp(format, "json") == 0)
		o->format = MP_CFMT_JSON;
	else
		return session_error(s, "categories: --format '%s' is none of plain, rst, json", format);
	if (explain != NULL) {
		o->explain = true;
		o->explain_addr = strtoull(explain, &end, 0);
		if (end == explain || *end != '\0')
			return session_error(s, "categories: --explain '%s' is not an address", explain);
	}
	if (device != NULL && strcmp(device, "all") != 0) {
		if (!session_parse_long(device, &n) || n < 0)
			return session_error(s, "categories: --device '%s' is not a device number (or all)", device);
		o->device = n;
	}
	return MP_SESSION_OK;
}

int session_cmd_categories(mp_session *s, int argc, char **argv)
{
	const char *scheme = NULL, *rules = NULL, *format = NULL, *explain = NULL, *device = NULL;
	const struct session_opt opts[] = {
		{ "--scheme", &scheme, NULL }, { "--rules", &rules, NULL },   { "--format", &format, NULL },
		{ "--explain", &explain, NULL }, { "--device", &device, NULL }, { NULL, NULL, NULL },
	};
	char *pos[1] = { NULL };
	mp_category_ruleset *set = NULL;
	mp_category_opts o;
	mp_snapshot *snap = NULL;
	mp_out out;
	mp_diag diag;
	mp_err err;
	bool owned = false;
	int npos, rc = session_args(s, "categories", argc, argv, opts, pos, 0, 1, &npos);

	if (rc != MP_SESSION_OK)
		return rc;
	mp_category_opts_init(&o);
	o.units = s->units;
	o.device = s->device;
	if ((rc = category_options(s, scheme, format, explain, device, &o)) != MP_SESSION_OK)
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
