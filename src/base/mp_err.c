/* mp_err.c - error texts and diagnostics. */
#include "mp_err.h"

#include <stdio.h>
#include <string.h>

#define MP_ERROR(name, text) text,
static const char *const error_texts[] = { MP_ERRORS };
#undef MP_ERROR

const char *mp_strerror(mp_err err)
{
	if ((unsigned)err >= MP_E__COUNT)
		return "unknown error";
	return error_texts[err];
}

void mp_diag_reset(mp_diag *diag)
{
	diag->msg[0] = '\0';
	diag->nwarn = 0;
}

mp_err mp_fail(mp_diag *diag, mp_err err, const char *fmt, ...)
{
	va_list ap;

	if (diag == NULL || diag->msg[0] != '\0')
		return err;
	va_start(ap, fmt);
	vsnprintf(diag->msg, sizeof diag->msg, fmt, ap);
	va_end(ap);
	return err;
}

static void vwarn(mp_diag *diag, const char *fmt, va_list ap)
{
	char line[512];

	diag->nwarn++;
	if (diag->warn == NULL)
		return;
	vsnprintf(line, sizeof line, fmt, ap);
	diag->warn(diag->warn_ctx, line);
}

void mp_warn(mp_diag *diag, const char *fmt, ...)
{
	va_list ap;

	if (diag == NULL)
		return;
	va_start(ap, fmt);
	vwarn(diag, fmt, ap);
	va_end(ap);
}

void mp_warn_damage(mp_diag *diag, const char *fmt, ...)
{
	va_list ap;

	if (diag == NULL)
		return;
	if (diag->damaged != NULL)
		diag->damaged(diag->warn_ctx);
	va_start(ap, fmt);
	vwarn(diag, fmt, ap);
	va_end(ap);
}

void mp_diag_sink(mp_diag *to, const mp_diag *from)
{
	to->warn = from->warn;
	to->warn_ctx = from->warn_ctx;
	to->damaged = from->damaged;
}
