/* mp_frame_filter.c - _memory_viz.py's frame filter and the user-frame test built on it. */
#include "mp_frame_filter.h"

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
