/* context_intern.c - strings, frames and frame sequences held once each. Interned strings are
   compared by pointer from then on, so a frame hashes three words. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context_int.h"
#include "mp_array.h"
#include "mp_hash.h"

mp_err ctx_intern_init(struct ctx_intern *in)
{
	uint32_t empty;

	memset(in, 0, sizeof *in);
	return ctx_intern_seq(in, NULL, 0, &empty);
}

void ctx_intern_free(struct ctx_intern *in)
{
	for (size_t i = 0; i < in->nstrs; i++)
		free(in->strs[i]);
	free(in->strs);
	free(in->frames);
	free(in->pool);
	free(in->seqs);
	mp_table_free(&in->str_index);
	mp_table_free(&in->frame_index);
	mp_table_free(&in->seq_index);
	memset(in, 0, sizeof *in);
}

mp_err ctx_intern_str(struct ctx_intern *in, const char *s, const char **out)
{
	size_t len = strlen(s);
	mp_table_probe p;
	uint32_t id;
	char *copy;
	mp_err err;

	for (id = mp_table_find(&in->str_index, mp_hash_bytes(s, len, 0), &p); id != MP_TABLE_NONE;
	     id = mp_table_next(&in->str_index, &p))
		if (strcmp(in->strs[id], s) == 0) {
			*out = in->strs[id];
			return MP_OK;
		}
	if ((err = mp_array_grow((void **)&in->strs, &in->strs_cap, in->nstrs + 1, sizeof *in->strs)) != MP_OK)
		return err;
	if ((copy = malloc(len + 1)) == NULL)
		return MP_E_NOMEM;
	memcpy(copy, s, len + 1);
	if ((err = mp_table_add(&in->str_index, &p, (uint32_t)in->nstrs)) != MP_OK) {
		free(copy);
		return err;
	}
	in->strs[in->nstrs++] = copy;
	*out = copy;
	return MP_OK;
}

mp_err ctx_intern_frame(struct ctx_intern *in, const char *filename, const char *name, uint64_t line, uint32_t *id)
{
	mp_table_probe p;
	uint64_t h;
	mp_err err;

	if ((err = ctx_intern_str(in, filename, &filename)) != MP_OK || (err = ctx_intern_str(in, name, &name)) != MP_OK)
		return err;
	h = mp_hash_finish(mp_hash_mix(mp_hash_mix(mp_hash_mix(0, (uintptr_t)filename), (uintptr_t)name), line));
	for (*id = mp_table_find(&in->frame_index, h, &p); *id != MP_TABLE_NONE; *id = mp_table_next(&in->frame_index, &p)) {
		const mp_ctx_frame *f = &in->frames[*id];

		if (f->filename == filename && f->name == name && f->line == line)
			return MP_OK;
	}
	if ((err = mp_array_grow((void **)&in->frames, &in->frames_cap, in->nframes + 1, sizeof *in->frames)) != MP_OK ||
	    (err = mp_table_add(&in->frame_index, &p, (uint32_t)in->nframes)) != MP_OK)
		return err;
	in->frames[in->nframes] = (mp_ctx_frame){ filename, name, line };
	*id = (uint32_t)in->nframes++;
	return MP_OK;
}

mp_err ctx_intern_seq(struct ctx_intern *in, const uint32_t *ids, size_t n, uint32_t *seq)
{
	mp_table_probe p;
	mp_err err;

	for (*seq = mp_table_find(&in->seq_index, mp_hash_bytes(ids, n * sizeof *ids, 0), &p); *seq != MP_TABLE_NONE;
	     *seq = mp_table_next(&in->seq_index, &p)) {
		const struct ctx_seq *s = &in->seqs[*seq];

		if (s->n == n && (n == 0 || memcmp(in->pool + s->off, ids, n * sizeof *ids) == 0))
			return MP_OK;
	}
	if ((err = mp_array_grow((void **)&in->pool, &in->pool_cap, in->pool_len + n + 1, sizeof *in->pool)) != MP_OK ||
	    (err = mp_array_grow((void **)&in->seqs, &in->seqs_cap, in->nseqs + 1, sizeof *in->seqs)) != MP_OK ||
	    (err = mp_table_add(&in->seq_index, &p, (uint32_t)in->nseqs)) != MP_OK)
		return err;
	if (n > 0)
		memcpy(in->pool + in->pool_len, ids, n * sizeof *ids);
	in->seqs[in->nseqs] = (struct ctx_seq){ in->pool_len, (uint32_t)n };
	in->pool_len += n;
	*seq = (uint32_t)in->nseqs++;
	return MP_OK;
}

void ctx_trouble_add(struct ctx_trouble *tr, const char *fmt, ...)
{
	va_list ap;

	if (tr->count++ > 0)
		return;
	va_start(ap, fmt);
	vsnprintf(tr->first, sizeof tr->first, fmt, ap);
	va_end(ap);
}
