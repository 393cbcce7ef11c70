/* walk_annotations.c - the native allocator's annotation ring (RingBuffer<AnnotationEntry>
   annotation_buffer, 2.5 on): what record_function calls ("Optimizer.step#Adam.step", START and
   END) left while history was recorded, the snapshot's external_annotations. An entry is the
   device, a raw time stamp and an unordered_map<string, string> (allocator-facts §3.7). */
#include <stdlib.h>

#include "mp_array.h"
#include "walk_int.h"

/* Caps: the ring holds what _record_memory_history's max_entries allows; an entry's map, a few keys. */
enum { WK_MAX_ANNOTATIONS = 1u << 20, WK_MAX_META = 64, ANNOTATION_MAX_SIZE = 256 };

struct meta {
	char **kv;
	size_t n, cap;
};

static mp_err add_pair(struct walk *wk, char *key, char *value, void *ctx)
{
	struct meta *m = ctx;
	mp_err err = mp_array_grow((void **)&m->kv, &m->cap, 2 * m->n + 2, sizeof *m->kv);

	(void)wk;
	if (err != MP_OK) {
		free(key);
		free(value);
		return err;
	}
	m->kv[2 * m->n] = key;
	m->kv[2 * m->n + 1] = value;
	m->n++;
	return MP_OK;
}

static void free_meta(struct meta *m)
{
	for (size_t i = 0; i < 2 * m->n; i++)
		free(m->kv[i]);
	free(m->kv);
}

/* Entry at ADDR into the next slot of W->annotations; MP_E_CORRUPT (and friends) when it is damaged. */
static mp_err read_annotation(struct walk *wk, uint64_t addr, size_t *cap)
{
	unsigned char e[ANNOTATION_MAX_SIZE];
	size_t esize = (size_t)OFF(wk, AE_SIZEOF);
	struct meta m = { 0 };
	mp_walk *w = wk->w;
	mp_err err;

	if ((err = wk_read(wk, addr, e, esize)) != MP_OK ||
	    (err = wk_string_map_each(wk, addr + (uint64_t)OFF(wk, AE_METADATA), WK_MAX_META, add_pair, &m)) != MP_OK ||
	    (err = mp_array_grow((void **)&w->annotations, cap, w->nannotations + 1, sizeof *w->annotations)) != MP_OK) {
		free_meta(&m);
		return err;
	}
	w->annotations[w->nannotations++] = (mp_walk_annotation){
		.device = (int8_t)wk_u8(e, OFF(wk, AE_DEVICE)),
		.tsc = wk_u64(e, OFF(wk, AE_TIME)),
		.nmeta = m.n,
		.meta = m.kv,
	};
	return MP_OK;
}

mp_err wk_annotations(struct walk *wk, uint64_t allocator)
{
	size_t esize, cap = 0;
	struct wk_ring r;
	mp_err err;

	if (!HAS(wk, NCA_ANNOTATION_BUFFER) || !HAS(wk, AE_SIZEOF) || !HAS(wk, AE_METADATA))
		return MP_OK;
	esize = (size_t)OFF(wk, AE_SIZEOF);
	if (esize == 0 || esize > ANNOTATION_MAX_SIZE || OFF(wk, AE_TIME) + 8 > (int32_t)esize ||
	    OFF(wk, AE_DEVICE) >= (int32_t)esize) {
		wk_damaged(wk, "the layout's AnnotationEntry (%zu bytes) is not sound: no external annotations", esize);
		return MP_OK;
	}
	err = wk_ring(wk, allocator + (uint64_t)OFF(wk, NCA_ANNOTATION_BUFFER), esize, WK_MAX_ANNOTATIONS, &r);
	if (err != MP_OK) {
		wk_damaged(wk, "the allocator's annotation ring is %s: no external annotations",
			   err == MP_E_TRUNCATED ? "unreadable" : "damaged");
		return MP_OK;
	}
	/* Oldest first: slots [next, n) then [0, next). */
	for (size_t done = 0; done < r.n; done++) {
		size_t slot = (size_t)((r.next + done) % r.n);

		if ((err = read_annotation(wk, r.begin + slot * esize, &cap)) == MP_E_NOMEM)
			return err;
		if (err != MP_OK)
			wk_damaged(wk, "annotation %zu of the allocator's ring is damaged; skipped", done);
	}
	return MP_OK;
}
