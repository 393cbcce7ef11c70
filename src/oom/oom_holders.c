/* oom_holders.c - who holds the live memory: blocks grouped by what memprof's owners say of them (the keys
   they give blocks: 'owner', 'category', 'root', 'module', 'saved', 'dtype'): the activations the autograd
   graph saves for backward and the results of the forward no variable holds, by module (model.transformer.h.3.mlp);
   a model's parameters, buffers and gradients by the model ("model"), an optimizer's state by the optimizer
   ("trainer.optimizer"); another tensor by the variable that holds it ("kept[3]" belongs to "kept"). Blocks no
   owner names: activations when their allocation frames lie inside a forward, else the job's own call site
   that allocated them, else one block each. And what freeing one group would have done for the request. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_array.h"
#include "mp_frame_filter.h"
#include "mp_snapshot_extras.h"
#include "oom_int.h"

const char *mp_oom_holder_what_name(enum mp_oom_holder_what what)
{
	static const char *const names[] = { "variable", "model", "optimizer", "activations", "call_site", "unknown" };

	return (unsigned)what < sizeof names / sizeof names[0] ? names[what] : "?";
}

const char *mp_oom_remedy_kind_name(enum mp_oom_remedy_kind kind)
{
	static const char *const names[] = { NULL, "del", "smaller_batch", "checkpoint", "lower_precision" };

	return (unsigned)kind < sizeof names / sizeof names[0] ? names[kind] : NULL;
}

/* Frame F as a site: "file.py:LINE (function)", malloc'd (NULL: out of memory). */
static char *site_text(const mp_frame *f)
{
	char buf[300];

	return strdup(mp_frame_site_text(f, buf, sizeof buf));
}

char *oom_site_of(const mp_snapshot *snap, mp_val frames)
{
	char buf[300];

	/* the job's own innermost line: not torch's, not an installed package's, not C++ stack capture */
	if (mp_frames_site(snap, frames, buf, sizeof buf)[0] == '\0')
		return NULL;
	return strdup(buf);
}

static int by_key(const void *pa, const void *pb)
{
	const oom_member *a = pa, *b = pb;
	int c = strcmp(a->key, b->key);

	if (c == 0)
		c = (a->what > b->what) - (a->what < b->what);
	return c != 0 ? c : (a->b < b->b ? -1 : a->b > b->b);
}

/* How the live blocks of V are named: by owner when any has one, else by site when any has frames. */
static const char *grouping(const oom_view *v)
{
	bool sites = false;

	for (size_t i = 0; i < v->nsegs; i++)
		for (size_t j = 0; j < v->segs[i].s->nblocks; j++) {
			const mp_block *b = &mp_segment_blocks(v->snap, v->segs[i].s)[j];

			if (!oom_block_live(v, b))
				continue;
			if (mp_val_type(mp_block_extra_value(v->snap, b, "owner")) == MP_T_STR)
				return "owner";
			if (mp_frames_len(v->snap, b->frames) > 0)
				sites = true;
		}
	return sites ? "call site" : "block";
}

/* The str extra KEY of block B (LEN bytes), or NULL. */
static const char *extra(const oom_view *v, const mp_block *b, const char *key, size_t *len)
{
	mp_val s = mp_block_extra_value(v->snap, b, key);

	return mp_val_type(s) == MP_T_STR ? mp_heap_atom(v->snap->heap, s, len) : NULL;
}

static bool extra_is(const oom_view *v, const mp_block *b, const char *key, const char *want)
{
	size_t len;
	const char *s = extra(v, b, key, &len);

	return s != NULL && len == strlen(want) && memcmp(s, want, len) == 0;
}

/* A module path as the holders group activations: up to one module below the first numbered one (an item of
   a ModuleList: model.transformer.h.3.mlp.c_fc -> model.transformer.h.3.mlp), else whole. */
static size_t holder_module_len(const char *m, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		size_t n = 0;

		if (i > 0 && m[i - 1] != '.')
			continue;
		while (i + n < len && m[i + n] >= '0' && m[i + n] <= '9')
			n++;
		if (n > 0 && (i + n == len || m[i + n] == '.')) {
			size_t end = i + n;

			if (end < len)
				end += 1 + strcspn(m + end + 1, ".");
			return end < len ? end : len;
		}
	}
	return len;
}

/* The innermost frame of FRAMES inside a forward, the job's own first, as a site; NULL when none. */
static char *forward_site(const mp_snapshot *snap, mp_val frames)
{
	size_t n = mp_frames_len(snap, frames), pick = SIZE_MAX;
	mp_frame f;

	for (int own = 1; own >= 0 && pick == SIZE_MAX; own--)
		for (size_t i = 0; i < n && pick == SIZE_MAX; i++)
			if (mp_frames_get(snap, frames, i, &f) && f.name_len == 7 && memcmp(f.name, "forward", 7) == 0 &&
			    (!own || mp_frame_is_own(&f)))
				pick = i;
	if (pick == SIZE_MAX || !mp_frames_get(snap, frames, pick, &f))
		return NULL;
	return site_text(&f);
}

/* An activation's group: saved for backward (the graph says so) or held by no variable, by module. */
static char *activation_key(const oom_view *v, const mp_block *b, oom_member *m, bool saved)
{
	size_t len = 0;
	const char *mod = extra(v, b, "module", &len);
	char *key, *full = mod != NULL ? strndup(mod, len) : NULL;

	m->what = MP_OOM_H_ACTIVATIONS;
	m->f32 = extra_is(v, b, "dtype", "float32");
	m->f16 = extra_is(v, b, "dtype", "float16") || extra_is(v, b, "dtype", "bfloat16");
	m->module = full;
	if (mod != NULL && full == NULL)
		return NULL;
	if (asprintf(&key, "%s %s %s%.*s", OOM_ACTIVATIONS, saved ? "saved for backward" : "no variable holds",
		     mod != NULL ? "in " : "outside the model's modules", (int)(mod != NULL ? holder_module_len(mod, len) : 0),
		     mod != NULL ? mod : "") < 0)
		return NULL;
	return key;
}

/* The group of a block no owner names: activations when a forward made it, else its call site or none. */
static char *unowned_key(const oom_view *v, const char *by, const mp_block *b, oom_member *m)
{
	char *site = forward_site(v->snap, b->frames), *key;

	if (site != NULL) {
		m->what = MP_OOM_H_ACTIVATIONS;
		if (asprintf(&key, "%s made in %s", OOM_ACTIVATIONS, site) < 0)
			key = NULL;
		free(site);
		return key;
	}
	if (strcmp(by, "call site") == 0 && (site = oom_site_of(v->snap, b->frames)) != NULL) {
		m->what = MP_OOM_H_SITE;
		return site;
	}
	m->what = MP_OOM_H_UNKNOWN;
	return strdup(strcmp(by, "owner") == 0 ? "(no Python tensor)" : "(no frames)");
}

/* The group of block B, its kind in M. Owned blocks: activations by module (saved for backward, or an unnamed
   result of the forward), a model's or optimizer's by its root ("model", "trainer.optimizer"), another tensor's
   by the variable that holds it (items of a list or dict by the list: "kept[3]" -> "kept"). */
static char *key_of(const oom_view *v, const char *by, const mp_block *b, oom_member *m)
{
	char buf[64];
	size_t len, rlen;
	const char *owner, *root;

	if (strcmp(by, "block") == 0) {
		m->what = MP_OOM_H_UNKNOWN;
		snprintf(buf, sizeof buf, "block 0x%llx", (unsigned long long)b->address);
		return strdup(buf);
	}
	if ((owner = extra(v, b, "owner", &len)) == NULL)
		return unowned_key(v, by, b, m);
	if (mp_block_extra_value(v->snap, b, "saved") == MP_TRUE)
		return activation_key(v, b, m, true);
	if (extra_is(v, b, "category", "ACTIVATION") && len > 0 && owner[0] == '<')
		return activation_key(v, b, m, false);
	if ((root = extra(v, b, "root", &rlen)) != NULL) {
		m->what = extra_is(v, b, "category", "OPTIMIZER_STATE") ? MP_OOM_H_OPTIMIZER : MP_OOM_H_MODEL;
		return strndup(root, rlen);
	}
	m->what = MP_OOM_H_VARIABLE;
	/* items of a container belong to it */
	while (len > 0 && owner[len - 1] == ']') {
		size_t open = len - 1;

		while (open > 0 && owner[open] != '[')
			open--;
		if (open == 0)
			break;
		len = open;
	}
	return strndup(owner, len);
}

static int group_by_bytes(const void *pa, const void *pb)
{
	const struct oom_group *a = pa, *b = pb;

	return a->bytes != b->bytes ? (a->bytes > b->bytes ? -1 : 1) : (a->first < b->first ? -1 : 1);
}

/* Keep the MP_OOM_MAX_HOLDERS largest groups of the sorted members. */
static void top_groups(oom_groups *gr)
{
	struct oom_group cur = { 0 };

	for (size_t i = 0; i <= gr->n; i++) {
		if (i < gr->n && cur.n > 0 && strcmp(gr->m[i].key, gr->m[cur.first].key) == 0 &&
		    gr->m[i].what == gr->m[cur.first].what) {
			cur.n++;
			cur.bytes += gr->m[i].b->size;
			continue;
		}
		if (cur.n > 0) {
			if (gr->ntop < MP_OOM_MAX_HOLDERS)
				gr->top[gr->ntop++] = cur;
			else if (cur.bytes > gr->top[gr->ntop - 1].bytes)
				gr->top[gr->ntop - 1] = cur;
			mp_sort(gr->top, (size_t)gr->ntop, sizeof gr->top[0], group_by_bytes);
		}
		if (i < gr->n)
			cur = (struct oom_group){ .first = i, .n = 1, .bytes = gr->m[i].b->size };
	}
}

/* Whether a training step is underway: gradients, optimizer state or activations the autograd graph keeps. */
static bool training(const oom_groups *gr, const oom_view *v)
{
	for (size_t i = 0; i < gr->n; i++)
		if (gr->m[i].what == MP_OOM_H_ACTIVATIONS || gr->m[i].what == MP_OOM_H_OPTIMIZER ||
		    extra_is(v, gr->m[i].b, "category", "GRADIENT"))
			return true;
	return false;
}

/* What O's holders note says: how the activations were told apart and grouped, and what a training step
   underway rules out. */
static void oom_holders_note(const oom_groups *gr, mp_oom *o)
{
	bool saved = false, unnamed = false, frames = false;
	size_t n = 0;

	for (size_t i = 0; i < gr->n; i++) {
		const char *k = gr->m[i].key + strlen(OOM_ACTIVATIONS) + 1;

		if (gr->m[i].what != MP_OOM_H_ACTIVATIONS)
			continue;
		saved |= strncmp(k, "saved", 5) == 0;
		unnamed |= strncmp(k, "no variable", 11) == 0;
		frames |= strncmp(k, "made in", 7) == 0;
	}
	if (saved)
		n += (size_t)snprintf(o->holders_note + n, sizeof o->holders_note - n, "activations saved for backward: "
				      "found in the live autograd graph (the nodes reached from the tensors' grad_fn, and "
				      "what they save), each in the module whose parameters the nodes around it in the "
				      "forward's order use. ");
	if (unnamed && n < sizeof o->holders_note)
		n += (size_t)snprintf(o->holders_note + n, sizeof o->holders_note - n, "activations no variable holds: "
				      "results of the forward (with a grad_fn) that no global or local of the job's outer "
				      "frames holds. ");
	if (frames && n < sizeof o->holders_note)
		n += (size_t)snprintf(o->holders_note + n, sizeof o->holders_note - n, "activations made in forward: "
				      "blocks no Python tensor holds whose allocation frames lie inside a forward. ");
	if (o->training && n < sizeof o->holders_note)
		snprintf(o->holders_note + n, sizeof o->holders_note - n, "A training step is underway (gradients, "
			 "optimizer state or a live autograd graph): deleting the model or the optimizer's state is no "
			 "remedy.");
}

mp_err oom_groups_make(const oom_view *v, mp_oom *o, oom_groups *gr)
{
	size_t live = 0;

	*gr = (oom_groups){ 0 };
	o->holders_by = grouping(v);
	for (size_t i = 0; i < v->nsegs; i++)
		for (size_t j = 0; j < v->segs[i].s->nblocks; j++)
			live += oom_block_live(v, &mp_segment_blocks(v->snap, v->segs[i].s)[j]);
	if (live == 0)
		return MP_OK;
	if ((gr->m = calloc(live, sizeof *gr->m)) == NULL || (gr->keys = calloc(2 * live, sizeof *gr->keys)) == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; i < v->nsegs; i++)
		for (size_t j = 0; j < v->segs[i].s->nblocks; j++) {
			const mp_block *b = &mp_segment_blocks(v->snap, v->segs[i].s)[j];
			oom_member *m = &gr->m[gr->n];
			char *key;

			if (!oom_block_live(v, b))
				continue;
			*m = (oom_member){ .b = b };
			key = key_of(v, o->holders_by, b, m);
			if (m->module != NULL)
				gr->keys[gr->nkeys++] = (char *)m->module;
			if (key == NULL)
				return MP_E_NOMEM;
			gr->keys[gr->nkeys++] = key;
			m->key = key;
			gr->n++;
		}
	mp_sort(gr->m, gr->n, sizeof *gr->m, by_key);
	top_groups(gr);
	o->training = training(gr, v);
	for (int i = 0; i < gr->ntop; i++) {
		mp_oom_holder *h = &o->holders[o->nholders++];

		snprintf(h->name, sizeof h->name, "%s", gr->m[gr->top[i].first].key);
		h->bytes = gr->top[i].bytes;
		h->nblocks = (int64_t)gr->top[i].n;
		h->what = gr->m[gr->top[i].first].what;
	}
	oom_holders_note(gr, o);
	return MP_OK;
}

void oom_groups_free(oom_groups *gr)
{
	for (size_t i = 0; i < gr->nkeys; i++)
		free(gr->keys[i]);
	free(gr->keys);
	free(gr->m);
	*gr = (oom_groups){ 0 };
}

mp_err oom_serves_without(const oom_view *v, const mp_oom *o, const oom_member *m, size_t n, bool *works,
			  int64_t *released)
{
	const mp_snapshot *snap = v->snap;
	unsigned char *gone = calloc(snap->nblocks > 0 ? snap->nblocks : 1, 1);
	bool cached = false;

	if (gone == NULL)
		return MP_E_NOMEM;
	for (size_t i = 0; i < n; i++)
		gone[m[i].b - snap->blocks] = 1;
	*released = 0;
	for (size_t i = 0; i < v->nsegs; i++) {
		const oom_seg *g = &v->segs[i];
		const mp_block *blocks = mp_segment_blocks(snap, g->s);
		int64_t live = 0, run = 0;

		for (size_t j = 0; j < g->s->nblocks; j++) {
			const mp_block *b = &blocks[j];
			bool now_free = oom_block_free(v, b) || gone[b - snap->blocks];

			live += oom_block_live(v, b) && !gone[b - snap->blocks] ? b->size : 0;
			/* freed blocks merge with their free neighbours into one block */
			run = now_free ? run + b->size : 0;
			if (oom_searched(g, o) && run >= o->rounded && oom_split_rules_allow(o, run))
				cached = true;
		}
		if (!g->private_pool && live == 0)
			*released += g->s->total_size;
	}
	free(gone);
	*works = cached || (o->room >= 0 && o->alloc_size <= o->room + *released);
	return MP_OK;
}
