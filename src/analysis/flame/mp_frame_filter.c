/* mp_frame_filter.c - _memory_viz.py's frame filter and the user-frame test built on it. */
#include "mp_frame_filter.h"

#include <stdint.h>
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

bool mp_path_installed(const char *file, size_t len)
{
	static const char *const dirs[] = { "/site-packages/", "/dist-packages/", "/torch/", "<frozen " };
	const char *lib;

	if (contains_any(file, len, dirs, sizeof dirs / sizeof dirs[0]) || (len >= 6 && memcmp(file, "torch/", 6) == 0))
		return true;
	/* the standard library: .../lib/python3.N/ (or lib64) */
	for (const char *p = file; (lib = memmem(p, len - (size_t)(p - file), "/python3.", 9)) != NULL; p = lib + 1) {
		const char *q = lib + 9;

		while (q < file + len && *q >= '0' && *q <= '9')
			q++;
		if (q > lib + 9 && q < file + len && *q == '/' && lib >= file + 4 &&
		    (memcmp(lib - 4, "/lib", 4) == 0 || (lib >= file + 6 && memcmp(lib - 6, "/lib64", 6) == 0)))
			return true;
	}
	return false;
}

bool mp_frame_is_own(const mp_frame *fr)
{
	return mp_frame_is_user(fr) && !mp_path_installed(fr->filename, fr->filename_len);
}

int mp_frame_place_rank(const mp_frame *f)
{
	if (f->filename_len == 0 || f->filename[0] == '?' || !mp_frame_kept(f))
		return 0;
	if (mp_frame_is_own(f))
		return 4;
	if (mp_frame_is_user(f))
		return 3;
	if (is_python(f))
		return 2;
	return !contains(f->filename, f->filename_len, "memory_snapshot.cpp");
}

bool mp_frames_place(const mp_snapshot *snap, mp_val frames, mp_frame *out)
{
	size_t n = mp_frames_len(snap, frames), best = SIZE_MAX;
	int rank = 0; /* of BEST */
	mp_frame f;

	for (size_t i = 0; i < n && rank < 4; i++) {
		int r = mp_frames_get(snap, frames, i, &f) ? mp_frame_place_rank(&f) : 0;

		if (r > rank) {
			rank = r;
			best = i;
		}
	}
	return best != SIZE_MAX && mp_frames_get(snap, frames, best, out);
}

const char *mp_frame_site_text(const mp_frame *f, char *buf, size_t n)
{
	const char *base = f->filename;

	for (size_t k = 0; k < f->filename_len; k++)
		if (f->filename[k] == '/')
			base = f->filename + k + 1;
	snprintf(buf, n, "%.*s:%lld (%.*s)", (int)(f->filename_len - (size_t)(base - f->filename)), base,
		 (long long)f->line, (int)f->name_len, f->name);
	return buf;
}

const char *mp_frames_site(const mp_snapshot *snap, mp_val frames, char *buf, size_t n)
{
	mp_frame f;

	if (n > 0)
		buf[0] = '\0';
	return mp_frames_place(snap, frames, &f) ? mp_frame_site_text(&f, buf, n) : buf;
}
