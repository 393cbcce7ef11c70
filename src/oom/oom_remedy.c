/* oom_remedy.c - one claim about another run, added to the explanation: its id, whether it would have worked,
   what to do, why; the caller adds its evidence and the setting or place it names. */
#include <stdarg.h>
#include <stdio.h>

#include "oom_int.h"

static const char *const evidence_names[] = { "state", "replay" };

const char *mp_oom_evidence_name(enum mp_oom_evidence e)
{
	return (unsigned)e < sizeof evidence_names / sizeof evidence_names[0] ? evidence_names[e] : "?";
}

mp_oom_remedy *oom_remedy_vadd(mp_oom *o, enum mp_oom_remedy_id id, bool works, const char *action, const char *fmt,
			       va_list ap)
{
	mp_oom_remedy *r;

	if (o->nremedies >= MP_OOM_MAX_REMEDIES)
		return NULL;
	r = &o->remedies[o->nremedies++];
	*r = (mp_oom_remedy){ .id = id, .works = works, .place_line = -1 };
	snprintf(r->action, sizeof r->action, "%s", action);
	vsnprintf(r->why, sizeof r->why, fmt, ap);
	return r;
}

mp_oom_remedy *oom_remedy_add(mp_oom *o, enum mp_oom_remedy_id id, bool works, const char *action, const char *fmt, ...)
{
	va_list ap;
	mp_oom_remedy *r;

	va_start(ap, fmt);
	r = oom_remedy_vadd(o, id, works, action, fmt, ap);
	va_end(ap);
	return r;
}
