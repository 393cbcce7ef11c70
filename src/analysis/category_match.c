/* category_match.c - whether a block's traceback meets a rule's frame conditions. */
#include <fnmatch.h>

#include "category_int.h"
#include "mp_frame_filter.h"

/* Whether one of GLOBS (NULL: any) matches S. Heap strings end in a NUL. */
static bool any_glob(const char *const *globs, const char *s)
{
	if (globs == NULL)
		return true;
	for (; *globs != NULL; globs++)
		if (fnmatch(*globs, s, 0) == 0)
			return true;
	return false;
}

static bool frame_meets(const mp_frame_cond *fc, const mp_frame *f)
{
	return any_glob(fc->file, f->filename) && any_glob(fc->function, f->name);
}

/* The frame of FRAMES that meets FC, or -1. */
static int32_t find_frame(const mp_snapshot *snap, const mp_frame_cond *fc, mp_val frames)
{
	size_t n = mp_frames_len(snap, frames);

	for (size_t i = 0; i < n && i < INT32_MAX; i++) {
		mp_frame f;

		if (!mp_frames_get(snap, frames, i, &f))
			continue;
		if (fc->innermost_user && !mp_frame_is_user(&f))
			continue;
		if (frame_meets(fc, &f))
			return (int32_t)i;
		if (fc->innermost_user)
			return -1; /* only the innermost user frame counts */
	}
	return -1;
}

bool category_frames_match(const mp_snapshot *snap, const mp_category_rule *rule, mp_val frames, int32_t *frame)
{
	*frame = -1;
	for (size_t i = 0; i < rule->nframes; i++)
		if ((*frame = find_frame(snap, &rule->frames[i], frames)) < 0)
			return false;
	return true;
}
