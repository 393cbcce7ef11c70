/* category_names.c - the category names of torch.profiler and of MemTracker, and how one
   scheme shows the other's categories. */
#include <strings.h>

#include "mp_category.h"

static const char *const profiler_names[MP_CAT__COUNT] = {
	[MP_CAT_PARAMETER] = "PARAMETER",
	[MP_CAT_OPTIMIZER_STATE] = "OPTIMIZER_STATE",
	[MP_CAT_INPUT] = "INPUT",
	[MP_CAT_TEMPORARY] = "TEMPORARY",
	[MP_CAT_ACTIVATION] = "ACTIVATION",
	[MP_CAT_GRADIENT] = "GRADIENT",
	[MP_CAT_AUTOGRAD_DETAIL] = "AUTOGRAD_DETAIL",
	[MP_CAT_BUFFER] = "BUFFER",
	[MP_CAT_UNKNOWN] = "UNKNOWN",
};

/* torch.distributed._tools.mem_tracker._MemRefType's values. */
static const char *const tracker_names[MP_CAT__COUNT] = {
	[MP_CAT_PARAMETER] = "Parameter",
	[MP_CAT_OPTIMIZER_STATE] = "Optstate",
	[MP_CAT_INPUT] = "Input",
	[MP_CAT_TEMPORARY] = "Temp",
	[MP_CAT_ACTIVATION] = "Activation",
	[MP_CAT_GRADIENT] = "Gradient",
	[MP_CAT_AUTOGRAD_DETAIL] = "AutogradDetail",
	[MP_CAT_BUFFER] = "Buffer",
	[MP_CAT_UNKNOWN] = "Unknown",
};

static const enum mp_category profiler_rows[] = {
	MP_CAT_PARAMETER, MP_CAT_OPTIMIZER_STATE, MP_CAT_INPUT, MP_CAT_TEMPORARY,
	MP_CAT_ACTIVATION, MP_CAT_GRADIENT, MP_CAT_AUTOGRAD_DETAIL, MP_CAT_UNKNOWN,
};

static const enum mp_category tracker_rows[] = {
	MP_CAT_PARAMETER, MP_CAT_BUFFER, MP_CAT_GRADIENT, MP_CAT_ACTIVATION,
	MP_CAT_TEMPORARY, MP_CAT_OPTIMIZER_STATE, MP_CAT_UNKNOWN,
};

const enum mp_category *mp_category_rows(enum mp_category_scheme scheme, size_t *n)
{
	if (scheme == MP_SCHEME_TRACKER) {
		*n = sizeof tracker_rows / sizeof tracker_rows[0];
		return tracker_rows;
	}
	*n = sizeof profiler_rows / sizeof profiler_rows[0];
	return profiler_rows;
}

enum mp_category mp_category_in(enum mp_category c, enum mp_category_scheme scheme)
{
	if (scheme == MP_SCHEME_TRACKER) {
		/* MemTracker's Temp is what the backward pass allocates besides gradients;
		   it has no inputs: those stay unknown rather than pass for something else. */
		if (c == MP_CAT_AUTOGRAD_DETAIL)
			return MP_CAT_TEMPORARY;
		return c == MP_CAT_INPUT ? MP_CAT_UNKNOWN : c;
	}
	/* The profiler has no buffers: state the forward reads that no gradient updates (running
	   statistics, masks, constants) is INPUT by its data flow (_set_inputs). */
	return c == MP_CAT_BUFFER ? MP_CAT_INPUT : c;
}

char mp_category_letter(enum mp_category c)
{
	/* One letter per internal category, so both schemes draw with the same letters. */
	static const char letters[MP_CAT__COUNT] = {
		[MP_CAT_PARAMETER] = 'P', [MP_CAT_OPTIMIZER_STATE] = 'O', [MP_CAT_INPUT] = 'I',
		[MP_CAT_TEMPORARY] = 'T', [MP_CAT_ACTIVATION] = 'A', [MP_CAT_GRADIENT] = 'G',
		[MP_CAT_AUTOGRAD_DETAIL] = 'D', [MP_CAT_BUFFER] = 'B', [MP_CAT_UNKNOWN] = 'U',
	};

	return (unsigned)c < MP_CAT__COUNT ? letters[c] : '?';
}

const char *mp_category_name(enum mp_category c, enum mp_category_scheme scheme)
{
	if ((unsigned)c >= MP_CAT__COUNT)
		return "?";
	return scheme == MP_SCHEME_TRACKER ? tracker_names[c] : profiler_names[c];
}

/* _MemRefType's member names (PARAM, GRAD, ...) where they differ from its values. */
static const struct {
	const char *name;
	enum mp_category c;
} aliases[] = {
	{ "Act", MP_CAT_ACTIVATION },
	{ "Grad", MP_CAT_GRADIENT },
	{ "Param", MP_CAT_PARAMETER },
	{ "Opt", MP_CAT_OPTIMIZER_STATE },
};

static bool same(const char *name, size_t len, const char *known)
{
	size_t i = 0;

	for (; i < len && known[i] != '\0'; i++)
		if (name[i] == '\0' || strncasecmp(name + i, known + i, 1) != 0)
			return false;
	return i == len && known[i] == '\0';
}

bool mp_category_parse(const char *name, size_t len, enum mp_category *out)
{
	for (int c = 0; c < MP_CAT__COUNT; c++) {
		if (same(name, len, profiler_names[c]) || same(name, len, tracker_names[c])) {
			*out = (enum mp_category)c;
			return true;
		}
	}
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
		if (same(name, len, aliases[i].name)) {
			*out = aliases[i].c;
			return true;
		}
	}
	return false;
}

bool mp_category_scheme_parse(const char *text, enum mp_category_scheme *out)
{
	if (strcasecmp(text, "profiler") == 0)
		*out = MP_SCHEME_PROFILER;
	else if (strcasecmp(text, "tracker") == 0)
		*out = MP_SCHEME_TRACKER;
	else
		return false;
	return true;
}
