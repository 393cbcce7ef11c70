/* mp_frame_filter.c - _memory_viz.py's frame filter and the user-frame test built on it. */
#include "mp_frame_filter.h"

#include <stdio.h>
#include <string.h>

/* _frame_filter: frames whose name or filename contains one of these are left out. */
static const char *const omit_names[] = {
	"unwind::unwind", "CapturedTraceback::gather", "gather_with_cpp", "_start",
	"__libc_start_main", "PyEval_", "PyObject_", "PyFunction_",
};
static const char *const omit_filenames[] = {
	"core/boxing", "/Register", "/Redispatch", "pythonrun.c", "Modules/main.c",
	"Objects/call.c", "Objects/methodobject.c", "pycore_ceval.h", "ceval.c",
	"cpython/abstract.h",
};

static bool contains(const char *hay, size_t n, const char *needle)
{
	return memmem(hay, n, needle, strlen(needle)) != NULL;
}

static bool contains_any(const char *hay, size_t n, const char *const *needles, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (contains(hay, n, needles[i]))
			return true;
	return false;
}

bool mp_frame_kept(const mp_frame *fr)
{
	return !contains_any(fr->name, fr->name_len, omit_names, sizeof omit_names / sizeof omit_names[0]) &&
	       !contains_any(fr->filename, fr->filename_len, omit_filenames,
			     sizeof omit_filenames / sizeof omit_filenames[0]);
}

static bool is_python(const mp_frame *fr)
{
	size_t n = fr->filename_len;

	return (n >= 3 && memcmp(fr->filename + n - 3, ".py", 3) == 0) || (n > 0 && fr->filename[0] == '<');
}

static bool in_torch(const mp_frame *fr)
{
	return contains(fr->filename, fr->filename_len, "/torch/") ||
	       (fr->filename_len >= 6 && memcmp(fr->filename, "torch/", 6) == 0);
}

bool mp_frame_is_user(const mp_frame *fr)
{
	return mp_frame_kept(fr) && is_python(fr) && !in_torch(fr);
}

bool mp_frame_is_own(const mp_frame *fr)
{
	static const char *const installed[] = { "/site-packages/", "/dist-packages/", "/lib/python3" };

	return mp_frame_is_user(fr) &&
	       !contains_any(fr->filename, fr->filename_len, installed, sizeof installed / sizeof installed[0]);
}

bool mp_frames_place(const mp_snapshot *snap, mp_val frames, mp_frame *out)
{
	size_t count = mp_frames_len(snap, frames);
	bool (*const tests[])(const mp_frame *) = { mp_frame_is_own, mp_frame_is_user, is_python };

	for (size_t t = 0; t < sizeof tests / sizeof tests[0]; t++)
		for (size_t i = 0; i < count; i++)
			if (mp_frames_get(snap, frames, i, out) && tests[t](out))
				return true;
	return false;
}

const char *mp_frames_site(const mp_snapshot *snap, mp_val frames, char *buf, size_t n)
{
	mp_frame f;
	const char *base;

	if (n > 0)
		buf[0] = '\0';
	if (!mp_frames_place(snap, frames, &f))
		return buf;
	base = f.filename;
	for (size_t k = 0; k < f.filename_len; k++)
		if (f.filename[k] == '/')
			base = f.filename + k + 1;
	snprintf(buf, n, "%.*s:%lld (%.*s)", (int)(f.filename_len - (size_t)(base - f.filename)), base, (long long)f.line,
		 (int)f.name_len, f.name);
	return buf;
}
