/* target_callback.c - a target over a caller's read function (a debugger's memory). */
#include "target_int.h"

#include <stdlib.h>

struct callback_src {
	mp_read_fn read;
	void *ctx;
};

static size_t callback_read(mp_target *t, uint64_t addr, void *buf, size_t len)
{
	struct callback_src *s = t->src;
	size_t n = s->read(s->ctx, addr, buf, len);

	return n < len ? n : len;
}

static void callback_close(mp_target *t)
{
	free(t->src);
}

static const struct target_ops callback_ops = {
	.read = callback_read,
	.explain = NULL,
	.close = callback_close,
};

mp_err mp_target_open_callback(const char *name, mp_read_fn read, void *ctx, const mp_mapping *maps,
			       size_t nmaps, mp_target **out, mp_diag *diag)
{
	struct callback_src *s;
	mp_target *t;
	mp_err err;

	*out = NULL;
	if (read == NULL)
		return mp_fail(diag, MP_E_USAGE, "no read function given");
	s = calloc(1, sizeof *s);
	if (s == NULL)
		return mp_fail(diag, MP_E_NOMEM, "out of memory");
	s->read = read;
	s->ctx = ctx;
	if ((err = target_new(MP_TARGET_CALLBACK, &callback_ops, s, name != NULL ? name : "callback",
			      &t, diag)) != MP_OK) {
		free(s);
		return err;
	}
	for (size_t i = 0; i < nmaps; i++) {
		if (maps[i].end <= maps[i].start || maps[i].path == NULL) {
			mp_target_close(t);
			return mp_fail(diag, MP_E_USAGE, "mapping %zu is empty or has no path", i);
		}
		err = target_add_mapping(t, maps[i].start, maps[i].end, maps[i].file_offset,
					 maps[i].path, maps[i].local_path, diag);
		if (err != MP_OK) {
			mp_target_close(t);
			return err;
		}
	}
	target_sort_mappings(t);
	*out = t;
	return MP_OK;
}
