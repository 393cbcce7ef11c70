/* session_cmd_timeline.c - `memprof timeline`: bytes per category over time from the trace ring,
   as the CLI's command. */
#include <string.h>

#include "mp_file.h"
#include "mp_timeline.h"
#include "session_int.h"

/* Read the options into *F, *V and *DEVICE. */
static int timeline_options(mp_session *s, const char *path, const char *format, const char *scheme,
			    const char *device, enum mp_timeline_format *f, mp_timeline_view *v, long *dev)
{
	*f = MP_TLF_SUMMARY;
	if (format != NULL && !mp_timeline_format_parse(format, f))
		return session_error(s, "timeline: --format '%s' is none of json, raw, html, svg", format);
	if (format == NULL && path != NULL && !mp_timeline_format_of_path(path, f))
		return session_error(s, "timeline: cannot tell the format of '%s' (.json, .raw.json, .html, .svg): "
				     "give --format", path);
	if (*f != MP_TLF_SUMMARY && path == NULL)
		return session_error(s, "timeline: --format %s writes a file: give -o FILE", format);
	if (scheme != NULL && !mp_category_scheme_parse(scheme, &v->scheme))
		return session_error(s, "timeline: --scheme '%s' is neither profiler nor tracker", scheme);
	if (device != NULL && strcmp(device, "all") == 0)
		*dev = -1;
	else if (device != NULL && (!session_parse_long(device, dev) || *dev < 0))
		return session_error(s, "timeline: --device '%s' is not a device number (or all)", device);
	return MP_SESSION_OK;
}

/* Build SNAP's timeline and write it: to PATH, else into the run's output. */
static int timeline_of(mp_session *s, const mp_snapshot *snap, const mp_category_ruleset *rules, long device,
		       enum mp_timeline_format f, const mp_timeline_view *v, const char *path)
{
	mp_timeline *tl = NULL;
	mp_out out;
	mp_diag diag;
	mp_err err;
	int rc = MP_SESSION_OK;

	session_diag_init(s, &diag);
	mp_out_init(&out);
	err = mp_timeline_build(snap, rules, device, &tl, &diag);
	if (err == MP_OK)
		err = mp_timeline_write(tl, f, v, &out, &diag);
	if (err == MP_OK && path != NULL)
		err = mp_file_write(path, out.data, out.len, &diag);
	if (err == MP_E_NOTFOUND) { /* no ring: nothing to show, as the output says */
		mp_out_printf(&s->out, "%s\n", diag.msg);
		rc = MP_SESSION_NOTHING;
	} else if (err != MP_OK) {
		rc = session_fail(s, "timeline", err, &diag);
	} else if (path != NULL) {
		mp_out_printf(&s->out, "wrote %s\n", path);
	} else {
		session_emit(s, &out, false);
	}
	mp_out_free(&out);
	mp_timeline_free(tl);
	return rc;
}

int session_cmd_timeline(mp_session *s, int argc, char **argv)
{
	const char *path = NULL, *format = NULL, *scheme = NULL, *rules = NULL, *device = NULL;
	const struct session_opt opts[] = {
		{ "-o", &path, NULL },           { "--format", &format, NULL }, { "--scheme", &scheme, NULL },
		{ "--rules", &rules, NULL },     { "--device", &device, NULL }, { NULL, NULL, NULL },
	};
	char *pos[1] = { NULL };
	mp_timeline_view v = { MP_SCHEME_PROFILER, s->units };
	enum mp_timeline_format f;
	mp_category_ruleset *set = NULL;
	mp_snapshot *snap = NULL;
	mp_diag diag;
	mp_err err;
	long dev = s->device;
	bool owned = false;
	int npos, rc = session_args(s, "timeline", argc, argv, opts, pos, 0, 1, &npos);

	if (rc != MP_SESSION_OK)
		return rc;
	if ((rc = timeline_options(s, path, format, scheme, device, &f, &v, &dev)) != MP_SESSION_OK)
		return rc;
	session_diag_init(s, &diag);
	if (rules != NULL && (err = mp_category_rules_load(rules, &set, &diag)) != MP_OK)
		return session_fail(s, "timeline", err, &diag);
	if ((rc = session_resolve(s, pos[0], &snap, &owned)) == MP_SESSION_OK)
		rc = timeline_of(s, snap, set, dev, f, &v, path);
	if (owned)
		mp_snapshot_free(snap);
	mp_category_ruleset_free(set);
	return rc;
}
