/* session_cmd_info.c - `memprof info`: the library, version, layout, backend, devices, settings. */
#include "mp_describe.h"
#include "session_int.h"

static const char *backend_name(const mp_session *s)
{
	switch (s->kind) {
	case ST_PID:
		return "direct: the live process's memory through process_vm_readv or /proc/PID/mem";
	case ST_CORE:
		return "direct: memprof reads the core file itself";
	case ST_CALLBACK:
		return "debugger: reads through the debugger's memory callback";
	case ST_NONE:
		break;
	}
	return "none";
}

int session_cmd_info(mp_session *s, int argc, char **argv)
{
	int npos, rc = session_args(s, "info", argc, argv, NULL, NULL, 0, 0, &npos);

	if (rc != MP_SESSION_OK || (rc = session_walk(s)) != MP_SESSION_OK)
		return rc;
	mp_out_printf(&s->out, "memprof:     %s\n", mp_session_version());
	mp_out_printf(&s->out, "reading:     %s\n", backend_name(s));
	mp_describe_target(&s->out, s->target);
	mp_describe_library(&s->out, &s->walk->c10);
	mp_describe_walk(&s->out, s->walk);
	if (s->kind == ST_CALLBACK)
		mp_out_printf(&s->out, "reads:       %llu calls of the debugger's memory read\n",
			      (unsigned long long)s->reads);
	/* one setting at a time: mp_session_show's numbers share a buffer */
	mp_out_printf(&s->out, "settings:    units %s, device %s", mp_units_name(s->units), mp_session_show(s, "device"));
	mp_out_printf(&s->out, ", layout %s", mp_session_show(s, "layout"));
	mp_out_printf(&s->out, ", max-blocks %s\n", mp_session_show(s, "max-blocks"));
	return MP_SESSION_OK;
}
