/* session_cmd_view.c - the analyses of one snapshot as _memory_viz and memory_summary() print
   them: segsum, stats, segments, memory, trace. */
#include <stdlib.h>

#include "flame_svg.h"
#include "mp_flamelines.h"
#include "mp_memstats.h"
#include "mp_segsum.h"
#include "mp_snapshot_stats.h"
#include "mp_summary.h"
#include "mp_trace_text.h"
#include "session_int.h"

/* The snapshot of the optional positional word (default: now), for the command CMD. */
static int one_snapshot(mp_session *s, const char *cmd, int argc, char **argv, const struct session_opt *opts,
			mp_snapshot **snap, bool *owned)
{
	char *pos[1] = { NULL };
	int npos, rc = session_args(s, cmd, argc, argv, opts, pos, 0, 1, &npos);

	if (rc != MP_SESSION_OK)
		return rc;
	return session_resolve(s, pos[0], snap, owned);
}

static void release(mp_snapshot *snap, bool owned)
{
	if (owned)
		mp_snapshot_free(snap);
}

int session_cmd_segsum(mp_session *s, int argc, char **argv)
{
	mp_snapshot *snap;
	mp_out out;
	mp_diag diag;
	mp_err err;
	bool owned;
	int rc = one_snapshot(s, "segsum", argc, argv, NULL, &snap, &owned);

	if (rc != MP_SESSION_OK)
		return rc;
	mp_out_init(&out);
	session_diag_init(s, &diag);
	err = mp_analysis_segsum(snap, &out, &diag);
	if (err != MP_OK)
		rc = session_fail(s, "segsum", err, &diag);
	else
		session_emit(s, &out, true); /* as the reference's print() */
	if (rc == MP_SESSION_OK && snap->nsegments == 0)
		rc = MP_SESSION_NOTHING;
	mp_out_free(&out);
	release(snap, owned);
	return rc;
}

/* memory_summary() of DEVICE into the run's output. */
static int summary_of(mp_session *s, const mp_snapshot *snap, size_t device, bool abbreviated, size_t *ndevices)
{
	mp_memstats stats;
	mp_out out;
	mp_diag diag;
	mp_err err;
	int rc = MP_SESSION_OK;

	session_diag_init(s, &diag);
	if ((err = mp_snapshot_device_stats(snap, device, &stats, ndevices, &diag)) != MP_OK)
		return session_fail(s, "stats", err, &diag);
	mp_out_init(&out);
	if ((err = mp_analysis_memory_summary(&stats, abbreviated, &out, &diag)) != MP_OK)
		rc = session_fail(s, "stats", err, &diag);
	else
		session_emit(s, &out, true);
	mp_out_free(&out);
	free(stats.v);
	return rc;
}

int session_cmd_stats(mp_session *s, int argc, char **argv)
{
	const char *device_text = NULL;
	bool abbreviated = false, owned;
	const struct session_opt opts[] = {
		{ "--device", &device_text, NULL },
		{ "--abbreviated", NULL, &abbreviated },
		{ NULL, NULL, NULL },
	};
	long device = s->device;
	size_t ndevices = 1;
	mp_snapshot *snap;
	int rc = one_snapshot(s, "stats", argc, argv, opts, &snap, &owned);

	if (rc != MP_SESSION_OK)
		return rc;
	if (device_text != NULL && (!session_parse_long(device_text, &device) || device < 0))
		rc = session_error(s, "stats: --device '%s' is not a device number", device_text);
	else if (device >= 0)
		rc = summary_of(s, snap, (size_t)device, abbreviated, &ndevices);
	else /* every device, one table each */
		for (size_t d = 0; d < ndevices && rc == MP_SESSION_OK; d++)
			rc = summary_of(s, snap, d, abbreviated, &ndevices);
	release(snap, owned);
	return rc;
}

static int flame(mp_session *s, const char *cmd, int argc, char **argv, const char *title,
		 mp_err (*analysis)(const mp_snapshot *, mp_out *, mp_diag *))
{
	const char *path = NULL;
	const struct session_opt opts[] = { { "-o", &path, NULL }, { NULL, NULL, NULL } };
	mp_snapshot *snap;
	mp_out out;
	mp_diag diag;
	mp_err err;
	bool owned;
	int rc = one_snapshot(s, cmd, argc, argv, opts, &snap, &owned);

	if (rc != MP_SESSION_OK)
		return rc;
	mp_out_init(&out);
	session_diag_init(s, &diag);
	err = analysis(snap, &out, &diag);
	if (err == MP_OK && out.err != MP_OK)
		err = out.err;
	if (err == MP_OK && path != NULL)
		err = mp_flame_write(out.data, out.len, path, title, &diag);
	if (err != MP_OK)
		rc = session_fail(s, cmd, err, &diag);
	else if (path == NULL)
		session_emit(s, &out, false);
	else
		mp_out_printf(&s->out, "wrote %s\n", path);
	if (rc == MP_SESSION_OK && out.len == 0)
		rc = MP_SESSION_NOTHING;
	mp_out_free(&out);
	release(snap, owned);
	return rc;
}

int session_cmd_segments(mp_session *s, int argc, char **argv)
{
	return flame(s, "segments", argc, argv, "Memory by segment", mp_analysis_segments);
}

int session_cmd_memory(mp_session *s, int argc, char **argv)
{
	return flame(s, "memory", argc, argv, "Memory by allocation site", mp_analysis_memory);
}

int session_cmd_trace(mp_session *s, int argc, char **argv)
{
	char *pos[2] = { NULL, NULL };
	const char *of = NULL;
	const struct session_opt opts[] = { { "--of", &of, NULL }, { NULL, NULL, NULL } };
	mp_snapshot *snap;
	long n = 0;
	mp_out out;
	mp_diag diag;
	mp_err err;
	bool owned;
	int npos, rc = session_args(s, "trace", argc, argv, opts, pos, 0, 1, &npos);

	if (rc != MP_SESSION_OK)
		return rc;
	if (npos == 1 && (!session_parse_long(pos[0], &n) || n < 0))
		return session_error(s, "trace: '%s' is not a count of events", pos[0]);
	if ((rc = session_resolve(s, of, &snap, &owned)) != MP_SESSION_OK)
		return rc;
	if (!(snap->present & MP_F_TOP_DEVICE_TRACES) || snap->ntrace == 0) {
		mp_out_puts(&s->out, "no trace entries: the allocator records none unless history is on "
				     "(torch.cuda.memory._record_memory_history())\n");
		release(snap, owned);
		return MP_SESSION_NOTHING;
	}
	mp_out_init(&out);
	session_diag_init(s, &diag);
	if ((err = mp_analysis_trace_last(snap, (size_t)n, &out, &diag)) != MP_OK)
		rc = session_fail(s, "trace", err, &diag);
	else
		session_emit(s, &out, true);
	mp_out_free(&out);
	release(snap, owned);
	return rc;
}
