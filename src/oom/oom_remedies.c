/* oom_remedies.c - what would have worked, each a claim about the state read: a setting whose rules, applied
   to the same live blocks, leave room for the request; freeing a named holder; or, when the live blocks and
   the request exceed what the process can have, that nothing in the allocator would. Settings that would not
   have helped are listed too, with the reason. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "oom_int.h"

static const char *const remedy_names[MP_OOM__NREMEDIES] = {
	"expandable_segments", "max_split_size_mb", "garbage_collection_threshold", "empty_cache", "free",
	"release_private_pool", "nothing", "setting",
};

const char *mp_oom_remedy_name(enum mp_oom_remedy_id id)
{
	return (unsigned)id < MP_OOM__NREMEDIES ? remedy_names[id] : "?";
}

static mp_oom_remedy *remedy(mp_oom *o, enum mp_oom_remedy_id id, bool works, const char *action, const char *fmt,
			     ...) MP_PRINTF(5, 6);
static mp_oom_remedy *remedy(mp_oom *o, enum mp_oom_remedy_id id, bool works, const char *action, const char *fmt, ...)
{
	va_list ap;
	mp_oom_remedy *r;

	va_start(ap, fmt);
	r = oom_remedy_vadd(o, id, works, action, fmt, ap);
	va_end(ap);
	return r;
}

static void max_split(const oom_view *v, mp_oom *o)
{
	char a[32], b[32], c[32], action[64];
	mp_oom_remedy *r;
	oom_oversize ov;

	if (o->small_pool || o->room < 0)
		return;
	ov = oom_oversize_best(v, o, false);
	if (ov.m == 0) {
		remedy(o, MP_OOM_R_MAX_SPLIT, false, "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:M",
		       "no large segment of 21 MiB or more is split by live blocks all smaller than it");
		return;
	}
	if (ov.works)
		return; /* claimed on a replay only */
	snprintf(action, sizeof action, "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:%lld", (long long)(ov.m / OOM_MIB));
	r = remedy(o, MP_OOM_R_MAX_SPLIT, ov.works, action,
	       "%lld segment%s of %s or more would not have been split by the live blocks (all under %s) that hold "
	       "%s now: the retry releases %s, and net of segments of their own for those blocks that gives %s, "
	       "so the free memory %s the allocation",
	       (long long)ov.nsegs, ov.nsegs == 1 ? "" : "s", oom_size_text(a, sizeof a, ov.m),
	       oom_size_text(b, sizeof b, ov.m), ov.nsegs == 1 ? "it" : "them", ov.nsegs == 1 ? "it" : "them",
	       oom_size_text(c, sizeof c, ov.freed), ov.works ? "covers" : "still falls short of");
	if (r != NULL) {
		mp_sim_conf sc = o->conf;

		sc.max_split_size = ov.m;
		r->has_conf = true;
		mp_sim_conf_format(&sc, r->conf, sizeof r->conf);
	}
}

/* Whether NAME is a variable `del` can take: an identifier, not a path into an object. */
static bool plain_variable(const char *name)
{
	if (!(name[0] == '_' || (name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z')))
		return false;
	return name[strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")] == '\0';
}

/* Whether the holder T of GR is one to free: a plain variable; a model only when no training step is underway
   (a step needs its parameters, gradients and the optimizer's state); never activations (their remedies are
   oom_activation_remedies') or what has no name a user can act on. */
static bool freeable(const mp_oom *o, const oom_groups *gr, const struct oom_group *t)
{
	const oom_member *m = &gr->m[t->first];

	switch (m->what) {
	case MP_OOM_H_VARIABLE:
		return plain_variable(m->key);
	case MP_OOM_H_MODEL:
		return !o->training && plain_variable(m->key);
	case MP_OOM_H_SITE:
	case MP_OOM_H_UNKNOWN:
		return m->key[0] != '(';
	default:
		return false;
	}
}

static void freeing(const oom_view *v, mp_oom *o, const oom_groups *gr, mp_err *err)
{
	char a[32], action[240];

	for (int i = 0; i < gr->ntop && *err == MP_OK; i++) {
		const struct oom_group *t = &gr->top[i];
		const char *name = gr->m[t->first].key;
		int64_t released;
		int n;
		bool works;

		if (!freeable(o, gr, t))
			continue;
		if ((*err = oom_serves_without(v, o, gr->m + t->first, t->n, &works, &released)) != MP_OK || !works)
			continue;
		if (gr->m[t->first].what == MP_OOM_H_SITE)
			snprintf(action, sizeof action, "free what %s allocated before the request", name);
		else if (gr->m[t->first].what == MP_OOM_H_UNKNOWN)
			snprintf(action, sizeof action, "free the tensor of %s before the request", name);
		else
			snprintf(action, sizeof action, "del %s (every reference to it) before the request", name);
		n = o->nremedies;
		remedy(o, MP_OOM_R_FREE, true, action, "it holds %s in %lld block%s; without %s %s",
		       oom_size_text(a, sizeof a, t->bytes), (long long)t->n, t->n == 1 ? "" : "s", t->n == 1 ? "it" : "them",
		       released > 0 ? "the retry releases the segments left empty and cudaMalloc succeeds"
				    : "a free block of the request's stream and pool fits the request");
		if (o->nremedies > n) {
			o->remedies[n].kind = MP_OOM_K_DEL;
			snprintf(o->remedies[n].holder, sizeof o->remedies[n].holder, "%s", name);
		}
	}
	if (*err == MP_OK)
		oom_activation_remedies(o, gr);
}

/* Each private pool whose segments, once nothing uses the pool, the retry would release (those without a live
   block) and so leave room for the request. */
static void private_pools(const oom_view *v, mp_oom *o)
{
	char a[32], b[32], action[160];

	for (size_t i = 0; i < v->nsegs; i++) {
		const oom_seg *g = &v->segs[i];
		int64_t released = 0, held = 0;
		bool first = true;

		if (!g->private_pool)
			continue;
		for (size_t j = 0; j < i && first; j++)
			first = !(v->segs[j].private_pool && v->segs[j].pool_id[0] == g->pool_id[0] &&
				  v->segs[j].pool_id[1] == g->pool_id[1]);
		if (!first)
			continue;
		for (size_t j = i; j < v->nsegs; j++) {
			const oom_seg *h = &v->segs[j];

			if (!h->private_pool || h->pool_id[0] != g->pool_id[0] || h->pool_id[1] != g->pool_id[1])
				continue;
			held += h->s->total_size;
			released += h->live == 0 ? h->s->total_size : 0;
		}
		if (o->room < 0 || released == 0)
			continue;
		snprintf(action, sizeof action, "release private pool (%lld, %lld): drop the torch.cuda.MemPool or CUDA "
			 "graph that owns it before the request", (long long)g->pool_id[0], (long long)g->pool_id[1]);
		remedy(o, MP_OOM_R_PRIVATE_POOL, o->room + released >= o->alloc_size, action,
		       "it reserves %s; once nothing uses it the retry releases its %s of segments without a live block, "
		       "%s", oom_size_text(a, sizeof a, held), oom_size_text(b, sizeof b, released),
		       o->room + released >= o->alloc_size ? "and the allocation fits"
								    : "still not enough for the allocation");
	}
}

/* garbage_collection_threshold acts only under a per-process memory fraction, which PyTorch's message names ("...
   allowed;") whenever one is set. Without one the setting does nothing: a rule, said as such. With one it releases
   unused cached segments before the cap is reached, which changes the layout every later request finds: a
   prediction the state cannot make (the campaign found the state's "would not help" wrong on 8 of 168 such
   OOMs), replayed where there is a history (oom_replayed.c), else listed to try. */
static void gc_threshold(mp_oom *o)
{
	mp_oom_remedy *r;
	char a[32];

	if (o->req.has_message && o->req.message.allowed < 0) {
		remedy(o, MP_OOM_R_GC_THRESHOLD, false, "PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:T",
		       "it acts only with a per-process memory fraction set, and this job has none (the message names "
		       "no memory allowed)");
		return;
	}
	if (o->replayed || !o->req.has_message)
		return;
	r = remedy(o, MP_OOM_R_GC_THRESHOLD, false, "PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:T",
		   "under the memory fraction this job sets (%s allowed) it releases unused cached segments before "
		   "the cap is reached, which changes where later requests land; with no memory history to replay, "
		   "whether that gets past this OOM is not known", oom_size_text(a, sizeof a, o->req.message.allowed));
	if (r != NULL)
		r->untested = true;
}

mp_err oom_remedies(const oom_view *v, mp_oom *o, const oom_groups *gr)
{
	char a[32], b[32], c[32];
	mp_err err = MP_OK;
	bool full = o->ncauses > 0 && o->causes[0].id == MP_OOM_DEVICE_FULL;

	/* the settings and empty_cache() rest on the replay when there is one (oom_replayed.c); from the state alone
	   only max_split_size_mb's refusals are said: the campaign's baseline found the state's claims for
	   expandable segments (55 %) and for max_split_size_mb (52 %) wrong too often, the layout they lead to
	   being the history's */
	if (!full && !o->replayed)
		max_split(v, o);
	if (!o->replayed)
		oom_empty_cache_remedy(v, o);
	private_pools(v, o);
	freeing(v, o, gr, &err);
	if (full) {
		int any = 0;

		for (int i = 0; i < o->nremedies; i++)
			any |= o->remedies[i].works;
		remedy(o, MP_OOM_R_NOTHING, true, "nothing in the allocator's settings",
		       "the live tensors (%s) and the request (%s) exceed the %s the process can have: only less live "
		       "memory helps%s", oom_size_text(a, sizeof a, o->live_needed), oom_size_text(b, sizeof b, o->rounded),
		       oom_size_text(c, sizeof c, o->usable >= 0 ? o->usable : o->req.message.capacity),
		       any ? " (see above)" : "");
	}
	gc_threshold(o);
	return err;
}
