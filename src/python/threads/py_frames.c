/* py_frames.c - one thread's Python frames, innermost first: 3.10's PyFrameObject chain (f_back, f_lasti in
   code units) and the _PyInterpreterFrame chain of 3.11 on (previous, the instruction pointer against the
   code's co_code_adaptive), skipping the frames the interpreter itself does not show (owned by the C stack,
   or not yet started). Every chain is bounded and checked for loops; a code object that cannot be read gives
   a frame named "??" and a warning, and the walk goes on. */
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "mp_table.h"
#include "py_threads_int.h"

struct code_entry {
	uint64_t addr;
	bool ok;
	int firsttraceable; /* _co_firsttraceable (3.11 on), in code units */
	mp_py_code code;
};

struct py_code_cache {
	struct code_entry *entries;
	size_t n, cap;
	mp_table index;
};

struct py_code_cache *py_code_cache_new(void)
{
	return calloc(1, sizeof(struct py_code_cache));
}

void py_code_cache_free(struct py_code_cache *cache)
{
	if (cache == NULL)
		return;
	for (size_t i = 0; i < cache->n; i++)
		mp_py_code_free(&cache->entries[i].code);
	free(cache->entries);
	mp_table_free(&cache->index);
	free(cache);
}

/* The code object at ADDR, read on first use (*OUT NULL when it cannot be read: warned once). */
static mp_err code_at(mp_target *t, const mp_py_interp *py, const py_thread_layout *l, struct py_code_cache *cache,
		      uint64_t addr, const struct code_entry **out, mp_diag *diag)
{
	mp_table_probe p;
	struct code_entry *e;
	mp_diag why = { 0 };
	uint32_t id, first = 0;
	mp_err err;

	id = mp_table_find_u64(&cache->index, addr, cache->entries, sizeof *cache->entries, 0, &p);
	if (id != MP_TABLE_NONE) {
		*out = cache->entries[id].ok ? &cache->entries[id] : NULL;
		return MP_OK;
	}
	if ((err = mp_array_grow((void **)&cache->entries, &cache->cap, cache->n + 1, sizeof *cache->entries)) != MP_OK ||
	    (err = mp_table_add(&cache->index, &p, (uint32_t)cache->n)) != MP_OK)
		return err;
	e = &cache->entries[cache->n++];
	*e = (struct code_entry){ .addr = addr };
	err = mp_py_read_code(t, py->layout, &py->types, addr, &e->code, &why);
	if (err == MP_E_NOMEM)
		return err;
	if (err == MP_OK && l->code_firsttraceable != 0 &&
	    mp_target_read_u32(t, addr + l->code_firsttraceable, &first, &why) != MP_OK) {
		mp_py_code_free(&e->code);
		err = MP_E_CORRUPT;
	}
	e->ok = err == MP_OK;
	e->firsttraceable = (int)(first & 0xffffff);
	if (!e->ok)
		mp_warn_damage(diag, "python frames: code object at 0x%llx: %s", (unsigned long long)addr, why.msg);
	*out = e->ok ? e : NULL;
	return MP_OK;
}

/* Append the frame at FRAME (its code CODE at byte offset LASTI) to TH. */
static mp_err add_frame(mp_py_thread *th, size_t *cap, uint64_t frame, uint64_t code, int lasti,
			const mp_py_layout *pl, const struct code_entry *c)
{
	mp_py_frame *f;
	mp_err err;

	if ((err = mp_array_grow((void **)&th->frames, cap, th->nframes + 1, sizeof *th->frames)) != MP_OK)
		return err;
	f = &th->frames[th->nframes];
	*f = (mp_py_frame){ .frame = frame, .code = code, .lasti = lasti, .line = -1 };
	f->filename = strdup(c != NULL ? c->code.filename : "??");
	f->name = strdup(c != NULL ? c->code.name : "??");
	f->qualname = strdup(c != NULL && c->code.qualname != NULL ? c->code.qualname : f->name != NULL ? f->name : "");
	if (f->filename == NULL || f->name == NULL || f->qualname == NULL) {
		free(f->filename);
		free(f->name);
		free(f->qualname);
		return MP_E_NOMEM;
	}
	if (c != NULL)
		f->line = mp_py_code_line(pl, &c->code, lasti);
	th->nframes++;
	return MP_OK;
}

/* What one step of the chain found: the code, where it is, and whether the interpreter shows it. */
struct step {
	uint64_t code, next;
	int lasti;
	bool shown, lasti_ok;
};

/* Read the frame at FRAME (3.11 on): what cannot be read into WHY, a code object that cannot be read is a
   warning through DIAG. */
static mp_err read_interp_frame(mp_target *t, const mp_py_interp *py, const py_thread_layout *l,
				struct py_code_cache *cache, uint64_t frame, struct step *s,
				const struct code_entry **c, mp_diag *why, mp_diag *diag)
{
	uint64_t ip = 0;
	uint8_t owner = 0;
	mp_err err;

	*c = NULL;
	if ((err = mp_target_read_u64(t, frame + l->f_back, &s->next, why)) != MP_OK ||
	    (err = mp_target_read_u64(t, frame + l->f_code, &s->code, why)) != MP_OK ||
	    (err = mp_target_read_u64(t, frame + l->f_lasti, &ip, why)) != MP_OK ||
	    (err = mp_target_read_u8(t, frame + l->f_owner, &owner, why)) != MP_OK)
		return err;
	if (l->code_tagged)
		s->code &= ~(uint64_t)7;
	if (l->owner_cstack >= 0 && owner >= l->owner_cstack)
		return MP_OK; /* a shim the C stack owns: not a Python frame */
	if ((err = code_at(t, py, l, cache, s->code, c, diag)) != MP_OK)
		return err;
	s->shown = true;
	if (*c == NULL)
		return MP_OK;
	/* the instruction's byte offset in co_code_adaptive: within reason, else no line */
	if (ip >= s->code + l->code_adaptive - 2 && ip - (s->code + l->code_adaptive) < (1u << 28) + 2) {
		int64_t off = (int64_t)(ip - (s->code + l->code_adaptive));

		s->lasti = (int)off;
		s->lasti_ok = true;
		/* not started yet (before RESUME): the interpreter hides it, unless a generator owns it */
		if (owner != l->owner_generator && off < 2 * (int64_t)(*c)->firsttraceable)
			s->shown = false;
	}
	return MP_OK;
}

/* Read the frame object at FRAME (3.10); WHY and DIAG as read_interp_frame's. */
static mp_err read_frame_object(mp_target *t, const mp_py_interp *py, const py_thread_layout *l,
				struct py_code_cache *cache, uint64_t frame, struct step *s,
				const struct code_entry **c, mp_diag *why, mp_diag *diag)
{
	uint32_t lasti;
	mp_err err;

	if ((err = mp_target_read_u64(t, frame + l->f_back, &s->next, why)) != MP_OK ||
	    (err = mp_target_read_u64(t, frame + l->f_code, &s->code, why)) != MP_OK ||
	    (err = mp_target_read_u32(t, frame + l->f_lasti, &lasti, why)) != MP_OK ||
	    (err = code_at(t, py, l, cache, s->code, c, diag)) != MP_OK)
		return err;
	s->shown = true;
	if ((int32_t)lasti >= -1 && (int32_t)lasti < 1 << 27) {
		s->lasti = 2 * (int32_t)lasti;
		s->lasti_ok = true;
	}
	return MP_OK;
}

/* The first frame of TSTATE: 0 when it runs no Python code. */
static mp_err first_frame(mp_target *t, const py_thread_layout *l, uint64_t tstate, uint64_t *out, mp_diag *diag)
{
	uint64_t cframe;
	mp_err err;

	if (l->ts_cframe == 0)
		return mp_target_read_u64(t, tstate + l->ts_frame, out, diag);
	if ((err = mp_target_read_u64(t, tstate + l->ts_cframe, &cframe, diag)) != MP_OK)
		return err;
	*out = 0;
	return cframe == 0 ? MP_OK : mp_target_read_u64(t, cframe + l->cframe_current, out, diag);
}

/* Whether FRAME was seen before in this chain; if not, it is remembered. */
static mp_err seen_before(mp_table *seen, uint64_t **addrs, size_t *n, size_t *cap, uint64_t frame, bool *out)
{
	mp_table_probe p;
	mp_err err;

	*out = mp_table_find_u64(seen, frame, *addrs, sizeof **addrs, 0, &p) != MP_TABLE_NONE;
	if (*out)
		return MP_OK;
	if ((err = mp_array_grow((void **)addrs, cap, *n + 1, sizeof **addrs)) != MP_OK ||
	    (err = mp_table_add(seen, &p, (uint32_t)*n)) != MP_OK)
		return err;
	(*addrs)[(*n)++] = frame;
	return MP_OK;
}

mp_err py_frames_read(mp_target *t, const mp_py_interp *py, const py_thread_layout *l, struct py_code_cache *cache,
		      uint64_t tstate, mp_py_thread *th, mp_diag *diag)
{
	mp_table seen = { 0 };
	uint64_t *addrs = NULL, frame;
	size_t naddrs = 0, addrs_cap = 0, cap = 0, steps = 0;
	mp_diag why = { 0 };
	mp_err err = MP_OK;

	if (first_frame(t, l, tstate, &frame, &why) != MP_OK) {
		mp_warn_damage(diag, "thread state 0x%llx: no frame pointer: %s", (unsigned long long)tstate, why.msg);
		th->frames_cut = true;
		return MP_OK;
	}
	for (; frame != 0; steps++) {
		const struct code_entry *c = NULL;
		struct step s = { 0 };
		bool loop;

		if (th->nframes == MP_PY_MAX_FRAMES || steps == 2 * (size_t)MP_PY_MAX_FRAMES) {
			mp_warn(diag, "thread 0x%llx: more than %d frames: the rest are not read",
				(unsigned long long)th->thread_id, MP_PY_MAX_FRAMES);
			th->frames_cut = true;
			break;
		}
		if ((err = seen_before(&seen, &addrs, &naddrs, &addrs_cap, frame, &loop)) != MP_OK)
			break;
		if (loop) {
			mp_warn_damage(diag, "thread 0x%llx: its frames loop back to 0x%llx: read up to there",
				(unsigned long long)th->thread_id, (unsigned long long)frame);
			th->frames_cut = true;
			break;
		}
		mp_diag_reset(&why);
		err = l->kind == PY_FRAMES_OBJECTS ? read_frame_object(t, py, l, cache, frame, &s, &c, &why, diag)
						   : read_interp_frame(t, py, l, cache, frame, &s, &c, &why, diag);
		if (err == MP_E_NOMEM)
			break;
		if (err != MP_OK) {
			mp_warn_damage(diag, "thread 0x%llx: frame 0x%llx: %s: the rest are not read",
				(unsigned long long)th->thread_id, (unsigned long long)frame, why.msg);
			th->frames_cut = true;
			err = MP_OK;
			break;
		}
		if (s.shown && (err = add_frame(th, &cap, frame, s.code, s.lasti, py->layout, c)) != MP_OK)
			break;
		if (s.shown && c != NULL && !s.lasti_ok)
			th->frames[th->nframes - 1].line = -1;
		frame = s.next;
	}
	mp_table_free(&seen);
	free(addrs);
	return err;
}
