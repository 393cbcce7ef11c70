/* timeline_write.c - a timeline in the form a user asked for, by name or by file name, for
   both front ends (the CLI and the debugger session). */
#include <string.h>

#include "mp_timeline.h"

static const struct {
	const char *name, *suffix;
	enum mp_timeline_format f;
} forms[] = {
	/* .raw.json before .json: the longer suffix decides */
	{ "raw", ".raw.json", MP_TLF_RAW },
	{ "json", ".json", MP_TLF_JSON },
	{ "html", ".html", MP_TLF_HTML },
	{ "svg", ".svg", MP_TLF_SVG },
};

#define NFORMS (sizeof forms / sizeof forms[0])

bool mp_timeline_format_parse(const char *name, enum mp_timeline_format *out)
{
	for (size_t i = 0; i < NFORMS; i++)
		if (strcmp(name, forms[i].name) == 0) {
			*out = forms[i].f;
			return true;
		}
	return false;
}

bool mp_timeline_format_of_path(const char *path, enum mp_timeline_format *out)
{
	size_t n = strlen(path);

	for (size_t i = 0; i < NFORMS; i++) {
		size_t m = strlen(forms[i].suffix);

		if (n >= m && strcmp(path + n - m, forms[i].suffix) == 0) {
			*out = forms[i].f;
			return true;
		}
	}
	return false;
}

mp_err mp_timeline_write(const mp_timeline *tl, enum mp_timeline_format f, const mp_timeline_view *v, mp_out *out,
			 mp_diag *diag)
{
	/* The profiler's files, like its export calls, are of one device. */
	if (f != MP_TLF_SUMMARY && f != MP_TLF_HTML && tl->ndevices > 1)
		return mp_fail(diag, MP_E_USAGE, "timeline: %zu devices have trace rings (%lld, %lld%s): choose one with "
			       "--device", tl->ndevices, (long long)tl->devices[0].device,
			       (long long)tl->devices[1].device, tl->ndevices > 2 ? ", ..." : "");
	switch (f) {
	case MP_TLF_JSON:
		mp_timeline_json(&tl->devices[0], out);
		return out->err;
	case MP_TLF_RAW:
		return mp_timeline_raw(&tl->devices[0], out, diag);
	case MP_TLF_SVG:
		return mp_timeline_svg(&tl->devices[0], v, true, out, diag);
	case MP_TLF_HTML:
		return mp_timeline_html(tl, v, out, diag);
	case MP_TLF_SUMMARY:
	default:
		mp_timeline_summary(tl, v, out);
		return out->err;
	}
}
