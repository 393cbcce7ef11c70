/* session_cmd_blocks.c - blocks (a filtered list) and block ADDR (who owns an address). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mp_block_query.h"
#include "session_int.h"

int session_cmd_blocks(mp_session *s, int argc, char **argv)
{
	const char *device = NULL, *stream = NULL, *state = NULL, *min_size = NULL, *top = NULL;
	const struct session_opt opts[] = {
		{ "--device", &device, NULL },     { "--stream", &stream, NULL }, { "--state", &state, NULL },
		{ "--min-size", &min_size, NULL }, { "--top", &top, NULL },       { NULL, NULL, NULL },
	};
	char *pos[1] = { NULL };
	mp_block_filter f;
	mp_snapshot *snap;
	size_t nmatched = 0;
	long n;
	mp_out out;
	mp_diag diag;
	mp_err err;
	bool owned;
	int npos, rc = session_args(s, "blocks", argc, argv, opts, pos, 0, 1, &npos);

	if (rc != MP_SESSION_OK)
		return rc;
	mp_block_filter_init(&f);
	f.device = s->device;
	session_diag_init(s, &diag);
	if (device != NULL && strcmp(device, "all") == 0)
		f.device = -1;
	else if (device != NULL && (!session_parse_long(device, &n) || n < 0))
		return session_error(s, "blocks: --device '%s' is not a device number (or all)", device);
	else if (device != NULL)
		f.device = n;
	if (stream != NULL) {
		if (!session_parse_long(stream, &n))
			return session_error(s, "blocks: --stream '%s' is not a stream number", stream);
		f.any_stream = false;
		f.stream = n;
	}
	if (state != NULL && (err = mp_block_states_parse(state, &f.states, &diag)) != MP_OK)
		return session_fail(s, "blocks: --state", err, &diag);
	if (min_size != NULL && !session_parse_size(min_size, &f.min_size))
		return session_error(s, "blocks: --min-size '%s' is not a size (4096, 64KiB, 1.5MiB, ...)", min_size);
	if (top != NULL) {
		if (!session_parse_long(top, &n) || n <= 0)
			return session_error(s, "blocks: --top '%s' is not a positive count", top);
		f.top = (size_t)n;
	}
	if ((rc = session_resolve(s, pos[0], &snap, &owned)) != MP_SESSION_OK)
		return rc;
	mp_out_init(&out);
	if ((err = mp_analysis_blocks(snap, &f, s->units, &out, &nmatched, &diag)) != MP_OK)
		rc = session_fail(s, "blocks", err, &diag);
	else
		session_emit(s, &out, false);
	if (rc == MP_SESSION_OK && nmatched == 0)
		rc = MP_SESSION_NOTHING;
	mp_out_free(&out);
	if (owned)
		mp_snapshot_free(snap);
	return rc;
}

int session_cmd_block(mp_session *s, int argc, char **argv)
{
	char *pos[2] = { NULL, NULL }, *end;
	unsigned long long addr;
	mp_snapshot *snap;
	mp_out out;
	mp_diag diag;
	mp_err err;
	bool owned, found = false;
	int npos, rc = session_args(s, "block", argc, argv, NULL, pos, 1, 2, &npos);

	if (rc != MP_SESSION_OK)
		return rc;
	addr = strtoull(pos[0], &end, 0);
	if (end == pos[0] || *end != '\0')
		return session_error(s, "block: '%s' is not an address", pos[0]);
	if ((rc = session_resolve(s, pos[1], &snap, &owned)) != MP_SESSION_OK)
		return rc;
	mp_out_init(&out);
	session_diag_init(s, &diag);
	if ((err = mp_analysis_block_at(snap, (uint64_t)addr, s->units, &out, &found, &diag)) != MP_OK)
		rc = session_fail(s, "block", err, &diag);
	else if (!found)
		rc = session_error(s, "block: 0x%llx is in no segment of the caching allocator", addr);
	else
		session_emit(s, &out, false);
	mp_out_free(&out);
	if (owned)
		mp_snapshot_free(snap);
	return rc;
}
